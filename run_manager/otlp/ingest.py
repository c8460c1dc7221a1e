"""OTLP ingest: OpenTelemetry spans of agent runs, written as runs.

``runtop serve`` answers ``POST /v1/traces`` (OTLP/HTTP, protobuf or JSON,
optionally gzipped) with :class:`OtlpIngest`, behind the server's bearer
token. Each agent's trace is a run, written as a ledger (``writer: "otlp"``) in
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
- only an agent's trace is a run (an agent, a model call, a tool call, or a
  step of an agent framework's instrumentation in it): the spans of a trace
  with none of them yet (a web service's requests, when a collector
  forwards everything) are held in memory, up to
  :data:`MAX_HELD_SPANS` and for :data:`HOLD_SECONDS`, and written with
  the first span that makes it an agent's; ``every_trace`` keeps every
  trace as a run;
- a span sent twice (an exporter's retry) is written once: spans placed
  are remembered per trace, and a run's ledger is read back for them
  after a restart;
- which run a span belongs to is decided with what the server knows when
  it arrives: the spans of the same request and those before. A span
  that ends before its nested agent's span is sent in a later request
  is kept in the enclosing run.

Runs sent this way are read-only: runtop does not run them and cannot
stop them (:data:`READ_ONLY_REASON`).

This module decides which run each span belongs to and keeps what is known
of each trace; :mod:`run_manager.otlp.span_events` writes what a span of
each kind says into its run, and :mod:`run_manager.otlp.trace_runs` holds
the runs being written and writes them to their ledgers.
"""

from __future__ import annotations

import hashlib
import logging
import operator
import os
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ledger_reader import LedgerError
from ledger_reader.collector import collector_held
from ledger_reader.events import (
    ErrorPayload,
    NodeEnter,
    NodeEnterPayload,
    RunCompleted,
    RunStarted,
    RunStartedPayload,
    RunUpdated,
    RunUpdatedPayload,
)
from ledger_reader.locations import make_private_dir
from run_manager.ledger import cap_payload_value
from run_manager.otlp.families import AGENT, MODEL, STEP, TOOL, described
from run_manager.otlp.span_events import (
    UNREADABLE,
    complete_run,
    emit_errors,
    input_of,
    kind_of,
    name_of,
    place,
)
from run_manager.otlp.spans import Decoded, Span
from run_manager.otlp.trace_runs import (
    READ_ONLY_REASON,
    WRITER,
    OtlpRun,
    OtlpTrace,
    ledger_time,
    run_id_stamp,
    started_by_this_trace,
    write_runs,
    written_events,
)

if TYPE_CHECKING:
    from run_manager.hub import Hub

MAX_TRACES: Final = 10_000
"""Traces whose span ids are kept in memory; an older one is read back from its ledger."""

AGENTS_OWN: Final = frozenset({AGENT, MODEL, TOOL, STEP})
"""The kinds of span that make a trace an agent's, and so a run: an agent, a model call, a
tool call, or a step of an agent framework's instrumentation (a LangGraph node, a chain:
it says which convention it follows). A step's span counts so that a run is listed from
its first span to end (a graph's first nodes end seconds before its first model call);
a web service's own spans (HTTP, a database) follow none and make no run."""
MAX_HELD_SPANS: Final = 20_000
"""Spans of traces that are no agent's (yet) held in memory, of all traces together: past
it, the traces held longest are let go."""
HOLD_SECONDS: Final = 300.0
"""How long a trace with no agent, model call or tool call is held after its last span
came: as long as a run without news stays live (the stale rule)."""

_log = logging.getLogger(__name__)

_start_end: Final = operator.attrgetter("start_ns", "end_ns")


def _end_of_ending(ending: tuple[OtlpRun, Span]) -> int:
    return ending[1].end_ns


class LedgerWriteFailed(Exception):
    """A request's spans could not be written; none of them count as recorded."""


@dataclass(slots=True)
class IngestResult:
    """What one export request did."""

    accepted: int = 0
    """Spans taken: written, or held until their trace shows it is an agent's."""
    duplicates: int = 0
    rejected: int = 0
    reason: str = ""
    runs: set[str] = field(default_factory=set)


class OtlpIngest:
    """Turns decoded export requests into ledgers in ``ledger_dir`` and events on ``hub``.

    Call :meth:`ingest` on the event loop that runs the hub (the server's).
    """

    def __init__(
        self,
        ledger_dir: str | os.PathLike[str],
        hub: Hub | None = None,
        *,
        every_trace: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ledger_dir = Path(ledger_dir)
        self.every_trace = every_trace
        """Every trace is a run, not only an agent's (``runtop serve --every-trace``)."""
        self._clock = clock
        self._held: OrderedDict[str, tuple[float, list[Span]]] = OrderedDict()
        """The spans of traces with no agent, model call or tool call yet, by trace id, with
        when the last came; the least recent first."""
        self._held_spans = 0
        self.let_go = 0
        """Spans of traces let go as no agent's (held too long, or too many held)."""
        self._ledger_prefix = os.path.join(self.ledger_dir, "")
        """What a ledger's path starts with (``os.path.join(ledger_dir, name)`` is this + name)."""
        self.hub = hub
        self._traces: OrderedDict[str, OtlpTrace] = OrderedDict()
        self._on_disk: dict[str, str] | None = None
        """The ledgers already in the directory, by the 16 hex their run ids end in."""

    # -- the entry point -------------------------------------------------------------

    def ingest(self, decoded: Decoded) -> IngestResult:
        """Place every span of one request in its run; write and publish what they make."""
        with collector_held():
            return self._ingest(decoded)

    def _ingest(self, decoded: Decoded) -> IngestResult:
        result = IngestResult(rejected=decoded.rejected, reason=decoded.reason)
        by_trace: dict[str, list[Span]] = {}
        for span in decoded.spans:
            spans = by_trace.get(span.trace_id)
            if spans is None:
                by_trace[span.trace_id] = [span]
            else:
                spans.append(span)
        held: dict[str, list[Span]] = {}
        released: dict[str, list[Span]] = {}
        if not self.every_trace:
            held, released = self._hold_or_release(by_trace)
        touched: dict[str, OtlpRun] = {}
        accepted = duplicates = unreadable = 0
        reason = ""
        for trace_id, spans in by_trace.items():
            trace = self._trace(trace_id)
            placed, parents, agents = trace.placed, trace.parents, trace.agents
            for span in spans:
                span_id = span.span_id
                if span_id not in placed:
                    parents[span_id] = span.parent_span_id
                    if (span.kind or kind_of(span)) == AGENT:
                        agents.add(span_id)
            if len(spans) > 1:
                spans.sort(key=_start_end)
            endings: list[tuple[OtlpRun, Span]] = []
            # Which run a span's parent leads to, for this request: the trace's parents and
            # agents do not change while its spans are placed, nor a run once made.
            runs_below: dict[str, OtlpRun] = {}
            for span in spans:
                span_id = span.span_id
                if span_id in placed:
                    duplicates += 1
                    continue
                if span.kind == AGENT:
                    run = self._run_of_agent(trace, span_id, spans)
                    run.placed += 1
                    emit_errors(run, span, None)
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
                    place(trace, span, run, endings)
                except UNREADABLE as error:
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
            self._amend(trace, spans, touched)
            # A run ends after what happened in it, whatever order its spans came in; where
            # several of its spans could end it (agents one after another under one root, as
            # an Agents SDK handoff makes them), the last to end does.
            if len(endings) > 1:
                endings.sort(key=_end_of_ending)
                last = {run.run_id: (run, span) for run, span in endings}
                endings = list(last.values()) if len(last) < len(endings) else endings
            for run, span in endings:
                complete_run(run, span)
            if trace.run is not None and trace.run.pending:
                touched[trace.run.run_id] = trace.run
            for child in trace.children.values():
                if child.pending:
                    touched[child.run_id] = child
        # Spans released from the hold were taken by the requests that sent them.
        accepted -= sum(len(spans) for spans in released.values())
        result.accepted, result.duplicates = max(accepted, 0) + held_count(held), duplicates
        if unreadable:
            result.rejected += unreadable
            result.reason = reason
            _log.warning(
                "OTLP: %d span(s) of a request rejected, the rest written (%s)", unreadable, reason
            )
        try:
            write_runs(touched.values(), self.hub)
        except OSError as error:
            # The ledgers are the truth: forget what this request taught about its traces,
            # so the exporter's retry is placed again from what reached the disk whole.
            for trace_id in by_trace:
                self._traces.pop(trace_id, None)
            self._on_disk = None
            # Spans held from earlier requests were taken already: held again, not lost.
            for trace_id, spans in released.items():
                self._keep_held(trace_id, spans)
            raise LedgerWriteFailed(
                f"the spans could not be written to the ledger: {error.strerror or error}"
            ) from error
        result.runs = set(touched)
        return result

    # -- traces that are no agent's (yet) ------------------------------------------------

    def _hold_or_release(
        self, by_trace: dict[str, list[Span]]
    ) -> tuple[dict[str, list[Span]], dict[str, list[Span]]]:
        """Take out of ``by_trace`` the traces that are no agent's yet, holding their spans;
        put back in it the spans held of those that now are. Returns what this request held,
        and what it released (the spans of earlier requests now placed), by trace id."""
        self._let_go_old()
        held: dict[str, list[Span]] = {}
        released: dict[str, list[Span]] = {}
        for trace_id, spans in list(by_trace.items()):
            before = self._held.pop(trace_id, None)
            if before is not None:
                self._held_spans -= len(before[1])
            if self._is_a_run(trace_id, spans):
                if before is not None:
                    released[trace_id] = before[1]
                    by_trace[trace_id] = [*before[1], *spans]
                continue
            del by_trace[trace_id]
            held[trace_id] = spans
            self._keep_held(trace_id, [*before[1], *spans] if before is not None else spans)
        return held, released

    def _is_a_run(self, trace_id: str, spans: list[Span]) -> bool:
        """The trace is an agent's: it has a run here or on disk, or ``spans`` hold an
        agent, a model call or a tool call."""
        trace = self._traces.get(trace_id)
        if trace is not None and (trace.run is not None or trace.children):
            return True
        if any((span.kind or kind_of(span)) in AGENTS_OWN for span in spans):
            return True
        return trace_id[16:] in self._ledgers_on_disk()

    def _keep_held(self, trace_id: str, spans: list[Span]) -> None:
        self._held[trace_id] = (self._clock(), spans)
        self._held_spans += len(spans)
        while self._held_spans > MAX_HELD_SPANS and len(self._held) > 1:
            _, (_, oldest) = self._held.popitem(last=False)
            self._held_spans -= len(oldest)
            self.let_go += len(oldest)

    def _let_go_old(self) -> None:
        """Let go of the traces that had no span for :data:`HOLD_SECONDS`."""
        oldest = self._clock() - HOLD_SECONDS
        while self._held:
            trace_id, (last, spans) = next(iter(self._held.items()))
            if last > oldest:
                return
            del self._held[trace_id]
            self._held_spans -= len(spans)
            self.let_go += len(spans)

    # -- runs --------------------------------------------------------------------------

    def _forget_unplaced(self, trace: OtlpTrace) -> None:
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

    def _trace(self, trace_id: str) -> OtlpTrace:
        trace = self._traces.get(trace_id)
        if trace is not None:
            self._traces.move_to_end(trace_id)
            return trace
        trace = self._traces[trace_id] = OtlpTrace(trace_id)
        while len(self._traces) > MAX_TRACES:
            self._traces.popitem(last=False)
        written = self._ledgers_on_disk().get(trace_id[16:])
        if written is not None:  # seen before a restart (or before it was evicted here)
            trace.run = self._reopen(trace, written)  # None: not this trace's ledger
        return trace

    def _run_of_agent(self, trace: OtlpTrace, agent: str | None, spans: list[Span]) -> OtlpRun:
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
        trace: OtlpTrace,
        suffix: str,
        spans: list[Span],
        agent_span: str | None,
        parent_run_id: str | None,
        agent: str | None,
    ) -> OtlpRun:
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
        run_id = f"run_{run_id_stamp(start)}_{suffix}"
        on_disk[suffix] = run_id
        run = OtlpRun(run_id, f"{self._ledger_prefix}{run_id}.jsonl", ledger_time(start))
        mine = own[0] if own else next((s for s in spans if s.span_id == agent), None)
        # A child run is named by its own span alone; the trace's run by the best of its
        # trace's spans where its agent's span is not among them.
        naming = agent if parent_run_id is not None or mine is not None else None
        name, run.name_rank, _ = name_of(trace, spans, naming, mine)
        service = next((span.service for span in spans if span.service), None)
        run.name = name = name or service or "trace"
        asked, run.input_rank, _ = input_of(trace, spans, agent, mine)
        said, cut = cap_payload_value(asked)
        run.asked = said
        run.described = who = _described(spans, mine)
        run.opened = True
        metadata = who.get("metadata")
        if metadata is not None:
            metadata, _ = cap_payload_value(metadata)
        run.emit(
            ledger_time(start),
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
                session_id=who.get("session_id"),
                user_id=who.get("user_id"),
                conversation_id=who.get("conversation_id"),
                tags=who.get("tags"),
                metadata=metadata if isinstance(metadata, dict) else None,
                service=service,
            ),
        )
        return run

    def _amend(self, trace: OtlpTrace, spans: list[Span], touched: dict[str, OtlpRun]) -> None:
        """What this request's spans say of their runs better than their ledgers do, as a
        ``run_updated`` each: a run's own span, which names it and says what it was asked,
        arrives after its children (an exporter sends each span as it ends), and a run
        opened by those is named after what they said, its service at worst. Whatever
        order the spans come in, each run ends up named and asked by its best span
        (:data:`span_events.Rank`), and says who it was for once any span has said it."""
        for run in [trace.run, *trace.children.values()]:
            if run is None:
                continue
            if run.opened:  # made from these very spans: they said all they say already
                run.opened = False
                continue
            if run.run_id not in touched:
                continue
            named = run.name_rank[0] == 0 and run.input_rank[0] == 0
            if named and not _says_who(spans, run):
                continue
            agent = next((key for key, child in trace.children.items() if child is run), None)
            own = next((s for s in spans if s.span_id == agent), None) if agent else None
            if agent is None:  # the trace's run: its top agent's span is its own
                own = next(
                    (s for s in spans if s.kind == AGENT and trace.agent_above(s.span_id) is None),
                    None,
                )
                agent = own.span_id if own is not None else None
            update = RunUpdatedPayload()
            moment = ""
            name, rank, by = name_of(trace, spans, agent, own)
            if name and rank < run.name_rank:
                run.name_rank = rank
                if name != run.name:
                    run.name = update.skill = update.agent = name
                    moment = max(moment, run.at(by.end_ns)) if by is not None else moment
            asked, rank, by = input_of(trace, spans, agent, own)
            if asked is not None and rank < run.input_rank:
                run.input_rank = rank
                said, cut = cap_payload_value(asked)
                if said != run.asked:
                    run.asked = update.input = said
                    update.truncated = True if cut else None
                    moment = max(moment, run.at(by.end_ns)) if by is not None else moment
            if (
                run.answered_by is not None
                and run.last_answer_start > run.answered_by
                and run.last_answer is not None
            ):
                # The run ended before its newest model call arrived: that call's words are
                # its output.
                run.answered_by = run.last_answer_start
                update.output, cut = cap_payload_value(run.last_answer)
                update.truncated = True if cut else update.truncated
                moment = max(moment, run.at(spans[-1].end_ns))
            for key, value in _described(spans, own).items():
                if key not in run.described:
                    run.described[key] = value
                    if key == "metadata":
                        value, _ = cap_payload_value(value)
                    setattr(update, key, value)
                    moment = moment or run.at(spans[-1].end_ns)
            if moment:
                run.emit(moment, RunUpdated, update)
                touched[run.run_id] = run

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

    def _reopen(self, trace: OtlpTrace, run_id: str) -> OtlpRun | None:
        """A run of this trace written before (by this process or an earlier one), to go on
        with; ``None`` if that ledger is not one this ingest wrote for this trace."""
        for run in [trace.run, *trace.children.values()]:
            if run is not None and run.run_id == run_id:
                return run
        run = OtlpRun(run_id, os.fspath(self.ledger_dir / f"{run_id}.jsonl"), written=True)
        run.start = ledger_time(0)
        try:
            events, run.torn = written_events(run.path)
        except LedgerError:
            return None
        if not events or not started_by_this_trace(events[0], trace.trace_id):
            return None
        for event in events:
            run.seq = max(run.seq, event.seq)
            payload = event.payload
            if isinstance(payload, RunStartedPayload | RunUpdatedPayload):
                if isinstance(payload, RunStartedPayload):
                    run.start = event.time
                run.name = payload.agent or run.name
                run.asked = payload.input if payload.input is not None else run.asked
                for key in ("session_id", "user_id", "conversation_id", "tags", "metadata"):
                    if getattr(payload, key) is not None:
                        run.described[key] = getattr(payload, key)
                continue
            if isinstance(payload, ErrorPayload):
                if payload.message is not None:
                    run.errors.add((payload.node_id, payload.message))
                continue
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


def held_count(held: dict[str, list[Span]]) -> int:
    return sum(len(spans) for spans in held.values())


def _described(spans: list[Span], own: Span | None) -> dict[str, Any]:
    """Who a run was for and which conversation, as its first span of a request says it (an
    instrumentation's context attributes are on every span) or its own span does."""
    found = described(spans[0].attributes) if spans else {}
    if own is not None and own is not spans[0]:
        found = {**described(own.attributes), **found}
    return found


def _says_who(spans: list[Span], run: OtlpRun) -> bool:
    return bool(spans) and not described(spans[0].attributes).keys() <= run.described.keys()


def _why(error: BaseException) -> str:
    if isinstance(error, RecursionError):
        return "a value is nested too deep"
    return f"{type(error).__name__}: {str(error)[:200]}"


__all__ = [
    "HOLD_SECONDS",
    "MAX_HELD_SPANS",
    "MAX_TRACES",
    "READ_ONLY_REASON",
    "WRITER",
    "IngestResult",
    "LedgerWriteFailed",
    "OtlpIngest",
]
