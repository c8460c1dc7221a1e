"""The OpenTelemetry GenAI conventions (``gen_ai.*``), as PydanticAI, Logfire and others write them.

The kind of a span is its ``gen_ai.operation.name``: ``invoke_agent`` a
run, ``chat`` / ``text_completion`` / ``generate_content`` a model call,
``execute_tool`` a tool call (``../shared/design/OTLP.md``). Content, where
the instrumentation records it, is JSON text in ``gen_ai.input.messages`` and
``gen_ai.output.messages`` (messages with ``parts``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from run_manager.otlp.families import (
    AGENT,
    MODEL,
    OTHER,
    TOOL,
    Family,
    ModelCall,
    ToolUse,
    answer_text,
    first_int,
    last_user_text,
    number,
    runtop_messages,
    text,
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
}


def carries(attributes: dict[str, Any]) -> bool:
    """Whether a span says a GenAI operation (the family of last resort: others say more)."""
    return "gen_ai.operation.name" in attributes


def kind(span: Span) -> str:
    operation = span.attributes.get("gen_ai.operation.name")
    if isinstance(operation, str):
        return _KINDS.get(operation, OTHER)
    return AGENT if span.name.startswith("invoke_agent") else OTHER


def model_call(span: Span) -> ModelCall:
    get = span.attributes.get
    model = text(get("gen_ai.response.model")) or text(get("gen_ai.request.model"))
    provider = text(get("gen_ai.provider.name")) or text(get("gen_ai.system"))
    sent = get("gen_ai.input.messages")
    answered = get("gen_ai.output.messages")
    messages = runtop_messages(sent) if sent is not None else None
    response = runtop_messages(answered) if answered is not None else None
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
    return ToolUse(
        name=text(get("gen_ai.tool.name")) or span.name.removeprefix("execute_tool ") or None,
        call_id=text(get("gen_ai.tool.call.id")),
        arguments=get("gen_ai.tool.call.arguments"),
        result=get("gen_ai.tool.call.result"),
    )


def agent_name(span: Span) -> str | None:
    return text(span.attributes.get("gen_ai.agent.name"))


def run_input(span: Span) -> Any:
    return last_user_text(runtop_messages(span.attributes.get("gen_ai.input.messages")))


def run_output(span: Span) -> Any:
    get = span.attributes.get
    output = get("final_result")  # PydanticAI's
    if output is None:
        output = answer_text(runtop_messages(get("gen_ai.output.messages")))
    return output


def asked(span: Span) -> str | None:
    return last_user_text(runtop_messages(span.attributes.get("gen_ai.input.messages")))


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
