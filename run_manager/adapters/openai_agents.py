"""An OpenAI Agents SDK agent, run by the manager with what it does recorded.

A run started with ``Manager.start`` goes through ``Runner.run`` with
:class:`RunRecorder`, the SDK's own ``RunHooks``: each model call from
its request (``on_llm_start``, with what it was sent) to its response
(its text, token counts and what it answered), each tool call with its
arguments and result, and each handoff between agents. A run started
with ``Manager.stream`` goes through ``Runner.run_streamed`` and reads
the same facts, in the order they happened, from its event stream, text
arriving as deltas; its hooks only open each model call when its
request is sent (:class:`StreamedRequests`). A model call is named after
the agent's model (its name, or its class), its node and its
``llm_call`` alike.

A handoff is recorded in the run as a node (``handoff:<agent>#k``, named
``from → to``): the SDK hands the conversation over inside one run, and
so does the ledger.

Cancel needs nothing of the SDK: the run's task is cancelled and
``CancelledError`` reaches the awaiting tool or model call; a streamed
run's background task is cancelled through ``RunResultStreaming.cancel``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any, Final

from agents import Agent, RunHooks, Runner
from agents.items import ModelResponse
from agents.stream_events import RawResponsesStreamEvent, RunItemStreamEvent

from ledger_reader.events import NodeEnter, NodeEnterPayload, NodeExit, NodeExitPayload
from ledger_reader.sessions.prices import estimate_cost
from run_manager.agents import (
    AgentEvent,
    Complete,
    Content,
    ModelRequest,
    Thinking,
    ToolCallEvent,
    ToolResultEvent,
)
from run_manager.budget import gate
from run_manager.current import current_run
from run_manager.run import Run

_REASONING_DELTAS = frozenset(
    {"response.reasoning_summary_text.delta", "response.reasoning_text.delta"}
)
CATCH_UP_SECONDS: Final = 2.0
"""Longest a streamed run's next model request waits for the stream's reader to have
recorded what came before it (it reads as soon as the SDK's task lets go of the loop)."""


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
        requests = StreamedRequests(run)
        streamed = Runner.run_streamed(self.agent, input, hooks=requests)
        names: dict[str, str] = {}
        try:
            async for event in streamed.stream_events():
                if isinstance(event, RawResponsesStreamEvent):
                    requests.answering()
                    item = _raw_event(event.data, requests.model, requests.first_token)
                    if isinstance(item, Complete):
                        requests.recorded("llm")
                    if item is not None:
                        yield item
                elif isinstance(event, RunItemStreamEvent):
                    if event.name == "handoff_occured":
                        requests.recorded("handoff")
                        if run is not None:
                            source = getattr(event.item, "source_agent", None)
                            target = getattr(event.item, "target_agent", None)
                            record_handoff(run, _name(source), _name(target))
                        continue
                    if event.name == "tool_output":
                        requests.recorded("tool")
                    recorded = _run_item(event, names)
                    if recorded is not None:
                        yield recorded
        finally:
            if not streamed.is_complete:
                streamed.cancel()  # the SDK runs the agent in a task of its own: stop it too
        self.output = _as_text(streamed.final_output)


class StreamedRequests(RunHooks[Any]):
    """A streamed run's hooks: each model call's node opens when its request is sent.

    Everything else of a streamed run is read from its event stream, which
    the SDK fills from a task of its own: when the next request is sent,
    the reader may not have recorded the previous answer and tool results
    yet. The request waits (up to :data:`CATCH_UP_SECONDS`) until the reader
    has read as many answers, tool outputs and handoffs as the hooks saw
    happen, so the ledger keeps the order they happened in.
    """

    def __init__(self, run: Run | None) -> None:
        self.run = run
        self.model: str | None = None
        """The model of the call in progress (its answer is named after it)."""
        self.first_token: int | None = None
        """Microseconds from its request to the first event of its answer read."""
        self._requested: float | None = None
        self._happened = {"llm": 0, "tool": 0, "handoff": 0}
        self._read = {"llm": 0, "tool": 0, "handoff": 0}
        self._progress = asyncio.Event()

    def answering(self) -> None:
        """An event of the call's answer is read: the first one times the first token."""
        if self._requested is not None:
            self.first_token = int((time.monotonic() - self._requested) * 1e6)
            self._requested = None

    def recorded(self, kind: str) -> None:
        """The stream's reader has recorded one more of ``kind``."""
        self._read[kind] += 1
        self._progress.set()

    def _caught_up(self) -> bool:
        return all(self._read[kind] >= count for kind, count in self._happened.items())

    async def on_llm_start(
        self, context: Any, agent: Agent[Any], system_prompt: str | None, input_items: Any
    ) -> None:
        self.model = _model_name(agent)
        if self.run is None:
            return
        await gate(self.run)  # the run's budgets allow the call, or it stops here
        loop = asyncio.get_running_loop()
        give_up = loop.time() + CATCH_UP_SECONDS
        while not self._caught_up() and loop.time() < give_up:
            self._progress.clear()
            # Past the deadline the request is recorded anyway: its time matters more.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._progress.wait(), give_up - loop.time())
        sent = None
        if getattr(self.run, "record_content", True):
            sent = messages_of(system_prompt, input_items)
        self.first_token = None
        self._requested = time.monotonic()
        self.run.on_agent_event(ModelRequest(model=self.model, messages=sent))

    async def on_llm_end(self, context: Any, agent: Agent[Any], response: ModelResponse) -> None:
        self._happened["llm"] += 1

    async def on_tool_start(self, context: Any, agent: Agent[Any], tool: Any) -> None:
        if self.run is not None:
            await gate(self.run)

    async def on_tool_end(self, context: Any, agent: Agent[Any], tool: Any, result: object) -> None:
        self._happened["tool"] += 1

    async def on_handoff(self, context: Any, from_agent: Agent[Any], to_agent: Agent[Any]) -> None:
        self._happened["handoff"] += 1


class RunRecorder(RunHooks[Any]):
    """The SDK's run hooks, recording into the run (nothing outside a run)."""

    def __init__(self, run: Run | None) -> None:
        self.run = run

    def _record(self, event: AgentEvent) -> None:
        if self.run is not None:
            self.run.on_agent_event(event)

    @property
    def _content(self) -> bool:
        return self.run is not None and getattr(self.run, "record_content", True) is not False

    async def on_llm_start(
        self, context: Any, agent: Agent[Any], system_prompt: str | None, input_items: Any
    ) -> None:
        if self.run is not None:
            await gate(self.run)  # the run's budgets allow the call, or it stops here
        sent = messages_of(system_prompt, input_items) if self._content else None
        self._record(ModelRequest(model=_model_name(agent), messages=sent))

    async def on_llm_end(self, context: Any, agent: Agent[Any], response: ModelResponse) -> None:
        for item in response.output:
            if getattr(item, "type", None) == "message":
                for part in getattr(item, "content", ()):
                    text = getattr(part, "text", None)
                    if isinstance(text, str) and text:
                        self._record(Content(text))
        usage = response.usage
        model = _model_name(agent)
        self._record(
            Complete(
                model=model,
                provider=_provider(agent),
                prompt_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                response=messages_of(None, response.output) if self._content else None,
                **_estimated(model, usage),
            )
        )

    async def on_tool_start(self, context: Any, agent: Agent[Any], tool: Any) -> None:
        if self.run is not None:
            await gate(self.run)  # the run's budgets allow the call, or it stops here
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


def _raw_event(data: Any, model: str | None, first_token: int | None) -> AgentEvent | None:
    kind = getattr(data, "type", "")
    if kind == "response.output_text.delta":
        return Content(data.delta) if data.delta else None
    if kind in _REASONING_DELTAS:
        return Thinking(data.delta) if data.delta else None
    if kind == "response.completed":
        response = data.response
        usage = response.usage
        run = current_run()
        content = run is not None and getattr(run, "record_content", True) is not False
        named = model or response.model or None
        return Complete(
            model=named,
            prompt_tokens=usage.input_tokens if usage is not None else None,
            output_tokens=usage.output_tokens if usage is not None else None,
            response=messages_of(None, response.output) if content else None,
            first_token_micros=first_token,
            **(_estimated(named, usage) if usage is not None else {}),
        )
    return None


def _estimated(model: str | None, usage: Any) -> dict[str, Any]:
    """The call's cost, estimated from its tokens (the SDK says none): ``cost_usd`` and
    ``cost_estimated``, or nothing for a model without a known price."""
    details = getattr(usage, "input_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    cost = estimate_cost(
        model, usage.input_tokens or 0, cached, 0, getattr(usage, "output_tokens", 0) or 0
    )
    return {} if cost is None else {"cost_usd": cost, "cost_estimated": True}


def messages_of(system_prompt: str | None, items: Any) -> list[dict[str, Any]]:
    """The SDK's input or output items in runtop's shape (:mod:`ledger_reader.messages`).

    Messages keep their role; a function call joins the assistant message
    before it as a ``tool_call`` part, and its output is a ``tool`` message's
    ``tool_result`` (named after the call it answers); reasoning is a
    ``thinking`` part. An item of another kind is kept as its JSON text.
    """
    messages: list[dict[str, Any]] = []
    if system_prompt:
        messages.append({"role": "system", "content": system_prompt})
    names: dict[str, str] = {}
    for raw in items if isinstance(items, list) else [items]:
        item = _plain(raw)
        kind = item.get("type")
        role = item.get("role")
        if kind == "function_call":
            call_id = str(item.get("call_id") or item.get("id") or "")
            names[call_id] = str(item.get("name") or "tool")
            part = {
                "type": "tool_call",
                "id": call_id,
                "name": names[call_id],
                "arguments": _arguments(item.get("arguments")),
            }
            _add_part(messages, "assistant", part)
        elif kind == "function_call_output":
            call_id = str(item.get("call_id") or "")
            output = item.get("output")
            result = {
                "type": "tool_result",
                "id": call_id,
                "name": names.get(call_id, "tool"),
                "output": output if isinstance(output, str) else _as_text(output),
            }
            messages.append({"role": "tool", "content": [result]})
        elif kind == "reasoning":
            summary = item.get("summary") or []
            text = "".join(str(s.get("text", "")) for s in summary if isinstance(s, dict))
            if text:
                _add_part(messages, "assistant", {"type": "thinking", "text": text})
        elif isinstance(role, str) and (kind in (None, "message")):
            content = item.get("content")
            if isinstance(content, list):
                content = [_content_part(part) for part in content]
            messages.append({"role": role, "content": content})
        else:
            messages.append(
                {"role": role if isinstance(role, str) else "?", "content": _as_text(item)}
            )
    return messages


def _plain(item: Any) -> dict[str, Any]:
    """An item as a dict (the SDK's items are typed dicts, or models of the OpenAI client)."""
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        dumped = dump(exclude_none=True)
        if isinstance(dumped, dict):
            return dumped
    return {"type": "text", "content": _as_text(item)}


def _content_part(part: Any) -> dict[str, Any]:
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    if isinstance(part, dict) and isinstance(part.get("refusal"), str):
        return {"type": "text", "text": part["refusal"]}
    return {"type": "text", "text": _as_text(part)}


def _add_part(messages: list[dict[str, Any]], role: str, part: dict[str, Any]) -> None:
    """Add ``part`` to the last message when it is ``role``'s, else as a message of its own."""
    last = messages[-1] if messages else None
    if last is not None and last["role"] == role:
        if not isinstance(last["content"], list):
            last["content"] = (
                []
                if last["content"] in (None, "")
                else [{"type": "text", "text": _as_text(last["content"])}]
            )
        last["content"].append(part)
    else:
        messages.append({"role": role, "content": [part]})


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
    """The agent's model: its name, else its class's (an agent without one uses the SDK's
    default model)."""
    model = agent.model
    if model is None:
        from agents.models import get_default_model

        return get_default_model()
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
