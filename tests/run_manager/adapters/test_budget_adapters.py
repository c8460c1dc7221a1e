"""Budgets on framework agents: PydanticAI with a model that reports its cost, and the
OpenAI Agents SDK, whose cost runtop estimates from its tokens."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("agents")

from agents import Agent as SdkAgent
from agents import function_tool
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from run_manager import Budget, Manager, RunCanceled
from tests.budget_agents import asked, events, model_calls, question_of, until
from tests.run_manager.adapters.test_openai_agents import ScriptedModel, call

pytestmark = pytest.mark.timeout(30)


def costly(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Asks for the ``note`` tool every time: 20,000 output tokens of gpt-4o, $0.20."""
    return ModelResponse(
        parts=[ToolCallPart("note", {"n": len(messages)})],
        usage=RequestUsage(input_tokens=0, output_tokens=20_000),
        provider_name="openai",
    )


def spending_agent() -> Agent[None, str]:
    agent = Agent(FunctionModel(costly, model_name="gpt-4o"), name="spender")

    @agent.tool_plain
    def note(n: int) -> str:
        return "noted"

    return agent


async def test_a_pydantic_ai_run_asks_goes_on_asks_again_and_stops_when_denied(
    tmp_path: Path,
) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(spending_agent(), "go", budget=Budget(cost_usd=1.00))
        assert (
            await question_of(manager, handle.run_id) == "budget: $0.80 of $1.00 spent; continue?"
        )
        costs = [
            line["payload"]["cost_usd"] for line in events(handle.info().ledger_path, "llm_call")
        ]
        assert costs == pytest.approx([0.2] * 4)  # PydanticAI's prices, as it reports them
        manager.approve(handle.run_id, None, approved=True)
        await until(lambda: len(asked(handle.info().ledger_path)) == 2)
        assert asked(handle.info().ledger_path)[1] == "budget: $1.60 of $2.00 spent; continue?"
        await until(lambda: handle.info().pending_approvals)
        manager.approve(handle.run_id, None, approved=False)
        with pytest.raises(RunCanceled, match=r"budget: \$1.60 of \$2.00 spent; not approved"):
            await handle.result()
    assert model_calls(handle) == 8


async def test_a_pydantic_ai_run_at_its_limit_stops_before_its_next_model_call(
    tmp_path: Path,
) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        budget = Budget(cost_usd=1.00, ask_at=None)
        handle = manager.start(spending_agent(), "go", budget=budget)
        with pytest.raises(RunCanceled, match=r"budget: \$1.00 of \$1.00 spent"):
            await handle.result()
    lines = events(handle.info().ledger_path)
    entered = [
        e for e in lines if e["type"] == "node_enter" and e["payload"]["node_id"][:4] == "llm:"
    ]
    assert len(entered) == 5  # $1.00 after five calls: the sixth was never sent
    assert all("status" not in e["payload"] for e in lines if e["type"] == "llm_call")


async def endless_words(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    for _ in range(10_000):
        yield "word "
        await asyncio.sleep(0)


async def test_a_streamed_pydantic_ai_call_is_stopped_while_it_streams(tmp_path: Path) -> None:
    agent = Agent(FunctionModel(stream_function=endless_words), name="talker")
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.stream(agent, "go", budget=Budget(tokens=300, ask_at=None))
        with pytest.raises(RunCanceled, match=r"budget: \d+ of 300 tokens spent"):
            await handle.result()
    chunks = events(handle.info().ledger_path, "llm_chunk")
    assert 0 < len(chunks) < 1000  # stopped mid-answer, not after it


class Gpt4o(ScriptedModel):
    """A scripted model named as a priced one: its calls' cost is estimated from tokens."""

    model = "gpt-4o"


def sdk_agent() -> SdkAgent[Any]:
    @function_tool
    def note(n: int) -> str:
        """Note a number."""
        return "noted"

    turns = [[call("note", {"n": n}, f"c{n}")] for n in range(10)]
    return SdkAgent(
        name="spender", model=Gpt4o(*turns, input_tokens=0, output_tokens=20_000), tools=[note]
    )


@pytest.mark.parametrize("streamed", [False, True])
async def test_an_agents_sdk_run_asks_goes_on_asks_again_and_stops_when_denied(
    tmp_path: Path, streamed: bool
) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        begin = manager.stream if streamed else manager.start
        handle = begin(sdk_agent(), "go", budget=Budget(cost_usd=1.00))
        assert (
            await question_of(manager, handle.run_id) == "budget: $0.80 of $1.00 spent; continue?"
        )
        llm_calls = events(handle.info().ledger_path, "llm_call")
        assert [c["payload"].get("cost_estimated") for c in llm_calls] == [True] * 4
        manager.approve(handle.run_id, None, approved=True)
        await until(lambda: len(asked(handle.info().ledger_path)) == 2)
        await until(lambda: handle.info().pending_approvals)
        manager.approve(handle.run_id, None, approved=False, reason="too dear")
        with pytest.raises(RunCanceled, match=r"budget: \$1.60 of \$2.00 spent; not approved"):
            await handle.result()
    assert model_calls(handle) == 8
