"""A row-cursor table of tools or of tool calls, with the runs table's keys."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable


class ToolTable(DataTable[object], inherit_bindings=False):
    """A row-cursor table taking the runs table's keys: Home, End, ``g`` and ``G`` go to the
    first and last row (the stock table's Home and End only scroll sideways), ``k`` and ``j``
    move as the arrows do; ``?`` lists them.

    It has no Enter of its own (the stock one would hide the screen's from the bar): Enter
    is the screen's, an ordinary binding taken in turn after the keys typed before it. A
    priority binding on the app would take it as it is read, before the table's keys typed
    before it have moved the cursor: Home then Enter in one burst would open the row left.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home,g", "first", "First", show=False),
        Binding("end,G", "last", "Last", show=False),
        Binding("left", "cursor_left", "Scroll left", show=False),
        Binding("right", "cursor_right", "Scroll right", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True)

    def action_first(self) -> None:
        if self.row_count:
            self.move_cursor(row=0)

    def action_last(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)
