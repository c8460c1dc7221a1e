"""What the UI shows of runs: immutable views, and what they are made from.

A run's :class:`~ledger_reader.RunSummary` (from its ledger, a server or
the manager) says its status, times and counts; :class:`RunExtras` adds up
what a summary does not count (tool calls, tokens and cost, errors, tools in
flight) as events are folded in. :func:`make_view` freezes the two into a
:class:`RunView`, which the store hands out: snapshots share views and never
change under the reader. :class:`TrackedRun` keeps a live run's recent
events for a source that holds events rather than files.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from typing import Any, Final, NamedTuple

import msgspec

from inspector.burn import RecentCall, RecentCalls
from inspector.call_stats import RunModelCalls
from ledger_reader import (
    ErrorEvent,
    LedgerItem,
    LlmCall,
    RunCompleted,
    RunEvent,
    RunStatus,
    RunSummary,
    RunTotals,
    SummaryBuilder,
    ToolCall,
    ToolResult,
    parse_time,
)
from ledger_reader.summary import PendingApproval
from ledger_reader.timespan import call_seconds, elapsed


class RunKey(NamedTuple):
    """A run, by the source it comes from and its id (two sources may share an id)."""

    source: str
    run_id: str


class ToolCallView(msgspec.Struct, frozen=True):
    """A ``tool_call`` paired with its ``tool_result``."""

    run: RunKey
    call_id: str
    name: str
    node_id: str | None
    arguments: Any
    arguments_truncated: bool
    started_at: float | None
    seq: int
    output: Any = None
    output_truncated: bool = False
    is_error: bool = False
    ended_at: float | None = None
    result_seq: int | None = None

    @property
    def done(self) -> bool:
        return self.result_seq is not None

    @property
    def duration(self) -> float | None:
        """Seconds from call to result (``None`` while in flight or when times are missing):
        :func:`~ledger_reader.timespan.call_seconds`."""
        return call_seconds(self.started_at, self.ended_at)


class RunView(msgspec.Struct, frozen=True, gc=False):
    """One run at a glance, as the table shows it. Immutable: the store makes a new one.

    The store makes one for every run that changed, 10,000 at once when a
    big directory opens. So a view holds the run's summary as its source
    gave it (never changed after) and what the store counted beside it, and
    works the rest out when asked; only the start time, which every sort
    reads, is worked out up front: copying the summary's 27 fields into each
    view would be a noticeable share of the launch (``bench/tui.py --only
    launch``).
    """

    key: RunKey
    summary: RunSummary
    started_at: float | None = None
    detailed: bool = True
    """Tokens, cost and tool counts come from every event (not only a head-and-tail summary)."""
    error_count: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    totals: RunTotals = msgspec.field(default_factory=RunTotals)
    """Its model calls' tokens and cost, summed as ``runtop ls`` sums them
    (:mod:`ledger_reader.totals`)."""
    current_tool: str | None = None
    """The tool in flight, while the run is live."""
    recorded: bool = False
    """Its source plays a recording (a replay): a run still playing has lasted until its
    last event so far, not until now (it started yesterday, not 21 hours ago)."""
    last_at: float | None = None
    """Its last event's time (else its end's) as POSIX seconds, worked out up front as the
    start is."""
    lasted: float | None = None
    """How long it lasted, for a run that will last no longer (not live): worked out up
    front, as a sort by duration and the filter's ``duration:`` ask it of every run."""
    recent_calls: tuple[RecentCall, ...] = ()
    """Its model calls of the minute before its newest one: its burn rate
    (:mod:`inspector.burn`)."""
    with_children: RunTotals | None = None
    """Its totals with its child runs' (and theirs) added, where it has child runs in its
    source (:func:`ledger_reader.totals.descendants_added`, kept by the store); ``None``
    without any."""

    @property
    def total(self) -> RunTotals:
        """What it spent with its child runs (:attr:`with_children`), else on its own."""
        return self.with_children if self.with_children is not None else self.totals

    @property
    def prompt_tokens(self) -> int:
        return self.totals.prompt_tokens or 0

    @property
    def output_tokens(self) -> int:
        return self.totals.output_tokens or 0

    @property
    def cost_usd(self) -> float:
        return self.totals.cost_usd or 0.0

    @property
    def cost_recorded(self) -> bool:
        """Some model call said what it cost: ``cost_usd`` is then known (``0.0`` is free),
        else not recorded (``0.0`` means nothing)."""
        return self.totals.cost_usd is not None

    @property
    def status(self) -> RunStatus:
        return self.summary.status

    @property
    def skill(self) -> str | None:
        return self.summary.skill

    @property
    def agent(self) -> str | None:
        return self.summary.agent

    @property
    def ended_at(self) -> float | None:
        return _epoch(self.summary.completed_at)

    @property
    def last_event_at(self) -> float | None:
        return _epoch(self.summary.last_event_at)

    @property
    def event_count(self) -> int | None:
        return self.summary.event_count

    @property
    def damaged_lines(self) -> int | None:
        return self.summary.damaged_lines

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(self.summary.warnings)

    @property
    def parent_run_id(self) -> str | None:
        return self.summary.parent_run_id

    @property
    def resumed_from(self) -> str | None:
        return self.summary.resumed_from

    @property
    def pending_approval(self) -> PendingApproval | None:
        return self.summary.pending_approval

    @property
    def cancel_requested(self) -> bool:
        """A cancel was asked for and the run has not stopped yet."""
        return self.summary.cancel_requested and self.live

    @property
    def current_node(self) -> str | None:
        """The node the run is in, while it is live."""
        return self.summary.current_node if self.live else None

    @property
    def error(self) -> str | None:
        return self.summary.error

    @property
    def input(self) -> Any:
        return self.summary.input

    @property
    def writer(self) -> str | None:
        return self.summary.writer

    @property
    def path(self) -> str | None:
        return self.summary.path

    @property
    def run_id(self) -> str:
        return self.key.run_id

    @property
    def source(self) -> str:
        return self.key.source

    @property
    def live(self) -> bool:
        return self.status.is_live

    def duration(self, now: float | None = None, replayed_at: float | None = None) -> float | None:
        """Seconds from start to end, or to ``now`` while live.

        A replayed run still playing has lasted until the moment its replay has played up
        to, ``replayed_at`` (its clock, stopped while paused), not until now (it started
        yesterday, not 21 hours ago); not given, until its last event so far. A run that
        ended or stopped (stale, abandoned) lasted until its last event, whatever the clock:
        the one rule of :func:`ledger_reader.timespan.elapsed`, as ``runtop ls`` says it."""
        if self.lasted is not None:
            return self.lasted
        start = self.started_at
        if start is None:
            return None
        summary = self.summary
        live = summary.status in LIVE
        if live and not self.recorded and summary.completed_at is None:
            end = now if now is not None else time.time()
        else:
            end = self.last_at or start
            if live and replayed_at is not None:
                end = max(end, replayed_at)
        return elapsed(start, end)

    @property
    def doing(self) -> str:
        """What the run is doing now, in a few words."""
        if self.cancel_requested and self.live:
            return "cancelling…"
        if self.pending_approval is not None:
            # The status says it waits; this says on what (the question asked).
            question = self.pending_approval.prompt
            if self.status.waits:
                return question or "awaiting approval"
            return UNANSWERED + question if question else UNANSWERED.rstrip(": ")
        if self.current_tool:
            return f"tool {self.current_tool}"
        if self.current_node:
            return node_words(self.current_node)
        return ""


LIVE: Final = frozenset(status for status in RunStatus if status.is_live)
"""The statuses of a run that may still write events (:attr:`RunStatus.is_live`)."""

UNANSWERED: Final = "approval unanswered: "
"""Before the question of a run that asked an approval and stopped waiting on it (stale, or
ended), as ``runtop ls`` says it beside ``awaiting approval: …`` of a run that waits."""


def node_words(node_id: str) -> str:
    """A node id as DOING NOW says it: ``tool:web_search#1`` as ``tool web_search`` (the
    words of a tool call in flight), ``llm:claude-haiku#2`` as ``llm claude-haiku``."""
    kind, colon, rest = node_id.partition(":")
    if not colon or not kind or not rest:
        return node_id
    name, hash_, count = rest.rpartition("#")
    return f"{kind} {name if hash_ and count.isdigit() and name else rest}"


def _epoch(value: str | None) -> float | None:
    if not value:
        return None
    parsed = parse_time(value)
    return parsed.timestamp() if parsed is not None else None


class RunExtras(msgspec.Struct):
    """What a summary does not count: tool calls, tokens, cost, errors, tools in flight.

    Only adds up, so events may be folded in any order: live ones as they
    land, and the ledger's earlier ones later, when the run is detailed.
    """

    error_count: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    totals: RunTotals = msgspec.field(default_factory=RunTotals)
    """Its model calls' tokens and cost (the one fold, :mod:`ledger_reader.totals`)."""
    open_tools: dict[str, str] = msgspec.field(default_factory=dict)
    closed_tools: set[str] = msgspec.field(default_factory=set)
    """Calls whose result came before their call was folded (history folded after live events)."""
    recent: RecentCalls = msgspec.field(default_factory=RecentCalls)
    """Its model calls of the last minute, for its burn rate."""
    models: RunModelCalls = msgspec.field(default_factory=RunModelCalls)
    """Its model calls by model, for the model calls across runs (``M``)."""

    def add(self, event: RunEvent) -> None:
        self.models.add(event)
        match event:
            case ToolCall(payload=payload):
                self.tool_calls += 1
                call_id = payload.call_id or f"seq-{event.seq}"
                if call_id in self.closed_tools:
                    self.closed_tools.discard(call_id)
                else:
                    self.open_tools[call_id] = payload.name or "tool"
            case ToolResult(payload=payload):
                call_id = payload.call_id or ""
                if self.open_tools.pop(call_id, None) is None and call_id:
                    self.closed_tools.add(call_id)
                if payload.is_error:
                    self.tool_errors += 1
            case LlmCall(payload=payload):
                self.totals.add_call(payload)
                self.recent.add(event)
            case ErrorEvent():
                self.error_count += 1
            case RunCompleted():
                self.open_tools.clear()
            case _:
                pass


def make_view(
    key: RunKey,
    summary: RunSummary,
    extras: RunExtras | None,
    *,
    detailed: bool,
    recorded: bool = False,
) -> RunView:
    """Freeze a run's summary and extras into the view the UI draws."""
    started = _epoch(summary.started_at)
    last = _epoch(summary.last_event_at) or _epoch(summary.completed_at)
    lasted = None if summary.status in LIVE else elapsed(started, last or started)
    if extras is None:
        # No event of it folded here: its totals are its summary's, as ``runtop ls`` says
        # them (a coding agent's session read whole by its source, not detailed again).
        return RunView(
            key,
            summary,
            started,
            detailed,
            totals=summary.totals,
            recorded=recorded,
            last_at=last,
            lasted=lasted,
        )
    totals = extras.totals.copy()
    if detailed and totals.model_calls is None:
        totals.model_calls = 0  # every event folded, and no model call among them
    # Only its newest events folded (the source gave the rest as history to read later, or
    # never, for a ledger too big to detail): a floor, said so, not its whole spend.
    totals.partial = not detailed
    current_tool = None
    if extras.open_tools and summary.status.is_live:
        current_tool = next(reversed(extras.open_tools.values()))
    return RunView(
        key,
        summary,
        started,
        detailed,
        extras.error_count,
        extras.tool_calls,
        extras.tool_errors,
        totals,
        current_tool,
        recorded,
        last,
        lasted,
        tuple(extras.recent.calls),
    )


class TrackedRun:
    """A run's summary in the making and its most recent events (bounded)."""

    __slots__ = ("builder", "dropped", "recent")

    def __init__(self, run_id: str, path: str | None, keep: int | None) -> None:
        self.builder = SummaryBuilder(run_id, path)
        self.recent: deque[LedgerItem] = deque(maxlen=keep)
        self.dropped = 0

    def add(self, item: LedgerItem) -> None:
        if len(self.recent) == self.recent.maxlen:
            self.dropped += 1
        self.recent.append(item)
        self.builder.add_item(item)

    def window(self, start: int, stop: int) -> list[LedgerItem]:
        """Items by position; those older than the kept window are gone (no ledger to ask)."""
        begin = max(start - self.dropped, 0)
        end = max(stop - self.dropped, 0)
        return list(itertools.islice(self.recent, begin, end))
