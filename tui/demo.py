"""``runtop demo``: an embedded run manager with simulated agents, watched in-process.

The agents do what real ones do, slowly enough to watch: stream text and
reasoning, call tools of varying latency (one fails), wait on an approval,
and one runs long enough to cancel; a planner starts child runs, and the
failed deploy is resumed (and goes through). Eight agents run in the first
minute. Ledgers go to a temporary directory (the source line says which), so
``runtop DIR`` replays the session afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import textwrap
from collections.abc import AsyncIterator
from typing import Final

from run_manager import (
    AgentEvent,
    Complete,
    Content,
    Manager,
    RunNotFound,
    RunNotResumable,
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

STARTING: Final = "The demo is starting its agents: their runs appear here in a moment."
"""What the runs table says until the demo's first run is on it."""

ANSWERS: Final = {
    "widgets": "Textual widgets compose into a tree styled by CSS and each one draws "
    "only the lines that changed",
    "events": " ".join(WORDS),
}
"""What the researcher answers a question about one part (a planner's child run asks one);
anything else gets the mouse events answer."""


def answer_words(question: str) -> list[str]:
    """The words the researcher streams for ``question``: a planner's two children answer
    two parts, not the same text twice."""
    for part, text in ANSWERS.items():
        if question.endswith(f": {part}"):
            return text.split(" ")
    return WORDS


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
        words = answer_words(input)
        for word in words:
            yield Content(word + " ")
            await asyncio.sleep(0.08 * self.pace)
        yield Complete(
            model="claude-sonnet",
            provider="anthropic",
            prompt_tokens=1800,
            output_tokens=len(words) * 2,
            cost_usd=0.0082,
        )


class Deployer:
    """A deploy whose rollout check times out the first time, and passes when resumed."""

    name = "deployer"

    def __init__(self, pace: float) -> None:
        self.pace = pace
        self.tried: set[str] = set()

    async def run(self, input: str) -> str:
        first = input not in self.tried
        self.tried.add(input)
        async with tool_call("shell", {"cmd": f"kubectl apply -f {input}.yaml"}) as call:
            await asyncio.sleep(0.4 * self.pace)
            call.output = "deployment.apps/billing configured"
        async with tool_call("shell", {"cmd": "kubectl rollout status deploy/billing"}) as call:
            await asyncio.sleep((1.5 if first else 0.7) * self.pace)
            if first:
                raise RuntimeError("timed out waiting for the condition")
            call.output = 'deployment "billing" successfully rolled out'
        return "deployed"


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


class Classifier:
    """Labels a ticket with one quick model call."""

    name = "classifier"

    def __init__(self, pace: float) -> None:
        self.pace = pace

    async def run(self, input: str) -> str:
        async with model_call("claude-haiku", provider="anthropic") as model:
            await asyncio.sleep(0.6 * self.pace)
            model.chunk("billing")
            model.usage(prompt_tokens=420, output_tokens=3, cost_usd=0.0004)
        return "billing"


class Triager(Classifier):
    """Sorts an alert by urgency (the classifier's model call, another agent's name)."""

    name = "triager"


class Reviewer:
    """Reads a diff with two tools and writes a review."""

    name = "reviewer"

    def __init__(self, pace: float) -> None:
        self.pace = pace

    async def run(self, input: str) -> str:
        async with tool_call("git_diff", {"ref": input}) as call:
            await asyncio.sleep(0.5 * self.pace)
            call.output = "3 files changed, 41 insertions(+), 7 deletions(-)"
        async with tool_call("run_tests", {"path": "tests/"}) as call:
            await asyncio.sleep(2.0 * self.pace)
            call.output = {"passed": 212, "failed": 0}
        async with model_call("claude-sonnet", provider="anthropic") as model:
            for word in [
                "Looks",
                "good:",
                "the",
                "new",
                "cache",
                "is",
                "bounded",
                "and",
                "tested.",
            ]:
                model.chunk(word + " ")
                await asyncio.sleep(0.1 * self.pace)
            model.usage(prompt_tokens=3100, output_tokens=60, cost_usd=0.011)
        return "approved"


class Planner:
    """Splits a question in two and hands each half to a child run."""

    name = "planner"

    def __init__(self, pace: float, manager: Manager | None = None) -> None:
        self.pace = pace
        self.manager = manager

    async def run(self, input: str) -> str:
        async with model_call("claude-sonnet", provider="anthropic") as model:
            model.chunk("Two parts: the widgets, then the events.")
            await asyncio.sleep(0.4 * self.pace)
            model.usage(prompt_tokens=900, output_tokens=12, cost_usd=0.003)
        if self.manager is None:
            return "planned"
        researcher = Researcher(self.pace)
        parts = ("widgets", "events")
        children = [self.manager.stream(researcher, f"{input}: {part}") for part in parts]
        answers = [await child.result() for child in children]
        return " / ".join(
            f"{part}: {textwrap.shorten(str(answer), 40, placeholder='…')}"
            for part, answer in zip(parts, answers, strict=True)
        )


def demo_agents(pace: float = 1.0, manager: Manager | None = None) -> list[object]:
    """The demo's agents, for ``runtop serve --agents tui.demo:demo_agents``."""
    return [
        Researcher(pace),
        Deployer(pace),
        Migrator(pace),
        Summarizer(pace),
        Classifier(pace),
        Triager(pace),
        Reviewer(pace),
        Planner(pace, manager),
    ]


async def start_demo(manager: Manager, *, pace: float = 1.0, forever: bool = True) -> None:
    """Start the demo's runs, and new ones now and then while ``forever``."""
    agents = {agent.name: agent for agent in demo_agents(pace, manager)}  # type: ignore[attr-defined]
    for agent in agents.values():
        manager.register(agent)
    manager.stream(agents["researcher"], "python tui frameworks with mouse support", detached=True)
    deploy = manager.start(agents["deployer"], "billing-staging", detached=True)
    manager.start(agents["migrator"], "v42", detached=True)
    manager.start(agents["summarizer"], "logs/2026-11-28.txt", detached=True)
    manager.start(agents["planner"], "textual", detached=True)
    later = [
        (agents["classifier"], "ticket 4512: charged twice"),
        (agents["triager"], "alert: disk 91% on db-2"),
        (agents["reviewer"], "pr-318"),
    ]
    for agent, work in later:
        await asyncio.sleep(2 * pace)
        manager.start(agent, work, detached=True)
    await deploy.wait()
    with contextlib.suppress(RunNotFound, RunNotResumable):  # a retention of 0, say
        manager.resume(deploy.run_id)  # the failed deploy, tried again: it goes through
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
