"""What the attach server knows of every run it can list: summaries, kept current.

Runs of the manager are folded event by event as the hub publishes them;
runs whose ledgers were already in the ledger directory when the server
started (an earlier process's, or its own before a restart) are read
once, head and tail, so a client that attaches after a restart still
sees them.

The index is bounded like the manager's retained runs: every run still
being folded is kept, and at most ``max_finished`` others (finished, or
found at start-up), the one that ended longest ago evicted first. A
``runtop serve`` that stays up for months therefore holds a constant
amount of memory however many runs pass through it (bench/summary_index.py).
"""

from __future__ import annotations

import os
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ledger_reader import (
    LedgerError,
    NodeEnter,
    NodeExit,
    NoLedgers,
    RunCompleted,
    RunEvent,
    RunSummary,
    SummaryBuilder,
    parse_time,
    scan_paths,
)
from run_manager.manager import Manager

MAX_FINISHED: Final = 10_000
"""Finished runs the attach server keeps listable (~0.5-2 KB each); older ones are dropped."""


@dataclass(slots=True)
class IndexedRun:
    """One run the server can list.

    A run still being written is folded by a summary builder; a finished one,
    or one found at start-up, keeps only its summary: a builder holds several
    times what its summary does, and a long-lived server keeps every run it
    has seen (``bench/summary_index.py`` measures its memory over 100,000 runs).
    """

    builder: SummaryBuilder | None
    started: float
    path: str | None
    frozen: RunSummary | None = None
    """The summary of a run no longer folded here: finished, or a ledger read at start-up."""
    counted: bool = True
    """Every event of the run was folded here, so its tokens and cost are whole (a ledger
    read at start-up was read by head and tail, and a run whose first events the hub had
    dropped is missing some)."""

    def summary(self) -> RunSummary:
        if self.frozen is not None:
            return self.frozen
        assert self.builder is not None  # one or the other, always
        return self.builder.summary()

    def _builder(self, run_id: str) -> SummaryBuilder:
        builder = self.builder
        if builder is None:  # a line after the end, or a run found at start-up written again
            builder = self.builder = SummaryBuilder(run_id, self.path)
            if self.frozen is not None:
                builder.resume_from(self.frozen)
        self.frozen = None
        return builder

    def add(self, event: RunEvent, run_id: str = "") -> None:
        builder = self._builder(run_id)
        builder.add(event)
        if builder.terminal:
            self.frozen, self.builder = builder.summary(), None

    def add_many(self, events: Sequence[RunEvent], run_id: str, *, checked: bool = False) -> None:
        """Fold consecutive events of this run at once (a batch the hub published).

        ``checked``: the caller has made sure every event is ``run_id``'s.

        Counted in one step when their ``seq`` follow on from what was folded and
        none but the last ends the run; otherwise one by one, as :meth:`add`, which
        says what is wrong with them.
        """
        count = len(events)
        first = events[0].seq
        kinds = list(map(type, events))
        if (
            count < 2
            or self.builder is None  # folded again after its end: one by one, as add does
            or kinds.count(RunCompleted) > (kinds[-1] is RunCompleted)
            or [event.seq for event in events] != list(range(first, first + count))
            or (not checked and [event.run_id for event in events].count(run_id) != count)
        ):
            for event in events:
                self.add(event, run_id)
            return
        builder = self.builder
        if not builder.note_block(count, first, run_id):
            for event in events:  # not what follows on: counted one by one, with the warning
                builder.add(event)
        else:
            deque(map(builder.apply, _changing(events, kinds)), maxlen=0)  # in order
            builder.clock_block([event.time for event in events], first)
        if builder.terminal:
            self.frozen, self.builder = builder.summary(), None


_FOLDED: Final = frozenset(SummaryBuilder._APPLY)
"""The event types that change a summary beyond its count and the time of its last event."""
_NODES: Final = frozenset({NodeEnter, NodeExit})


def _changing(events: Sequence[RunEvent], kinds: list[type]) -> list[RunEvent]:
    """The events of a counted batch that change its summary, in order: the ones of a type
    that changes more than the last event's time, and the last one that has a time.

    In a batch that ends its run, its nodes are left out too: the end closes every node
    (most of an OTLP run's events are model and tool calls and their nodes, written and
    published in one batch with the run's end).
    """
    folded = _FOLDED - _NODES if kinds[-1] is RunCompleted else _FOLDED
    last = len(events) - 1
    while last >= 0 and not events[last].time:
        last -= 1
    chosen = [event for event, kind in zip(events, kinds, strict=True) if kind in folded]
    if last >= 0 and kinds[last] not in folded:  # in its place: what it does, it does there
        chosen.insert(sum(kind in folded for kind in kinds[:last]), events[last])
    return chosen


class SummaryIndex:
    """Summaries of the manager's runs and of the ledgers found in its directory."""

    def __init__(self, manager: Manager, *, max_finished: int = MAX_FINISHED) -> None:
        if max_finished < 0:
            raise ValueError("max_finished must be 0 or more")
        self.manager = manager
        self.max_finished = max_finished
        self.runs: dict[str, IndexedRun] = {}
        self._finished: OrderedDict[str, None] = OrderedDict()
        """The runs no longer folded, the one that ended longest ago first."""
        self._prefix = ""
        self._prefix_of: Path | None = None
        for info in manager.list():
            path = str(info.ledger_path) if info.ledger_path is not None else None
            builder = SummaryBuilder(info.run_id, path)
            booked = IndexedRun(builder, info.started_at.timestamp(), path)
            dropped, events = manager.hub.history(info.run_id)
            if dropped:
                builder.skip_gap()
                booked.counted = False
            for event in events:
                booked.add(event, info.run_id)
            self.runs[info.run_id] = booked
            self._settle(info.run_id, booked)

    def add(self, event: RunEvent) -> None:
        """Fold one published event (the hub's listener, on the event loop)."""
        booked = self._booked(event)
        booked.add(event, event.run_id)
        if booked.frozen is not None or event.run_id in self._finished:
            self._settle(event.run_id, booked)

    def _booked(self, event: RunEvent) -> IndexedRun:
        """The run ``event`` belongs to, booked with it as its first if it is new."""
        booked = self.runs.get(event.run_id)
        if booked is None:
            path = None
            if self.manager.ledger_dir is not None:
                path = self._ledger_path(event.run_id)
            started = parse_time(event.time)
            booked = IndexedRun(
                SummaryBuilder(event.run_id, path),
                started.timestamp() if started is not None else 0.0,
                path,
            )
            self.runs[event.run_id] = booked
        return booked

    def _ledger_path(self, run_id: str) -> str:
        """``os.fspath(ledger_dir / f"{run_id}.jsonl")``, without a path object per run."""
        directory = self.manager.ledger_dir
        assert directory is not None
        if "/" in run_id:  # not a valid run id; pathlib's own rules decide
            return os.fspath(directory / f"{run_id}.jsonl")
        if directory is not self._prefix_of:
            text = os.fspath(directory)
            self._prefix = "" if text == "." else os.path.join(text, "")
            self._prefix_of = directory
        return f"{self._prefix}{run_id}.jsonl"

    def add_many(self, events: Sequence[RunEvent]) -> None:
        """Fold consecutive events of one run (the hub's batch listener, on the event loop)."""
        if not events:
            return
        run_id = events[0].run_id
        if [event.run_id for event in events].count(run_id) != len(events):
            for event in events:  # not one run's (the hub publishes one run's at a time)
                self.add(event)
            return
        booked = self._booked(events[0])
        booked.add_many(events, run_id, checked=True)
        if booked.frozen is not None or run_id in self._finished:
            self._settle(run_id, booked)

    def _settle(self, run_id: str, booked: IndexedRun) -> None:
        """Keep the finished runs in the order they ended, and at most ``max_finished``."""
        if booked.frozen is None:  # folded again (a ledger found at start-up written on)
            self._finished.pop(run_id, None)
            return
        self._finished[run_id] = None
        self._finished.move_to_end(run_id)
        while len(self._finished) > self.max_finished:
            oldest, _ = self._finished.popitem(last=False)
            self.runs.pop(oldest, None)

    def scan_directory(self) -> tuple[list[tuple[str, IndexedRun]], list[LedgerError]]:
        """Summarise the ledgers in the ledger directory (blocking: run it in a thread).

        Hand the runs to :meth:`merge` on the event loop.
        """
        directory = self.manager.ledger_dir
        if directory is None or not directory.is_dir():
            return [], []
        scanned = scan_paths([Path(directory)])
        found: list[tuple[str, IndexedRun]] = []
        for path, state in scanned.states.items():
            summary = state.summary()
            booked = IndexedRun(None, summary.started, path, frozen=summary, counted=False)
            found.append((summary.run_id, booked))
        return found, [error for error in scanned.errors if not isinstance(error, NoLedgers)]

    def merge(self, found: list[tuple[str, IndexedRun]]) -> None:
        """Add the runs found at start-up; past the bound, the oldest of them are dropped first."""
        newest_first = sorted(found, key=lambda item: (item[1].started, item[0]), reverse=True)
        for run_id, booked in newest_first:
            if run_id in self.runs:
                continue  # a run this process saw live knows more
            self.runs[run_id] = booked
            if booked.frozen is not None:
                # Found, not ended here: older than anything that ended in this process,
                # and each one found older than the last, so it goes to the front.
                self._finished[run_id] = None
                self._finished.move_to_end(run_id, last=False)
        while len(self._finished) > self.max_finished:
            oldest, _ = self._finished.popitem(last=False)
            self.runs.pop(oldest, None)

    def get(self, run_id: str) -> IndexedRun | None:
        return self.runs.get(run_id)

    def newest_first(self) -> list[tuple[str, IndexedRun]]:
        return sorted(self.runs.items(), key=lambda item: (item[1].started, item[0]), reverse=True)
