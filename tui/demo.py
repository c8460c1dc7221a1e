"""``runtop demo``: an embedded run manager with simulated agents, watched in-process.

The agents do what real ones do, slowly enough to watch: stream text and
reasoning, call tools of varying latency (one fails), wait on an approval,
and one runs long enough to cancel. Ledgers go to a temporary directory,
so ``runtop DIR`` replays the session afterwards.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Final

from run_manager import (
    AgentEvent,
    Complete,
    Content,
    Manager,
    Thinking,
    ToolCallEvent,
    approval,
    model_call,
    tool_call,
)

WORDS: Final = [
    "The",
    "textual",
    "docs",
    "describe",
    "mouse",
    "events",
    "in",
    "detail",
    "and",
    "the",
    "widget",
    "tree",
    "routes",
    "them",
    "to",
    "the",
    "widget",
    "under",
    "the",
    "pointer",
    "so",
    "a",
    "table",
    "can",
    "select",
    "a",
    "row",
    "on",
    "click",
    "without",
    "extra",
    "code",
]


class Researcher:
    """Streams reasoning and an answer around two tool calls."""

    name = "researcher"

    def __init__(self, pace: float) -> None:
        self.pace = pace

    async def run(self, input: str) -> str:
        return "".join([e.text async for e in self.run_stream(input) if isinstance(e, Content)])

    async def run_stream(self, input: str) -> AsyncIterator[AgentEvent]:
        for word in WORDS[:8]:
            yield Thinking(word + " ")
            await asyncio.sleep(0.05 * self.pace)
        for number, tool in enumerate(("web_search", "read_page")):
            call_id = f"call_{random.getrandbits(64):016x}"
            yield ToolCallEvent(id=call_id, name=tool, arguments={"query": input, "page": number})
            await asyncio.sleep(random.uniform(0.3, 1.5) * self.pace)
            result = f"{random.randint(2, 9)} results for {input!r}"
            yield ToolCallEvent(id=call_id, name=tool, status="completed", result=result)
        for word in WORDS:
            yield Content(word + " ")
            await asyncio.sleep(0.08 * self.pace)
        yield Complete(
            model="claude-sonnet",
            provider="anthropic",
            prompt_tokens=1800,
            output_tokens=len(WORDS) * 2,
            cost_usd=0.0082,
        )


class Deployer:
    """A deploy whose rollout check fails."""

    name = "deployer"

    def __init__(self, pace: float) -> None:
        self.pace = pace

    async def run(self, input: str) -> str:
        async with tool_call("shell", {"cmd": f"kubectl apply -f {input}.yaml"}) as call:
            await asyncio.sleep(0.4 * self.pace)
            call.output = "deployment.apps/billing configured"
        async with tool_call("shell", {"cmd": "kubectl rollout status deploy/billing"}):
            await asyncio.sleep(1.5 * self.pace)
            raise RuntimeError("timed out waiting for the condition")
        return "deployed"  # pragma: no cover - the rollout always fails here


class Migrator:
    """Waits for a human before migrating."""

    name = "migrator"

    def __init__(self, pace: float) -> None:
        self.pace = pace

    async def run(self, input: str) -> str:
        async with tool_call("plan_migration", {"target": input}) as call:
            await asyncio.sleep(0.3 * self.pace)
            call.output = {"steps": 12, "tables": ["users", "orders"]}
        decision = await approval(f"Apply migration {input} to production?", name="apply")
        if not decision.approved:
            return f"not applied: {decision.reason}"
        async with tool_call("apply_migration", {"target": input}) as call:
            await asyncio.sleep(0.8 * self.pace)
            call.output = "12 steps applied"
        return "migrated"


class Summarizer:
    """Summarises a long log, chunk by chunk: long enough to cancel."""

    name = "summarizer"

    def __init__(self, pace: float) -> None:
        self.pace = pace

    async def run(self, input: str) -> str:
        async with model_call("claude-haiku", provider="anthropic") as model:
            for number in range(600):
                model.chunk(f"part {number} of the summary. ")
                await asyncio.sleep(0.25 * self.pace)
            model.usage(prompt_tokens=52_000, output_tokens=4_000, cost_usd=0.061)
        return "summary done"


def demo_agents(pace: float = 1.0) -> list[object]:
    """The demo's agents, for ``runtop serve --agents tui.demo:demo_agents``."""
    return [Researcher(pace), Deployer(pace), Migrator(pace), Summarizer(pace)]


async def start_demo(manager: Manager, *, pace: float = 1.0, forever: bool = True) -> None:
    """Start the demo's runs, and new ones now and then while ``forever``."""
    agents = {agent.name: agent for agent in demo_agents(pace)}  # type: ignore[attr-defined]
    for agent in agents.values():
        manager.register(agent)
    manager.stream(agents["researcher"], "python tui frameworks with mouse support", detached=True)
    manager.start(agents["deployer"], "billing-staging", detached=True)
    manager.start(agents["migrator"], "v42", detached=True)
    manager.start(agents["summarizer"], "logs/2026-11-28.txt", detached=True)
    questions = ["textual datatable speed", "asyncio cancel semantics", "inotify limits"]
    weather: object | None = None
    if forever:
        # PydanticAI takes a second to import: in a thread, once the first screen is up.
        await asyncio.sleep(2 * pace)
        weather = await asyncio.to_thread(weather_agent, pace)
        if weather is not None:
            manager.register(weather)
            manager.stream(weather, "What's the weather in Paris?", detached=True)
    while forever:
        await asyncio.sleep(random.uniform(4, 9) * pace)
        if weather is not None and random.random() < 0.3:
            manager.stream(weather, random.choice(["Paris", "Oslo", "Lima"]), detached=True)
        else:
            manager.stream(agents["researcher"], random.choice(questions), detached=True)


def weather_agent(pace: float = 1.0) -> object | None:
    """A PydanticAI agent on PydanticAI's own test model; ``None`` without runtop[pydantic-ai]."""
    try:
        from pydantic_ai import Agent
        from pydantic_ai.models.test import TestModel
    except ImportError:
        return None
    agent = Agent(TestModel(), name="weather")

    @agent.tool_plain
    async def get_forecast(city: str) -> str:
        """The forecast for a city."""
        await asyncio.sleep(1.5 * pace)
        return f"sunny in {city}, 21 °C"

    return agent
