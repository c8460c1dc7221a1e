"""OTLP ingest: OpenTelemetry spans that follow the GenAI conventions, written as runs.

``runtop serve`` answers ``POST /v1/traces`` (OTLP/HTTP, protobuf or JSON,
optionally gzipped) with :class:`OtlpIngest`, behind the server's bearer
token. Each trace is a run, written as a ledger (``writer: "otlp"``) in
the server's ledger directory, so ``ls``, ``show``, replay and the TUI
read it as any other; its events are published on the manager's hub, so
attached clients see it live. ``../shared/design/OTLP.md`` is the design;
in short:

- an ``invoke_agent`` span with no ``invoke_agent`` above it is the
  trace's run (its end is ``run_completed``); one nested under another
  is a child run (``parent_run_id``); a trace without one is one run,
  ended by its root span;
- ``chat`` / ``text_completion`` / ``generate_content`` spans become
  ``node_enter``, the output text as ``llm_chunk``, ``llm_call`` with the
  ``gen_ai.usage.*`` tokens, ``node_exit``; ``execute_tool`` spans become
  ``node_enter``, ``tool_call``, ``tool_result``, ``node_exit``; any other
  span is an ``otel_span`` event with its name and attributes; a span's
  ``exception`` events and an error status are ``error`` events;
- spans arrive when they end, children first, batches mixed: each event
  carries its span's own time, and a run is made by the first span of
  its trace that arrives (``run_<UTC start>_<16 hex of the trace id>``;
  a nested agent's run takes its span id);
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
import operator
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
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
    LlmCall,
    LlmCallPayload,
    LlmChunk,
    NodeEnter,
    NodeEnterPayload,
    NodeExit,
    NodeExitPayload,
    RunCompleted,
    RunCompletedPayload,
    RunStarted,
    RunStartedPayload,
    ToolCall,
    ToolCallPayload,
    ToolResult,
    ToolResultPayload,
    UnknownEvent,
)
from ledger_reader.lines import open_ledger_fd
from ledger_reader.locations import make_private_dir
from run_manager.hub import LedgerLines
from run_manager.ledger import cap_payload_value
from run_manager.otlp.spans import MAX_MESSAGE, STATUS_ERROR, Decoded, Span, SpanEvent

if TYPE_CHECKING:
    from run_manager.hub import Hub

WRITER: Final = "otlp"
READ_ONLY_REASON: Final = "sent over OpenTelemetry; runtop cannot stop it"
"""The reason the inspector gives (inspector.source.OTLP_REFUSAL says the same)."""
MAX_TRACES: Final = 10_000
"""Traces whose span ids are kept in memory; an older one is read back from its ledger."""
MAX_NAME: Final = 256
"""Characters of a name taken from a span (its name, a model's, a tool's): a name goes into
node ids and every line of the run that names it."""
MAX_ANCESTRY: Final = 256
"""Parent links followed to find a span's agent (a cycle in hostile input ends there)."""

_SHORT_ARGUMENTS: Final = PAYLOAD_CAP_BYTES // 16
"""Characters of tool arguments whose JSON value is under the payload cap once re-encoded,
so it need not be encoded to be measured: msgspec writes a number back in at most 4.5 times
its text (``1e15`` is ``1000000000000000.0``) and a character of a string in at most 4
bytes, so 4,096 characters come back in at most 18,432 bytes."""
_LLM_OPERATIONS: Final = frozenset({"chat", "text_completion", "generate_content"})
_encoder: Final = msgspec.json.Encoder()
_decoder: Final = msgspec.json.Decoder()


def _operation(span: Span) -> str:
    known = span.operation
    if known is not None:
        return known
    operation = span.attributes.get("gen_ai.operation.name")
    if not isinstance(operation, str):
        operation = span.name.partition(" ")[0] if span.name.startswith("invoke_agent") else ""
    span.operation = operation
    return operation


_start_end: Final = operator.attrgetter("start_ns", "end_ns")


def _end_of_ending(ending: tuple[_Run, Span]) -> int:
    return ending[1].end_ns


def _is_agent(span: Span) -> bool:
    return _operation(span) == "invoke_agent"


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
    seq: int = 0
    completed: bool = False
    chunk_index: int = 0
    node_counts: dict[str, int] = field(default_factory=dict)
    torn: bool = False
    """The ledger ends in a torn line: the next write starts on a fresh one."""
    pending: list[_Line] = field(default_factory=list)
    """Lines to write."""
    events: list[RunEvent] = field(default_factory=list)
    """The events of ``pending``, in the same order, to publish once written."""

    def emit(self, moment: str, event_type: type[Any], payload: Any) -> None:
        self.seq = seq = self.seq + 1
        run_id = self.run_id
        self.pending.append(_Line(run_id, seq, moment, _TAGS[event_type], payload))
        self.events.append(event_type(run_id=run_id, seq=seq, time=moment, payload=payload))

    def emit_unknown(self, moment: str, kind: str, payload: dict[str, Any]) -> None:
        self.seq = seq = self.seq + 1
        run_id = self.run_id
        self.pending.append(_Line(run_id, seq, moment, kind, payload))
        self.events.append(
            UnknownEvent(run_id=run_id, seq=seq, time=moment, type=kind, payload=payload)
        )

    def enter(self, key: str, name: str | None, span: Span, moment: str) -> str:
        """Open the node of a model or tool span (``<key>#<k>``, the k-th of its key here) with
        its ``node_enter``; its id."""
        counts = self.node_counts
        count = counts[key] = counts.get(key, 0) + 1
        node_id = f"{key}#{count}"
        run_id = self.run_id
        self.seq = seq = self.seq + 1
        entered = NodeEnterPayload(node_id=node_id, node_name=name, span_id=span.span_id)
        self.pending.append(_Line(run_id, seq, moment, "node_enter", entered))
        self.events.append(NodeEnter(run_id=run_id, seq=seq, time=moment, payload=entered))
        return node_id

    def exit(self, node_id: str, span: Span, moment: str, failed: bool) -> None:
        """Close a node opened by :meth:`enter` with its ``node_exit``."""
        run_id = self.run_id
        self.seq = seq = self.seq + 1
        exited = NodeExitPayload(
            node_id=node_id,
            duration_micros=max(span.end_ns - span.start_ns, 0) // 1000,
            success=not failed,
        )
        self.pending.append(_Line(run_id, seq, moment, "node_exit", exited))
        self.events.append(NodeExit(run_id=run_id, seq=seq, time=moment, payload=exited))


@dataclass(slots=True)
class _Trace:
    """What is known of one trace: its spans' parents, its agents, its runs."""

    trace_id: str
    parents: dict[str, str] = field(default_factory=dict)
    agents: set[str] = field(default_factory=set)
    placed: set[str] = field(default_factory=set)
    run: _Run | None = None
    children: dict[str, _Run] = field(default_factory=dict)

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
        accepted = duplicates = 0
        for trace_id, spans in by_trace.items():
            trace = self._trace(trace_id)
            placed, parents, agents = trace.placed, trace.parents, trace.agents
            for span in spans:
                span_id = span.span_id
                if span_id not in placed:
                    parents[span_id] = span.parent_span_id
                    if (span.operation or _operation(span)) == "invoke_agent":
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
                if span.operation == "invoke_agent":
                    run = self._run_of_agent(trace, span_id, spans)
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
                self._place(trace, span, run, endings)
                placed.add(span_id)
                touched[run.run_id] = run
                accepted += 1
            # A run ends after what happened in it, whatever order its spans came in.
            if len(endings) > 1:
                endings.sort(key=_end_of_ending)
            for run, span in endings:
                self._complete(run, span)
            if trace.run is not None and trace.run.pending:
                touched[trace.run.run_id] = trace.run
            for child in trace.children.values():
                if child.pending:
                    touched[child.run_id] = child
        result.accepted, result.duplicates = accepted, duplicates
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
        run = _Run(run_id, f"{self._ledger_prefix}{run_id}.jsonl")
        name, service = self._name(trace, spans, own[0] if own else None)
        said, cut = cap_payload_value(_input_of(trace, spans, agent))
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
                if (s.operation or _operation(s)) == "invoke_agent"
                and trace.agent_above(s.span_id) is None
            ]
            candidates += [s for s in spans if not s.parent_span_id]
        for span in candidates:
            name = span.attributes.get("gen_ai.agent.name")
            if isinstance(name, str) and name:
                return name, service
        if own is not None:
            return own.name or "agent", service
        for span in spans:
            name = span.attributes.get("gen_ai.agent.name")
            if isinstance(name, str) and name:
                return name, service
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
        run = _Run(run_id, os.fspath(self.ledger_dir / f"{run_id}.jsonl"))
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
        """A span that is not an agent's, as events of ``run`` (its agent's)."""
        operation = span.operation
        if operation in _LLM_OPERATIONS:
            self._model_call(run, span)
        elif operation == "execute_tool":
            self._tool_call(run, span)
        else:
            self._generic(run, span)
            if not span.parent_span_id and not trace.agents:
                endings.append((run, span))

    # The two spans nearly every trace is made of write their calls' events straight into the
    # run's lists (a call per event cost a fifth of their time), as ``emit`` would, in the same
    # order; their nodes open and close through ``enter`` and ``exit``, shared by both.

    def _model_call(self, run: _Run, span: Span) -> None:
        get = span.attributes.get
        model = get("gen_ai.response.model")
        if not (isinstance(model, str) and model):
            model = get("gen_ai.request.model")
            if not (isinstance(model, str) and model):
                model = None
        if model is not None:
            model = model[:MAX_NAME]
        node_id = run.enter(f"llm:{model or 'default'}", model, span, _time(span.start_ns))
        run_id, lines, events, seq = run.run_id, run.pending, run.events, run.seq
        end = _time(span.end_ns)
        messages = get("gen_ai.output.messages")
        text = _output_text(messages) if messages is not None else None
        if text:
            value, _ = cap_payload_value(text)
            chunk = ChunkPayload(index=run.chunk_index, delta=value, node_id=node_id)
            run.chunk_index += 1
            seq += 1
            lines.append(_Line(run_id, seq, end, "llm_chunk", chunk))
            events.append(LlmChunk(run_id=run_id, seq=seq, time=end, payload=chunk))
        provider = get("gen_ai.provider.name")
        if not (isinstance(provider, str) and provider):
            provider = _text(get("gen_ai.system"))
        else:
            provider = provider[:MAX_NAME]
        prompt = get("gen_ai.usage.input_tokens")
        if not isinstance(prompt, int) or isinstance(prompt, bool):
            prompt = None
        output = get("gen_ai.usage.output_tokens")
        if not isinstance(output, int) or isinstance(output, bool):
            output = None
        cost = get("operation.cost")
        call = LlmCallPayload(
            model=model,
            provider=provider,
            prompt_tokens=prompt,
            output_tokens=output,
            cache_read_tokens=_tokens(
                get, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens"
            ),
            cache_write_tokens=_tokens(
                get,
                "gen_ai.usage.cache_creation.input_tokens",
                "gen_ai.usage.cache_creation_input_tokens",
            ),
            cost_usd=None if cost is None else _float(cost),
            node_id=node_id,
        )
        seq += 1
        lines.append(_Line(run_id, seq, end, "llm_call", call))
        events.append(LlmCall(run_id=run_id, seq=seq, time=end, payload=call))
        run.seq = seq
        failed = self._errors(run, span, node_id) if span.events or span.status_code else False
        run.exit(node_id, span, end, failed)

    def _tool_call(self, run: _Run, span: Span) -> None:
        get = span.attributes.get
        name = get("gen_ai.tool.name")
        if isinstance(name, str) and name:
            name = name[:MAX_NAME]
        else:
            name = span.name.removeprefix("execute_tool ")
        start = _time(span.start_ns)
        node_id = run.enter(f"tool:{name or 'tool'}", name, span, start)
        call_id = get("gen_ai.tool.call.id")
        if isinstance(call_id, str) and call_id:
            call_id = call_id[:MAX_NAME]
        else:
            call_id = f"call_{span.span_id}"
        run_id, lines, events, seq = run.run_id, run.pending, run.events, run.seq
        raw = get("gen_ai.tool.call.arguments")
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
        events.append(ToolCall(run_id=run_id, seq=seq, time=start, payload=called))
        run.seq = seq
        failed = self._errors(run, span, node_id) if span.events or span.status_code else False
        seq = run.seq
        result = get("gen_ai.tool.call.result")
        if result is not None and not isinstance(result, str):
            result = _encoder.encode(result).decode()
        output, cut = cap_payload_value(result)
        end = _time(span.end_ns)
        answered = ToolResultPayload(
            call_id=call_id,
            node_id=node_id,
            output=output,
            truncated=True if cut else None,
            is_error=failed,
        )
        run.seq = seq = seq + 1
        lines.append(_Line(run_id, seq, end, "tool_result", answered))
        events.append(ToolResult(run_id=run_id, seq=seq, time=end, payload=answered))
        run.exit(node_id, span, end, failed)

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
        run.emit_unknown(_time(span.start_ns), "otel_span", payload)
        self._errors(run, span, None)

    def _errors(self, run: _Run, span: Span, node_id: str | None) -> bool:
        """The span's exception events and error status as ``error`` events; whether it failed."""
        said = False
        for event in span.events:
            if event.name == "exception":
                run.emit(
                    _time(event.time_ns),
                    ErrorEvent,
                    ErrorPayload(message=_exception_message(event), node_id=node_id),
                )
                said = True
        if span.status_code != STATUS_ERROR:
            return said
        if not said:
            message = span.status_message or f"span {span.name!r} failed"
            run.emit(_time(span.end_ns), ErrorEvent, ErrorPayload(message=message, node_id=node_id))
        return True

    def _complete(self, run: _Run, span: Span) -> None:
        if run.completed:
            return
        run.completed = True
        end = _time(span.end_ns)
        if span.status_code == STATUS_ERROR:
            error = span.status_message or next(
                (_exception_message(event) for event in span.events if event.name == "exception"),
                f"span {span.name!r} failed",
            )
            run.emit(end, RunCompleted, RunCompletedPayload(status="error", error=error))
            return
        output = span.attributes.get("final_result")
        if output is None:
            output = _output_text(span.attributes.get("gen_ai.output.messages"))
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
            events, run.events = run.events, []
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


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _tokens(get: Callable[[str], Any], key: str, older_key: str) -> int | None:
    """A token count under its current key, else the one it had before (0 counts as unsaid)."""
    value = get(key)
    if value is not None:
        value = _int(value)
        if value:
            return value
    value = get(older_key)
    return None if value is None else _int(value)


def _float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    return float(value) if isinstance(value, int | float) else None


def _json_or_text(value: Any) -> Any:
    """Tool arguments as the JSON they hold where they are JSON text."""
    if isinstance(value, str):
        try:
            return _decoder.decode(value)
        except msgspec.DecodeError:
            return value
    return value


def _input_of(trace: _Trace, spans: list[Span], agent: str | None) -> str | None:
    """What a run was asked: the user's words its first model call was sent.

    The run's ``invoke_agent`` span says it only at its end (the last span to arrive),
    after ``run_started`` is written; its first model call (a ``chat`` span under the
    same agent, sent first) carries ``gen_ai.input.messages`` where the instrumentation
    records content. ``None`` where nothing says it.
    """
    for span in spans:  # sorted by start: the first model call of the run
        if _operation(span) in _LLM_OPERATIONS and trace.agent_above(span.span_id) == agent:
            return _last_user_text(span.attributes.get("gen_ai.input.messages"))
    return None


def _messages(messages: Any) -> list[Any]:
    """``gen_ai.*.messages``: JSON text of a list of messages with parts (nothing if not)."""
    if isinstance(messages, str):
        try:
            messages = _decoder.decode(messages)
        except (msgspec.DecodeError, RecursionError):
            return []
    return messages if isinstance(messages, list) else []


def _text_parts(message: Any) -> str:
    parts = message.get("parts") if isinstance(message, dict) else None
    return "".join(
        part["content"]
        for part in (parts if isinstance(parts, list) else ())
        if isinstance(part, dict)
        and part.get("type") == "text"
        and isinstance(part.get("content"), str)
    )


def _last_user_text(messages: Any) -> str | None:
    """The text of the newest user message (earlier ones are the conversation so far)."""
    for message in reversed(_messages(messages)):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text_parts(message) or None
    return None


def _output_text(messages: Any) -> str | None:
    """The assistant text in ``gen_ai.output.messages`` (JSON text of messages with parts)."""
    return "".join(_text_parts(message) for message in _messages(messages)) or None
