"""The runs and traces OTLP ingest writes: a run's lines of one request, put in
time order and written to its ledger in one ``write()``; a trace's spans'
parents and agents; a ledger this ingest wrote, read back after a restart.

:mod:`run_manager.otlp.span_events` turns spans into a run's lines and
:mod:`run_manager.otlp.ingest` decides which run each span belongs to;
this module knows nothing of spans' conventions.
"""

from __future__ import annotations

import contextlib
import operator
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec

from ledger_reader import LedgerUnreadable, RunEvent, iter_events, read_lines
from ledger_reader.events import (
    EVENT_TYPES,
    NodeEnterPayload,
    NodeExitPayload,
    RunStarted,
    UnknownEvent,
)
from ledger_reader.lines import open_ledger_fd
from run_manager.hub import LedgerLines
from run_manager.otlp.spans import Span

if TYPE_CHECKING:
    from run_manager.hub import Hub

WRITER: Final = "otlp"
READ_ONLY_REASON: Final = "sent over OpenTelemetry; runtop cannot stop it"
"""The reason the inspector gives (inspector.source.OTLP_REFUSAL says the same)."""
MAX_ANNOUNCED: Final = 256
"""Tool calls a trace's model calls announced whose arguments are kept for its tool spans."""
MAX_ANCESTRY: Final = 256
"""Parent links followed to find a span's agent (a cycle in hostile input ends there)."""

_encoder: Final = msgspec.json.Encoder()


_second: list[Any] = [-1, "", ""]
_LAST_NS: Final = 253_402_300_799_999_999_999
"""The last nanosecond of the year 9999: a later time from a span is taken as this."""


def ledger_time(ns: int) -> str:
    """A span time (Unix nanoseconds) as ledgers write times."""
    if not 0 <= ns <= _LAST_NS:
        ns = min(max(ns, 0), _LAST_NS)
    second, rest = divmod(ns, 1_000_000_000)
    if _second[0] != second:
        moment = time.gmtime(second)
        _second[:] = [
            second,
            time.strftime("%Y-%m-%dT%H:%M:%S", moment),
            time.strftime("%Y%m%dT%H%M%S", moment),
        ]
    return "%s.%06dZ" % (_second[1], rest // 1000)  # noqa: UP031 (cheaper than the f-string)


def run_id_stamp(ns: int) -> str:
    _, rest = divmod(min(max(ns, 0), _LAST_NS), 1_000_000_000)
    ledger_time(ns)
    return f"{_second[2]}{rest // 1_000_000:03d}"


class LedgerLine(msgspec.Struct, gc=False):
    """A ledger line, its keys in the order LEDGER.md shows: a run's lines of one request
    are encoded in one call (``encode_lines``), byte for byte as ``encode_event`` would."""

    run_id: str
    seq: int
    time: str
    type: str
    payload: Any


_TAGS: Final[dict[type[Any], str]] = {cls: tag for tag, cls in EVENT_TYPES.items()}


@dataclass(slots=True)
class OtlpRun:
    """A run being written from spans."""

    run_id: str
    path: str
    start: str = ""
    """When it began: its own agent span's start where it was made from that span, else the
    earliest of the spans that made it. Nothing of the run is written earlier (a span that
    comes late and began earlier is written at the run's start; its node says how long it
    took): an event never shows before its run began."""
    seq: int = 0
    completed: bool = False
    chunk_index: int = 0
    node_counts: dict[str, int] = field(default_factory=dict)
    torn: bool = False
    """The ledger ends in a torn line: the next write starts on a fresh one."""
    pending: list[LedgerLine] = field(default_factory=list)
    """Lines to write."""
    last_answer: str | None = None
    """The newest model call's words: the run's output where its own span says none."""
    last_answer_start: int = -1
    """When the model call that said :attr:`last_answer` began (the newest wins, whatever
    order the calls arrive in)."""
    answered_by: int | None = None
    """Where the run's output is its newest model call's words, when that call began: a
    newer call arriving after the run ended says its output again."""
    written: bool = False
    """Its ledger has been written to (or was found on disk)."""
    placed: int = 0
    """Spans placed in it by the request being read."""
    name: str | None = None
    """Its name as its ledger says it now (``run_started``, or the last ``run_updated``)."""
    name_rank: tuple[int, int] = (9, 0)
    """How well the span that named it says a name (:data:`span_events.Rank`): a span that
    says it better, arriving later, renames the run."""
    asked: Any = None
    """Its input as its ledger says it now."""
    input_rank: tuple[int, int] = (9, 0)
    """How well the span that said its input says it, alike."""
    opened: bool = False
    """Made by the request being read, from its spans: nothing they say is news to it."""
    described: dict[str, Any] = field(default_factory=dict)
    """Who it was for and which conversation (``session_id``...), as its ledger says."""
    errors: set[tuple[str | None, str]] = field(default_factory=set)
    """The errors it said, by node (``None``: the run's own) and message: one failure is
    said once (:func:`span_events.emit_errors`)."""

    def at(self, ns: int) -> str:
        """A span time as this run's events say it: never before its agent's span began."""
        moment = ledger_time(ns)
        return moment if moment >= self.start else self.start

    def emit(self, moment: str, event_type: type[Any], payload: Any) -> None:
        self.seq = seq = self.seq + 1
        self.pending.append(LedgerLine(self.run_id, seq, moment, _TAGS[event_type], payload))

    def emit_unknown(self, moment: str, kind: str, payload: dict[str, Any]) -> None:
        self.seq = seq = self.seq + 1
        self.pending.append(LedgerLine(self.run_id, seq, moment, kind, payload))

    def enter(self, key: str, name: str | None, span: Span, moment: str) -> str:
        """Open the node of a span (``<key>#<k>``, the k-th of its key here) with its
        ``node_enter``; its id."""
        counts = self.node_counts
        count = counts[key] = counts.get(key, 0) + 1
        node_id = f"{key}#{count}"
        self.seq = seq = self.seq + 1
        entered = NodeEnterPayload(
            node_id=node_id,
            node_name=name,
            span_id=span.span_id,
            parent_span_id=span.parent_span_id or None,
        )
        self.pending.append(LedgerLine(self.run_id, seq, moment, "node_enter", entered))
        return node_id

    def exit(self, node_id: str, span: Span, moment: str, failed: bool) -> None:
        """Close a node opened by :meth:`enter` with its ``node_exit``."""
        self.seq = seq = self.seq + 1
        exited = NodeExitPayload(
            node_id=node_id,
            duration_micros=max(span.end_ns - span.start_ns, 0) // 1000,
            success=not failed,
        )
        self.pending.append(LedgerLine(self.run_id, seq, moment, "node_exit", exited))

    def events(self) -> list[RunEvent]:
        """The pending lines as events, in time order: a request's spans are placed one
        after another (a step's exit before the model call inside it is entered), and
        readers fold a run in file order. Their seqs follow that order."""
        lines = self.pending
        times = [line.time for line in lines]
        if times != sorted(times):
            first = lines[0].seq
            lines.sort(key=_line_time)
            for offset, line in enumerate(lines):
                line.seq = first + offset
        events: list[RunEvent] = []
        append = events.append
        for line in lines:
            event_type = _TYPES.get(line.type)
            if event_type is None:
                append(
                    UnknownEvent(
                        run_id=line.run_id,
                        seq=line.seq,
                        time=line.time,
                        type=line.type,
                        payload=line.payload,
                    )
                )
            else:
                append(
                    event_type(
                        run_id=line.run_id, seq=line.seq, time=line.time, payload=line.payload
                    )
                )
        return events


_line_time: Final = operator.attrgetter("time")
_TYPES: Final[dict[str, type[Any]]] = {tag: cls for cls, tag in _TAGS.items()}


@dataclass(slots=True)
class OtlpTrace:
    """What is known of one trace: its spans' parents, its agents, its runs."""

    trace_id: str
    parents: dict[str, str] = field(default_factory=dict)
    agents: set[str] = field(default_factory=set)
    placed: set[str] = field(default_factory=set)
    run: OtlpRun | None = None
    children: dict[str, OtlpRun] = field(default_factory=dict)
    announced: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    """The tool calls its model calls asked for, by call id: their names and arguments. A
    tool span that does not hold its call's arguments whole takes them from here, and one
    that does not say its call id takes the id of the call it answers."""

    def agent_above(self, span_id: str) -> str | None:
        """The nearest ``invoke_agent`` span above ``span_id`` (itself excluded)."""
        current = self.parents.get(span_id, "")
        for _ in range(MAX_ANCESTRY):
            if not current:
                return None
            if current in self.agents:
                return current
            current = self.parents.get(current, "")
        return None


def write_runs(runs: Iterable[OtlpRun], hub: Hub | None) -> None:
    """Write each run's new lines in one ``write()``, then publish its events."""
    for run in runs:
        if not run.pending:
            continue
        events = run.events()
        data = _encoder.encode_lines(run.pending)
        run.pending = []
        torn = run.torn
        fd = os.open(run.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            before = os.fstat(fd).st_size
            view = memoryview(b"\n" + data if torn else data)
            try:
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            except OSError:
                # A request's lines land whole or not at all (this ingest is the only
                # writer of its ledgers), so a retry never meets half a span.
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, before)
                if not before and not run.written:
                    # Its first write: no empty ledger is left behind, so the exporter's
                    # retry makes the run again under the same id (an empty file of its
                    # name would be no ledger of this trace, and the run would take another).
                    with contextlib.suppress(OSError):
                        os.unlink(run.path)
                raise
        finally:
            os.close(fd)
        run.torn = False
        run.written = True
        if hub is not None:
            # One publish per run and request: the run book and feed fold the batch at
            # once, and the feed keeps the buffer written, cut into lines only when a
            # stream reads them (JSON text holds no raw newline).
            hub.publish_many(events, LedgerLines(data, len(events)), ended=run.completed)


def written_events(path: str) -> tuple[list[RunEvent], bool]:
    """The events of a ledger this ingest may go on with, read as every reader reads them
    (damaged lines left out, the events they end in kept), and whether it ends torn.

    Raises:
        LedgerError: it vanished or cannot be read.
    """
    fd, stat = open_ledger_fd(path)
    try:
        lines = list(read_lines(fd, 0, stat.st_size))
    except OSError as error:
        raise LedgerUnreadable(path, error) from error
    finally:
        os.close(fd)
    end = lines[-1].end + 1 if lines else 0
    return list(iter_events(line.item for line in lines)), end < stat.st_size


def started_by_this_trace(first: RunEvent, trace_id: str) -> bool:
    """Whether a ledger's first event is this ingest's ``run_started`` for ``trace_id``."""
    return (
        isinstance(first, RunStarted)
        and first.payload.writer == WRITER
        and first.payload.trace_id == trace_id
    )
