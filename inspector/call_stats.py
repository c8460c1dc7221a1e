"""Calls across runs, grouped: how many, what they spent, how long they took, how many failed.

One fold for every such table: the app's tool calls (``t``, :mod:`inspector.tool_stats`
reads :func:`latency_quantiles` from here) and model calls (``M``), and ``runtop stats
--by model|tool|agent``. A group is fed calls one at a time (:meth:`CallTally.add`): a
timeline's model or tool nodes (:func:`add_nodes`), or whole runs of an agent.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Final

import msgspec

from inspector.timeline_nodes import NodeKind, Outcome, TimelineNode, node_kind
from ledger_reader import LlmCall, NodeEnter, RunCompleted, RunEvent, RunTotals, parse_time
from ledger_reader.timespan import call_seconds, model_answered

FAILED: Final = frozenset({Outcome.ERROR})
"""How a call that failed ended (a call cancelled with its run, or left unfinished, did
not fail)."""
UNANSWERED: Final = frozenset({Outcome.CANCELED, Outcome.UNFINISHED})
"""How a model call that got no answer ended (canceled with its run, or left open when
its run ended or its writer went): not counted as a call, by the app's ``M`` nor
``runtop stats``, but what it said it spent is (:meth:`CallTally.spend`): a call canceled
while it streamed was charged, and its run's totals count it."""


def latency_quantiles(latencies: Sequence[float]) -> tuple[float | None, float | None]:
    """The median and the 95th percentile of ``latencies`` (``None`` for none): the p95 is
    the sample 95 % of the way up, as the tool calls' screen has always said it."""
    if not latencies:
        return None, None
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return statistics.median(ordered), p95


class CallStats(msgspec.Struct, frozen=True, kw_only=True):
    """One group (a model, a tool, an agent) across runs."""

    name: str
    calls: int
    """Calls made (an agent's: its runs)."""
    errors: int
    """Calls that failed (an agent's: runs that failed)."""
    running: int
    """Calls not ended yet."""
    runs: int
    """Runs that made them."""
    median: float | None
    """Seconds, of the calls that ended; ``None`` when none did."""
    p95: float | None
    totals: RunTotals
    """Tokens and cost they said (:mod:`ledger_reader.totals`; nothing said: ``None``s)."""


class CallTally:
    """What one group's calls add up to, as they are fed."""

    __slots__ = ("calls", "errors", "latencies", "running", "runs", "totals")

    def __init__(self) -> None:
        self.calls = 0
        self.errors = 0
        self.running = 0
        self.runs: set[object] = set()
        self.latencies: list[float] = []
        self.totals = RunTotals()

    def add(
        self,
        run: object,
        *,
        seconds: float | None,
        failed: bool = False,
        running: bool = False,
        spent: RunTotals | None = None,
    ) -> None:
        """One call of run ``run`` (any key of it): how long it took (``None``: not known,
        or still running), whether it failed or runs still, what it spent."""
        self.calls += 1
        self.errors += failed
        self.running += running
        self.runs.add(run)
        if seconds is not None and not running:
            self.latencies.append(seconds)
        if spent is not None:
            self.totals.add(spent)

    def spend(self, run: object, spent: RunTotals) -> None:
        """What a call of run ``run`` that got no answer said it spent: counted in the
        group's tokens and cost (as its run's totals count it), not as a call."""
        self.runs.add(run)
        self.totals.add(spent)

    def merge(self, other: CallTally, run: object) -> None:
        """Add another tally's calls, all of them run ``run``'s (one run's, into the app's
        table of every run)."""
        self.calls += other.calls
        self.errors += other.errors
        self.running += other.running
        if other.calls or other.runs:
            self.runs.add(run)
        self.latencies.extend(other.latencies)
        self.totals.add(other.totals)

    def stats(self, name: str) -> CallStats:
        median, p95 = latency_quantiles(self.latencies)
        return CallStats(
            name=name,
            calls=self.calls,
            errors=self.errors,
            running=self.running,
            runs=len(self.runs),
            median=median,
            p95=p95,
            totals=self.totals.rounded(),
        )


def call_stats(tallies: dict[str, CallTally]) -> list[CallStats]:
    """Each group's statistics, busiest first (then by name)."""
    stats = [tally.stats(name) for name, tally in tallies.items()]
    stats.sort(key=lambda s: (-s.calls, s.name))
    return stats


def node_spent(node: TimelineNode) -> RunTotals | None:
    """What a model call's node said it spent (``None`` for a node that said nothing)."""
    if node.prompt_tokens is None and node.output_tokens is None and node.cost_usd is None:
        return None
    return RunTotals(
        prompt_tokens=node.prompt_tokens, output_tokens=node.output_tokens, cost_usd=node.cost_usd
    )


def add_nodes(
    tallies: dict[str, CallTally], run: object, nodes: Iterable[TimelineNode], kind: NodeKind
) -> None:
    """Feed a run's model calls (``kind`` ``MODEL``, grouped by model) or tool calls
    (``TOOL``, by tool) from its timeline's nodes."""
    for node in nodes:
        if node.kind is not kind:
            continue
        unanswered = kind is NodeKind.MODEL and node.outcome in UNANSWERED
        spent = node_spent(node)
        if unanswered and spent is None:
            continue  # no answer and nothing spent: nothing to count
        name = (node.model or node.name) if kind is NodeKind.MODEL else node.name
        tally = tallies.get(name)
        if tally is None:
            tally = tallies[name] = CallTally()
        if unanswered and spent is not None:
            tally.spend(run, spent)
            continue
        tally.add(
            run,
            seconds=node.duration,
            failed=node.outcome in FAILED,
            running=node.in_flight,
            spent=spent,
        )


class RunModelCalls:
    """One run's model calls by model, as the store folds its events (the app's model
    calls' screen adds every run's up: :meth:`inspector.store.RunStore.model_stats`).

    A call lasts from its model node's ``node_enter`` to its ``llm_call`` (the node the
    call names, else the newest open, as the timeline pairs them); one whose start was
    not folded (it came before the events read) counts without a duration. A call that
    got no answer (``llm_call`` status ``cancelled``, or none before the run ended) is not
    counted (:data:`UNANSWERED`).
    """

    __slots__ = ("_open", "tallies")

    def __init__(self) -> None:
        self.tallies: dict[str, CallTally] = {}
        self._open: dict[str, tuple[float | None, str]] = {}
        """Model nodes entered and not yet answered: their start and the model named."""

    def add(self, event: RunEvent) -> None:
        match event:
            case NodeEnter(payload=payload) if node_kind(payload.node_id) is NodeKind.MODEL:
                name = payload.model or payload.node_name or "model"
                self._open[payload.node_id or ""] = (_seconds(event.time), name)
            case LlmCall(payload=payload):
                node = payload.node_id if payload.node_id in self._open else None
                if node is None and self._open:
                    node = next(reversed(self._open))
                start, named = self._open.pop(node) if node is not None else (None, "model")
                spent = RunTotals()
                spent.add_call(payload)
                spent.model_calls = None
                name = payload.model or named
                tally = self.tallies.get(name)
                if tally is None:
                    tally = self.tallies[name] = CallTally()
                if payload.status in ("cancelled", "canceled"):
                    tally.spend(None, spent)  # no answer: its spending, not a call
                    return
                took = call_seconds(start, model_answered(event))
                tally.add(None, seconds=took, failed=payload.status == "error", spent=spent)
            case RunCompleted():
                self._open.clear()
            case _:
                pass

    def running(self) -> list[str]:
        """The models of the calls under way (entered, not answered)."""
        return [name for _, name in self._open.values()]


def _seconds(time: str | None) -> float | None:
    moment = parse_time(time or "")
    return moment.timestamp() if moment is not None else None


__all__ = [
    "CallStats",
    "CallTally",
    "RunModelCalls",
    "add_nodes",
    "call_stats",
    "latency_quantiles",
    "node_spent",
]
