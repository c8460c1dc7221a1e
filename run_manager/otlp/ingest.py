"""OTLP ingest: OpenTelemetry spans of agent runs, written as runs.

``runtop serve`` answers ``POST /v1/traces`` (OTLP/HTTP, protobuf or JSON,
optionally gzipped) with :class:`OtlpIngest`, behind the server's bearer
token. Each trace is a run, written as a ledger (``writer: "otlp"``) in
the server's ledger directory, so ``ls``, ``show``, replay and the TUI
read it as any other; its events are published on the manager's hub, so
attached clients see it live. ``../shared/design/OTLP.md`` is the design;
in short:

- a span is read by the first family of conventions whose attributes it
  carries (OpenInference, OpenLLMetry, else the GenAI conventions: one
  module each, :mod:`run_manager.otlp.families` says what they read it
  into), as an agent, a model call, a tool call, a step or none of these;
- an agent span with no agent above it is the trace's run (its end is
  ``run_completed``); one nested under another is a child run
  (``parent_run_id``); a trace without one is one run, ended by its root
  span;
- a model call becomes ``node_enter``, the answer's text as ``llm_chunk``,
  ``llm_call`` with its tokens and its conversation (``messages`` and
  ``response``, newest kept under the cap), ``node_exit``; a tool call
  ``node_enter``, ``tool_call``, ``tool_result``, ``node_exit``; a step
  ``node_enter`` and ``node_exit``; any other span is an ``otel_span`` event
  with its name and attributes; a span's ``exception`` events and an error
  status are ``error`` events;
- spans arrive when they end, children first, batches mixed: each event
  carries its span's own time (never before its run's start), a request's
  events of a run are written in time order, and a run is made by the first
  span of its trace that arrives (``run_<UTC start>_<16 hex of the trace
  id>``; a nested agent's run takes its span id);
- a span that cannot be read (JSON nested deeper than Python recurses, say)
  is rejected alone and counted; its neighbours are written;
- a span sent twice (an exporter's retry) is written once: spans placed
  are remembered per trace, and a run's ledger is read back for them
  after a restart;
- which run a span belongs to is decided with what the server knows when
  it arrives: the spans of the same request and those before. A span
  that ends before its nested agent's span is sent in a later request
  is kept in the enclosing run.

Runs sent this way are read-only: runtop does not run them and cannot
stop them (:data:`READ_ONLY_REASON`).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import operator
import os
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec

from ledger_reader import LedgerError, LedgerUnreadable, RunEvent, iter_events, read_lines
from ledger_reader.events import (
    EVENT_TYPES,
    PAYLOAD_CAP_BYTES,
    ChunkPayload,
    ErrorEvent,
    ErrorPayload,
    LlmCallPayload,
    NodeEnter,
    NodeEnterPayload,
    NodeExitPayload,
    RunCompleted,
    RunCompletedPayload,
    RunStarted,
    RunStartedPayload,
    ToolCallPayload,
    ToolResultPayload,
    UnknownEvent,
)
from ledger_reader.lines import open_ledger_fd
from ledger_reader.locations import make_private_dir
from run_manager.hub import LedgerLines
from run_manager.ledger import cap_messages, cap_payload_value
from run_manager.otlp import openinference, openllmetry
from run_manager.otlp.families import (
    AGENT,
    MAX_NAME,
    MODEL,
    STEP,
    TOOL,
    Family,
    ModelCall,
    ToolUse,
)
from run_manager.otlp.genai import GENAI
from run_manager.otlp.openinference import OPENINFERENCE
from run_manager.otlp.openllmetry import OPENLLMETRY
from run_manager.otlp.spans import MAX_MESSAGE, STATUS_ERROR, Decoded, Span, SpanEvent

if TYPE_CHECKING:
    from run_manager.hub import Hub

WRITER: Final = "otlp"
READ_ONLY_REASON: Final = "sent over OpenTelemetry; runtop cannot stop it"
"""The reason the inspector gives (inspector.source.OTLP_REFUSAL says the same)."""
MAX_TRACES: Final = 10_000
"""Traces whose span ids are kept in memory; an older one is read back from its ledger."""
MAX_ANNOUNCED: Final = 256
"""Tool calls a trace's model calls announced whose arguments are kept for its tool spans."""
MAX_ANCESTRY: Final = 256
"""Parent links followed to find a span's agent (a cycle in hostile input ends there)."""

_SHORT_ARGUMENTS: Final = PAYLOAD_CAP_BYTES // 16
"""Characters of tool arguments whose JSON value is under the payload cap once re-encoded,
so it need not be encoded to be measured: msgspec writes a number back in at most 4.5 times
its text (``1e15`` is ``1000000000000000.0``) and a character of a string in at most 4
bytes, so 4,096 characters come back in at most 18,432 bytes."""
_RESERVED_PREFIXES: Final = frozenset({"llm", "tool", "approval"})
"""Node id prefixes that say a model call, a tool call or an approval to readers: a step's
kind is never one of them."""
_UNREADABLE: Final = (RecursionError, ValueError, TypeError, msgspec.MsgspecError)
"""What reading a span's values may raise on hostile input: the span is rejected alone."""
_encoder: Final = msgspec.json.Encoder()
_decoder: Final = msgspec.json.Decoder()
_log = logging.getLogger(__name__)


def _kind(span: Span) -> str:
    """What the span is to its run (:data:`AGENT`, :data:`MODEL`...), read by its family."""
    known = span.kind
    if known is not None:
        return known
    attributes = span.attributes
    if openinference.carries(attributes):
        family = OPENINFERENCE
    elif openllmetry.carries(attributes):
        family = OPENLLMETRY
    else:
        family = GENAI
    span.family = family
    span.kind = kind = family.kind(span)
    return kind


def _family(span: Span) -> Family:
    if span.family is None:
        _kind(span)
    family: Family = span.family
    return family


_start_end: Final = operator.attrgetter("start_ns", "end_ns")


def _end_of_ending(ending: tuple[_Run, Span]) -> int:
    return ending[1].end_ns


_second: list[Any] = [-1, "", ""]
_LAST_NS: Final = 253_402_300_799_999_999_999
"""The last nanosecond of the year 9999: a later time from a span is taken as this."""


def _time(ns: int) -> str:
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


def _id_stamp(ns: int) -> str:
    _, rest = divmod(min(max(ns, 0), _LAST_NS), 1_000_000_000)
    _time(ns)
    return f"{_second[2]}{rest // 1_000_000:03d}"


class _Line(msgspec.Struct, gc=False):
    """A ledger line, its keys in the order LEDGER.md shows: a run's lines of one request
    are encoded in one call (``encode_lines``), byte for byte as ``encode_event`` would."""

    run_id: str
    seq: int
    time: str
    type: str
    payload: Any


_TAGS: Final[dict[type[Any], str]] = {cls: tag for tag, cls in EVENT_TYPES.items()}


@dataclass(slots=True)
class _Run:
    """A run being written from spans."""

    run_id: str
    path: str
    start: str = ""
    """When its own agent span began, as ledgers write times, where the run was made from
    that span: nothing of the run began earlier, so no event of it is written earlier (a
    trace's root that wraps its agent began a moment before it). Empty where the run was
    made from other spans: a span that comes late keeps its own time."""
    seq: int = 0
    completed: bool = False
    chunk_index: int = 0
    node_counts: dict[str, int] = field(default_factory=dict)
    torn: bool = False
    """The ledger ends in a torn line: the next write starts on a fresh one."""
    pending: list[_Line] = field(default_factory=list)
    """Lines to write."""
    last_answer: str | None = None
    """The newest model call's words: the run's output where its own span says none."""
    written: bool = False
    """Its ledger has been written to (or was found on disk)."""
    placed: int = 0
    """Spans placed in it by the request being read."""

    def at(self, ns: int) -> str:
        """A span time as this run's events say it: never before its agent's span began."""
        moment = _time(ns)
        return moment if moment >= self.start else self.start

    def emit(self, moment: str, event_type: type[Any], payload: Any) -> None:
        self.seq = seq = self.seq + 1
        self.pending.append(_Line(self.run_id, seq, moment, _TAGS[event_type], payload))

    def emit_unknown(self, moment: str, kind: str, payload: dict[str, Any]) -> None:
        self.seq = seq = self.seq + 1
        self.pending.append(_Line(self.run_id, seq, moment, kind, payload))

    def enter(self, key: str, name: str | None, span: Span, moment: str) -> str:
        """Open the node of a span (``<key>#<k>``, the k-th of its key here) with its
        ``node_enter``; its id."""
        counts = self.node_counts
        count = counts[key] = counts.get(key, 0) + 1
        node_id = f"{key}#{count}"
        self.seq = seq = self.seq + 1
        entered = NodeEnterPayload(node_id=node_id, node_name=name, span_id=span.span_id)
        self.pending.append(_Line(self.run_id, seq, moment, "node_enter", entered))
        return node_id

    def exit(self, node_id: str, span: Span, moment: str, failed: bool) -> None:
        """Close a node opened by :meth:`enter` with its ``node_exit``."""
        self.seq = seq = self.seq + 1
        exited = NodeExitPayload(
            node_id=node_id,
            duration_micros=max(span.end_ns - span.start_ns, 0) // 1000,
            success=not failed,
        )
        self.pending.append(_Line(self.run_id, seq, moment, "node_exit", exited))

    def events(self) -> list[RunEvent]:
        """The pending lines as events, in time order: a request's spans are placed one
        after another (a step's exit before the model call inside it is entered), and
        readers fold a run in file order. Their seqs follow that order."""
        lines = self.pending
        if any(lines[i].time > lines[i + 1].time for i in range(len(lines) - 1)):
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
class _Trace:
    """What is known of one trace: its spans' parents, its agents, its runs."""

    trace_id: str
    parents: dict[str, str] = field(default_factory=dict)
    agents: set[str] = field(default_factory=set)
    placed: set[str] = field(default_factory=set)
    run: _Run | None = None
    children: dict[str, _Run] = field(default_factory=dict)
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


class LedgerWriteFailed(Exception):
    """A request's spans could not be written; none of them count as recorded."""


@dataclass(slots=True)
class IngestResult:
    """What one export request did."""

    accepted: int = 0
    duplicates: int = 0
    rejected: int = 0
    reason: str = ""
    runs: set[str] = field(default_factory=set)


class OtlpIngest:
    """Turns decoded export requests into ledgers in ``ledger_dir`` and events on ``hub``.

    Call :meth:`ingest` on the event loop that runs the hub (the server's).
    """

    def __init__(self, ledger_dir: str | os.PathLike[str], hub: Hub | None = None) -> None:
        self.ledger_dir = Path(ledger_dir)
        self._ledger_prefix = os.path.join(self.ledger_dir, "")
        """What a ledger's path starts with (``os.path.join(ledger_dir, name)`` is this + name)."""
        self.hub = hub
        self._traces: OrderedDict[str, _Trace] = OrderedDict()
        self._on_disk: dict[str, str] | None = None
        """The ledgers already in the directory, by the 16 hex their run ids end in."""

    # -- the entry point -------------------------------------------------------------

    def ingest(self, decoded: Decoded) -> IngestResult:
        """Place every span of one request in its run; write and publish what they make."""
        result = IngestResult(rejected=decoded.rejected, reason=decoded.reason)
        by_trace: dict[str, list[Span]] = {}
        for span in decoded.spans:
            spans = by_trace.get(span.trace_id)
            if spans is None:
                by_trace[span.trace_id] = [span]
            else:
                spans.append(span)
        touched: dict[str, _Run] = {}
        accepted = duplicates = unreadable = 0
        reason = ""
        for trace_id, spans in by_trace.items():
            trace = self._trace(trace_id)
            placed, parents, agents = trace.placed, trace.parents, trace.agents
            for span in spans:
                span_id = span.span_id
                if span_id not in placed:
                    parents[span_id] = span.parent_span_id
                    if (span.kind or _kind(span)) == AGENT:
                        agents.add(span_id)
            if len(spans) > 1:
                spans.sort(key=_start_end)
            endings: list[tuple[_Run, Span]] = []
            # Which run a span's parent leads to, for this request: the trace's parents and
            # agents do not change while its spans are placed, nor a run once made.
            runs_below: dict[str, _Run] = {}
            for span in spans:
                span_id = span.span_id
                if span_id in placed:
                    duplicates += 1
                    continue
                if span.kind == AGENT:
                    run = self._run_of_agent(trace, span_id, spans)
                    run.placed += 1
                    self._errors(run, span, None)
                    endings.append((run, span))
                    placed.add(span_id)
                    if run.completed:  # its end is in the ledger already
                        duplicates += 1
                    else:
                        accepted += 1
                    touched[run.run_id] = run
                    continue
                parent = parents.get(span_id, "")
                run = runs_below.get(parent)  # type: ignore[assignment]
                if run is None:
                    agent = trace.agent_above(span_id)
                    run = runs_below[parent] = self._run_of_agent(trace, agent, spans)
                mark, seq, chunks = len(run.pending), run.seq, run.chunk_index
                try:
                    self._place(trace, span, run, endings)
                except _UNREADABLE as error:
                    # What this span wrote goes; its neighbours stay.
                    del run.pending[mark:]
                    run.seq, run.chunk_index = seq, chunks
                    unreadable += 1
                    reason = f"span {span_id} cannot be read: {_why(error)}"
                    continue
                placed.add(span_id)
                run.placed += 1
                touched[run.run_id] = run
                accepted += 1
            self._forget_unplaced(trace)
            # A run ends after what happened in it, whatever order its spans came in; where
            # several of its spans could end it (agents one after another under one root, as
            # an Agents SDK handoff makes them), the last to end does.
            if len(endings) > 1:
                endings.sort(key=_end_of_ending)
                last = {run.run_id: (run, span) for run, span in endings}
                endings = list(last.values()) if len(last) < len(endings) else endings
            for run, span in endings:
                self._complete(run, span)
            if trace.run is not None and trace.run.pending:
                touched[trace.run.run_id] = trace.run
            for child in trace.children.values():
                if child.pending:
                    touched[child.run_id] = child
        result.accepted, result.duplicates = accepted, duplicates
        if unreadable:
            result.rejected += unreadable
            result.reason = reason
            _log.warning(
                "OTLP: %d span(s) of a request rejected, the rest written (%s)", unreadable, reason
            )
        try:
            self._flush(touched.values())
        except OSError as error:
            # The ledgers are the truth: forget what this request taught about its traces,
            # so the exporter's retry is placed again from what reached the disk whole.
            for trace_id in by_trace:
                self._traces.pop(trace_id, None)
            self._on_disk = None
            raise LedgerWriteFailed(
                f"the spans could not be written to the ledger: {error.strerror or error}"
            ) from error
        result.runs = set(touched)
        return result

    # -- runs --------------------------------------------------------------------------

    def _forget_unplaced(self, trace: _Trace) -> None:
        """Forget the runs this request made for spans it then rejected: a run is made by a
        span placed in it, never by one that could not be read."""
        for run in [trace.run, *trace.children.values()]:
            if run is None:
                continue
            if run.placed or run.written:
                run.placed = 0
                continue
            run.pending.clear()
            if trace.run is run:
                trace.run = None
            for key in [key for key, child in trace.children.items() if child is run]:
                del trace.children[key]
            if self._on_disk is not None:
                self._on_disk.pop(run.run_id[-16:], None)

    def _trace(self, trace_id: str) -> _Trace:
        trace = self._traces.get(trace_id)
        if trace is not None:
            self._traces.move_to_end(trace_id)
            return trace
        trace = self._traces[trace_id] = _Trace(trace_id)
        while len(self._traces) > MAX_TRACES:
            self._traces.popitem(last=False)
        written = self._ledgers_on_disk().get(trace_id[16:])
        if written is not None:  # seen before a restart (or before it was evicted here)
            trace.run = self._reopen(trace, written)  # None: not this trace's ledger
        return trace

    def _run_of_agent(self, trace: _Trace, agent: str | None, spans: list[Span]) -> _Run:
        """The run an ``invoke_agent`` span stands for (``None``: the trace's own run)."""
        if agent is None or trace.agent_above(agent) is None:
            if trace.run is None:
                trace.run = self._open(trace, trace.trace_id[16:], spans, None, None, agent)
            return trace.run
        run = trace.children.get(agent)
        if run is None:
            parent = self._run_of_agent(trace, trace.agent_above(agent), spans)
            run = self._open(trace, agent, spans, agent, parent.run_id, agent)
            trace.children[agent] = run
        return run

    def _open(
        self,
        trace: _Trace,
        suffix: str,
        spans: list[Span],
        agent_span: str | None,
        parent_run_id: str | None,
        agent: str | None,
    ) -> _Run:
        """A run made by this request, or found again in the directory after a restart.

        ``spans`` are the request's spans of the trace, sorted by start (as ``ingest`` sorts
        them before placing any); ``agent`` is the ``invoke_agent`` span the run stands for
        (``None``: spans under no agent).
        """
        on_disk = self._ledgers_on_disk()
        known = on_disk.get(suffix)
        if known is not None:
            reopened = self._reopen(trace, known)
            if reopened is not None:
                return reopened
            # Another writer's run ends in the same 16 hex (chance, or a trace id made to
            # match): never write into it; this trace takes 16 hex of a hash instead.
            suffix = hashlib.sha256(f"{trace.trace_id}/{suffix}".encode()).hexdigest()[:16]
            known = on_disk.get(suffix)
            reopened = self._reopen(trace, known) if known is not None else None
            if reopened is not None:
                return reopened
        own = [s for s in spans if s.span_id == agent_span] if agent_span is not None else []
        start = own[0].start_ns if own else spans[0].start_ns  # the earliest: they are sorted
        run_id = f"run_{_id_stamp(start)}_{suffix}"
        on_disk[suffix] = run_id
        run = _Run(run_id, f"{self._ledger_prefix}{run_id}.jsonl", _time(start) if own else "")
        name, service = self._name(trace, spans, own[0] if own else None)
        said, cut = cap_payload_value(_input_of(trace, spans, agent, own[0] if own else None))
        run.emit(
            _time(start),
            RunStarted,
            RunStartedPayload(
                skill=name,
                agent=name,
                input=said,
                truncated=True if cut else None,
                trace_id=trace.trace_id,
                parent_run_id=parent_run_id,
                writer=WRITER,
                host=service,
                flavor="otel",
            ),
        )
        return run

    def _name(self, trace: _Trace, spans: list[Span], own: Span | None) -> tuple[str, str | None]:
        """The run's name: its agent's, else the trace's top agent, root span or service."""
        service = next((span.service for span in spans if span.service), None)
        candidates = [own] if own is not None else []
        if own is None:
            candidates += [
                s
                for s in spans
                if (s.kind or _kind(s)) == AGENT and trace.agent_above(s.span_id) is None
            ]
            candidates += [s for s in spans if not s.parent_span_id]
        for span in candidates:
            name = _family(span).agent_name(span)
            if name:
                return name, service
        if own is not None:
            return own.name or "agent", service
        for span in spans:
            name = span.attributes.get("gen_ai.agent.name")
            if isinstance(name, str) and name:
                return name[:MAX_NAME], service
        roots = [span for span in spans if not span.parent_span_id]
        if roots:
            return roots[0].name or "trace", service
        return service or "trace", service

    def _ledgers_on_disk(self) -> dict[str, str]:
        if self._on_disk is None:
            make_private_dir(self.ledger_dir)
            found: dict[str, str] = {}
            with os.scandir(self.ledger_dir) as entries:
                for entry in entries:
                    name = entry.name
                    if name.startswith("run_") and name.endswith(".jsonl") and len(name) > 23:
                        found[name[-22:-6]] = name[:-6]
            self._on_disk = found
        return self._on_disk

    def _reopen(self, trace: _Trace, run_id: str) -> _Run | None:
        """A run of this trace written before (by this process or an earlier one), to go on
        with; ``None`` if that ledger is not one this ingest wrote for this trace."""
        for run in [trace.run, *trace.children.values()]:
            if run is not None and run.run_id == run_id:
                return run
        run = _Run(run_id, os.fspath(self.ledger_dir / f"{run_id}.jsonl"), written=True)
        try:
            events, run.torn = _written_events(run.path)
        except LedgerError:
            return None
        if not events or not _started_by_this_trace(events[0], trace.trace_id):
            return None
        for event in events:
            run.seq = max(run.seq, event.seq)
            payload = event.payload
            if isinstance(payload, NodeEnterPayload):
                span_id: object = payload.span_id
            elif isinstance(payload, dict):  # an ``otel_span``, read as an unknown type
                span_id = payload.get("span_id")
            else:
                continue
            if isinstance(span_id, str):
                trace.placed.add(span_id)
            if isinstance(event, NodeEnter) and event.payload.node_id:
                key, _, count = event.payload.node_id.rpartition("#")
                if count.isdigit():
                    run.node_counts[key] = max(run.node_counts.get(key, 0), int(count))
        run.completed = any(isinstance(event, RunCompleted) for event in events)
        return run

    # -- spans to events -------------------------------------------------------------------

    def _place(
        self, trace: _Trace, span: Span, run: _Run, endings: list[tuple[_Run, Span]]
    ) -> None:
        """A span that is not an agent's, as events of ``run`` (its agent's).

        Raises:
            RecursionError, ValueError, TypeError: a value of the span cannot be read; what
                it wrote is the caller's to take back.
        """
        kind = span.kind
        family: Family = span.family
        if kind == MODEL:
            self._model_call(trace, run, span, family.model_call(span))
        elif kind == TOOL:
            self._tool_call(trace, run, span, family.tool_use(span))
        elif kind == STEP:
            if span.parent_span_id:
                self._step(run, span, family)
            else:  # the trace's root: the run itself, or what wraps the trace's agents
                self._errors(run, span, None)
        else:
            self._generic(run, span)
        if not span.parent_span_id and not trace.agents:
            endings.append((run, span))

    # The two spans nearly every trace is made of write their calls' events straight into the
    # run's list (a call per event cost a fifth of their time), as ``emit`` would, in the same
    # order; their nodes open and close through ``enter`` and ``exit``, shared by all.

    def _model_call(self, trace: _Trace, run: _Run, span: Span, call: ModelCall) -> None:
        model = call.model
        start = run.at(span.start_ns)
        node_id = run.enter(f"llm:{model or 'default'}", model, span, start)
        run_id, lines, seq = run.run_id, run.pending, run.seq
        end = run.at(span.end_ns)
        said = call.text
        if said:
            value, _ = cap_payload_value(said)
            chunk = ChunkPayload(index=run.chunk_index, delta=value, node_id=node_id)
            run.chunk_index += 1
            seq += 1
            lines.append(_Line(run_id, seq, end, "llm_chunk", chunk))
            run.last_answer = said
        messages = response = None
        cut = False
        if call.messages is not None:
            messages, cut = cap_messages(call.messages)
        if call.response is not None:
            response, cut_response = cap_messages(call.response)
            cut = cut or cut_response
            self._announce(trace, response)
        payload = LlmCallPayload(
            model=model,
            provider=call.provider,
            prompt_tokens=call.prompt_tokens,
            output_tokens=call.output_tokens,
            cache_read_tokens=call.cache_read_tokens,
            cache_write_tokens=call.cache_write_tokens,
            cost_usd=call.cost_usd,
            node_id=node_id,
            messages=messages,
            response=response,
            truncated=True if cut else None,
        )
        seq += 1
        lines.append(_Line(run_id, seq, end, "llm_call", payload))
        run.seq = seq
        failed = self._errors(run, span, node_id) if span.events or span.status_code else False
        run.exit(node_id, span, end, failed)

    @staticmethod
    def _announce(trace: _Trace, response: list[Any]) -> None:
        """Keep the arguments of the tool calls a model answered with, by call id."""
        announced = trace.announced
        for message in response:
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, list):
                continue
            for part in content:
                if (
                    isinstance(part, dict)
                    and part.get("type") == "tool_call"
                    and isinstance(part.get("id"), str)
                    and len(announced) < MAX_ANNOUNCED
                ):
                    announced[part["id"]] = (part.get("name"), part.get("arguments"))

    def _tool_call(self, trace: _Trace, run: _Run, span: Span, use: ToolUse) -> None:
        name = use.name
        start = run.at(span.start_ns)
        node_id = run.enter(f"tool:{name or 'tool'}", name, span, start)
        raw = use.arguments
        call_id = use.call_id
        if trace.announced:
            call_id, raw = _answered(trace.announced, use, name)
        call_id = call_id or f"call_{span.span_id}"
        run_id, lines, seq = run.run_id, run.pending, run.seq
        if isinstance(raw, str) and len(raw) <= _SHORT_ARGUMENTS:
            arguments, cut = _json_or_text(raw), False
        else:
            arguments, cut = cap_payload_value(_json_or_text(raw))
        called = ToolCallPayload(
            call_id=call_id,
            node_id=node_id,
            name=name,
            arguments=arguments,
            truncated=True if cut else None,
        )
        seq += 1
        lines.append(_Line(run_id, seq, start, "tool_call", called))
        run.seq = seq
        failed = self._errors(run, span, node_id) if span.events or span.status_code else False
        seq = run.seq
        result = use.result
        if result is not None and not isinstance(result, str):
            result = _encoder.encode(result).decode()
        output, cut = cap_payload_value(result)
        end = run.at(span.end_ns)
        answered = ToolResultPayload(
            call_id=call_id,
            node_id=node_id,
            output=output,
            truncated=True if cut else None,
            is_error=failed,
        )
        run.seq = seq = seq + 1
        lines.append(_Line(run_id, seq, end, "tool_result", answered))
        run.exit(node_id, span, end, failed)

    def _step(self, run: _Run, span: Span, family: Family) -> None:
        kind, name = family.step(span)
        kind = kind[:MAX_NAME] if kind not in _RESERVED_PREFIXES else "step"
        name = name[:MAX_NAME]
        node_id = run.enter(f"{kind}:{name or 'step'}", name or None, span, run.at(span.start_ns))
        failed = self._errors(run, span, node_id) if span.events or span.status_code else False
        run.exit(node_id, span, run.at(span.end_ns), failed)

    def _generic(self, run: _Run, span: Span) -> None:
        attributes, cut = cap_payload_value(span.attributes)
        payload: dict[str, Any] = {
            "name": span.name,
            "span_id": span.span_id,
            "parent_span_id": span.parent_span_id or None,
            "duration_micros": max(span.end_ns - span.start_ns, 0) // 1000,
            "attributes": attributes,
        }
        if cut:
            payload["truncated"] = True
        if span.status_code == STATUS_ERROR:
            payload["status"] = "error"
        run.emit_unknown(run.at(span.start_ns), "otel_span", payload)
        self._errors(run, span, None)

    def _errors(self, run: _Run, span: Span, node_id: str | None) -> bool:
        """The span's exception events and error status as ``error`` events; whether it failed."""
        said = False
        for event in span.events:
            if event.name == "exception":
                run.emit(
                    run.at(event.time_ns),
                    ErrorEvent,
                    ErrorPayload(message=_exception_message(event), node_id=node_id),
                )
                said = True
        if span.status_code != STATUS_ERROR:
            return said
        if not said:
            message = span.status_message or f"span {span.name!r} failed"
            run.emit(
                run.at(span.end_ns), ErrorEvent, ErrorPayload(message=message, node_id=node_id)
            )
        return True

    def _complete(self, run: _Run, span: Span) -> None:
        if run.completed:
            return
        run.completed = True
        end = run.at(span.end_ns)
        if span.status_code == STATUS_ERROR:
            error = span.status_message or next(
                (_exception_message(event) for event in span.events if event.name == "exception"),
                f"span {span.name!r} failed",
            )
            run.emit(end, RunCompleted, RunCompletedPayload(status="error", error=error))
            return
        try:
            output = _family(span).run_output(span)
        except _UNREADABLE:  # the run ended all the same; what it answered cannot be read
            output = None
        if output is None:
            output = run.last_answer
        value, cut = cap_payload_value(output)
        run.emit(
            end,
            RunCompleted,
            RunCompletedPayload(status="ok", output=value, truncated=True if cut else None),
        )

    # -- writing ---------------------------------------------------------------------------

    def _flush(self, runs: Iterable[_Run]) -> None:
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
                    raise
            finally:
                os.close(fd)
            run.torn = False
            run.written = True
            if self.hub is not None:
                # One publish per run and request: the run book and feed fold the batch at
                # once, and the feed keeps the buffer written, cut into lines only when a
                # stream reads them (JSON text holds no raw newline).
                self.hub.publish_many(events, LedgerLines(data, len(events)), ended=run.completed)


def _exception_message(event: SpanEvent) -> str:
    kind = _text(event.attributes.get("exception.type"))
    message = _long_text(event.attributes.get("exception.message"))
    if kind and message:
        return f"{kind}: {message}"
    return message or kind or "exception"


def _written_events(path: str) -> tuple[list[RunEvent], bool]:
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


def _started_by_this_trace(first: RunEvent, trace_id: str) -> bool:
    """Whether a ledger's first event is this ingest's ``run_started`` for ``trace_id``."""
    return (
        isinstance(first, RunStarted)
        and first.payload.writer == WRITER
        and first.payload.trace_id == trace_id
    )


def _long_text(value: Any) -> str | None:
    return value[:MAX_MESSAGE] if isinstance(value, str) and value else None


def _text(value: Any) -> str | None:
    """A name from a span (model, tool, provider, agent), cut at :data:`MAX_NAME`."""
    return value[:MAX_NAME] if isinstance(value, str) and value else None


def _json_or_text(value: Any) -> Any:
    """Tool arguments as the JSON they hold where they are JSON text.

    Raises:
        RecursionError: JSON nested deeper than Python recurses (the span is rejected).
    """
    if isinstance(value, str):
        try:
            return _decoder.decode(value)
        except msgspec.DecodeError:
            return value
    return value


def _input_of(trace: _Trace, spans: list[Span], agent: str | None, own: Span | None) -> Any:
    """What a run was asked: what its own span (or the trace's root) says, else the user's
    words its first model call was sent.

    A run's span says it only at its end (the last span to arrive), after
    ``run_started`` is usually written; its first model call (sent first) carries
    the conversation where the instrumentation records content. ``None`` where
    nothing says it, or what says it cannot be read.
    """
    try:
        for span in [own] if own is not None else [s for s in spans if not s.parent_span_id]:
            said = _family(span).run_input(span)
            if said is not None:
                return said
        for span in spans:  # sorted by start: the first model call of the run
            if (span.kind or _kind(span)) != MODEL:
                continue
            owner = trace.agent_above(span.span_id)
            # The trace's own run holds what its top agent does, as well as what is under
            # no agent.
            if owner == agent or (agent is None and trace.agent_above(owner or "") is None):
                return _family(span).asked(span)
    except _UNREADABLE:
        return None
    return None


def _answered(
    announced: dict[str, tuple[Any, Any]], use: ToolUse, name: str | None
) -> tuple[str | None, Any]:
    """The call id and arguments of a tool span, with what the model's tool call said: its
    arguments where the span's are not whole, its id where the span names none (the one
    call of that tool with the same arguments). A call answered is forgotten."""
    call_id, arguments = use.call_id, use.arguments
    if call_id is not None:
        said = announced.pop(call_id, None)
        if said is not None and not use.arguments_whole:
            arguments = said[1]
        return call_id, arguments
    wanted = _json_or_text(arguments)
    for known, (called, given) in announced.items():
        if called == name and _json_or_text(given) == wanted:
            del announced[known]
            return known, arguments
    return None, arguments


def _why(error: BaseException) -> str:
    if isinstance(error, RecursionError):
        return "a value is nested too deep"
    return f"{type(error).__name__}: {str(error)[:200]}"
