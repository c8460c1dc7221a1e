"""Per-tool statistics across every run: calls, errors, latencies, calls in flight."""

from __future__ import annotations

import statistics
from collections import deque
from typing import Final

import msgspec

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


class ToolTally(msgspec.Struct):
    """What the store counts of one tool as calls and results are paired."""

    count: int = 0
    errors: int = 0
    latencies: deque[float] = msgspec.field(default_factory=lambda: deque(maxlen=LATENCY_SAMPLES))
    in_flight: set[tuple[RunKey, str]] = msgspec.field(default_factory=set)


def tool_stats(tallies: dict[str, ToolTally]) -> list[ToolStats]:
    """Each tool's statistics, busiest first."""
    stats = []
    for name, tally in tallies.items():
        latencies = sorted(tally.latencies)
        median = statistics.median(latencies) if latencies else None
        p95 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.95))] if latencies else None
        stats.append(ToolStats(name, tally.count, tally.errors, len(tally.in_flight), median, p95))
    stats.sort(key=lambda s: (-s.count, s.name))
    return stats


__all__ = ["LATENCY_SAMPLES", "ToolStats", "ToolTally", "tool_stats"]
