"""OpenAI Agents SDK agents under the manager, on a small scripted model of our own."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
    ResponseUsage,
)
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from run_manager import Manager, RunCanceled

set_tracing_disabled(True)  # offline: the SDK would try to send its traces to OpenAI

Output = list[Any]
Turn = Output | Callable[[list[Any]], Output]


def say(text: str) -> ResponseOutputMessage:
    content = [ResponseOutputText(text=text, type="output_text", annotations=[])]
    return ResponseOutputMessage(
        id="msg_1", content=content, role="assistant", status="completed", type="message"
    )


def call(name: str, arguments: dict[str, Any], call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id=f"fc_{call_id}",
        call_id=call_id,
        name=name,
        arguments=json.dumps(arguments),
        type="function_call",
        status="completed",
    )


class ScriptedModel(Model):
    """Answers each request with the next scripted turn (a turn may look at the handoffs)."""

    def __init__(self, *turns: Turn, input_tokens: int = 40, output_tokens: int = 7) -> None:
        self.turns = list(turns)
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens

    def _next(self, handoffs: list[Any]) -> Output:
        turn = self.turns.pop(0)
        return turn(handoffs) if callable(turn) else turn

    async def get_response(  # type: ignore[override]
        self, system_instructions: Any, input: Any, model_settings: Any, tools: Any,
        output_schema: Any, handoffs: list[Any], tracing: Any, **kwargs: Any,
    ) -> ModelResponse:  # fmt: skip
        usage = Usage(
            requests=1,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            total_tokens=self.input_tokens + self.output_tokens,
        )
        return ModelResponse(output=self._next(handoffs), usage=usage, response_id=None)

    async def stream_response(  # type: ignore[override]
        self, system_instructions: Any, input: Any, model_settings: Any, tools: Any,
        output_schema: Any, handoffs: list[Any], tracing: Any, **kwargs: Any,
    ) -> AsyncIterator[Any]:  # fmt: skip
        output = self._next(handoffs)
        sequence = 0
        for item in output:
            if item.type == "message":
                for word in item.content[0].text.split(" "):
                    sequence += 1
                    yield ResponseTextDeltaEvent(
                        content_index=0,
                        delta=f"{word} ",
                        item_id=item.id,
                        output_index=0,
                        sequence_number=sequence,
                        type="response.output_text.delta",
                        logprobs=[],
                    )
        usage = ResponseUsage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            total_tokens=self.input_tokens + self.output_tokens,
            input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
            output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
        )
        response = Response(
            id="resp_1",
            created_at=0,
            model="scripted-1",
            object="response",
            output=output,
            tool_choice="auto",
            tools=[],
            parallel_tool_calls=False,
            usage=usage,
        )
        yield ResponseCompletedEvent(
            response=response, sequence_number=sequence + 1, type="response.completed"
        )


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def triage_and_specialist() -> Agent[Any]:
    specialist = Agent(
        name="specialist",
        model=ScriptedModel([call("get_weather", {"city": "Paris"}, "c1")], [say("It is sunny")]),
        tools=[get_weather],
    )
    handoff = lambda handoffs: [call(handoffs[0].tool_name, {}, "h1")]  # noqa: E731
    return Agent(name="triage", model=ScriptedModel(handoff), handoffs=[specialist])


def ledger(directory: Path, run_id: str) -> list[dict[str, Any]]:
    lines = (directory / f"{run_id}.jsonl").read_text().splitlines()
    return [json.loads(text) for text in lines]


def check_the_recorded_run(events: list[dict[str, Any]]) -> None:
    kinds = [event["type"] for event in events]
    assert events[0]["payload"]["agent"] == "triage"
    handoff = next(
        event["payload"]
        for event in events
        if event["type"] == "node_enter" and event["payload"]["node_id"].startswith("handoff:")
    )
    assert handoff == {"node_id": "handoff:specialist#1", "node_name": "triage → specialist"}
    calls = [event["payload"] for event in events if event["type"] == "llm_call"]
    assert len(calls) == 3
    assert all((call["prompt_tokens"], call["output_tokens"]) == (40, 7) for call in calls)
    tool = next(event["payload"] for event in events if event["type"] == "tool_call")
    assert (tool["call_id"], tool["name"], tool["arguments"]) == (
        "c1",
        "get_weather",
        {"city": "Paris"},
    )
    result = next(event["payload"] for event in events if event["type"] == "tool_result")
    assert (result["call_id"], result["output"], result["is_error"]) == (
        "c1",
        "sunny in Paris",
        False,
    )
    assert kinds.index("tool_call") > kinds.index("node_enter")
    assert events[-1]["payload"] == {"status": "ok", "output": "It is sunny"}


async def test_a_run_records_tools_a_handoff_and_model_calls(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(triage_and_specialist(), "weather in Paris?")
        assert await handle.result() == "It is sunny"
    events = ledger(tmp_path, handle.run_id)
    check_the_recorded_run(events)
    text = "".join(event["payload"]["delta"] for event in events if event["type"] == "llm_chunk")
    assert text == "It is sunny"


async def test_a_streamed_run_records_the_same_with_text_as_it_comes(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.stream(triage_and_specialist(), "weather in Paris?")
        assert await handle.result() == "It is sunny"
    events = ledger(tmp_path, handle.run_id)
    check_the_recorded_run(events)
    deltas = [event["payload"]["delta"] for event in events if event["type"] == "llm_chunk"]
    assert deltas == ["It ", "is ", "sunny "]


@pytest.mark.parametrize("streamed", [False, True])
async def test_cancel_mid_tool_reaches_the_tool(tmp_path: Path, streamed: bool) -> None:
    entered = asyncio.Event()
    stopped: list[str] = []

    @function_tool
    async def wait_forever(seconds: int) -> str:
        """Waits."""
        entered.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            stopped.append("cancelled")
            raise
        return "never"

    agent = Agent(
        name="waiter",
        model=ScriptedModel([call("wait_forever", {"seconds": 3600}, "w1")], [say("never")]),
        tools=[wait_forever],
    )
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = (manager.stream if streamed else manager.start)(agent, "wait")
        await asyncio.wait_for(entered.wait(), 10)
        assert handle.cancel("enough")
        info = await asyncio.wait_for(handle.wait(), 5)
        with pytest.raises(RunCanceled):
            await handle.result()
    assert info.status.value == "canceled"
    assert stopped == ["cancelled"]
    events = ledger(tmp_path, handle.run_id)
    assert events[-1]["payload"]["status"] == "cancelled"
    result = next(event["payload"] for event in events if event["type"] == "tool_result")
    assert result["is_error"] is True  # the call in flight ends as interrupted


async def test_resume_reissues_the_recorded_input(tmp_path: Path) -> None:
    seen: list[Any] = []

    def remember(handoffs: list[Any]) -> Output:
        return [say("done")]

    class Recording(ScriptedModel):
        async def get_response(
            self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
        ) -> ModelResponse:  # type: ignore[override]
            seen.append(input)
            return await super().get_response(system_instructions, input, *args, **kwargs)

        async def stream_response(
            self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
        ) -> AsyncIterator[Any]:  # type: ignore[override]
            seen.append(input)
            async for event in super().stream_response(system_instructions, input, *args, **kwargs):
                yield event

    agent = Agent(name="echo", model=Recording(remember, remember))
    async with Manager(ledger_dir=tmp_path, agents=[agent]) as manager:
        first = manager.start(agent, "the same question")
        await first.result()
    # A new manager, as after a restart: the run is re-issued from its ledger.
    async with Manager(ledger_dir=tmp_path, agents=[agent]) as manager:
        second = manager.resume(first.run_id)
        assert await second.result() == "done"
    asked = [items[0]["content"] for items in seen]
    assert asked == ["the same question", "the same question"]
    assert ledger(tmp_path, second.run_id)[0]["payload"]["resumed_from"] == first.run_id
