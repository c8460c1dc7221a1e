"""The ledger's event model: one typed event per line type, and the generic rest.

Every type of the ledger format has its own struct, so a reader decodes a line in
one pass (msgspec dispatches on ``type``) and the code that follows reads
fields, not dictionary keys. A line whose type this version does not know
becomes an :class:`UnknownEvent` with its payload kept as it was: a newer
writer must never lose events to an older reader.

Payload fields are all optional. Writers leave fields out, and a missing
field is not damage; only a line that is not a JSON object with a ``type``
is (see :mod:`ledger_reader.decode`).

These are also what a run manager's hub delivers live (``run_manager.Hub``): the
same events, as the ledger is written.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from typing import Any, ClassVar, Final

import msgspec

MAX_LINE_BYTES: Final = 4 * 1024 * 1024
"""A line longer than this is reported as damaged and never held whole."""

PAYLOAD_CAP_BYTES: Final = 64 * 1024
"""User data (``input``, ``arguments``, ``output``) over this is cut by the writer."""

RUN_ID_PATTERN: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")
"""Any run id a reader accepts; anything else is refused before it touches a path."""


def is_valid_run_id(run_id: str) -> bool:
    """Say whether ``run_id`` is safe to join to a path and to show.

    ``.`` and ``..`` match the character class but name directories, so they
    are refused too.
    """
    return run_id not in {".", ".."} and RUN_ID_PATTERN.fullmatch(run_id) is not None


@lru_cache(maxsize=65536)
def parse_time(value: str) -> datetime | None:
    """Parse an RFC 3339 time as written in ledgers, or return ``None``.

    Writers use any number of fraction digits; :func:`datetime.fromisoformat`
    takes up to six, so longer fractions are cut to microseconds first.
    """
    text = value.strip()
    if not text:
        return None
    dot = text.find(".")
    if dot != -1:
        end = dot + 1
        while end < len(text) and text[end].isdigit():
            end += 1
        digits = text[dot + 1 : end]
        if len(digits) > 6:
            text = text[: dot + 7] + text[end:]
        elif not digits:
            text = text[:dot] + text[end:]
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    return parsed


class Payload(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """Base of every typed payload: unknown fields are ignored, not errors.

    Decoded JSON cannot form reference cycles, so events and payloads are
    kept out of the cyclic garbage collector (``gc=False``): scanning
    millions of them for cycles would cost more than decoding them.
    """


class RunDescribedPayload(Payload):
    """*Extension* fields of ``run_started`` and ``run_updated``: who a run was for and
    which conversation it was, as its tracing said them (OTLP runs)."""

    session_id: str | None = None
    """*Extension*: the session the run belongs to, as its tracing said it."""
    user_id: str | None = None
    """*Extension*: who the run was for."""
    conversation_id: str | None = None
    """*Extension*: the thread or conversation it continued."""
    tags: list[str] | None = None
    """*Extension*: labels its tracing gave it."""
    metadata: dict[str, Any] | None = None
    """*Extension*: what else its tracing said of it (names to JSON values)."""
    service: str | None = None
    """*Extension*: the service that sent its spans (OpenTelemetry's ``service.name``)."""


class BudgetLimits(Payload):
    """*Extension*: what a run may spend before it is stopped (``run_started.budget``, and
    ``budget_updated`` as the limits grow); a limit left out is none."""

    cost_usd: float | None = None
    """Dollars its model calls may cost."""
    tokens: int | None = None
    """Tokens they may send and answer with (prompt and output tokens)."""
    model_calls: int | None = None
    """Model calls it may make."""
    seconds: float | None = None
    """Seconds it may last."""
    ask_at: float | None = None
    """The share of a limit at which the run asks whether to go on (``0.8``); absent: it
    never asks, it stops at the limit."""
    ask_timeout: float | None = None
    """Seconds its question waits for an answer, denied when they are up (the run is then
    canceled); absent: it waits as long as the run lives."""


class BudgetSpent(Payload):
    """*Extension*: what a budgeted run has spent of its budget, its child runs' included."""

    cost_usd: float | None = None
    tokens: int | None = None
    model_calls: int | None = None
    seconds: float | None = None


class BudgetState(BudgetLimits):
    """*Extension*, ``budget_updated``'s payload: a run's budget as it stands, its limits as
    they are now (an approval grows one by its first size), what was spent, and ``state``."""

    spent: BudgetSpent | None = None
    state: str | None = None
    """``ok``; ``asking`` (it waits on its approval to go on past ``ask_at``); ``exceeded``
    (a limit was reached, the run is cancelled); ``denied`` (asked, not approved:
    cancelled)."""
    limit: str | None = None
    """The limit ``state`` is about (``cost_usd``, ``tokens``, ``model_calls``,
    ``seconds``), when it is about one."""


class RunStartedPayload(RunDescribedPayload):
    """What a run was asked to do, and by whom; the first line of a ledger."""

    skill: str | None = None
    input_digest: str | None = None
    input: Any = None
    parent_run_id: str | None = None
    trace_id: str | None = None
    flavor: str | None = None
    agent: str | None = None
    pid: int | None = None
    host: str | None = None
    resumed_from: str | None = None
    writer: str | None = None
    truncated: bool | None = None
    executor: str | None = None
    """*Extension*: where the run's code executes, when not in the writer's process (``ray``)."""
    budget: BudgetLimits | None = None
    """*Extension*: the run's budget as it was given (its state later: ``budget_updated``)."""

    project: str | None = None
    """*Extension*: the folder the run worked in (a coding agent's project)."""
    git_branch: str | None = None
    """*Extension*: the git branch checked out there, when the writer said."""


class RunUpdatedPayload(RunDescribedPayload):
    """*Extension*: what a writer learned of its run after ``run_started``: each field said
    replaces the one before, the others stay as they were. OTLP ingest writes it when a
    run's own span, which names it and says what it was asked, arrives after its children
    (an exporter sends each span as it ends, the run's own last)."""

    skill: str | None = None
    agent: str | None = None
    input: Any = None
    output: Any = None
    """What the run answered, where it ended before what says it best arrived: it replaces
    ``run_completed``'s."""
    truncated: bool | None = None


class RunCompletedPayload(Payload):
    """How a run ended: ``ok``, ``error``, ``cancelled`` or ``suspended``."""

    status: str | None = None
    output: Any = None
    error: str | None = None
    truncated: bool | None = None
    reason: str | None = None


class NodeEnterPayload(Payload):
    """A step of the run begins: a model call, a tool call, an approval gate, a child run."""

    node_id: str | None = None
    node_name: str | None = None
    span_id: str | None = None
    parent_span_id: str | None = None
    """*Extension*, an OTLP run's: the span of the node this one is inside. Spans arrive
    as they end, so a node may be written before the one it is inside: a reader nests it
    by this, not by the order of the lines."""
    model: str | None = None
    """*Extension*, a model node's: the model asked, said as the request is sent."""
    provider: str | None = None
    """*Extension*, a model node's: who serves the model."""
    messages: Any = None
    """*Extension*, a model node's: what the model is sent, written when the request goes
    out, so a call still waiting (or never answered) shows what it was asked. The same
    shape and cap as ``llm_call.messages``; absent when content is not recorded."""
    truncated: bool | None = None
    """*Extension*: older ``messages`` were left out to keep them under the cap."""


class NodeExitPayload(Payload):
    """A step ends, after ``duration_micros``; ``success`` is false for one that failed."""

    node_id: str | None = None
    duration_micros: int | None = None
    success: bool | None = None


class ToolCallPayload(Payload):
    """A tool is called: its ``name`` and ``arguments``; ``call_id`` pairs it with its result."""

    call_id: str | None = None
    node_id: str | None = None
    name: str | None = None
    arguments: Any = None
    truncated: bool | None = None


class ToolResultPayload(Payload):
    """A tool call's outcome (``is_error`` for a failure), paired by ``call_id``."""

    call_id: str | None = None
    node_id: str | None = None
    output: Any = None
    truncated: bool | None = None
    is_error: bool | None = None
    child_run_id: str | None = None
    """*Extension*: the run the call started (a coding agent's sub-agent), when the writer
    knows it: a timeline nests that child run under the call."""


class LlmCallPayload(Payload):
    """A model call, once it has ended: model, provider, tokens, cost, and what was said."""

    model: str | None = None
    provider: str | None = None
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost_usd: float | None = None
    node_id: str | None = None
    messages: Any = None
    """What the model was sent (:mod:`ledger_reader.messages`); absent when not recorded."""
    response: Any = None
    """What it answered, in the same shape."""
    first_token_micros: int | None = None
    """A streamed call's wait from the request to its first token."""
    truncated: bool | None = None
    """Older messages were left out to keep ``messages`` under the cap."""
    status: str | None = None
    """*Extension*: how a call that got no answer ended: ``cancelled`` (its run was
    cancelled while the model was asked) or ``error``; absent for a call answered."""
    cost_estimated: bool | None = None
    """*Extension*: ``cost_usd`` was worked out by the reader from the tokens and a price
    library, not paid as billed."""
    answered_at: str | None = None
    """*Extension*: when the answer ended, where that was before the ``llm_call`` could be
    written (a coding agent's response, whose final counts come after the tools it asked
    for ran): the call lasted to here (:func:`~ledger_reader.timespan.model_answered`)."""


class ChunkPayload(Payload):
    """A piece of streamed text (``llm_chunk``) or reasoning (``reasoning_chunk``)."""

    index: int | None = None
    delta: str | None = None
    node_id: str | None = None


class StructuredOutputPayload(Payload):
    """A structured output, with the digest of the schema it was checked against."""

    schema_digest: str | None = None
    output: Any = None


class ApprovalRequestPayload(Payload):
    """The run waits for a decision on ``prompt``, for up to ``timeout_seconds``."""

    approval_id: str | None = None
    prompt: str | None = None
    timeout_seconds: float | None = None
    warn_at_seconds: float | None = None


class ApprovalResponsePayload(Payload):
    """The decision on ``approval_id``: ``approved``, why, and by whom (``source``)."""

    approval_id: str | None = None
    approved: bool | None = None
    reason: str | None = None
    source: str | None = None
    answered_by: str | None = None
    """*Extension*: who answered (the OS user of the runtop that sent it, or its
    ``--user``), as ``cancel_requested``'s ``requested_by`` says who asked."""


class ErrorPayload(Payload):
    """An error the run or one of its steps met (the run may go on)."""

    message: str | None = None
    node_id: str | None = None


class CancelRequestedPayload(Payload):
    """A cancel was asked for, why and by whom: the run ends once it has stopped."""

    reason: str | None = None
    source: str | None = None
    requested_by: str | None = None


class RunPlacedPayload(Payload):
    """*Extension*: the process a run's code landed on, when an executor placed it elsewhere."""

    executor: str | None = None
    node_id: str | None = None
    worker_id: str | None = None
    actor_id: str | None = None
    pid: int | None = None
    host: str | None = None
    address: str | None = None


class Envelope(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """The fields every line carries.

    ``seq`` is 0 when a line left it out (real ``seq`` values start at 1).
    """

    run_id: str = ""
    """The run the event belongs to."""
    seq: int = 0
    """Its place in the run's ledger, from 1."""
    time: str = ""
    """When it was written (RFC 3339, UTC): :attr:`timestamp` parses it."""

    @property
    def timestamp(self) -> datetime | None:
        """The event's time, parsed; ``None`` when absent or malformed."""
        return parse_time(self.time)


class TypedEvent(Envelope, tag_field="type"):
    """An event of a type the ledger format defines."""

    known: ClassVar[bool] = True

    @property
    def type(self) -> str:
        """The line's ``type``, as written."""
        tag = self.__struct_config__.tag
        assert isinstance(tag, str)
        return tag


class RunStarted(TypedEvent, tag="run_started"):
    """``run_started``: the first line of a ledger, what the run was asked and by whom."""

    payload: RunStartedPayload = msgspec.field(default_factory=RunStartedPayload)


class RunUpdated(TypedEvent, tag="run_updated"):
    """``run_updated``: what the writer learned of the run after it started."""

    payload: RunUpdatedPayload = msgspec.field(default_factory=RunUpdatedPayload)


class RunCompleted(TypedEvent, tag="run_completed"):
    """``run_completed``: the last line of a ledger, how the run ended."""

    payload: RunCompletedPayload = msgspec.field(default_factory=RunCompletedPayload)


class NodeEnter(TypedEvent, tag="node_enter"):
    """``node_enter``: a step begins (model call, tool call, approval, child run)."""

    payload: NodeEnterPayload = msgspec.field(default_factory=NodeEnterPayload)


class NodeExit(TypedEvent, tag="node_exit"):
    """``node_exit``: a step ends."""

    payload: NodeExitPayload = msgspec.field(default_factory=NodeExitPayload)


class ToolCall(TypedEvent, tag="tool_call"):
    """``tool_call``: a tool is called."""

    payload: ToolCallPayload = msgspec.field(default_factory=ToolCallPayload)


class ToolResult(TypedEvent, tag="tool_result"):
    """``tool_result``: what a tool call returned, or its error."""

    payload: ToolResultPayload = msgspec.field(default_factory=ToolResultPayload)


class LlmCall(TypedEvent, tag="llm_call"):
    """``llm_call``: a model call that ended, with its usage and conversation."""

    payload: LlmCallPayload = msgspec.field(default_factory=LlmCallPayload)


class LlmChunk(TypedEvent, tag="llm_chunk"):
    """``llm_chunk``: a piece of a model's answer, as streamed."""

    payload: ChunkPayload = msgspec.field(default_factory=ChunkPayload)


class ReasoningChunk(TypedEvent, tag="reasoning_chunk"):
    """``reasoning_chunk``: a piece of a model's reasoning, as streamed."""

    payload: ChunkPayload = msgspec.field(default_factory=ChunkPayload)


class StructuredOutput(TypedEvent, tag="structured_output"):
    """``structured_output``: the run's output as structured data."""

    payload: StructuredOutputPayload = msgspec.field(default_factory=StructuredOutputPayload)


class ApprovalRequest(TypedEvent, tag="approval_request"):
    """``approval_request``: the run waits for someone to approve or deny."""

    payload: ApprovalRequestPayload = msgspec.field(default_factory=ApprovalRequestPayload)


class ApprovalResponse(TypedEvent, tag="approval_response"):
    """``approval_response``: the decision it waited for."""

    payload: ApprovalResponsePayload = msgspec.field(default_factory=ApprovalResponsePayload)


class ErrorEvent(TypedEvent, tag="error"):
    """``error``: an error the run met."""

    payload: ErrorPayload = msgspec.field(default_factory=ErrorPayload)


class CancelRequested(TypedEvent, tag="cancel_requested"):
    """``cancel_requested``: someone asked the run to stop."""

    payload: CancelRequestedPayload = msgspec.field(default_factory=CancelRequestedPayload)


class RunPlaced(TypedEvent, tag="run_placed"):
    """``run_placed``: the process an executor ran the run's code in (Ray)."""

    payload: RunPlacedPayload = msgspec.field(default_factory=RunPlacedPayload)


class BudgetUpdated(TypedEvent, tag="budget_updated"):
    """``budget_updated``: a budgeted run's budget as it stands, after each change."""

    payload: BudgetState = msgspec.field(default_factory=BudgetState)


class UnknownEvent(Envelope):
    """A line whose type is unknown, or whose payload does not fit its type.

    The payload is kept exactly as decoded so it can be shown raw.
    """

    known: ClassVar[bool] = False

    type: str = ""
    payload: Any = None


def call_as_sent(enter: NodeEnter) -> LlmCall | None:
    """A model call as its request went out, read from its model node's ``node_enter``
    (the *extension* ``model``, ``provider``, ``messages``): an ``llm_call`` with no
    answer yet, or ``None`` where the ``node_enter`` says none of them."""
    p = enter.payload
    if p.model is None and p.messages is None:
        return None
    payload = LlmCallPayload(
        model=p.model,
        provider=p.provider,
        node_id=p.node_id,
        messages=p.messages,
        truncated=p.truncated,
    )
    return LlmCall(run_id=enter.run_id, seq=enter.seq, time=enter.time, payload=payload)


KNOWN_EVENTS: Final[tuple[type[TypedEvent], ...]] = (
    RunStarted,
    RunCompleted,
    NodeEnter,
    NodeExit,
    ToolCall,
    ToolResult,
    LlmCall,
    LlmChunk,
    ReasoningChunk,
    StructuredOutput,
    ApprovalRequest,
    ApprovalResponse,
    ErrorEvent,
    CancelRequested,
    RunPlaced,
    RunUpdated,
    BudgetUpdated,
)

EVENT_TYPES: Final[dict[str, type[TypedEvent]]] = {
    cls.__struct_config__.tag: cls  # type: ignore[misc]
    for cls in KNOWN_EVENTS
}
"""Each known ``type`` string and the struct that holds it."""

KnownEvent = (
    RunStarted
    | RunCompleted
    | NodeEnter
    | NodeExit
    | ToolCall
    | ToolResult
    | LlmCall
    | LlmChunk
    | ReasoningChunk
    | StructuredOutput
    | ApprovalRequest
    | ApprovalResponse
    | ErrorEvent
    | CancelRequested
    | RunPlaced
    | RunUpdated
    | BudgetUpdated
)
"""An event of a type LEDGER.md defines (msgspec decodes it in one pass)."""

RunEvent = KnownEvent | UnknownEvent
"""Any event a ledger can hold."""

TERMINAL_STATUSES: Final = frozenset({"ok", "error", "cancelled", "suspended"})


class DamagedLine(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A line that is not an event, where it was and why.

    ``recovered`` is the whole event a damaged line ended in, when a writer
    appended straight after a torn line (LEDGER.md): the reader keeps it.
    """

    type: str = "damaged_line"
    offset: int
    length: int
    reason: str
    recovered: RunEvent | None = None


LedgerItem = RunEvent | DamagedLine


def event_of(item: LedgerItem | None) -> RunEvent | None:
    """The event a ledger item carries: itself, or what a damaged line recovered."""
    if isinstance(item, DamagedLine):
        return item.recovered
    return item


"""What a reader yields for one line, in file order."""


def event_to_dict(event: RunEvent) -> dict[str, Any]:
    """The event as the plain JSON object a ledger line holds."""
    raw = msgspec.to_builtins(event)
    assert isinstance(raw, dict)
    return {
        "run_id": event.run_id,
        "seq": event.seq,
        "time": event.time,
        "type": event.type,
        "payload": raw.get("payload"),
    }


_envelope_encoder = msgspec.json.Encoder()


class _Line(msgspec.Struct):
    """A ledger line with its keys in the documented order."""

    run_id: str
    seq: int
    time: str
    type: str
    payload: msgspec.Raw


def encode_event(event: RunEvent) -> bytes:
    """Encode one event as a ledger line, ``\\n`` included.

    Keys come in the order LEDGER.md shows (``run_id``, ``seq``, ``time``,
    ``type``, ``payload``) so that ledgers read well in a pager.
    """
    payload = msgspec.Raw(_envelope_encoder.encode(event.payload))
    line = _Line(event.run_id, event.seq, event.time, event.type, payload)
    return _envelope_encoder.encode(line) + b"\n"


_TAG_PARTS: Final[dict[type[Envelope], bytes]] = {
    cls: b',"type":' + _envelope_encoder.encode(tag) + b',"payload":'
    for tag, cls in EVENT_TYPES.items()
}


class LineEncoder:
    """Encodes one run's events as ledger lines, the run id encoded once.

    The output is byte for byte what :func:`encode_event` makes; a writer
    emitting many events of one run saves building an envelope per line.
    """

    __slots__ = ("_head",)

    def __init__(self, run_id: str) -> None:
        self._head = b'{"run_id":' + _envelope_encoder.encode(run_id) + b',"seq":'

    def encode(self, seq: int, time: str, event_type: type[TypedEvent], payload: Any) -> bytes:
        """One line (``\\n`` included) for an event of ``event_type``."""
        encode = _envelope_encoder.encode
        return b"".join(
            (
                self._head,
                b"%d" % seq,
                b',"time":',
                encode(time),
                _TAG_PARTS[event_type],
                encode(payload),
                b"}\n",
            )
        )
