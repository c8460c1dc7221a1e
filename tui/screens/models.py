"""Model calls across every run, by model: how many, how often they failed, how long they
took, what they spent (``M``; ``runtop stats --by model`` says the same as text)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.binding import Binding, BindingType

from inspector.status_words import STILL_GOING
from tui.screens.stats_table import StatsTableScreen
from tui.text import cost, duration, tokens


class ModelsScreen(StatsTableScreen):
    """Per-model statistics, live."""

    LISTS_MODEL_CALLS: ClassVar[bool] = True

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,M", "back", "Back", tooltip="The screen before this one"),
    ]

    HEADING = "Model calls across all runs"
    FIRST = ("MODEL", "model")
    NUMBERS = (
        ("CALLS", "calls"),
        ("ERRORS", "errors"),
        ("MEDIAN", "median"),
        ("P95", "p95"),
        ("TOKENS", "tokens"),
        ("COST", "cost"),
        ("RUNS", "runs"),
        (STILL_GOING.upper(), "flight"),
    )

    def rows(self) -> Iterable[tuple[str, tuple[str, ...]]]:
        for stats in self.store.model_stats():
            spent = stats.totals
            yield (
                stats.name,
                (
                    str(stats.calls),
                    str(stats.errors),
                    duration(stats.median) if stats.median is not None else "",
                    duration(stats.p95) if stats.p95 is not None else "",
                    tokens(spent.tokens) if spent.tokens is not None else "",
                    cost(spent.cost_usd) if spent.cost_usd is not None else "",
                    str(stats.runs),
                    str(stats.running),
                ),
            )
