"""A screen of calls across every run, one row a group (a tool, a model), live: what the
tool calls' (``t``) and the model calls' (``M``) screens share."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from inspector import RunStore
from tui.runtop_screen import RuntopScreen
from tui.store_news import StoreChanged
from tui.text import cell
from tui.widgets.key_bar import KeyBar
from tui.widgets.tool_table import ToolTable


class StatsTableScreen(RuntopScreen):
    """Groups of calls across runs in the stock DataTable (a handful of rows), redrawn as
    the store changes, the cursor kept on its group as the rows reorder."""

    HEADING: ClassVar[str] = ""
    """The line above the table."""
    FIRST: ClassVar[tuple[str, str]] = ("", "")
    """The first column's title and key: what a row is (a tool, a model)."""
    NUMBERS: ClassVar[tuple[tuple[str, str], ...]] = ()
    """The numeric columns (title, key): right-aligned, so their digits line up."""

    CSS_PATH = "tools.tcss"

    def __init__(self, store: RunStore, *, clock: float | None = None) -> None:
        super().__init__()
        self.store = store
        self.clock = clock
        self.has_columns = False
        """The table has its columns (the store's news can come before they are added)."""

    def compose(self) -> ComposeResult:
        yield Static(self.HEADING, id="tools-title")
        yield ToolTable()
        yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column(self.FIRST[0], key=self.FIRST[1])
        for title, key in self.NUMBERS:
            table.add_column(Text(title, justify="right"), key=key)
        self.has_columns = True
        self.refresh_rows()
        table.focus()

    def on_store_changed(self, message: StoreChanged) -> None:
        if self.has_columns:
            self.refresh_rows()

    def rows(self) -> Iterable[tuple[str, tuple[str, ...]]]:
        """Each group's name and its numbers' words, in the order shown."""
        return ()

    def refresh_rows(self) -> None:
        table = self.query_one(DataTable)
        selected = table.cursor_row
        # The cursor stays on its group, not its row: the groups reorder as their counts
        # change, and a Down then Enter typed at once opened the tool that moved up.
        chosen = self.selected_name()
        table.clear()
        for name, numbers in self.rows():
            table.add_row(
                Text(cell(name, 40)),  # a str cell would be read as markup
                *(Text(number, justify="right") for number in numbers),
                key=name,
            )
        if chosen is not None and chosen in table.rows:
            table.move_cursor(row=table.get_row_index(chosen))
        elif table.row_count:
            table.move_cursor(row=min(selected, table.row_count - 1))

    def selected_name(self) -> str | None:
        """The group under the cursor."""
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def action_back(self) -> None:
        self.app.pop_screen()
