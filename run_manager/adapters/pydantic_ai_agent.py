"""A PydanticAI agent, run by the manager with what it does recorded.

The run is driven through ``Agent.iter``, PydanticAI's own way to watch a
run node by node. A model request is recorded by a ``before_model_request``
hook (PydanticAI's ``Hooks`` capability, added to the run), so its model
call's node opens when the request is sent (the wait for the answer is
model time, streamed or not), with the messages it sends as PydanticAI sends
them: the run's history and the request, its instructions resolved (the
request node, before it runs, has none yet). It is streamed
(``node.stream``) when the run is streamed, so its text and thinking
arrive as deltas; each tool node's event stream gives every function
tool call with its arguments and its result; and each model response
carries the provider and token counts of its request. All of it becomes
the manager's agent events, and so the same ledger events as any agent's.
A model call is named after the model the agent asks (``model_name``),
its node and its ``llm_call`` alike.

Cancel needs nothing of PydanticAI: the run's task is cancelled, and
``CancelledError`` reaches the awaiting tool or model call at once.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pydantic_core
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import Hooks
from pydantic_ai.messages import (
    BaseToolCallPart,
    BaseToolReturnPart,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    UserPromptPart,
)
from pydantic_ai.messages import (
    ModelRequest as PydanticModelRequest,
)
from pydantic_ai.models import ModelRequestContext

from ledger_reader.totals import RunTotals
from run_manager.agents import (
    AgentEvent,
    Complete,
    Content,
    ModelRequest,
    Thinking,
    ToolCallEvent,
    ToolResultEvent,
)
from run_manager.budget import check_budgets
from run_manager.current import current_run

_FAILED_OUTCOMES = frozenset({"failed", "denied", "interrupted", "retried"})


class PydanticAIAgent:
    """One run's wrapper of a ``pydantic_ai.Agent`` (the manager makes one per start)."""

    def __init__(self, agent: Agent[Any, Any]) -> None:
        self.agent = agent
        self.name = agent.name or "agent"
        self.output: str | None = None
        """The run's final output as text, once it has one (a structured output as JSON)."""

    async def run(self, input: str) -> str:
        """Run to the end, recording each model request and tool call as it completes."""
        run = current_run()
        # Closed here, in this task, should recording stop it between two of its events
        # (a budget's gate): PydanticAI's run must be left in the task that entered it.
        async with contextlib.aclosing(self._events(input, streamed=False)) as events:
            async for event in events:
                if run is not None:
                    await run.record(event)
        return self.output or ""

    async def run_stream(self, input: str) -> AsyncIterator[AgentEvent]:
        """Run with every model request streamed: text and thinking as they come."""
        async for event in self._events(input, streamed=True):
            yield event

    async def _events(self, input: str, *, streamed: bool) -> AsyncGenerator[AgentEvent, None]:
        open_calls: dict[str, str] = {}
        run = current_run()
        content = run is not None and getattr(run, "record_content", True)
        model = "default"
        first_token: int | None = None

        async def sent(ctx: RunContext[Any], request: ModelRequestContext) -> ModelRequestContext:
            # Recorded into the run as the request goes out (PydanticAI runs the request in
            # this task, so whatever this iterator yielded before is recorded already).
            nonlocal model
            model = _model_name(request) or model
            if run is not None:
                messages = messages_of(list(request.messages)) if content else None
                run.on_agent_event(ModelRequest(model=model, messages=messages))
            return request

        requests = Hooks[Any](before_model_request=sent)
        async with self.agent.iter(input, capabilities=[requests]) as agent_run:
            async for node in agent_run:
                if Agent.is_model_request_node(node):
                    if streamed:
                        requested = time.monotonic()
                        async with node.stream(agent_run.ctx) as request_stream:
                            async for event in request_stream:
                                if first_token is None:  # text or a tool call's start
                                    first_token = int((time.monotonic() - requested) * 1e6)
                                if run is not None and run.budgets:  # what it spent so far
                                    check_budgets(run, _so_far(request_stream.response))
                                for item in _streamed(event):
                                    yield item
                elif Agent.is_call_tools_node(node):
                    response = node.model_response
                    if not streamed:
                        for item in _response_text(response):
                            yield item
                    answer = messages_of([response]) if content else None
                    yield _usage(response, model, answer, first_token)
                    first_token = None
                    try:
                        async with node.stream(agent_run.ctx) as tool_stream:
                            async for event in tool_stream:
                                recorded = _tool_event(event, open_calls)
                                if recorded is not None:
                                    yield recorded
                    except Exception as error:
                        # A tool that raised: its call ends in error before the run does.
                        message = str(error) or type(error).__name__
                        for call_id, name in list(open_calls.items()):
                            yield ToolResultEvent(call_id, name, message, "error")
                        open_calls.clear()
                        raise
            result = agent_run.result
        output = result.output if result is not None else None
        self.output = output if isinstance(output, str) else _as_json(output)


def _streamed(event: object) -> list[AgentEvent]:
    """Text and thinking of a streamed model response."""
    if isinstance(event, PartDeltaEvent):
        delta = event.delta
        if isinstance(delta, TextPartDelta) and delta.content_delta:
            return [Content(delta.content_delta)]
        if isinstance(delta, ThinkingPartDelta) and delta.content_delta:
            return [Thinking(delta.content_delta)]
    elif isinstance(event, PartStartEvent):
        part = event.part
        if isinstance(part, TextPart) and part.content:
            return [Content(part.content)]
        if isinstance(part, ThinkingPart) and part.content:
            return [Thinking(part.content)]
    return []


def _response_text(response: ModelResponse) -> list[AgentEvent]:
    """A whole model response's text and thinking, for a run not streamed."""
    items: list[AgentEvent] = []
    for part in response.parts:
        if isinstance(part, TextPart) and part.content:
            items.append(Content(part.content))
        elif isinstance(part, ThinkingPart) and part.content:
            items.append(Thinking(part.content))
    return items


def _cost(response: ModelResponse) -> float | None:
    try:
        return float(response.cost().total_price)
    except Exception:  # an unknown model or provider has no price: say nothing, not 0
        return None


def _so_far(response: ModelResponse) -> RunTotals:
    """What a model request streaming in has used so far, as its budget counts it."""
    usage = response.usage
    return RunTotals(
        prompt_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=_cost(response),
    )


def _usage(response: ModelResponse, model: str, answer: Any, first_token: int | None) -> Complete:
    usage = response.usage
    cost = _cost(response)
    return Complete(
        model=model,
        provider=response.provider_name,
        prompt_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=cost,
        response=answer,
        first_token_micros=first_token,
    )


def _model_name(request: Any) -> str | None:
    """The name of the model a request asks (``Model.model_name``)."""
    name = getattr(getattr(request, "model", None), "model_name", None)
    return name if isinstance(name, str) and name else None


def messages_of(history: list[ModelMessage]) -> list[dict[str, Any]]:
    """PydanticAI's messages in runtop's shape (:mod:`ledger_reader.messages`).

    A request's parts become one message each (its instructions a system
    message first); a response becomes one assistant message of text,
    thinking and tool calls. Parts that only carry PydanticAI's own
    bookkeeping (instruction deltas, capability loads) are left out.
    """
    messages: list[dict[str, Any]] = []
    for message in history:
        if isinstance(message, PydanticModelRequest):
            if message.instructions:
                messages.append({"role": "system", "content": message.instructions})
            for part in message.parts:
                converted = _request_part(part)
                if converted is not None:
                    messages.append(converted)
        elif isinstance(message, ModelResponse):
            parts = [_response_part(part) for part in message.parts]
            messages.append({"role": "assistant", "content": [p for p in parts if p is not None]})
    return messages


def _request_part(part: Any) -> dict[str, Any] | None:
    if isinstance(part, SystemPromptPart):
        return {"role": "system", "content": part.content}
    if isinstance(part, UserPromptPart):
        if isinstance(part.content, str):
            return {"role": "user", "content": part.content}
        items = [
            {"type": "text", "text": item if isinstance(item, str) else _described(item)}
            for item in part.content
        ]
        return {"role": "user", "content": items}
    if isinstance(part, BaseToolReturnPart):
        result: dict[str, Any] = {
            "type": "tool_result",
            "id": part.tool_call_id,
            "name": part.tool_name,
            "output": part.model_response_str(),
        }
        if getattr(part, "outcome", "success") in _FAILED_OUTCOMES:
            result["is_error"] = True
        return {"role": "tool", "content": [result]}
    if isinstance(part, RetryPromptPart):
        if part.tool_name is None:
            return {"role": "user", "content": part.model_response()}
        retry = {
            "type": "tool_result",
            "id": part.tool_call_id,
            "name": part.tool_name,
            "output": part.model_response(),
            "is_error": True,
        }
        return {"role": "tool", "content": [retry]}
    return None


def _response_part(part: Any) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.content}
    if isinstance(part, ThinkingPart):
        return {"type": "thinking", "text": part.content}
    if isinstance(part, BaseToolCallPart):
        return {
            "type": "tool_call",
            "id": part.tool_call_id,
            "name": part.tool_name,
            "arguments": part.args_as_dict(),
        }
    return None


def _described(item: Any) -> str:
    """A part of a user's prompt that is not text (an image, a file): what and where."""
    where = getattr(item, "url", None)
    kind = getattr(item, "kind", None) or type(item).__name__
    return f"[{kind} {where}]" if isinstance(where, str) else f"[{kind}]"


def _tool_event(event: object, open_calls: dict[str, str]) -> AgentEvent | None:
    if isinstance(event, FunctionToolCallEvent):
        part = event.part
        open_calls[part.tool_call_id] = part.tool_name
        return ToolCallEvent(
            part.tool_call_id, part.tool_name, part.args_as_dict(), status="executing"
        )
    if isinstance(event, FunctionToolResultEvent):
        result = event.part
        name = open_calls.pop(result.tool_call_id, result.tool_name)
        failed = getattr(result, "outcome", "success") in _FAILED_OUTCOMES
        return ToolResultEvent(
            result.tool_call_id,
            name,
            result.model_response_str(),
            "error" if failed else "completed",
        )
    return None


def _as_json(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return pydantic_core.to_json(value).decode()
    except (TypeError, ValueError, pydantic_core.PydanticSerializationError):
        return repr(value)


def adapt(agent: object) -> PydanticAIAgent | None:
    """The manager's runnable for a ``pydantic_ai.Agent``; ``None`` for anything else."""
    return PydanticAIAgent(agent) if isinstance(agent, Agent) else None
