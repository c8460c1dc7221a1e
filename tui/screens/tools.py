"""Tool calls across every run: how often, how often they failed, how long they took."""

from __future__ import annotations

from typing import ClassVar, Final

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Static

from inspector import RunStore
from inspector.status_words import STILL_GOING
from tui.runtop_screen import RuntopScreen
from tui.screens.tool_calls import ToolCallsScreen
from tui.store_news import StoreChanged
from tui.text import cell, duration
from tui.widgets.key_bar import KeyBar
from tui.widgets.tool_table import ToolTable

NUMBERS: Final = (
    ("CALLS", "calls"),
    ("ERRORS", "errors"),
    ("ERROR %", "rate"),
    ("MEDIAN", "median"),
    ("P95", "p95"),
    (STILL_GOING.upper(), "flight"),
)
"""The numeric columns (title, key): right-aligned, so their digits line up."""


class ToolsScreen(RuntopScreen):
    """Per-tool statistics, live (a handful of rows: the stock DataTable is right here)."""

    LISTS_TOOL_CALLS: ClassVar[bool] = True

    BINDINGS: ClassVar[list[BindingType]] = [
        # First in the bar, Back after it.
        Binding(
            "enter",
            "calls",
            "Its calls",
            tooltip="The selected tool's calls: run, time, duration, outcome",
        ),
        Binding("escape,t", "back", "Back", tooltip="The screen before this one"),
    ]

    CSS_PATH = "tools.tcss"

    def __init__(self, store: RunStore, *, clock: float | None = None) -> None:
        super().__init__()
        self.store = store
        self.clock = clock
        self.has_columns = False
        """The table has its columns (the store's news can come before they are added)."""

    def compose(self) -> ComposeResult:
        yield Static("Tool calls across all runs", id="tools-title")
        yield ToolTable()
        yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("TOOL", key="tool")
        for title, key in NUMBERS:
            table.add_column(Text(title, justify="right"), key=key)
        self.has_columns = True
        self.refresh_tools()
        table.focus()

    def on_store_changed(self, message: StoreChanged) -> None:
        if self.has_columns:
            self.refresh_tools()

    def refresh_tools(self) -> None:
        table = self.query_one(DataTable)
        selected = table.cursor_row
        # The cursor stays on its tool, not its row: the tools reorder as their counts
        # change, and a Down then Enter typed at once opened the tool that moved up.
        tool = self._selected_tool()
        table.clear()
        for stats in self.store.tool_stats():
            rate = f"{100 * stats.errors / stats.count:.0f}%" if stats.count else ""
            numbers = (
                str(stats.count),
                str(stats.errors),
                rate,
                duration(stats.median),
                duration(stats.p95),
                str(stats.in_flight),
            )
            table.add_row(
                Text(cell(stats.name, 40)),  # a str cell would be read as markup
                *(Text(number, justify="right") for number in numbers),
                key=stats.name,
            )
        if tool is not None and tool in table.rows:
            table.move_cursor(row=table.get_row_index(tool))
        elif table.row_count:
            table.move_cursor(row=min(selected, table.row_count - 1))

    def _selected_tool(self) -> str | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_calls(self) -> None:
        """The selected tool's calls, across runs."""
        name = self._selected_tool()
        if name is None:
            return
        self.app.push_screen(ToolCallsScreen(self.store, name, clock=self.clock))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_calls()
