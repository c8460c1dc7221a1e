"""OpenInference (Arize Phoenix's conventions): LangChain / LangGraph, LlamaIndex, CrewAI, DSPy...

Names as ``openinference-semantic-conventions`` (``openinference.semconv.trace``)
spells them. The kind of a span is ``openinference.span.kind``:

- ``LLM`` a model call: ``llm.model_name`` (or the request's / response's
  ``llm.request.model_name`` / ``llm.response.model_name``), ``llm.provider``
  (or ``llm.system``), ``llm.token_count.prompt`` / ``.completion`` /
  ``.prompt_details.cache_read`` / ``.cache_write``, ``llm.cost.total``, and the
  conversation flattened one attribute per field:
  ``llm.input_messages.<N>.message.role`` / ``.content`` /
  ``.contents.<M>.message_content.type`` / ``.text`` /
  ``.tool_calls.<M>.tool_call.id`` / ``.function.name`` / ``.function.arguments``
  / ``.tool_call_id`` / ``.name``, and ``llm.output_messages.<N>...`` alike;
- ``TOOL`` a tool call: ``tool.name``, ``tool_call.id`` where the
  instrumentation says it, ``input.value`` the arguments, ``output.value``
  the result (LangChain's is the ``ToolMessage``, which names the call id);
- the trace's root (of any other kind) is the run: LangGraph's graph, a
  ``CHAIN`` named after the graph (``create_react_agent(..., name=...)``), a
  crew, an agent; its ``agent.name`` or its name names the run, and its
  ``input.value`` / ``output.value`` are the run's input and output, read as
  the user's and the model's words where they are LangChain messages;
- a nested ``AGENT`` with ``agent.name`` is a child run. The LangChain
  instrumentation marks ``AGENT`` any run whose name holds "agent"
  (LangGraph's ``agent`` node among them), so an ``AGENT`` span without
  ``agent.name`` is a step, not a run;
- ``CHAIN``, ``RETRIEVER``, ``EMBEDDING``, ``RERANKER``, ``GUARDRAIL``,
  ``EVALUATOR``, ``PROMPT``... steps, their kind in their node id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ledger_reader.events import PAYLOAD_CAP_BYTES
from run_manager.otlp.families import (
    AGENT,
    MODEL,
    STEP,
    TOOL,
    Family,
    ModelCall,
    ToolUse,
    agent_called,
    answer_in,
    asked_in,
    call_arguments,
    json_text,
    json_value,
    last_user_text,
    number,
    text,
)

if TYPE_CHECKING:
    from run_manager.otlp.spans import Span

KIND: Final = "openinference.span.kind"
_JSON: Final = "application/json"
_KINDS: Final = {"LLM": MODEL, "TOOL": TOOL}
_USER_ROLES: Final = frozenset({"user", "human"})
_MODEL_ROLES: Final = frozenset({"assistant", "ai", "model"})


def carries(attributes: dict[str, Any]) -> bool:
    return KIND in attributes


def kind(span: Span) -> str:
    attributes = span.attributes
    said = attributes.get(KIND)
    found = _KINDS.get(said) if isinstance(said, str) else None
    if found is MODEL and not _says_a_call(attributes):
        return STEP
    if found is not None:
        return found
    if (said == "AGENT" or not span.parent_span_id) and text(attributes.get("agent.name")):
        return AGENT
    # A root of no agent's name (LangGraph's graph, LlamaIndex's ``FunctionAgent.run``, the
    # Agents SDK's ``Agent workflow``) is the trace's run all the same, named by the agent
    # under it where one says its name, else by itself: a step to the spans below.
    return STEP


_CALL_KEYS: Final = (
    "llm.token_count.prompt",
    "llm.token_count.completion",
    "llm.token_count.total",
    "llm.input_messages.0.message.role",
    "llm.output_messages.0.message.role",
)


def _says_a_call(attributes: dict[str, Any]) -> bool:
    """Whether an ``LLM`` span says a model call: its tokens or its messages. LlamaIndex
    wraps each call in ``LLM`` spans that say neither (``OpenAI._prepare_chat_with_tools``),
    steps of the call, not calls."""
    for key in _CALL_KEYS:
        if key in attributes:
            return True
    return any(key.startswith(_MESSAGE_PREFIXES) for key in attributes)


_MESSAGE_PREFIXES: Final = ("llm.input_messages.", "llm.output_messages.")


def model_call(span: Span) -> ModelCall:
    attributes = span.attributes
    get = attributes.get
    messages, response, words, size = _conversation(attributes)
    cost = get("llm.cost.total")
    # Read inline, not through first_text and first_int: a model span is most of a trace.
    prompt = get("llm.token_count.prompt")
    output = get("llm.token_count.completion")
    cache_read = get("llm.token_count.prompt_details.cache_read")
    cache_write = get("llm.token_count.prompt_details.cache_write")
    return ModelCall(
        model=text(get("llm.response.model_name"))
        or text(get("llm.model_name"))
        or text(get("llm.request.model_name"))
        or _invoked_model(get("llm.invocation_parameters")),
        provider=text(get("llm.provider")) or text(get("llm.system")),
        prompt_tokens=prompt if prompt.__class__ is int else None,
        output_tokens=output if output.__class__ is int else None,
        cache_read_tokens=cache_read if cache_read.__class__ is int else None,
        cache_write_tokens=cache_write if cache_write.__class__ is int else None,
        cost_usd=None if cost is None else number(cost),
        messages=messages,
        response=response,
        text=words,
        within_cap=size <= _WITHIN_CAP,
    )


def _invoked_model(parameters: Any) -> str | None:
    """The model an ``LLM`` span's ``llm.invocation_parameters`` (JSON) name, where the span
    names none of its own: some LangChain chat models say it only there."""
    if parameters is None:
        return None
    decoded = json_value(parameters)
    if not isinstance(decoded, dict):
        return None
    return text(decoded.get("model")) or text(decoded.get("model_name"))


def tool_use(span: Span) -> ToolUse:
    get = span.attributes.get
    arguments = call_arguments(get("input.value"))
    result = get("output.value")
    # JSON where the span says so (DSPy's ``"sunny in Paris"``), else text that may be JSON.
    result = json_text(result) if get("output.mime_type") == _JSON else json_value(result)
    call_id = text(get("tool_call.id")) or text(get("tool.id"))
    if isinstance(result, dict) and "raw_output" in result and "tool_name" in result:
        result = result["raw_output"]  # LlamaIndex's ToolOutput: what the tool returned
    if isinstance(result, dict):  # LangChain's ToolMessage: {"type": "tool", "data": {...}}
        message = result.get("data") if result.get("type") == "tool" else result
        if isinstance(message, dict) and "tool_call_id" in message:
            call_id = call_id or text(message.get("tool_call_id"))
            result = message.get("content")
    return ToolUse(
        name=text(get("tool.name")) or agent_called(span.name),
        call_id=call_id,
        arguments=arguments,
        result=result,
        # One-argument LangChain tools see their argument alone ("Paris"), not the
        # call's arguments ({"city": "Paris"}), which the model's tool call holds.
        arguments_whole=isinstance(arguments, dict),
    )


def agent_name(span: Span) -> str | None:
    return text(span.attributes.get("agent.name")) or agent_called(span.name)


def run_input(span: Span) -> Any:
    value = span.attributes.get("input.value")
    if value is None:
        return _crew_tasks(span.attributes.get("crew_tasks"))
    said = _said(value, _USER_ROLES)
    return said if said is not None else asked_in(json_value(value))


def _crew_tasks(value: Any) -> str | None:
    """What a CrewAI crew was asked: its tasks' descriptions (``crew_tasks`` on the crew's
    span, which says no ``input.value`` when the crew was given no inputs)."""
    tasks = json_value(value)
    if not isinstance(tasks, list):
        return None
    said = [
        task["description"]
        for task in tasks
        if isinstance(task, dict) and isinstance(task.get("description"), str)
    ]
    return "\n".join(said) or None


def run_output(span: Span) -> Any:
    value = span.attributes.get("output.value")
    said = _said(value, _MODEL_ROLES)
    return said if said is not None else answer_in(value)


def asked(span: Span) -> str | None:
    return last_user_text(_conversation(span.attributes)[0])


def step(span: Span) -> tuple[str, str]:
    said = span.attributes.get(KIND)
    return (said.lower() if isinstance(said, str) and said else "step"), span.name


OPENINFERENCE: Final = Family(
    name="openinference",
    kind=kind,
    model_call=model_call,
    tool_use=tool_use,
    agent_name=agent_name,
    run_input=run_input,
    run_output=run_output,
    asked=asked,
    step=step,
)


_INPUT: Final = "llm.input_messages."
_OUTPUT: Final = "llm.output_messages."
_FIELDS: Final = frozenset({"role", "content", "tool_call_id", "name"})
"""A message's own fields (``llm.input_messages.<N>.message.<field>``); its tool calls and
content parts are lists of their own (``message.tool_calls.<M>.<field>``...)."""
_LISTS: Final = frozenset({"tool_calls", "contents"})
_KEYS_KEPT: Final = 4096
_KEY_KEPT_CHARS: Final = 160
_Place = tuple[int, str, str | None, int]
"""A message attribute's message (its index twice, plus one for the answer's: sent and
answered in one table, in order), field, and list and position in it."""
_UNSEEN: Final[_Place] = (-1, "", None, -1)
_keys: dict[str, _Place | None] = {}
"""What each attribute name seen says of the conversation (``None``: nothing): a model
span's attributes are read by name, and the names are the same from span to span. At most
:data:`_KEYS_KEPT` names, none longer than :data:`_KEY_KEPT_CHARS` (names are the
sender's: the rest are read again each time)."""


def _key(key: str) -> _Place | None:
    """Where an attribute goes in the conversation (:data:`_Place`): its message, sent or
    answered, the field, and the list (``tool_calls``, ``contents``) and position in it."""
    if key.startswith(_INPUT):
        sent, rest = True, key[len(_INPUT) :]
    elif key.startswith(_OUTPUT):
        sent, rest = False, key[len(_OUTPUT) :]
    else:
        return None
    index, dot, field = rest.partition(".")
    if not dot or not index.isdigit():
        return None
    slot = int(index) * 2 + (0 if sent else 1)
    if field.startswith("message."):
        field = field[len("message.") :]
        if field in _FIELDS:
            return slot, field, None, 0
        group, dot, rest = field.partition(".")
        position, dot, field = rest.partition(".")
        if group in _LISTS and dot and position.isdigit():
            return slot, field, group, int(position)
    # A field of no meaning here: its message is there all the same, saying nothing.
    return slot, "", None, 0


_FIELD_BYTES: Final = 43
"""What a message attribute adds to the conversation's JSON beyond its value's text, at
most, divided by :data:`_BYTES_A_CHARACTER`: the message or part it makes and their keys
(``{"type":"tool_call","id":null,"name":null,"arguments":null}``, a comma) are under 256
bytes."""
_BYTES_A_CHARACTER: Final = 6
"""Bytes a character of a value takes in the conversation's JSON, at most: ``\\u001f``
for a control character in text, 4.5 for a number in tool arguments' JSON read and written
again (``1e15`` is ``1000000000000000.0``)."""
_WITHIN_CAP: Final = PAYLOAD_CAP_BYTES // _BYTES_A_CHARACTER
"""The sum of :func:`_conversation`'s sizes under which the conversation is under the cap."""


def _conversation(
    attributes: dict[str, Any],
) -> tuple[list[Any] | None, list[Any] | None, str | None, int]:
    """``llm.input_messages.<N>.message.*`` and ``llm.output_messages.<N>...`` as messages in
    runtop's shape, the answer's words, and a bound on their size (the characters of the
    values, and :data:`_FIELD_BYTES` each; a value not text counts as over the cap), read
    in one pass over the span's attributes (a model span has dozens, and a model call is
    most of what a trace is)."""
    found: dict[int, dict[str, Any]] = {}
    keys = _keys
    size = 0
    for name, value in attributes.items():
        where = keys.get(name, _UNSEEN)
        if where is None:
            continue
        if where is _UNSEEN:
            where = _key(name)
            if len(keys) < _KEYS_KEPT and len(name) <= _KEY_KEPT_CHARS:
                keys[name] = where
            if where is None:
                continue
        size += len(value) + _FIELD_BYTES if value.__class__ is str else _WITHIN_CAP + 1
        slot, field, group, position = where
        fields = found.get(slot)
        if fields is None:
            fields = found[slot] = {}
        if group is None:
            fields[field] = value
            continue
        items = fields.get(group)
        if items is None:
            fields[group] = {position: {field: value}}
            continue
        item = items.get(position)
        if item is None:
            items[position] = {field: value}
        else:
            item[field] = value
    messages: list[Any] | None = None
    response: list[Any] | None = None
    words = ""
    for slot in sorted(found):
        said, text = _message(found[slot])
        if slot & 1:
            if response is None:
                response = []
            response.append(said)
            words += text
        elif messages is None:
            messages = [said]
        else:
            messages.append(said)
    return messages, response, words or None, size


def _message(fields: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """One message in the ledger's shape from its fields, and its words (text parts)."""
    role = fields.get("role")
    role = role if isinstance(role, str) and role else "?"
    content = fields.get("content")
    call_id = fields.get("tool_call_id")
    if role == "tool" and isinstance(call_id, str):
        name = fields.get("name")
        result = {"type": "tool_result", "id": call_id, "output": content}
        if isinstance(name, str):
            result["name"] = name
        return {"role": role, "content": [result]}, ""
    calls = fields.get("tool_calls")
    contents = fields.get("contents")
    if calls is None and contents is None:  # words alone, as most messages are
        if isinstance(content, str) and content:
            return {"role": role, "content": content}, content
        return {"role": role, "content": []}, ""
    parts: list[dict[str, Any]] = []
    words = ""
    if contents is not None:
        for position in sorted(contents):
            item = contents[position]
            text = item.get("message_content.text")
            if isinstance(text, str):
                parts.append({"type": "text", "text": text})
                words += text
            elif item.get("message_content.type") == "image":
                parts.append({"type": "text", "text": "[image]"})
                words += "[image]"
    if isinstance(content, str) and content and not parts:
        parts.append({"type": "text", "text": content})
        words = content
    if calls is not None:
        for position in sorted(calls):
            call = calls[position]
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("tool_call.id"),
                    "name": call.get("tool_call.function.name"),
                    "arguments": json_value(call.get("tool_call.function.arguments")),
                }
            )
    if len(parts) == 1 and parts[0]["type"] == "text":
        return {"role": role, "content": parts[0]["text"]}, words
    return {"role": role, "content": parts}, words


def _said(value: Any, roles: frozenset[str]) -> str | None:
    """The newest words of one of ``roles`` in a LangChain state or message list (JSON text),
    ``None`` where ``value`` holds no such messages."""
    decoded = json_value(value)
    if isinstance(decoded, dict):
        decoded = decoded.get("messages")
    if not isinstance(decoded, list):
        return None
    for said in reversed(decoded):
        role, words = _lc_message(said)
        if role in roles and words:
            return words
    return None


def _lc_message(message: Any) -> tuple[str | None, str | None]:
    """A LangChain message as LangChain serializes it (a ``(role, text)`` pair, ``{"role",
    "content"}``, ``{"type", "data"}``, or ``{"lc": 1, "kwargs"}``): its role and words."""
    if isinstance(message, list) and len(message) == 2:
        role, content = message
    elif isinstance(message, dict):
        inner = message.get("data") or message.get("kwargs") or message
        if not isinstance(inner, dict):
            return None, None
        role = message.get("role") or inner.get("role") or inner.get("type") or message.get("type")
        content = inner.get("content")
    else:
        return None, None
    if isinstance(content, list):  # content blocks: the text ones
        content = "".join(
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )
    return (role if isinstance(role, str) else None), (
        content if isinstance(content, str) else None
    )
