"""Every call of one tool, across runs: when, how long, how it ended; Enter opens the run there."""

from __future__ import annotations

from typing import ClassVar, Final

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Static

from inspector import RunStore, RunView, ToolCallView
from inspector.status_words import call_outcome
from tui.runtop_screen import RuntopScreen
from tui.text import cell, compact_json, duration, skill_and_agent
from tui.text.runs import short_id
from tui.widgets.key_bar import KeyBar
from tui.widgets.tool_table import ToolTable


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


ARGUMENTS_ROOM: Final = 12
"""The least of a call's arguments shown, in cells."""


class ToolCallsScreen(RuntopScreen):
    """The calls of one tool (a handful to thousands: the stock DataTable is right here)."""

    LISTS_TOOL_CALLS: ClassVar[bool] = True

    BINDINGS: ClassVar[list[BindingType]] = [
        # First in the bar, Back after it.
        Binding("enter", "open", "Open", tooltip="The selected call's run, at that call"),
        Binding("escape", "back", "Back", tooltip="The screen before this one"),
        *RuntopScreen.RUN_SCREEN_BINDINGS,
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
        yield ToolTable()
        yield KeyBar()

    def on_mount(self) -> None:
        self.calls = calls_of(self.store, self.tool)
        table = self.query_one(DataTable)
        for title in ("RUN", "SKILL / AGENT", "AT (UTC)", "TOOK", "OUTCOME", "ARGUMENTS"):
            table.add_column(Text(title, justify="right") if title == "TOOK" else title)
        self._fill()
        table.focus()

    def on_resize(self) -> None:
        if self.calls:
            self._fill()

    def current_run(self) -> RunView | None:
        """The run of the selected call: ``c``, ``r``, ``a`` act on it, as on its own screen."""
        tables = self.query(DataTable)
        if not tables:
            return None  # the screen is being taken down (the keys are asked still)
        table = tables.first()
        if not self.calls or not 0 <= table.cursor_row < len(self.calls):
            return None
        return self.store.get(self.calls[table.cursor_row].run)

    def _fill(self) -> None:
        """The calls, their arguments cut to the width left (no sideways scroll bar)."""
        table = self.query_one(DataTable)
        row = table.cursor_row
        table.clear()
        errors = sum(call.is_error for call in self.calls)
        noun = "call" if len(self.calls) == 1 else "calls"
        said = f"{errors:,} error{'' if errors == 1 else 's'}"  # the outcome's word, counted
        title = f"{cell(self.tool, 60)}: {len(self.calls):,} {noun}, {said}"
        hint = "  (Enter opens the run at the call)"
        if len(title) + len(hint) <= self.size.width - 1:  # else only the bar's ⏎ Open says it
            title += hint
        self.query_one("#calls-title", Static).update(Text(title))
        # RUN 14, SKILL / AGENT up to 24, AT 12, TOOK 5, OUTCOME 7 (10 for an unfinished
        # call), each with 2 of padding, and the table's vertical scroll bar: the arguments
        # get the rest, at least ARGUMENTS_ROOM (SKILL / AGENT gives way to it, down to its
        # title's width).
        runs = [self.store.get(call.run) for call in self.calls]
        outcomes = [
            call_outcome(done=call.done, is_error=call.is_error, live=run is not None and run.live)
            for call, run in zip(self.calls, runs, strict=True)
        ]
        fixed = 14 + 12 + 5 + max([7, *map(len, outcomes)]) + 6 * 2 + 2
        widest = max(13, min(24, self.size.width - fixed - ARGUMENTS_ROOM))
        who = [skill_and_agent(run.skill, run.agent) if run is not None else "" for run in runs]
        agent_width = max([13] + [len(cell(said, widest)) for said in who])
        room = max(ARGUMENTS_ROOM, self.size.width - fixed - agent_width)
        for call, agent, outcome in zip(self.calls, who, outcomes, strict=True):
            table.add_row(
                short_id(call.run.run_id),
                Text(cell(agent, widest)),  # a str cell would be read as markup
                _clock_time(call.started_at),
                Text(
                    duration(call.duration) if call.duration is not None else "…", justify="right"
                ),
                outcome,
                Text(compact_json(call.arguments, room)),
            )
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1))
        self.app.refresh_bindings()

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if not self.calls or not 0 <= table.cursor_row < len(self.calls):
            return
        call = self.calls[table.cursor_row]
        if (keys := self.run_keys) is not None:
            keys.open_run(self.store, call.run, self.clock, select=call.seq - 1)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.app.refresh_bindings()  # c, r, a: for the selected call's run

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()


def _clock_time(moment: float | None) -> str:
    import time

    if moment is None:
        return ""
    return time.strftime("%H:%M:%S", time.gmtime(moment)) + f".{int(moment % 1 * 1000):03d}"
