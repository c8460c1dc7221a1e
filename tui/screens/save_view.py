"""Save the runs table as it is as a view: its name, and the columns it shows."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Key
from textual.widgets import Button, Input, Label

from tui.columns import COLUMN_KEYS
from tui.runtop_screen import RuntopModal
from tui.screens.cancel import LEAVE_IT, enter_description, press_focused
from tui.text import cell
from tui.typed_ahead import type_into
from tui.views import View
from tui.widgets.key_bar import KeyBar


class SaveViewScreen(RuntopModal[View | None]):
    """Asks the name of the view the table is saved as (and its columns, to change them);
    dismisses with the view, or ``None`` to save nothing."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "confirm", "Save view", priority=True),
        Binding("escape", "back", LEAVE_IT),
    ]

    CSS_PATH = "save_view.tcss"
    AUTO_FOCUS = "#name"

    def __init__(self, view: View, *, where: str) -> None:
        super().__init__()
        self.view = view
        """The table as it is (its name: the view it was chosen as, if it was)."""
        self.where = where

    def compose(self) -> ComposeResult:
        view = self.view
        arrow = "▼" if view.reverse else "▲"
        with Vertical():
            yield Label("Save the table as a view", classes="title")
            said = f"filter: {view.filter or '(none)'} · sorted by {view.sort} {arrow}"
            yield Label(cell(said, 300), markup=False)
            yield Input(view.name, placeholder="the view's name", id="name")
            columns = " ".join(view.columns or COLUMN_KEYS)
            yield Input(columns, placeholder="the columns shown", id="columns")
            yield Label(
                f"Columns: {', '.join(COLUMN_KEYS)}. Kept in {self.where}; v chooses it.",
                classes="hint",
                id="hint",
                markup=False,
            )
            with Horizontal():
                yield Button(LEAVE_IT, id="back")
                yield Button("Save view", id="save", variant="primary")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#name", Input).focus()

    def key_description(self, action: str, description: str) -> str:
        return enter_description(self, action, description)

    def on_key(self, event: Key) -> None:
        """A character typed in the burst that opened it (``V``, a name) goes to the name.

        The app handed those keys to this screen, nothing in it focused yet; it takes
        them after its box has been focused, so they come here rather than to the box.
        A character that comes here past a focused button is left alone.
        """
        if event.character is None or not event.is_printable or isinstance(self.focused, Button):
            return
        event.stop()
        event.prevent_default()
        box = self.focused if isinstance(self.focused, Input) else self.query_one("#name", Input)
        type_into(box, event.character)

    def action_confirm(self) -> None:
        """Enter: save, once the boxes have taken every key typed before it."""

        def once_typed() -> None:
            if self.is_active and not press_focused(self):
                self._save()

        self.call_later(lambda: self.query_one("#name", Input).call_later(once_typed))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self._save()
        else:
            self.dismiss(None)

    def _save(self) -> None:
        name = self.query_one("#name", Input).value.strip()
        columns = self.query_one("#columns", Input).value.replace(",", " ").split()
        unknown = [key for key in columns if key not in COLUMN_KEYS]
        hint = self.query_one("#hint", Label)
        if not name:
            hint.update("A view needs a name.")
            self.query_one("#name", Input).focus()
            return
        if unknown:
            hint.update(f"No column {unknown[0]!r}: {', '.join(COLUMN_KEYS)}.")
            self.query_one("#columns", Input).focus()
            return
        every = not columns or set(columns) >= set(COLUMN_KEYS)
        kept = () if every else tuple(dict.fromkeys(columns))
        view = self.view
        self.dismiss(View(name, view.filter, view.sort, view.reverse, kept))

    def action_back(self) -> None:
        self.dismiss(None)
