"""A model call says what it was sent when the request goes out, and keeps it if canceled.

Each agent here asks a model that does not answer until the test lets it (a PydanticAI
``FunctionModel``, an Agents SDK model, a plain ``model_call`` block): while it waits,
the ledger's model node already holds the model and the messages; the run canceled
then, its ``llm_call`` ends ``cancelled`` with them, and ``runtop show --messages``
prints them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("agents")

from agents import Agent as SdkAgent
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ledger_reader.messages import conversation
from run_manager import Manager, RunCanceled, model_call
from tests.run_manager.adapters.test_openai_agents import ScriptedModel, say
from tui.cli import main

QUESTION = "Which way does the heron fly?"
INSTRUCTIONS = "Answer in one word."


class Thinking:
    """A model that is asked, then thinks until the test lets it answer."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.answer = asyncio.Event()

    async def think(self) -> None:
        self.asked.set()
        await self.answer.wait()


def pydantic_agent(model: Thinking) -> object:
    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await model.think()
        return ModelResponse(parts=[TextPart("South.")])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        await model.think()
        yield "South."

    return Agent(
        FunctionModel(answer, stream_function=stream, model_name="slow-heron"),
        name="birder",
        instructions=INSTRUCTIONS,
    )


class SlowSdkModel(ScriptedModel):
    def __init__(self, model: Thinking) -> None:
        super().__init__([say("South.")])
        self.model = model

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        await self.model.think()
        return await super().get_response(*args, **kwargs)

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:  # type: ignore[override]
        await self.model.think()
        async for event in super().stream_response(*args, **kwargs):
            yield event


def sdk_agent(model: Thinking) -> object:
    return SdkAgent(name="birder", model=SlowSdkModel(model), instructions=INSTRUCTIONS)


class PlainAgent:
    """An agent of its own, its model call recorded with ``model_call``."""

    name = "birder"

    def __init__(self, model: Thinking) -> None:
        self.model = model

    async def run(self, input: str) -> str:
        asked = [
            {"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": input},
        ]
        async with model_call("slow-heron", provider="aviary", messages=asked) as call:
            await self.model.think()
            call.response = [{"role": "assistant", "content": "South."}]
        return "South."


AGENTS: dict[str, Callable[[Thinking], object]] = {
    "pydantic_ai": pydantic_agent,
    "openai_agents": sdk_agent,
    "model_call": PlainAgent,
}


def recorded(directory: Path, run_id: str) -> list[dict[str, Any]]:
    lines = (directory / f"{run_id}.jsonl").read_text().splitlines()
    return [json.loads(text) for text in lines]


def model_nodes_entered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        event["payload"]
        for event in events
        if event["type"] == "node_enter" and event["payload"]["node_id"].startswith("llm:")
    ]


def asked(messages: Any) -> bool:
    """Whether ``messages`` hold the question and the instructions it was asked with."""
    said = conversation(messages)
    return any(m.role == "user" and QUESTION in m.text for m in said) and any(
        m.role == "system" and INSTRUCTIONS in m.text for m in said
    )


@pytest.mark.parametrize("framework", sorted(AGENTS))
@pytest.mark.parametrize("streamed", [False, True], ids=["start", "stream"])
async def test_a_waiting_call_shows_what_it_was_sent_and_keeps_it_when_canceled(
    tmp_path: Path, framework: str, streamed: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    if framework == "model_call" and streamed:
        pytest.skip("a plain agent is not streamed")
    model = Thinking()
    async with Manager(ledger_dir=tmp_path) as manager:
        begin = manager.stream if streamed else manager.start
        handle = begin(AGENTS[framework](model), QUESTION)
        await model.asked.wait()
        [entered] = model_nodes_entered(recorded(tmp_path, handle.run_id))
        assert entered["model"] in ("slow-heron", "SlowSdkModel")
        assert asked(entered["messages"])
        handle.cancel("the heron flew off")
        with pytest.raises(RunCanceled):
            await handle.result()
    events = recorded(tmp_path, handle.run_id)
    [call] = [event["payload"] for event in events if event["type"] == "llm_call"]
    assert call["status"] == "cancelled"
    assert call["model"] == entered["model"]
    assert call["messages"] == entered["messages"]
    assert "response" not in call
    [exited] = [
        event["payload"]
        for event in events
        if event["type"] == "node_exit" and event["payload"]["node_id"] == entered["node_id"]
    ]
    assert exited["success"] is False
    assert events[-1]["payload"]["status"] == "cancelled"
    capsys.readouterr()
    assert main(["show", str(tmp_path / f"{handle.run_id}.jsonl"), "--messages"]) == 0
    out = capsys.readouterr().out
    [canceled] = [line for line in out.splitlines() if "canceled before it answered" in line]
    assert "◆ model slow-heron" in canceled or "◆ model SlowSdkModel" in canceled
    assert QUESTION in out.partition(canceled)[2]
    assert INSTRUCTIONS in out.partition(canceled)[2]  # what it was sent, whole


@pytest.mark.parametrize("framework", sorted(AGENTS))
async def test_a_call_answered_says_what_it_was_sent_once_sent(
    tmp_path: Path, framework: str
) -> None:
    model = Thinking()
    model.answer.set()
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(AGENTS[framework](model), QUESTION)
        assert "South." in await handle.result()
    events = recorded(tmp_path, handle.run_id)
    [entered] = model_nodes_entered(events)
    [call] = [event["payload"] for event in events if event["type"] == "llm_call"]
    assert "status" not in call
    assert call["messages"] == entered["messages"]
    assert asked(entered["messages"])


@pytest.mark.parametrize("framework", sorted(AGENTS))
async def test_no_messages_when_content_is_not_recorded(tmp_path: Path, framework: str) -> None:
    model = Thinking()
    async with Manager(ledger_dir=tmp_path, record_content=False) as manager:
        handle = manager.start(AGENTS[framework](model), QUESTION)
        await model.asked.wait()
        handle.cancel()
        with pytest.raises(RunCanceled):
            await handle.result()
    text = (tmp_path / f"{handle.run_id}.jsonl").read_text()
    assert QUESTION not in text.split("\n", 1)[1]  # only the run's own input says it
    assert '"messages"' not in text


@pytest.mark.parametrize("streamed", [False, True], ids=["start", "stream"])
async def test_a_pydantic_ai_call_records_what_the_model_is_sent_whole(
    tmp_path: Path, streamed: bool
) -> None:
    """Its system prompts, static and dynamic instructions and the question: as the model
    receives them, once the request is sent (instructions are resolved only then)."""
    from run_manager.adapters.pydantic_ai_agent import messages_of

    model = Thinking()
    received: list[Any] = []

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        received.append(messages_of(messages))
        await model.think()
        return ModelResponse(parts=[TextPart("South.")])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        received.append(messages_of(messages))
        await model.think()
        yield "South."

    agent: Agent[None, str] = Agent(
        FunctionModel(answer, stream_function=stream, model_name="slow-heron"),
        name="birder",
        system_prompt="You watch birds.",
        instructions=INSTRUCTIONS,
    )

    @agent.instructions
    def season() -> str:
        return "It is autumn."

    async with Manager(ledger_dir=tmp_path) as manager:
        handle = (manager.stream if streamed else manager.start)(agent, QUESTION)
        await model.asked.wait()
        [entered] = model_nodes_entered(recorded(tmp_path, handle.run_id))
        handle.cancel()
        with pytest.raises(RunCanceled):
            await handle.result()
    assert received == [entered["messages"]]
    said = [m.text for m in conversation(entered["messages"])]
    assert all(text in "\n".join(said) for text in ("You watch birds.", INSTRUCTIONS, "autumn"))
