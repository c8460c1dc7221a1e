"""Spans to events: what a span of each kind writes into its run.

A model call is ``node_enter``, the answer's text as ``llm_chunk``,
``llm_call`` and ``node_exit``; a tool call ``node_enter``, ``tool_call``,
``tool_result`` and ``node_exit``; a step ``node_enter`` and ``node_exit``;
any other span an ``otel_span`` event; a span's ``exception`` events and
error status ``error`` events; an agent's span ends its run. Each span is
read by the first family of conventions whose attributes it carries
(:mod:`run_manager.otlp.families`). Which run a span belongs to is
:mod:`run_manager.otlp.ingest`'s to decide.
"""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

from ledger_reader.events import (
    PAYLOAD_CAP_BYTES,
    ChunkPayload,
    ErrorEvent,
    ErrorPayload,
    LlmCallPayload,
    RunCompleted,
    RunCompletedPayload,
    ToolCallPayload,
    ToolResultPayload,
)
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
    agent_called,
)
from run_manager.otlp.genai import GENAI
from run_manager.otlp.openinference import OPENINFERENCE
from run_manager.otlp.openllmetry import OPENLLMETRY
from run_manager.otlp.spans import MAX_MESSAGE, STATUS_ERROR, STATUS_OK, Span, SpanEvent
from run_manager.otlp.trace_runs import MAX_ANNOUNCED, LedgerLine, OtlpRun, OtlpTrace

UNREADABLE: Final = (RecursionError, ValueError, TypeError, msgspec.MsgspecError)
"""What reading a span's values may raise on hostile input: the span is rejected alone."""
_SHORT_ARGUMENTS: Final = PAYLOAD_CAP_BYTES // 16
"""Characters of tool arguments whose JSON value is under the payload cap once re-encoded,
so it need not be encoded to be measured: msgspec writes a number back in at most 4.5 times
its text (``1e15`` is ``1000000000000000.0``) and a character of a string in at most 4
bytes, so 4,096 characters come back in at most 18,432 bytes."""
_RESERVED_PREFIXES: Final = frozenset({"llm", "tool", "approval"})
"""Node id prefixes that say a model call, a tool call or an approval to readers: a step's
kind is never one of them."""
_encoder: Final = msgspec.json.Encoder()
_decoder: Final = msgspec.json.Decoder()


def kind_of(span: Span) -> str:
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


def family_of(span: Span) -> Family:
    if span.family is None:
        kind_of(span)
    family: Family = span.family
    return family


def place(trace: OtlpTrace, span: Span, run: OtlpRun, endings: list[tuple[OtlpRun, Span]]) -> None:
    """A span that is not an agent's, as events of ``run`` (its agent's).

    Raises:
        RecursionError, ValueError, TypeError: a value of the span cannot be read; what
            it wrote is the caller's to take back.
    """
    kind = span.kind
    family: Family = span.family
    if kind == MODEL:
        _model_call(trace, run, span, family.model_call(span))
    elif kind == TOOL:
        _tool_call(trace, run, span, family.tool_use(span))
    elif kind == STEP:
        if span.parent_span_id:
            _step(run, span, family)
        else:  # the trace's root: the run itself, or what wraps the trace's agents
            emit_errors(run, span, None)
    else:
        _generic(run, span)
    if not span.parent_span_id and not trace.agents:
        endings.append((run, span))


# The two spans nearly every trace is made of write their calls' events straight into the
# run's list (a call per event would be a large share of their time), as ``emit`` would, in the same
# order; their nodes open and close through ``enter`` and ``exit``, shared by all.


def _model_call(trace: OtlpTrace, run: OtlpRun, span: Span, call: ModelCall) -> None:
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
        lines.append(LedgerLine(run_id, seq, end, "llm_chunk", chunk))
        if span.start_ns >= run.last_answer_start:  # the newest call's, whatever the order
            run.last_answer, run.last_answer_start = said, span.start_ns
    messages, response = call.messages, call.response
    cut = False
    if not call.within_cap:
        if messages is not None:
            messages, cut = cap_messages(messages)
        if response is not None:
            response, cut_response = cap_messages(response)
            cut = cut or cut_response
    if response is not None:
        _announce(trace, response)
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
    lines.append(LedgerLine(run_id, seq, end, "llm_call", payload))
    run.seq = seq
    failed = emit_errors(run, span, node_id) if span.events or span.status_code else False
    run.exit(node_id, span, end, failed)


def _announce(trace: OtlpTrace, response: list[Any]) -> None:
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


def _tool_call(trace: OtlpTrace, run: OtlpRun, span: Span, use: ToolUse) -> None:
    name = use.name
    start = run.at(span.start_ns)
    node_id = run.enter(f"tool:{name or 'tool'}", name, span, start)
    raw = use.arguments
    call_id = use.call_id
    kept = False
    if trace.announced:
        call_id, raw, kept = _answered(trace.announced, use, name)
    call_id = call_id or f"call_{span.span_id}"
    run_id, lines, seq = run.run_id, run.pending, run.seq
    if kept and not isinstance(raw, str):
        # A model call's tool call's, read from JSON and kept in its response under the
        # cap: written as they are there, not measured again.
        arguments, cut = raw, False
    elif isinstance(raw, str) and len(raw) <= _SHORT_ARGUMENTS:
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
    lines.append(LedgerLine(run_id, seq, start, "tool_call", called))
    run.seq = seq
    failed = emit_errors(run, span, node_id) if span.events or span.status_code else False
    seq = run.seq
    result = use.result
    if failed and result is None:
        result = failure_of(span)  # what the tool said of its failure: its result
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
    lines.append(LedgerLine(run_id, seq, end, "tool_result", answered))
    run.exit(node_id, span, end, failed)


def _step(run: OtlpRun, span: Span, family: Family) -> None:
    kind, name = family.step(span)
    kind = kind[:MAX_NAME] if kind not in _RESERVED_PREFIXES else "step"
    name = name[:MAX_NAME]
    node_id = run.enter(f"{kind}:{name or 'step'}", name or None, span, run.at(span.start_ns))
    failed = emit_errors(run, span, node_id) if span.events or span.status_code else False
    run.exit(node_id, span, run.at(span.end_ns), failed)


def _generic(run: OtlpRun, span: Span) -> None:
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
    emit_errors(run, span, None)


def emit_errors(run: OtlpRun, span: Span, node_id: str | None) -> bool:
    """The span's exception events and error status as ``error`` events; whether it failed.

    A failure is said once for its node, or once for the run: a span may record one
    exception twice (Google ADK's tool spans do), and each span an exception passes up
    through records it again (an agent's span, then the workflow's around it). A span
    whose status says it succeeded (OK, set by its instrumentation, final in OpenTelemetry's
    words) did not fail: its exceptions were handled (AutoGen's agent span records the
    ``CancelledError`` that closes its stream after the answer)."""
    if span.status_code == STATUS_OK:
        return False
    said = False
    for event in span.events:
        if event.name == "exception":
            _error(run, run.at(event.time_ns), _exception_message(event), node_id)
            said = True
    if span.status_code != STATUS_ERROR:
        return said
    if not said:
        _error(
            run, run.at(span.end_ns), span.status_message or f"span {span.name!r} failed", node_id
        )
    return True


def failure_of(span: Span) -> str:
    """What a failed span says of its failure: its status's message, else its first
    exception's, else that it failed."""
    return span.status_message or next(
        (_exception_message(event) for event in span.events if event.name == "exception"),
        f"span {span.name!r} failed",
    )


def _error(run: OtlpRun, moment: str, message: str, node_id: str | None) -> None:
    known = (node_id, message)
    if known in run.errors:
        return
    run.errors.add(known)
    run.emit(moment, ErrorEvent, ErrorPayload(message=message, node_id=node_id))


def complete_run(run: OtlpRun, span: Span) -> None:
    if run.completed:
        return
    run.completed = True
    end = run.at(span.end_ns)
    if span.status_code == STATUS_ERROR:
        error = failure_of(span)
        run.emit(end, RunCompleted, RunCompletedPayload(status="error", error=error))
        return
    try:
        output = family_of(span).run_output(span)
    except UNREADABLE:  # the run ended all the same; what it answered cannot be read
        output = None
    if output is None or _framework_object(output):
        # Its newest model call's words say it better than nothing or a framework's object
        # (LlamaIndex's ``StopEvent(result=AgentOutput(...))``); a later call arriving
        # after the run's end says it again (``run_updated``).
        run.answered_by = run.last_answer_start
        output = run.last_answer if run.last_answer is not None else output
    value, cut = cap_payload_value(output)
    run.emit(
        end,
        RunCompleted,
        RunCompletedPayload(status="ok", output=value, truncated=True if cut else None),
    )


_OBJECT: Final = re.compile(r"[A-Z][\w.]*\([a-z_]+=")


def _framework_object(output: Any) -> bool:
    """Whether a run's output is a framework's object written as Python writes one
    (``StopEvent(result=...)``, ``Prediction(...)``), not what the agent answered."""
    return isinstance(output, str) and _OBJECT.match(output) is not None


def _exception_message(event: SpanEvent) -> str:
    kind = _text(event.attributes.get("exception.type"))
    message = _long_text(event.attributes.get("exception.message"))
    if kind and message:
        return f"{kind}: {message}"
    return message or kind or "exception"


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


Rank = tuple[int, int]
"""How well a span says a run's name or input, lower is better: how it says it (the run's
own agent span, the trace's root, a model call...), then when that span began. Whatever
order a trace's spans arrive in, the best of them all is the same."""
UNSAID: Final[Rank] = (9, 0)
"""The rank of a name or input nothing has said yet."""


def name_of(
    trace: OtlpTrace, spans: list[Span], agent: str | None, own: Span | None
) -> tuple[str | None, Rank, Span | None]:
    """The best name of a run that ``spans`` (one request's, of its trace) say: its own
    agent span's; for the trace's run, an agent's at its top, else its root's (``Name.run``
    gives ``Name``), else a GenAI agent name any span says; ``None`` where they say none.

    A nameless wrapper at the root (the Agents SDK's ``Agent workflow``) names the run only
    where no agent under it says its name.
    """
    if own is not None:
        return family_of(own).agent_name(own) or own.name or "agent", (0, own.start_ns), own
    if agent is not None:
        return None, UNSAID, None
    best: tuple[str | None, Rank, Span | None] = (None, UNSAID, None)
    for span in spans:
        parent = span.parent_span_id
        if not parent:
            name = family_of(span).agent_name(span) or agent_called(span.name)
            # A root that says what it was asked or answered is the agent the user ran (a
            # LangGraph graph); one that says nothing wraps the agents under it (the Agents
            # SDK's ``Agent workflow``), which name the run before it.
            attributes = span.attributes
            speaks = "input.value" in attributes or "output.value" in attributes
            rank = (0 if speaks else 1, span.start_ns)
        elif (span.kind or kind_of(span)) == AGENT and trace.agent_above(span.span_id) is None:
            name = family_of(span).agent_name(span)
            rank = (0, span.start_ns)
        else:
            said = span.attributes.get("gen_ai.agent.name")
            if not isinstance(said, str) or not said:
                continue
            name, rank = said[:MAX_NAME], (2, span.start_ns)
        if name and rank < best[1]:
            best = (name, rank, span)
    return best


def input_of(
    trace: OtlpTrace, spans: list[Span], agent: str | None, own: Span | None
) -> tuple[Any, Rank, Span | None]:
    """What a run was asked, as ``spans`` (one request's, of its trace) say it best: its own
    span's (or the trace's root's) input, else the newest user words its first model call
    was sent; ``None`` where nothing says it or what says it cannot be read.

    A run's span says it only at its end (the last span to arrive), after ``run_started``
    is written; its first model call carries the conversation where the instrumentation
    records content.
    """
    try:
        for span in [own] if own is not None else [s for s in spans if not s.parent_span_id]:
            said = family_of(span).run_input(span)
            if said is not None:
                return said, (0, span.start_ns), span
        for span in spans:  # sorted by start: the first model call of the run
            if (span.kind or kind_of(span)) != MODEL:
                continue
            owner = trace.agent_above(span.span_id)
            # The trace's own run holds what its top agent does, as well as what is under
            # no agent.
            if owner == agent or (agent is None and trace.agent_above(owner or "") is None):
                said = family_of(span).asked(span)
                if said is not None:
                    return said, (1, span.start_ns), span
                return None, UNSAID, None
    except UNREADABLE:
        return None, UNSAID, None
    return None, UNSAID, None


def _answered(
    announced: dict[str, tuple[Any, Any]], use: ToolUse, name: str | None
) -> tuple[str | None, Any, bool]:
    """The call id and arguments of a tool span, with what the model's tool call said: its
    arguments where the span's are not whole, its id where the span names none (the one
    call of that tool with the same arguments, or, the span holding a one-argument tool's
    value alone, the call whose one argument that is), and whether the arguments are the
    model's. A call answered is forgotten."""
    call_id, arguments = use.call_id, use.arguments
    if call_id is not None:
        said = announced.pop(call_id, None)
        if said is not None and not use.arguments_whole:
            return call_id, said[1], True
        return call_id, arguments, False
    wanted = _json_or_text(arguments)
    for known, (called, given) in announced.items():
        if called != name:
            continue
        given = _json_or_text(given)
        if given == wanted:
            del announced[known]
            return known, arguments, False
        if not use.arguments_whole and wanted is not None and _one_value(given) == wanted:
            del announced[known]
            return known, given, True
    return None, arguments, False


def _one_value(arguments: Any) -> Any:
    """The value of arguments that are one argument (``{"city": "Paris"}``), else ``None``."""
    if isinstance(arguments, dict) and len(arguments) == 1:
        return next(iter(arguments.values()))
    return None
