"""Confirm a cancel, with a reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Final

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Key
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label

from inspector import RunView
from tui.runtop_screen import RuntopModal
from tui.text import cell
from tui.typed_ahead import type_into
from tui.widgets.key_bar import KeyBar

CANCELED_WITHOUT_REASON: Final = "canceled in runtop"
"""The reason recorded for a cancel confirmed with the reason left empty."""

LEAVE_IT: Final = "Back"
"""The button (and Escape) that leaves a run as it is, in every confirmation: cancel,
approve, deny, resume say it alike (as every screen's Escape says ``Back``)."""


class CancelScreen(RuntopModal[str | None]):
    """Asks "cancel this run?" and why; dismisses with the reason, or ``None`` to keep it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # Before the reason box's own Enter, so that the bar can say what Enter does.
        Binding("enter", "confirm", "Cancel run", priority=True),
        Binding("escape", "keep", LEAVE_IT),
    ]

    CSS_PATH = "cancel.tcss"

    def __init__(self, run: RunView) -> None:
        super().__init__()
        self.run = run

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Cancel run {cell(self.run.run_id, 48)}?", markup=False)
            who, doing = self.run.agent or self.run.skill, self.run.doing or "running"
            yield Label(f"{cell(who, 40)}, {cell(doing, 200)}", markup=False)
            yield Input(placeholder="why cancel it", id="reason")
            yield Label(f"Left empty, '{CANCELED_WITHOUT_REASON}' is recorded.", classes="hint")
            with Horizontal():
                yield Button(LEAVE_IT, id="keep")
                yield Button("Cancel run", id="cancel", variant="error")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#reason", Input).focus()

    def key_description(self, action: str, description: str) -> str:
        return enter_description(self, action, description)

    def on_key(self, event: Key) -> None:
        type_into_reason(self, event)

    def action_confirm(self) -> None:
        """Enter: cancel with the reason typed, or press the button Tab moved to."""
        confirm_when_typed(self, self._confirm)

    def _confirm(self) -> None:
        if not press_focused(self):
            self.dismiss(self.query_one("#reason", Input).value.strip())

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self.dismiss(self.query_one("#reason", Input).value.strip())
        else:
            self.dismiss(None)

    def action_keep(self) -> None:
        self.dismiss(None)


def confirm_when_typed(screen: ModalScreen[Any], confirm: Callable[[], None]) -> None:
    """Call ``confirm`` once the reason box has taken every key typed before Enter.

    Enter is the confirmation's priority binding: the app acts on it as it receives
    it, while keys typed just before it (a paste, tmux's send-keys, fast typing) may
    still wait in the box's own queue, so the reason read then is cut short or empty.
    Queued behind them, ``confirm`` reads the reason whole; a second Enter in the same
    burst finds the confirmation gone and does nothing.

    Typed in the burst that opened the confirmation (``c``, the reason, Enter), the keys
    wait in the screen's queue instead (:func:`type_into_reason`), the box not yet
    made: ``confirm`` waits behind those first, then behind the box's.
    """

    def once_typed() -> None:
        if screen.is_active:
            confirm()

    def behind_reason_box() -> None:
        screen.query_one("#reason", Input).call_later(once_typed)

    screen.call_later(behind_reason_box)


def type_into_reason(screen: ModalScreen[Any], event: Key) -> None:
    """A character typed in the burst that opened the confirmation (``c``, a reason,
    Enter) is typed into its reason box.

    The app hands the keys after ``c`` on as it takes them, to the focused widget; none
    is focused in a confirmation not yet made, so they come to the screen itself, ahead
    of the box. A character that comes to the screen otherwise went past the focused
    button (the box takes its own): left alone there, as before.
    """
    if event.character is None or not event.is_printable or isinstance(screen.focused, Button):
        return
    event.stop()
    event.prevent_default()
    type_into(screen.query_one("#reason", Input), event.character)


def enter_description(screen: ModalScreen[Any], action: str, description: str) -> str:
    """What Enter does in a confirmation, as its key bar says it: the focused button's
    label (Tab moves to the buttons), else what it confirms."""
    if action == "confirm" and isinstance(screen.focused, Button):
        return str(screen.focused.label)
    return description


def press_focused(screen: ModalScreen[Any]) -> bool:
    """Press the button focused, if one is: Enter on ``Back`` goes back. Whether one was."""
    if isinstance(screen.focused, Button):
        screen.focused.press()
        return True
    return False
