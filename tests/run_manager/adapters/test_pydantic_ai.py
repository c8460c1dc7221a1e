"""PydanticAI agents under the manager, on PydanticAI's own offline models."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.models.test import TestModel

from run_manager import Content, Manager, RunCanceled, RunFailed


def ledger(directory: Path, run_id: str) -> list[dict[str, Any]]:
    lines = (directory / f"{run_id}.jsonl").read_text().splitlines()
    return [json.loads(text) for text in lines]


def types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def weather_agent() -> Agent[None, str]:
    agent = Agent(TestModel(), name="weather")

    @agent.tool_plain
    async def get_weather(city: str) -> str:
        return f"sunny in {city}"

    return agent


async def test_a_run_records_model_calls_with_tokens_and_tool_calls(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(weather_agent(), "What's the weather in Paris?")
        output = await handle.result()
    assert json.loads(output) == {"get_weather": "sunny in a"}
    events = ledger(tmp_path, handle.run_id)
    assert events[0]["payload"]["agent"] == "weather"
    assert types(events).count("llm_call") == 2
    calls = [event["payload"] for event in events if event["type"] == "llm_call"]
    assert calls[0]["model"] == "test"
    assert calls[0]["provider"] == "test"
    assert calls[0]["prompt_tokens"] > 0
    assert calls[1]["output_tokens"] > 0
    tool_call = next(event["payload"] for event in events if event["type"] == "tool_call")
    assert tool_call["name"] == "get_weather"
    assert tool_call["arguments"] == {"city": "a"}
    result = next(event["payload"] for event in events if event["type"] == "tool_result")
    assert result["call_id"] == tool_call["call_id"]
    assert result["output"] == "sunny in a"
    assert result["is_error"] is False
    # The tool's node opens and closes around its call; the final text is recorded.
    start = types(events).index("tool_call")
    assert types(events)[start - 1 : start + 3] == [
        "node_enter",
        "tool_call",
        "tool_result",
        "node_exit",
    ]
    chunks = "".join(event["payload"]["delta"] for event in events if event["type"] == "llm_chunk")
    assert chunks == output
    assert events[-1]["type"] == "run_completed"
    assert events[-1]["payload"] == {"status": "ok", "output": output}


async def test_a_streamed_run_records_text_as_it_comes(tmp_path: Path) -> None:
    async def stream_text(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for piece in ["It is ", "sunny ", "in Paris."]:
            yield piece

    agent = Agent(FunctionModel(stream_function=stream_text), name="streamer")
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.stream(agent, "weather?")
        seen = handle.events()
        assert seen is not None
        received = [event async for event in seen]
        output = await handle.result()
    assert output == "It is sunny in Paris."
    texts = [event for event in received if isinstance(event, Content)]
    assert [event.text for event in texts] == [
        "It is ",
        "sunny ",
        "in Paris.",
    ]
    events = ledger(tmp_path, handle.run_id)
    deltas = [event["payload"]["delta"] for event in events if event["type"] == "llm_chunk"]
    assert deltas == ["It is ", "sunny ", "in Paris."]
    assert types(events).count("llm_call") == 1


async def test_a_streamed_run_with_a_tool_call(tmp_path: Path) -> None:
    async def stream_calls(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        if len(messages) == 1:
            yield {0: DeltaToolCall(name="lookup", json_args='{"key": "k1"}', tool_call_id="c1")}
        else:
            yield "found it"

    agent = Agent(FunctionModel(stream_function=stream_calls), name="looker")

    @agent.tool_plain
    def lookup(key: str) -> str:
        return f"value of {key}"

    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.stream(agent, "find k1")
        assert await handle.result() == "found it"
    events = ledger(tmp_path, handle.run_id)
    call = next(event["payload"] for event in events if event["type"] == "tool_call")
    assert (call["call_id"], call["name"], call["arguments"]) == ("c1", "lookup", {"key": "k1"})
    result = next(event["payload"] for event in events if event["type"] == "tool_result")
    assert result["output"] == "value of k1"


async def test_a_tool_that_raises_fails_its_call_and_the_run(tmp_path: Path) -> None:
    agent = Agent(TestModel(), name="breaker")

    @agent.tool_plain
    async def explode(what: str) -> str:
        raise RuntimeError(f"disk on fire: {what}")

    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(agent, "go")
        with pytest.raises(RunFailed, match="disk on fire"):
            await handle.result()
    events = ledger(tmp_path, handle.run_id)
    result = next(event["payload"] for event in events if event["type"] == "tool_result")
    assert result["is_error"] is True
    assert "disk on fire" in result["output"]
    assert types(events)[-2:] == ["error", "run_completed"]
    assert events[-1]["payload"]["status"] == "error"


async def test_cancel_mid_tool_reaches_the_tool(tmp_path: Path) -> None:
    entered = asyncio.Event()
    stopped: list[str] = []
    agent = Agent(TestModel(), name="slow")

    @agent.tool_plain
    async def wait_forever(seconds: int) -> str:
        entered.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            stopped.append("cancelled")
            raise
        return "never"

    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(agent, "wait")
        await asyncio.wait_for(entered.wait(), 10)
        assert handle.cancel("enough")
        info = await asyncio.wait_for(handle.wait(), 5)
        with pytest.raises(RunCanceled):
            await handle.result()
    assert stopped == ["cancelled"]
    assert info.status.value == "canceled"
    events = ledger(tmp_path, handle.run_id)
    assert types(events)[-1] == "run_completed"
    assert events[-1]["payload"]["status"] == "cancelled"
    result = next(event["payload"] for event in events if event["type"] == "tool_result")
    assert result["is_error"] is True  # the call in flight ends as interrupted


async def test_resume_reissues_the_recorded_input(tmp_path: Path) -> None:
    seen: list[str] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = messages[0].parts[-1]
        seen.append(str(getattr(prompt, "content", "")))
        return ModelResponse(parts=[TextPart("done")])

    async def stream_answer(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield answer(messages, info).text or ""

    # A resume from a ledger streams an agent that can stream: this model does both.
    agent = Agent(FunctionModel(answer, stream_function=stream_answer), name="echo")
    async with Manager(ledger_dir=tmp_path, agents=[agent]) as manager:
        first = manager.start(agent, "the same question")
        await first.result()
    # A new manager, as after a restart: the run is re-issued from its ledger.
    async with Manager(ledger_dir=tmp_path, agents=[agent]) as manager:
        second = manager.resume(first.run_id)
        assert await second.result() == "done"
    assert seen == ["the same question", "the same question"]
    assert ledger(tmp_path, second.run_id)[0]["payload"]["resumed_from"] == first.run_id


async def test_a_structured_output_is_the_runs_output_as_json(tmp_path: Path) -> None:
    def structured(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tool = info.output_tools[0]
        return ModelResponse(parts=[ToolCallPart(tool.name, {"city": "Paris", "degrees": 21})])

    from pydantic import BaseModel

    class Forecast(BaseModel):
        city: str
        degrees: int

    agent = Agent(FunctionModel(structured), name="forecaster", output_type=Forecast)
    async with Manager(ledger_dir=tmp_path) as manager:
        output = await manager.start(agent, "forecast").result()
    assert json.loads(output) == {"city": "Paris", "degrees": 21}


async def test_the_demo_shows_a_pydantic_ai_agent_on_its_test_model(tmp_path: Path) -> None:
    from tui.demo import weather_agent

    agent = weather_agent(pace=0.001)
    assert agent is not None
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.stream(agent, "What's the weather in Paris?")
        assert "sunny" in await handle.result()
    events = ledger(tmp_path, handle.run_id)
    assert events[0]["payload"]["agent"] == "weather"
    assert "tool_result" in types(events)


async def test_an_approval_inside_a_tool_waits_for_the_manager(tmp_path: Path) -> None:
    from run_manager import approval

    agent = Agent(TestModel(), name="deployer")

    @agent.tool_plain
    async def deploy(target: str) -> str:
        decision = await approval(f"Deploy {target}?")
        return "deployed" if decision.approved else "not deployed"

    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(agent, "deploy it")
        subscription = manager.hub.subscribe(handle.run_id)
        async for item in subscription:
            if getattr(item, "type", None) == "approval_request":
                break
        subscription.close()
        manager.approve(handle.run_id, None, True, "fine")
        assert "deployed" in await handle.result()
    events = ledger(tmp_path, handle.run_id)
    kinds = types(events)
    assert kinds.index("approval_request") < kinds.index("approval_response")
    result = next(event["payload"] for event in events if event["type"] == "tool_result")
    assert result["output"] == "deployed"
