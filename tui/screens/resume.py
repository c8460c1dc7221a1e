"""Confirm a resume: it starts a new run, so it asks first, as cancel and approve do."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Label

from inspector import RunView
from tui.runtop_screen import RuntopModal
from tui.screens.cancel import LEAVE_IT, enter_description, press_focused
from tui.text import cell, compact_json
from tui.widgets.key_bar import KeyBar


class ResumeScreen(RuntopModal[bool]):
    """Asks "resume this run?", naming the agent and the input it is given again.

    Dismisses with ``True`` to resume (Enter, or the button), ``False`` to leave
    it (Escape).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "confirm", "Resume", priority=True),
        Binding("escape", "leave", LEAVE_IT),
    ]

    CSS_PATH = "resume.tcss"

    def __init__(self, run: RunView) -> None:
        super().__init__()
        self.run = run

    def compose(self) -> ComposeResult:
        run = self.run
        with Vertical():
            yield Label(f"Resume run {cell(run.run_id, 48)}?", markup=False)
            yield Label(
                f"A new run of {cell(run.agent or run.skill or 'its agent', 40)}"
                f" with its recorded input: {compact_json(run.input, 120)}",
                markup=False,
            )
            with Horizontal():
                yield Button(LEAVE_IT, id="leave")
                yield Button("Resume", id="resume", variant="primary")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#resume", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "resume")

    def key_description(self, action: str, description: str) -> str:
        return enter_description(self, action, description)

    def action_confirm(self) -> None:
        """Enter: the button focused (Resume, until Tab moves to Back).

        Once the screen is made: Enter, its priority binding, is taken as the app receives
        it, and typed in the burst with ``r`` it comes before the screen is composed."""
        self.call_later(self._confirm)

    def _confirm(self) -> None:
        if self.is_active and not press_focused(self):
            self.dismiss(True)

    def action_leave(self) -> None:
        self.dismiss(False)
