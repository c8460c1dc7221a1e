"""Per-tool statistics across every run: calls, errors, latencies, calls in flight.

They count the runs the store holds now: a run reset (its events read again from the
start, a replay played again) or removed takes back what it had added.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Final

import msgspec

from inspector.call_stats import latency_quantiles
from inspector.model import RunKey

LATENCY_SAMPLES: Final = 2048
"""Latencies kept per tool (the latest), for its median and p95."""


class ToolStats(msgspec.Struct, frozen=True):
    """One tool across every run: how often, how often it failed, how long it took."""

    name: str
    count: int
    errors: int
    in_flight: int
    median: float | None
    p95: float | None


class RunShare(msgspec.Struct):
    """What one run added to a tool's tally, to take back when the run is reset or removed."""

    calls: int = 0
    errors: int = 0


class ToolTally(msgspec.Struct):
    """What the store counts of one tool as calls and results are paired."""

    count: int = 0
    errors: int = 0
    latencies: deque[tuple[RunKey, float]] = msgspec.field(
        default_factory=lambda: deque(maxlen=LATENCY_SAMPLES)
    )
    """The latest calls' run and duration (the run: to take them back with it)."""
    in_flight: set[tuple[RunKey, str]] = msgspec.field(default_factory=set)

    def forget(self, run: RunKey, share: RunShare) -> None:
        """Take back what ``run`` added: its calls, errors, latencies and calls in flight."""
        self.count -= share.calls
        self.errors -= share.errors
        self.in_flight = {flight for flight in self.in_flight if flight[0] != run}
        if any(sample[0] == run for sample in self.latencies):
            kept = (sample for sample in self.latencies if sample[0] != run)
            self.latencies = deque(kept, maxlen=LATENCY_SAMPLES)

    @property
    def empty(self) -> bool:
        """No run the store holds has called the tool."""
        return self.count <= 0 and not self.in_flight


def tool_stats(tallies: dict[str, ToolTally], live: Callable[[RunKey], bool]) -> list[ToolStats]:
    """Each tool's statistics, busiest first.

    A call in flight counts as running only in a run that is ``live``: one whose run
    stopped writing (an idle session, a stale run) is unfinished, not running
    (:func:`~inspector.status_words.open_call_word`), as its run's screen says.
    """
    stats = []
    for name, tally in tallies.items():
        median, p95 = latency_quantiles([took for _, took in tally.latencies])
        running = sum(1 for run, _ in tally.in_flight if live(run))
        stats.append(ToolStats(name, tally.count, tally.errors, running, median, p95))
    stats.sort(key=lambda s: (-s.count, s.name))
    return stats


__all__ = ["LATENCY_SAMPLES", "RunShare", "ToolStats", "ToolTally", "tool_stats"]
