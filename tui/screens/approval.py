"""Confirm an approval or a denial: the question asked, and a reason."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Key
from textual.widgets import Button, Input, Label

from inspector import RunView
from tui.runtop_screen import RuntopModal
from tui.screens.cancel import (
    LEAVE_IT,
    confirm_when_typed,
    enter_description,
    press_focused,
    type_into_reason,
)
from tui.text import cell
from tui.text.runs import short_id
from tui.widgets.key_bar import KeyBar


class ApprovalScreen(RuntopModal[str | None]):
    """Shows what the run asks and takes a reason; dismisses with it, or ``None`` to wait on.

    ``a`` and ``d`` open it, so no single keystroke answers "Apply migration
    v42 to production?". Enter confirms what was pressed; Escape leaves the
    run waiting.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "confirm", "Confirm", priority=True),
        Binding("escape", "wait", LEAVE_IT),
    ]

    CSS_PATH = "approval.tcss"

    def __init__(self, run: RunView, *, approve: bool) -> None:
        super().__init__()
        self.run = run
        self.approve = approve
        """Approve (``a``) or deny (``d``): what Enter confirms."""

    def compose(self) -> ComposeResult:
        pending = self.run.pending_approval
        question = (pending.prompt or pending.approval_id) if pending is not None else None
        verb = "Approve" if self.approve else "Deny"
        with Vertical(classes="approve" if self.approve else "deny"):
            asker = cell(self.run.agent or self.run.skill or "the run", 30)
            yield Label(
                f"{verb} what {asker} asks? (run {short_id(self.run.run_id)})", markup=False
            )
            yield Label(cell(question or "(no question given)", 400), id="question", markup=False)
            recorded = "approved" if self.approve else "denied"
            yield Input(placeholder=f"why {verb.lower()}", id="reason")
            yield Label(f"Left empty, '{recorded} in runtop' is recorded.", classes="hint")
            with Horizontal():
                yield Button(LEAVE_IT, id="wait")
                yield Button(verb, id="confirm", variant="success" if self.approve else "error")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#reason", Input).focus()

    def key_description(self, action: str, description: str) -> str:
        verb = "Approve" if self.approve else "Deny"  # what Enter confirms here
        return enter_description(self, action, verb if action == "confirm" else description)

    def on_key(self, event: Key) -> None:
        type_into_reason(self, event)

    def action_confirm(self) -> None:
        """Enter: approve (or deny) with the reason typed, or press the button Tab moved to."""
        confirm_when_typed(self, self._confirm)

    def _confirm(self) -> None:
        if not press_focused(self):
            self.dismiss(self.query_one("#reason", Input).value.strip())

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "confirm":
            self.dismiss(self.query_one("#reason", Input).value.strip())
        else:
            self.dismiss(None)

    def action_wait(self) -> None:
        self.dismiss(None)
