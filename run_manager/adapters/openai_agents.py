"""An OpenAI Agents SDK agent, run by the manager with what it does recorded.

A run started with ``Manager.start`` goes through ``Runner.run`` with
:class:`RunRecorder`, the SDK's own ``RunHooks``: each model response
(its text, model and token counts), each tool call with its arguments
and result, and each handoff between agents. A run started with
``Manager.stream`` goes through ``Runner.run_streamed`` and reads the
same facts, in the order they happened, from its event stream, text
arriving as deltas.

A handoff is recorded in the run as a node (``handoff:<agent>#k``, named
``from → to``): the SDK hands the conversation over inside one run, and
so does the ledger.

Cancel needs nothing of the SDK: the run's task is cancelled and
``CancelledError`` reaches the awaiting tool or model call; a streamed
run's background task is cancelled through ``RunResultStreaming.cancel``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, RunHooks, Runner
from agents.items import ModelResponse
from agents.stream_events import RawResponsesStreamEvent, RunItemStreamEvent

from ledger_reader.events import NodeEnter, NodeEnterPayload, NodeExit, NodeExitPayload
from run_manager.agents import (
    AgentEvent,
    Complete,
    Content,
    Thinking,
    ToolCallEvent,
    ToolResultEvent,
)
from run_manager.current import current_run
from run_manager.run import Run

_REASONING_DELTAS = frozenset(
    {"response.reasoning_summary_text.delta", "response.reasoning_text.delta"}
)


class OpenAIAgentsAgent:
    """One run's wrapper of an ``agents.Agent`` (the manager makes one per start)."""

    def __init__(self, agent: Agent[Any]) -> None:
        self.agent = agent
        self.name = agent.name or "agent"
        self.output: str | None = None
        """The run's final output as text, once it has one (a structured output as JSON)."""

    async def run(self, input: str) -> str:
        """Run to the end through ``Runner.run``, recording through the SDK's run hooks."""
        result = await Runner.run(self.agent, input, hooks=RunRecorder(current_run()))
        self.output = _as_text(result.final_output)
        return self.output

    async def run_stream(self, input: str) -> AsyncIterator[AgentEvent]:
        """Run through ``Runner.run_streamed``: text as it comes, the rest as it happens."""
        run = current_run()
        streamed = Runner.run_streamed(self.agent, input)
        names: dict[str, str] = {}
        try:
            async for event in streamed.stream_events():
                if isinstance(event, RawResponsesStreamEvent):
                    item = _raw_event(event.data)
                    if item is not None:
                        yield item
                elif isinstance(event, RunItemStreamEvent):
                    if event.name == "handoff_occured" and run is not None:
                        source = getattr(event.item, "source_agent", None)
                        target = getattr(event.item, "target_agent", None)
                        record_handoff(run, _name(source), _name(target))
                        continue
                    recorded = _run_item(event, names)
                    if recorded is not None:
                        yield recorded
        finally:
            if not streamed.is_complete:
                streamed.cancel()  # the SDK runs the agent in a task of its own: stop it too
        self.output = _as_text(streamed.final_output)


class RunRecorder(RunHooks[Any]):
    """The SDK's run hooks, recording into the run (nothing outside a run)."""

    def __init__(self, run: Run | None) -> None:
        self.run = run

    def _record(self, event: AgentEvent) -> None:
        if self.run is not None:
            self.run.on_agent_event(event)

    async def on_llm_end(self, context: Any, agent: Agent[Any], response: ModelResponse) -> None:
        for item in response.output:
            if getattr(item, "type", None) == "message":
                for part in getattr(item, "content", ()):
                    text = getattr(part, "text", None)
                    if isinstance(text, str) and text:
                        self._record(Content(text))
        usage = response.usage
        self._record(
            Complete(
                model=_model_name(agent),
                provider=_provider(agent),
                prompt_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
            )
        )

    async def on_tool_start(self, context: Any, agent: Agent[Any], tool: Any) -> None:
        call_id = getattr(context, "tool_call_id", None) or f"call_{id(context):x}"
        arguments = _arguments(getattr(context, "tool_arguments", None))
        self._record(ToolCallEvent(call_id, tool.name, arguments, status="executing"))

    async def on_tool_end(self, context: Any, agent: Agent[Any], tool: Any, result: object) -> None:
        call_id = getattr(context, "tool_call_id", None) or f"call_{id(context):x}"
        self._record(ToolResultEvent(call_id, tool.name, _as_text(result), "completed"))

    async def on_handoff(self, context: Any, from_agent: Agent[Any], to_agent: Agent[Any]) -> None:
        if self.run is not None:
            record_handoff(self.run, _name(from_agent), _name(to_agent))


def record_handoff(run: Run, source: str, target: str) -> None:
    """A handoff as a node of the run: ``handoff:<target>#k``, named ``source → target``."""
    node_id = run.next_node("handoff", target)
    run.emit(NodeEnter, NodeEnterPayload(node_id=node_id, node_name=f"{source} → {target}"))
    run.emit(NodeExit, NodeExitPayload(node_id=node_id, duration_micros=0, success=True))


def _raw_event(data: Any) -> AgentEvent | None:
    kind = getattr(data, "type", "")
    if kind == "response.output_text.delta":
        return Content(data.delta) if data.delta else None
    if kind in _REASONING_DELTAS:
        return Thinking(data.delta) if data.delta else None
    if kind == "response.completed":
        response = data.response
        usage = response.usage
        return Complete(
            model=response.model or None,
            prompt_tokens=usage.input_tokens if usage is not None else None,
            output_tokens=usage.output_tokens if usage is not None else None,
        )
    return None


def _run_item(event: RunItemStreamEvent, names: dict[str, str]) -> AgentEvent | None:
    raw = event.item.raw_item
    if event.name == "tool_called":
        call_id = _field(raw, "call_id") or _field(raw, "id") or "call"
        name = _field(raw, "name") or "tool"
        names[call_id] = name
        return ToolCallEvent(call_id, name, _arguments(_field(raw, "arguments")), "executing")
    if event.name == "tool_output":
        call_id = _field(raw, "call_id") or "call"
        output = getattr(event.item, "output", None)
        return ToolResultEvent(call_id, names.pop(call_id, "tool"), _as_text(output), "completed")
    return None


def _field(raw: Any, name: str) -> str | None:
    value = raw.get(name) if isinstance(raw, dict) else getattr(raw, name, None)
    return value if isinstance(value, str) and value else None


def _name(agent: Any) -> str:
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else "agent"


def _model_name(agent: Agent[Any]) -> str | None:
    model = agent.model
    if isinstance(model, str):
        return model
    name = getattr(model, "model", None) or getattr(model, "name", None)
    return name if isinstance(name, str) else type(model).__name__ if model is not None else None


def _provider(agent: Agent[Any]) -> str | None:
    model = agent.model
    if model is None or isinstance(model, str):
        return "openai"  # the SDK's default provider
    return "openai" if type(model).__module__.startswith("agents.models.openai") else None


def _arguments(text: Any) -> Any:
    if isinstance(text, str):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    dump = getattr(value, "model_dump_json", None)
    if callable(dump):
        return str(dump())
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return str(value)


def adapt(agent: object) -> OpenAIAgentsAgent | None:
    """The manager's runnable for an ``agents.Agent``; ``None`` for anything else."""
    return OpenAIAgentsAgent(agent) if isinstance(agent, Agent) else None
