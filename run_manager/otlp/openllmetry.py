"""OpenLLMetry (Traceloop's ``traceloop-sdk`` and ``opentelemetry-instrumentation-*`` packages).

Names as ``opentelemetry-semantic-conventions-ai`` (``opentelemetry.semconv_ai``)
spells them. A span is of this family when it says ``traceloop.span.kind``
or, from instrumentations older than their move to the GenAI conventions,
``llm.request.type``:

- ``agent`` a run (the OpenAI Agents SDK's ``<name>.agent``, which also says
  ``gen_ai.agent.name``); ``workflow`` the trace's root, its run only where
  no agent is under it (the Agents SDK's ``Agent Workflow`` wraps the agent
  that names the run); ``task`` and ``handoff`` steps; ``tool`` a tool call
  (``gen_ai.tool.name``, ``gen_ai.tool.call.arguments`` / ``.result``, or the
  decorators' ``traceloop.entity.name`` / ``.input`` / ``.output``);
- ``llm.request.type`` a model call: ``gen_ai.request.model`` /
  ``gen_ai.response.model``, ``gen_ai.system`` (or ``gen_ai.provider.name``),
  tokens in ``gen_ai.usage.input_tokens`` / ``output_tokens`` (older:
  ``gen_ai.usage.prompt_tokens`` / ``completion_tokens``, ``llm.usage.*``),
  ``gen_ai.usage.cache_read_input_tokens`` /
  ``cache_creation_input_tokens``, the conversation in
  ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (the GenAI shape) or,
  older, flattened as ``gen_ai.prompt.<N>.role`` / ``.content`` /
  ``.tool_calls.<M>.id`` / ``.name`` / ``.arguments`` / ``.tool_call_id`` and
  ``gen_ai.completion.<N>...``.

Today's instrumentations write their model calls with GenAI's
``gen_ai.operation.name`` (``chat``) and no ``traceloop.span.kind``: those
are read by :mod:`run_manager.otlp.genai`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from run_manager.otlp import genai
from run_manager.otlp.families import (
    AGENT,
    MODEL,
    STEP,
    TOOL,
    Family,
    ModelCall,
    ToolUse,
    agent_called,
    answer_text,
    call_arguments,
    first_int,
    first_text,
    json_text,
    last_user_text,
    message,
    nested,
    runtop_messages,
    text,
)

if TYPE_CHECKING:
    from run_manager.otlp.spans import Span

KIND: Final = "traceloop.span.kind"
REQUEST_TYPE: Final = "llm.request.type"
_KINDS: Final = {"agent": AGENT, "tool": TOOL}


def carries(attributes: dict[str, Any]) -> bool:
    return KIND in attributes or REQUEST_TYPE in attributes


def kind(span: Span) -> str:
    said = span.attributes.get(KIND)
    if isinstance(said, str):
        return _KINDS.get(said, STEP)
    return MODEL


def model_call(span: Span) -> ModelCall:
    attributes = span.attributes
    get = attributes.get
    messages = _conversation(attributes, "gen_ai.input.messages", "gen_ai.prompt.")
    response = _conversation(attributes, "gen_ai.output.messages", "gen_ai.completion.")
    return ModelCall(
        model=first_text(get, "gen_ai.response.model", "gen_ai.request.model"),
        provider=first_text(get, "gen_ai.provider.name", "gen_ai.system"),
        prompt_tokens=first_int(
            get,
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.prompt_tokens",
            "llm.usage.prompt_tokens",
        ),
        output_tokens=first_int(
            get,
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "llm.usage.completion_tokens",
        ),
        cache_read_tokens=first_int(
            get, "gen_ai.usage.cache_read_input_tokens", "gen_ai.usage.cache_read.input_tokens"
        ),
        cache_write_tokens=first_int(
            get,
            "gen_ai.usage.cache_creation_input_tokens",
            "gen_ai.usage.cache_creation.input_tokens",
        ),
        messages=messages,
        response=response,
        text=answer_text(response),
    )


def tool_use(span: Span) -> ToolUse:
    get = span.attributes.get
    arguments = get("gen_ai.tool.call.arguments")
    if arguments is None:
        arguments = call_arguments(get("traceloop.entity.input"))
    result = get("gen_ai.tool.call.result")
    if result is None:
        result = _entity_output(get("traceloop.entity.output"))
    name = first_text(get, "gen_ai.tool.name", "traceloop.entity.name")
    return ToolUse(
        name=name or text(span.name.removesuffix(".tool")),
        call_id=text(get("gen_ai.tool.call.id")),
        arguments=arguments,
        result=result,
    )


def agent_name(span: Span) -> str | None:
    get = span.attributes.get
    return first_text(
        get, "gen_ai.agent.name", "traceloop.entity.name", "traceloop.workflow.name"
    ) or agent_called(span.name.removesuffix(".agent"))


def run_input(span: Span) -> Any:
    said = genai.run_input(span)
    if said is None:
        said = call_arguments(span.attributes.get("traceloop.entity.input"))
    return said


def run_output(span: Span) -> Any:
    said = genai.run_output(span)
    if said is None:
        said = _entity_output(span.attributes.get("traceloop.entity.output"))
    return said


def asked(span: Span) -> str | None:
    return last_user_text(_conversation(span.attributes, "gen_ai.input.messages", "gen_ai.prompt."))


def step(span: Span) -> tuple[str, str]:
    said = span.attributes.get(KIND)
    name = first_text(span.attributes.get, "traceloop.entity.name") or span.name
    return (said if isinstance(said, str) and said else "step"), name


OPENLLMETRY: Final = Family(
    name="openllmetry",
    kind=kind,
    model_call=model_call,
    tool_use=tool_use,
    agent_name=agent_name,
    run_input=run_input,
    run_output=run_output,
    asked=asked,
    step=step,
)


def _conversation(attributes: dict[str, Any], key: str, prefix: str) -> list[Any] | None:
    """The messages of a model call: the GenAI attribute, else the flattened older one."""
    value = attributes.get(key)
    if value is not None:
        return runtop_messages(value)
    found = nested(attributes, prefix)
    if not found:
        return None
    return [_message(fields) for fields in found]


def _message(fields: dict[str, Any]) -> dict[str, Any]:
    role = fields.get("role")
    role = role if isinstance(role, str) and role else "?"
    content = fields.get("content")
    call_id = fields.get("tool_call_id")
    if role == "tool" and isinstance(call_id, str):
        return {
            "role": role,
            "content": [{"type": "tool_result", "id": call_id, "output": content}],
        }
    parts: list[dict[str, Any]] = []
    if isinstance(content, str) and content:
        parts.append({"type": "text", "text": content})
    calls = nested(fields, "tool_calls.")
    return message(
        role, parts, [(call.get("id"), call.get("name"), call.get("arguments")) for call in calls]
    )


def _entity_output(value: Any) -> Any:
    """``traceloop.entity.output``: the decorated function's return value, as JSON."""
    return json_text(value)
