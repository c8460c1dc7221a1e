"""Model calls across every run, by model: how many, how often they failed, how long they
took, what they spent (``M``; ``runtop stats --by model`` says the same as text)."""

from __future__ import annotations

from typing import ClassVar, Final

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Static

from inspector import RunStore
from inspector.status_words import STILL_GOING
from tui.runtop_screen import RuntopScreen
from tui.store_news import StoreChanged
from tui.text import cell, cost, duration, tokens
from tui.widgets.key_bar import KeyBar
from tui.widgets.tool_table import ToolTable

NUMBERS: Final = (
    ("CALLS", "calls"),
    ("ERRORS", "errors"),
    ("MEDIAN", "median"),
    ("P95", "p95"),
    ("TOKENS", "tokens"),
    ("COST", "cost"),
    ("RUNS", "runs"),
    (STILL_GOING.upper(), "flight"),
)
"""The numeric columns (title, key): right-aligned, so their digits line up."""


class ModelsScreen(RuntopScreen):
    """Per-model statistics, live (a handful of rows: the stock DataTable, as the tool
    calls' screen has)."""

    LISTS_MODEL_CALLS: ClassVar[bool] = True

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,M", "back", "Back", tooltip="The screen before this one"),
    ]

    CSS_PATH = "tools.tcss"

    def __init__(self, store: RunStore, *, clock: float | None = None) -> None:
        super().__init__()
        self.store = store
        self.clock = clock
        self.has_columns = False
        """The table has its columns (the store's news can come before they are added)."""

    def compose(self) -> ComposeResult:
        yield Static("Model calls across all runs", id="tools-title")
        yield ToolTable()
        yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("MODEL", key="model")
        for title, key in NUMBERS:
            table.add_column(Text(title, justify="right"), key=key)
        self.has_columns = True
        self.refresh_models()
        table.focus()

    def on_store_changed(self, message: StoreChanged) -> None:
        if self.has_columns:
            self.refresh_models()

    def refresh_models(self) -> None:
        table = self.query_one(DataTable)
        selected = table.cursor_row
        model = self._selected_model()  # the cursor stays on its model as rows reorder
        table.clear()
        for stats in self.store.model_stats():
            spent = stats.totals
            numbers = (
                str(stats.calls),
                str(stats.errors),
                duration(stats.median) if stats.median is not None else "",
                duration(stats.p95) if stats.p95 is not None else "",
                tokens(spent.tokens) if spent.tokens is not None else "",
                cost(spent.cost_usd) if spent.cost_usd is not None else "",
                str(stats.runs),
                str(stats.running),
            )
            table.add_row(
                Text(cell(stats.name, 40)),  # a str cell would be read as markup
                *(Text(number, justify="right") for number in numbers),
                key=stats.name,
            )
        if model is not None and model in table.rows:
            table.move_cursor(row=table.get_row_index(model))
        elif table.row_count:
            table.move_cursor(row=min(selected, table.row_count - 1))

    def _selected_model(self) -> str | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def action_back(self) -> None:
        self.app.pop_screen()
