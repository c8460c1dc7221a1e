"""What a span says, read the same way whichever convention it follows.

Three families of instrumentation describe agent runs in spans, each with
attributes of its own: the OpenTelemetry GenAI conventions
(:mod:`run_manager.otlp.genai`), OpenInference (:mod:`run_manager.otlp.openinference`)
and OpenLLMetry (:mod:`run_manager.otlp.openllmetry`). Each module reads a
span into the readings here (:class:`ModelCall`, :class:`ToolUse`), and the
ingest (:mod:`run_manager.otlp.ingest`) writes the same events from them,
whichever family said it. The ingest reads a span with the first family
whose attributes it carries (OpenInference, OpenLLMetry, else GenAI).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import msgspec

from ledger_reader.messages import TEXT, THINKING, TOOL_CALL, TOOL_RESULT, conversation

if TYPE_CHECKING:
    from run_manager.otlp.spans import Span

AGENT: Final = "agent"
"""A run: the trace's own, or a child run when another agent is above it."""
MODEL: Final = "model"
"""A model call: ``node_enter``, ``llm_call``, ``node_exit``."""
TOOL: Final = "tool"
"""A tool call: ``node_enter``, ``tool_call``, ``tool_result``, ``node_exit``."""
STEP: Final = "step"
"""A step of the run that holds others (a graph node, a chain, a task): a node of its own."""
OTHER: Final = ""
"""A span of no kind runtop knows: kept whole as an ``otel_span`` event."""

MAX_NAME: Final = 256
"""Characters of a name taken from a span (its name, a model's, a tool's): a name goes into
node ids and every line of the run that names it."""

_decoder: Final = msgspec.json.Decoder()
_encoder: Final = msgspec.json.Encoder()


class ModelCall(msgspec.Struct, gc=False):
    """A model call as a span tells it."""

    model: str | None = None
    provider: str | None = None
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost_usd: float | None = None
    messages: list[Any] | None = None
    """What the model was sent, in runtop's shape (:mod:`ledger_reader.messages`)."""
    response: list[Any] | None = None
    """What it answered, in the same shape."""
    text: str | None = None
    """The answer's text (written as the call's ``llm_chunk``)."""
    within_cap: bool = False
    """``messages`` and ``response`` together are certainly under the payload cap as JSON
    (their reader bounded their size), so they need not be measured to be kept whole."""


class ToolUse(msgspec.Struct, gc=False):
    """A tool call as a span tells it."""

    name: str | None = None
    call_id: str | None = None
    arguments: Any = None
    """As the span holds them: JSON text is read as JSON by the ingest."""
    result: Any = None
    arguments_whole: bool = True
    """Whether ``arguments`` are the call's own; if not, the arguments the model's tool
    call gave under the same call id are taken where the run has them."""


@dataclass(frozen=True, slots=True)
class Family:
    """One convention's reading of spans: each function takes a span of this family."""

    name: str
    kind: Callable[[Span], str]
    """:data:`AGENT`, :data:`MODEL`, :data:`TOOL`, :data:`STEP` or :data:`OTHER`."""
    model_call: Callable[[Span], ModelCall]
    tool_use: Callable[[Span], ToolUse]
    agent_name: Callable[[Span], str | None]
    """The name of the agent an :data:`AGENT` span (or a trace's root) stands for."""
    run_input: Callable[[Span], Any]
    """What an :data:`AGENT` span (or a trace's root) was asked, ``None`` if unsaid."""
    run_output: Callable[[Span], Any]
    """What it answered, ``None`` if unsaid."""
    asked: Callable[[Span], str | None]
    """The newest user words a :data:`MODEL` span was sent (a run's input, when its own
    span has not come yet)."""
    step: Callable[[Span], tuple[str, str]]
    """A :data:`STEP` span's node key prefix (its kind, as the family says it) and name."""


def text(value: Any) -> str | None:
    """A name from a span (model, tool, provider, agent), cut at :data:`MAX_NAME`."""
    return value[:MAX_NAME] if isinstance(value, str) and value else None


def integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    return float(value) if isinstance(value, int | float) else None


def first_int(get: Callable[[str], Any], *keys: str) -> int | None:
    """The first non-zero count of ``keys`` (0 counts as unsaid), else 0 or ``None``."""
    found: int | None = None
    for key in keys:
        value = get(key)
        if value is None:
            continue
        value = integer(value)
        if value:
            return value
        if value == 0:
            found = 0
    return found


def first_text(get: Callable[[str], Any], *keys: str) -> str | None:
    for key in keys:
        value = text(get(key))
        if value is not None:
            return value
    return None


def json_value(value: Any) -> Any:
    """JSON text as the value it holds (a nested list, an object); other text as it is.

    Raises:
        RecursionError: the JSON is nested deeper than the interpreter recurses (the
            ingest rejects that span alone).
    """
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return _decoder.decode(value)
        except msgspec.DecodeError:
            return value
    return value


def json_text(value: Any) -> Any:
    """A value written as JSON text (``"booked"``, ``42``), read back; other text as it is.

    Raises:
        RecursionError: nested deeper than the interpreter recurses.
    """
    if isinstance(value, str):
        try:
            return _decoder.decode(value)
        except msgspec.DecodeError:
            return value
    return value


def message(
    role: str, parts: list[dict[str, Any]], calls: list[tuple[Any, Any, Any]]
) -> dict[str, Any]:
    """One message in the ledger's shape: its parts, then the tool calls it made (id, name,
    arguments as sent); a message that is one text alone is that text."""
    parts = parts + [
        {"type": "tool_call", "id": call_id, "name": name, "arguments": json_value(arguments)}
        for call_id, name, arguments in calls
    ]
    if len(parts) == 1 and parts[0]["type"] == "text":
        return {"role": role, "content": parts[0]["text"]}
    return {"role": role, "content": parts}


def tool_result(call_id: str | None, output: Any) -> dict[str, Any]:
    """A tool result part in the ledger's shape (its output as text)."""
    said = blocks_text(output)
    return {
        "type": "tool_result",
        "id": call_id,
        "output": said if isinstance(said, str) or said is None else encoded(said),
    }


def converse_part(block: Any) -> dict[str, Any]:
    """A Bedrock Converse content block (``{"text"}``, ``{"toolUse"}``, ``{"toolResult"}``,
    as Strands Agents records them) as a part in the ledger's shape; another block as its
    JSON text."""
    if isinstance(block, dict):
        if isinstance(block.get("text"), str):
            return {"type": "text", "text": block["text"]}
        use = block.get("toolUse")
        if isinstance(use, dict):
            return {
                "type": "tool_call",
                "id": use.get("toolUseId"),
                "name": use.get("name"),
                "arguments": json_value(use.get("input")),
            }
        result = block.get("toolResult")
        if isinstance(result, dict):
            found = tool_result(result.get("toolUseId"), result.get("content"))
            if result.get("status") == "error":
                found["is_error"] = True
            return found
    if isinstance(block, str):
        return {"type": "text", "text": block}
    return {"type": "text", "text": encoded(block)}


def blocks_text(value: Any) -> Any:
    """A tool's output given as content blocks (``[{"text": "sunny"}]``: Strands', MCP's),
    as their text joined; other values as they are."""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(block, dict) and isinstance(block.get("text"), str) for block in value)
    ):
        return "".join(block["text"] for block in value)
    return value


def unwrapped_result(value: Any) -> Any:
    """A tool's result where its framework wrapped it in an object of its own to send it to
    the model: ``{"result": value}`` (Google ADK's for a value that is no object, as
    Gemini's function responses must be objects) is ``value``; other values as they are."""
    if isinstance(value, dict) and len(value) == 1 and "result" in value:
        return value["result"]
    return value


def nested(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Flattened list attributes (``<prefix>.<N>.<key>``) as a list of dicts by ``N``.

    OpenInference and OpenLLMetry write a list of messages as one attribute per
    field (``llm.input_messages.0.message.role``, ``gen_ai.prompt.0.content``); the
    keys after the index are kept flat (``message.tool_calls.0.tool_call.id``).
    """
    items: dict[int, dict[str, Any]] = {}
    size = len(prefix)
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        index, dot, rest = key[size:].partition(".")
        if not dot or not index.isdigit():
            continue
        items.setdefault(int(index), {})[rest] = value
    return [items[index] for index in sorted(items)]


def runtop_messages(value: Any) -> list[Any] | None:
    """Messages in any shape :func:`ledger_reader.messages.conversation` reads, in runtop's."""
    if value is None:
        return None
    value = json_value(value)
    if not isinstance(value, list):
        return None
    # GenAI's messages hold their words in a list of ``parts``: one that holds anything
    # else says nothing readable.
    value = [
        item
        for item in value
        if not (
            isinstance(item, dict)
            and "content" not in item
            and not isinstance(item.get("parts"), list)
        )
    ]
    if not value:
        return None
    shaped: list[Any] = []
    for message in conversation(value):
        parts = [_part(part) for part in message.parts]
        if len(parts) == 1 and parts[0].get("type") == TEXT:
            shaped.append({"role": message.role, "content": parts[0]["text"]})
        else:
            shaped.append({"role": message.role, "content": parts})
    return shaped


def _part(part: Any) -> dict[str, Any]:
    if part.kind == TOOL_CALL:
        return {
            "type": TOOL_CALL,
            "id": part.call_id,
            "name": part.name,
            "arguments": json_value(part.arguments),
        }
    if part.kind == TOOL_RESULT:
        found = {"type": TOOL_RESULT, "id": part.call_id, "name": part.name, "output": part.text}
        if part.is_error:
            found["is_error"] = True
        return found
    if part.kind == THINKING:
        return {"type": THINKING, "text": part.text}
    return {"type": TEXT, "text": part.text}


def last_user_text(messages: list[Any] | None) -> str | None:
    """The text of the newest user message in runtop's shape (earlier ones are the
    conversation so far)."""
    for message in reversed(messages or ()):
        if isinstance(message, dict) and message.get("role") in ("user", "human"):
            return message_text(message) or None
    return None


def message_text(message: dict[str, Any]) -> str:
    """The text parts of a message in runtop's shape, joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        part["text"]
        for part in content
        if isinstance(part, dict) and part.get("type") == TEXT and isinstance(part.get("text"), str)
    )


def answer_text(response: list[Any] | None) -> str | None:
    """The assistant's words in a response in runtop's shape."""
    if not response:
        return None
    return "".join(message_text(m) for m in response if isinstance(m, dict)) or None


def encoded(value: Any) -> str:
    """A value that is not text, as JSON text (a tool's structured result)."""
    return _encoder.encode(value).decode()


_CALLED: Final = (
    ".run",
    ".forward",
    ".invoke",
    ".ainvoke",
    ".arun",
    ".__call__",
    ".acall",
    ".kickoff",
    ".run_stream",
    ".stream",
    ".astream",
    ".on_messages",
    ".on_messages_stream",
)
"""What instrumentations add to an agent's name when they name its span after the method
that ran it, or its streaming form (smolagents' ``weather.run``, DSPy's
``WeatherAgent.forward``, LlamaIndex's ``FunctionAgent.run``, CrewAI's ``weather.kickoff``,
AutoGen's ``weather.on_messages_stream``)."""


def agent_called(name: str | None) -> str | None:
    """An agent's name from a span named after the method that ran it: ``Name.run``,
    ``.forward``, ``.invoke``, ``.__call__``, ``.run_stream``... give ``Name``; other names
    are as they are."""
    if not name:
        return None
    for suffix in _CALLED:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)][:MAX_NAME]
    return name[:MAX_NAME]


_WRAPPER_FLAGS: Final = frozenset({"args", "kwargs", "sanitize_inputs_outputs"})


def call_arguments(value: Any) -> Any:
    """A tool call's arguments where an instrumentation wrote them as the Python call that
    ran the tool (``{"args": [], "kwargs": {"city": "Paris"}}``: OpenLLMetry's decorators,
    smolagents, LlamaIndex): the keyword arguments, or the one positional argument; other
    values as they are.

    Raises:
        RecursionError: JSON text nested deeper than the interpreter recurses.
    """
    decoded = json_text(value)
    if (
        isinstance(decoded, dict)
        and decoded.keys() <= _WRAPPER_FLAGS
        and ("args" in decoded or "kwargs" in decoded)
    ):
        args, kwargs = decoded.get("args"), decoded.get("kwargs")
        if not args and isinstance(kwargs, dict):
            return kwargs
        if not kwargs and isinstance(args, list) and len(args) == 1:
            return args[0]
    return decoded


def asked_in(value: Any) -> Any:
    """What a run was asked, from an input that is an object of a framework's: the one
    text among the plain values of the call's arguments (smolagents' ``{"task": ...,
    "stream": false}``, DSPy's ``{"question": ...}``); ``None`` where it holds no one such
    text or holds objects (LlamaIndex's workflow state: the run's first model call says it
    better). Other values (text, lists) are as they are."""
    if not isinstance(value, dict):
        return value
    if any(isinstance(item, dict | list) for item in value.values()):
        return None  # a state object, not the arguments a caller gave
    said = [item for item in value.values() if isinstance(item, str) and item]
    return said[0] if len(said) == 1 else None


_ANSWER_KEYS: Final = ("answer", "output", "final_output", "result", "raw")


def answer_in(value: Any) -> Any:
    """What a run answered, from an output that is an object of a framework's holding the
    answer among other fields (DSPy's prediction: ``{"reasoning": ..., "answer": ...}``):
    its ``answer`` (or ``output``, ``final_output``, ``result``, CrewAI's ``raw``) where that
    is text; other values as they are.

    Raises:
        RecursionError: JSON text nested deeper than the interpreter recurses.
    """
    decoded = json_value(value)
    if isinstance(decoded, dict):
        for key in _ANSWER_KEYS:
            said = decoded.get(key)
            if isinstance(said, str) and said:
                return said
    return value


_SESSION_KEYS: Final = (
    "session.id",
    "traceloop.association.properties.session_id",
    "langfuse.session.id",
)
_USER_KEYS: Final = (
    "user.id",
    "enduser.id",
    "traceloop.association.properties.user_id",
    "langfuse.user.id",
)
_CONVERSATION_KEYS: Final = (
    "gen_ai.conversation.id",
    "traceloop.association.properties.thread_id",
    "thread.id",
)
_TAG_KEYS: Final = ("tag.tags", "langfuse.trace.tags")
_METADATA_KEYS: Final = ("metadata", "langfuse.trace.metadata")


def described(attributes: dict[str, Any]) -> dict[str, Any]:
    """Who a span's run was for and which conversation it was, as each convention says it:
    OpenInference's ``session.id``, ``user.id``, ``tag.tags`` and ``metadata``, GenAI's
    ``gen_ai.conversation.id``, OpenLLMetry's association properties, Langfuse's; the
    ledger's names for them (``session_id``, ``user_id``, ``conversation_id``, ``tags``,
    ``metadata``), only those said."""
    get = attributes.get
    found: dict[str, Any] = {}
    for field, keys in (
        ("session_id", _SESSION_KEYS),
        ("user_id", _USER_KEYS),
        ("conversation_id", _CONVERSATION_KEYS),
    ):
        for key in keys:
            value = get(key)
            if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
                found[field] = str(value)[:MAX_NAME]
                break
    for key in _TAG_KEYS:
        value = json_value(get(key))
        if isinstance(value, list):
            tags = [str(tag)[:MAX_NAME] for tag in value if isinstance(tag, str | int) and tag]
            if tags:
                found["tags"] = tags[:64]
                break
    for key in _METADATA_KEYS:
        value = json_value(get(key))
        if isinstance(value, dict) and value:
            found["metadata"] = value
            break
    return found
