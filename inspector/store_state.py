"""What the store holds: each source's state, each run's state between flushes, the
snapshot it hands out, and how a run's tool calls are paired for the per-tool statistics.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from itertools import islice
from typing import Final

import msgspec

from inspector.filters import FilterColumns, RunFilter
from inspector.model import RunExtras, RunKey, RunView, ToolCallView
from inspector.tool_stats import RunShare, ToolTally
from ledger_reader import LedgerItem, RunSummary, ToolCall, ToolResult, parse_time

RECENT_EVENTS: Final = 512
"""A run's latest events the store keeps as they arrived. Where its source numbers them as
its ledger's lines, the event list's and the timeline's newest page (256 events, from a
multiple of 256) is served from them, never read back from the ledger and decoded again
(:meth:`RunState.held`)."""
RECENT_TOOL_CALLS: Final = 500
DETAIL_LIMIT: Final = 32 * 1024 * 1024
"""Ledgers up to this size are read whole in the background for tokens, cost and tools.

A bigger one would hold the interpreter for seconds (a 1 GB ledger is ~4 M
events to decode) and starve the screen; its view says it is not detailed.
"""
DETAIL_EVENTS: Final = 100_000
"""Events of a run without a local ledger fetched for its detail pass, at most."""


class SourceState(msgspec.Struct, frozen=True):
    """A source as the UI shows it: what it can do and whether it is healthy."""

    name: str
    description: str
    live: bool
    can_cancel: bool
    can_resume: bool
    can_approve: bool
    available: bool = True
    can_replay: bool = False
    """A replay: its keys (pause, step, speed, restart) apply."""
    error: str | None = None
    run_count: int = 0
    status: str | None = None
    """The source's own word on how it stands ("connected"), shown when it has no error."""
    opening: bool = False
    """Nothing has come from it yet: its runs are not known (not the same as none)."""
    down_since: float | None = None
    """When it became unavailable (epoch seconds), while it is: its live runs' clocks stop
    there, not at their last event (which may be long before)."""


class SourcesDown(frozenset[str]):
    """The names of the sources that cannot be read now, and since when each (``since``)."""

    since: Mapping[str, float]

    def __new__(cls, states: Iterable[SourceState] = ()) -> SourcesDown:
        down = [state for state in states if not state.available]
        made = super().__new__(cls, (state.name for state in down))
        made.since = {
            state.name: state.down_since for state in down if state.down_since is not None
        }
        return made


class RunState:
    """One run as the store folds it.

    The store makes 10,000 of these when a big directory opens, most of
    them never to see an event: their containers are made on first use.
    """

    __slots__ = (
        "_calls",
        "_early_results",
        "_extras",
        "_held",
        "_held_end",
        "_recent",
        "_shares",
        "detailed",
        "history_count",
        "history_end",
        "key",
        "summary",
    )

    def __init__(self, key: RunKey, summary: RunSummary) -> None:
        self.key = key
        self.summary = summary
        self.detailed = True
        self.history_end: int | None = None
        self.history_count: int | None = None
        self._extras: RunExtras | None = None
        self._recent: deque[LedgerItem] | None = None
        self._held_end: int | None = None
        """The position after the newest of :attr:`recent`, where its source numbers the
        run's items (``None``: not known)."""
        self._held = 0
        """How many of :attr:`recent`'s newest items run on unbroken up to ``_held_end``."""
        self._calls: dict[str, ToolCallView] | None = None
        self._early_results: dict[str, ToolResult] | None = None
        self._shares: dict[str, RunShare] | None = None

    @property
    def extras(self) -> RunExtras:
        if self._extras is None:
            self._extras = RunExtras()
        return self._extras

    @property
    def recent(self) -> deque[LedgerItem]:
        if self._recent is None:
            self._recent = deque(maxlen=RECENT_EVENTS)
        return self._recent

    def arrived(self, count: int, end: int | None) -> None:
        """``count`` items were just added to :attr:`recent`, the last of them at position
        ``end - 1`` (``end``: the run's items, as its source numbers them; ``None`` when it
        cannot be told, which forgets where the items held are)."""
        if count == 0:
            return
        if end is None:
            self._held_end, self._held = None, 0
            return
        unbroken = self._held + count if self._held_end == end - count else count
        self._held_end, self._held = end, min(unbroken, len(self.recent))

    def held(self) -> tuple[int, list[LedgerItem]] | None:
        """The newest items the store holds unbroken and the position of the first of them,
        or ``None`` when it holds none whose positions are known."""
        if self._held_end is None or not self._held or self._recent is None:
            return None
        items = list(islice(self._recent, len(self._recent) - self._held, None))
        return self._held_end - self._held, items

    @property
    def held_end(self) -> int | None:
        """How many items the run has, as far as the store holds them in order (``None``
        when that is not known from what it holds: its source counts)."""
        return self._held_end if self._held else None

    @property
    def calls(self) -> dict[str, ToolCallView]:
        if self._calls is None:
            self._calls = {}
        return self._calls

    @property
    def early_results(self) -> dict[str, ToolResult]:
        if self._early_results is None:
            self._early_results = {}
        return self._early_results

    def share(self, tool: str) -> RunShare:
        """What this run added to ``tool``'s statistics."""
        if self._shares is None:
            self._shares = {}
        share = self._shares.get(tool)
        if share is None:
            share = self._shares[tool] = RunShare()
        return share

    @property
    def worth_detailing(self) -> bool:
        """Whether the history a detail pass would read is small enough to read."""
        return (self.history_end or 0) <= DETAIL_LIMIT and (
            self.history_count or 0
        ) <= DETAIL_EVENTS


class Snapshot(msgspec.Struct, frozen=True):
    """The runs at one moment, newest first, with the sources' states."""

    runs: tuple[RunView, ...]
    sources: tuple[SourceState, ...]
    version: int
    replayed_at: dict[str, float] = msgspec.field(default_factory=dict)
    """The moment each replay has played up to: the last event of its runs so far (only
    sources that play a recording are here)."""
    columns: FilterColumns | None = None
    """The store's columns of its runs' fields, which answer a filter of its runs now."""

    def filtered(self, run_filter: RunFilter | None, *, now: float | None = None) -> list[RunView]:
        """The runs ``run_filter`` passes (but for its ``has:``), newest first; a live run's
        duration measured to ``now`` (default: the clock), as the table shows it."""
        if run_filter is None:
            return list(self.runs)
        down = self.sources_down()
        if self.columns is not None:
            chosen = self.columns.select(run_filter, self.runs, down, now, self.replayed_at)
            if chosen is not None:
                return chosen
        return run_filter.select_views(self.runs, down, now, self.replayed_at)

    def sources_down(self) -> SourcesDown:
        """The sources that cannot be read now: their live runs show as unknown."""
        return SourcesDown(self.sources)


def pair_tool_event(
    tools: dict[str, ToolTally], state: RunState, event: ToolCall | ToolResult
) -> None:
    """Pair calls with results, for the run's list and the per-tool statistics."""
    key = state.key
    moment = parse_time(event.time)
    when = moment.timestamp() if moment is not None else None
    if isinstance(event, ToolCall):
        payload = event.payload
        call_id = payload.call_id or f"seq-{event.seq}"
        seen = state.calls.get(call_id)
        if seen is not None and seen.seq == event.seq:
            return  # this very call again (its events delivered anew): counted once
        name = payload.name or "tool"
        state.calls[call_id] = ToolCallView(
            run=key,
            call_id=call_id,
            name=name,
            node_id=payload.node_id,
            arguments=payload.arguments,
            arguments_truncated=bool(payload.truncated),
            started_at=when,
            seq=event.seq,
        )
        while len(state.calls) > RECENT_TOOL_CALLS:
            state.calls.pop(next(iter(state.calls)))
        tally = tools.setdefault(name, ToolTally())
        tally.count += 1
        state.share(name).calls += 1
        tally.in_flight.add((key, call_id))
        early = state.early_results.pop(call_id, None)
        if early is not None:
            pair_tool_event(tools, state, early)
        return
    result = event.payload
    call_id = result.call_id or ""
    call = state.calls.get(call_id)
    if call is None:
        if call_id:
            # The call is in history not folded yet (a detail pass runs behind live events).
            state.early_results[call_id] = event
            while len(state.early_results) > RECENT_TOOL_CALLS:
                state.early_results.pop(next(iter(state.early_results)))
        return
    if call.done and call.result_seq == event.seq:
        return  # this very result again: counted once
    finished = ToolCallView(
        run=call.run,
        call_id=call.call_id,
        name=call.name,
        node_id=call.node_id,
        arguments=call.arguments,
        arguments_truncated=call.arguments_truncated,
        started_at=call.started_at,
        seq=call.seq,
        output=result.output,
        output_truncated=bool(result.truncated),
        is_error=bool(result.is_error),
        ended_at=when,
        result_seq=event.seq,
    )
    state.calls[call_id] = finished
    tally = tools.setdefault(call.name, ToolTally())
    tally.in_flight.discard((key, call_id))
    if finished.is_error:
        tally.errors += 1
        state.share(call.name).errors += 1
    if finished.duration is not None:
        tally.latencies.append((key, finished.duration))


def forget_tool_calls(tools: dict[str, ToolTally], state: RunState) -> None:
    """Take back what the run added to the per-tool statistics (it is reset or removed):
    a replay played again counted every call once more each time."""
    for name, share in (state._shares or {}).items():
        tally = tools.get(name)
        if tally is None:
            continue
        tally.forget(state.key, share)
        if tally.empty:
            del tools[name]
