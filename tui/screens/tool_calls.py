"""Every call of one tool, across runs: when, how long, how it ended; Enter opens the run there."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Static

from inspector import RunStore, ToolCallView
from tui.describe import compact_json
from tui.format import cell, duration, short_id
from tui.widgets.key_bar import KeyBar


def calls_of(store: RunStore, tool: str) -> list[ToolCallView]:
    """The calls of ``tool`` in every run the store holds, newest first."""
    found = [
        call
        for run in store.snapshot().runs
        for call in store.tool_calls(run.key)
        if call.name == tool
    ]
    found.sort(key=lambda call: call.started_at or 0.0, reverse=True)
    return found


class ToolCallsScreen(Screen[None]):
    """The calls of one tool (a handful to thousands: the stock DataTable is right here)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("enter", "open", "Open the run there"),
    ]

    CSS_PATH = "tool_calls.tcss"

    def __init__(self, store: RunStore, tool: str, *, clock: float | None = None) -> None:
        super().__init__()
        self.store = store
        self.tool = tool
        self.clock = clock
        self.calls: list[ToolCallView] = []

    def compose(self) -> ComposeResult:
        yield Static(id="calls-title")
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for title in ("RUN", "AGENT", "AT (UTC)", "TOOK", "OUTCOME", "ARGUMENTS"):
            table.add_column(Text(title, justify="right") if title == "TOOK" else title)
        self.calls = calls_of(self.store, self.tool)
        errors = sum(call.is_error for call in self.calls)
        noun = "call" if len(self.calls) == 1 else "calls"
        said = f"{errors:,} error{'' if errors == 1 else 's'}"  # the outcome's word, counted
        title = f"{cell(self.tool, 60)}: {len(self.calls):,} {noun}, {said}"
        title += "  (Enter opens the run at the call)"
        self.query_one("#calls-title", Static).update(title)
        for call in self.calls:
            run = self.store.get(call.run)
            agent = (run.agent or run.skill) if run is not None else None
            outcome = "error" if call.is_error else ("done" if call.done else "in flight")
            table.add_row(
                short_id(call.run.run_id),
                cell(agent, 20),
                _clock_time(call.started_at),
                Text(
                    duration(call.duration) if call.duration is not None else "…", justify="right"
                ),
                outcome,
                compact_json(call.arguments, 60),
            )
        table.focus()

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if not self.calls or not 0 <= table.cursor_row < len(self.calls):
            return
        call = self.calls[table.cursor_row]
        from tui.screens.run import RunScreen

        self.app.push_screen(RunScreen(self.store, call.run, clock=self.clock, select=call.seq - 1))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()


def _clock_time(moment: float | None) -> str:
    import time

    if moment is None:
        return ""
    return time.strftime("%H:%M:%S", time.gmtime(moment)) + f".{int(moment % 1 * 1000):03d}"
