"""The OpenTelemetry GenAI conventions (``gen_ai.*``), as PydanticAI, Logfire and others write them.

The kind of a span is its ``gen_ai.operation.name``: ``invoke_agent`` a
run, ``chat`` / ``text_completion`` / ``generate_content`` a model call,
``execute_tool`` a tool call (``../shared/design/OTLP.md``), ``create_agent``
none of runtop's (an ``otel_span`` event, in an agent's trace); another operation
(Strands' ``execute_event_loop_cycle``) a step. Content, where the
instrumentation records it, is read wherever a version of the conventions
puts it:

- attributes: JSON text in ``gen_ai.input.messages`` and
  ``gen_ai.output.messages`` (messages with ``parts``), and a tool call's
  ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``;
- the newest conventions' span event ``gen_ai.client.inference.operation.details``,
  holding the same attributes;
- the older conventions' span events, one a message: ``gen_ai.system.message``,
  ``gen_ai.user.message``, ``gen_ai.assistant.message``, ``gen_ai.tool.message``
  (``content``, ``tool_calls``, ``id``) and the answer's ``gen_ai.choice``
  (``message``), their content text, a message object or a list of Bedrock
  Converse blocks (``text``, ``toolUse``, ``toolResult``: Strands Agents').
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from run_manager.otlp.families import (
    AGENT,
    MODEL,
    OTHER,
    STEP,
    TOOL,
    Family,
    ModelCall,
    ToolUse,
    answer_text,
    blocks_text,
    converse_part,
    first_int,
    json_value,
    last_user_text,
    message,
    number,
    runtop_messages,
    text,
    tool_result,
    unwrapped_result,
)

if TYPE_CHECKING:
    from run_manager.otlp.spans import Span

MODEL_OPERATIONS: Final = frozenset({"chat", "text_completion", "generate_content"})
_KINDS: Final = {
    "invoke_agent": AGENT,
    "chat": MODEL,
    "text_completion": MODEL,
    "generate_content": MODEL,
    "execute_tool": TOOL,
    # Building an agent is no part of running one (AutoGen traces each agent it builds,
    # at start, in a trace of its own): no run, and no step of one.
    "create_agent": OTHER,
}


def carries(attributes: dict[str, Any]) -> bool:
    """Whether a span says a GenAI operation (the family of last resort: others say more)."""
    return "gen_ai.operation.name" in attributes


def kind(span: Span) -> str:
    operation = span.attributes.get("gen_ai.operation.name")
    if isinstance(operation, str):
        return _KINDS.get(operation, STEP if operation else OTHER)
    return AGENT if span.name.startswith("invoke_agent") else OTHER


def model_call(span: Span) -> ModelCall:
    get = span.attributes.get
    model = text(get("gen_ai.response.model")) or text(get("gen_ai.request.model"))
    provider = text(get("gen_ai.provider.name")) or text(get("gen_ai.system"))
    sent = get("gen_ai.input.messages")
    answered = get("gen_ai.output.messages")
    messages = runtop_messages(sent) if sent is not None else None
    response = runtop_messages(answered) if answered is not None else None
    if span.events and (messages is None or response is None):
        said, answer = _event_conversation(span)
        messages = messages if messages is not None else said
        response = response if response is not None else answer
    cost = get("operation.cost")
    return ModelCall(
        model=model,
        provider=provider,
        prompt_tokens=first_int(get, "gen_ai.usage.input_tokens"),
        output_tokens=first_int(get, "gen_ai.usage.output_tokens"),
        cache_read_tokens=first_int(
            get, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens"
        ),
        cache_write_tokens=first_int(
            get,
            "gen_ai.usage.cache_creation.input_tokens",
            "gen_ai.usage.cache_creation_input_tokens",
        ),
        cost_usd=None if cost is None else number(cost),
        messages=messages,
        response=response,
        text=answer_text(response),
    )


def tool_use(span: Span) -> ToolUse:
    get = span.attributes.get
    arguments = get("gen_ai.tool.call.arguments")
    result = get("gen_ai.tool.call.result")
    if span.events and (arguments is None or result is None):
        asked, answered = _event_tool_call(span)
        arguments = arguments if arguments is not None else asked
        result = result if result is not None else answered
    return ToolUse(
        name=text(get("gen_ai.tool.name")) or span.name.removeprefix("execute_tool ") or None,
        call_id=text(get("gen_ai.tool.call.id")),
        arguments=arguments,
        result=unwrapped_result(blocks_text(json_value(result))),
    )


def agent_name(span: Span) -> str | None:
    return text(span.attributes.get("gen_ai.agent.name"))


def run_input(span: Span) -> Any:
    return asked(span)


def run_output(span: Span) -> Any:
    get = span.attributes.get
    output = get("final_result")  # PydanticAI's
    if output is None:
        answered = get("gen_ai.output.messages")
        if answered is None and span.events:
            response = _event_conversation(span)[1]
        else:
            response = runtop_messages(answered)
        output = answer_text(response)
    return output.strip() if isinstance(output, str) else output


def asked(span: Span) -> str | None:
    sent = span.attributes.get("gen_ai.input.messages")
    if sent is None and span.events:
        return last_user_text(_event_conversation(span)[0])
    return last_user_text(runtop_messages(sent))


_DETAILS: Final = "gen_ai.client.inference.operation.details"
_ROLES: Final = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_CHOICE: Final = "gen_ai.choice"


def _event_conversation(span: Span) -> tuple[list[Any] | None, list[Any] | None]:
    """A model call's conversation from its span events, whichever version wrote them."""
    messages: list[Any] | None = None
    response: list[Any] | None = None
    for event in span.events:
        name, attributes = event.name, event.attributes
        if name == _DETAILS:
            sent = attributes.get("gen_ai.input.messages")
            if sent is not None:
                messages = runtop_messages(sent)
            answered = attributes.get("gen_ai.output.messages")
            if answered is not None:
                response = runtop_messages(answered)
        elif name in _ROLES:
            role = attributes.get("role")
            said = _event_message(role if isinstance(role, str) else _ROLES[name], attributes)
            messages = [*(messages or []), said]
        elif name == _CHOICE:
            said = _event_message("assistant", attributes, "message")
            response = [*(response or []), said]
    return messages, response


def _event_message(role: str, attributes: dict[str, Any], key: str = "content") -> Any:
    """One message of an older GenAI event, in runtop's shape."""
    content = json_value(attributes.get(key))
    if isinstance(content, dict):  # an OpenTelemetry message object: {content, tool_calls}
        found = runtop_messages([{"role": role, **content}])
        return found[0] if found else {"role": role, "content": []}
    if isinstance(content, list):
        return message(role, [converse_part(block) for block in content], [])
    calls = json_value(attributes.get("tool_calls"))
    if isinstance(calls, list):
        found = runtop_messages([{"role": role, "content": content, "tool_calls": calls}])
        return found[0] if found else {"role": role, "content": []}
    call_id = attributes.get("id")
    if role == "tool" and isinstance(call_id, str):
        return {"role": role, "content": [tool_result(call_id, content)]}
    return {"role": role, "content": content if isinstance(content, str) else ""}


def _event_tool_call(span: Span) -> tuple[Any, Any]:
    """A tool call's arguments and result from its span events: the newest conventions'
    operation details, or the older ``gen_ai.tool.message`` and ``gen_ai.choice``."""
    arguments: Any = None
    result: Any = None
    for event in span.events:
        name, attributes = event.name, event.attributes
        if name == _DETAILS:
            for part in _parts(attributes.get("gen_ai.input.messages")):
                if part.get("type") == "tool_call":
                    arguments = part.get("arguments")
            for part in _parts(attributes.get("gen_ai.output.messages")):
                if part.get("type") in ("tool_call_response", "tool_result"):
                    result = part.get("response", part.get("result", part.get("output")))
        elif name == "gen_ai.tool.message":
            arguments = attributes.get("content")
        elif name == _CHOICE:
            result = attributes.get("message")
    return arguments, result


def _parts(value: Any) -> list[dict[str, Any]]:
    decoded = json_value(value)
    if not isinstance(decoded, list):
        return []
    return [
        part
        for item in decoded
        if isinstance(item, dict) and isinstance(item.get("parts"), list)
        for part in item["parts"]
        if isinstance(part, dict)
    ]


def step(span: Span) -> tuple[str, str]:
    return "step", span.name


GENAI: Final = Family(
    name="genai",
    kind=kind,
    model_call=model_call,
    tool_use=tool_use,
    agent_name=agent_name,
    run_input=run_input,
    run_output=run_output,
    asked=asked,
    step=step,
)
