"""Tool calls across every run: how often, how often they failed, how long they took."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable

from inspector.status_words import STILL_GOING
from tui.screens.stats_table import StatsTableScreen
from tui.screens.tool_calls import ToolCallsScreen
from tui.text import duration


class ToolsScreen(StatsTableScreen):
    """Per-tool statistics, live."""

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

    HEADING = "Tool calls across all runs"
    FIRST = ("TOOL", "tool")
    NUMBERS = (
        ("CALLS", "calls"),
        ("ERRORS", "errors"),
        ("ERROR %", "rate"),
        ("MEDIAN", "median"),
        ("P95", "p95"),
        (STILL_GOING.upper(), "flight"),
    )

    def rows(self) -> Iterable[tuple[str, tuple[str, ...]]]:
        for stats in self.store.tool_stats():
            rate = f"{100 * stats.errors / stats.count:.0f}%" if stats.count else ""
            yield (
                stats.name,
                (
                    str(stats.count),
                    str(stats.errors),
                    rate,
                    duration(stats.median),
                    duration(stats.p95),
                    str(stats.in_flight),
                ),
            )

    def action_calls(self) -> None:
        """The selected tool's calls, across runs."""
        name = self.selected_name()
        if name is None:
            return
        self.app.push_screen(ToolCallsScreen(self.store, name, clock=self.clock))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_calls()
