"""``runtop demo``: an embedded run manager with simulated agents, watched in-process.

The agents do what real ones do, slowly enough to watch: stream text and
reasoning, call tools of varying latency (one fails), wait on an approval
(denied, the migration fails: it was not applied), and one runs long enough
to cancel; a planner starts child runs, and the failed deploy is resumed (and
goes through); a translator on a $1.00 budget asks, a few seconds in,
whether to spend more (``a`` lets it go on, and it asks again; ``d`` cancels
it). What each thinks, calls its tools with and answers follows its input:
the demo is what a new user reads first, and it does not say what did not
happen. Ten agents run in the first minute (the tenth, on PydanticAI, when it
is installed). Ledgers go to a temporary directory (the source line
says which), so ``runtop DIR`` replays the session afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import textwrap
from collections.abc import AsyncIterator
from typing import Final

from run_manager import (
    Agent,
    AgentEvent,
    Budget,
    Complete,
    Content,
    Manager,
    ModelRequest,
    RunNotFound,
    RunNotResumable,
    Thinking,
    ToolCallEvent,
    approval,
    model_call,
    tool_call,
)

STARTING: Final = "The demo is starting its agents: their runs appear here in a moment."
"""What the runs table says until the demo's first run is on it."""

ANSWERS: Final = {
    "python tui frameworks with mouse support": "Textual and urwid both take mouse "
    "events: Textual routes each click to the widget under the pointer, so a table "
    "selects a row on click without extra code",
    "textual: widgets": "Textual widgets compose into a tree styled by CSS, each takes "
    "the mouse and keys that reach it and draws only the lines that changed",
    "textual: events": "The textual docs describe mouse events in detail and the widget "
    "tree routes them to the widget under the pointer so a table can select a row on "
    "click without extra code",
    "textual datatable speed": "A DataTable renders only the rows in view, so a hundred "
    "thousand rows scroll as fast as a hundred; adding them in one add_rows call is fastest",
    "asyncio cancel semantics": "Cancelling a task raises CancelledError at its next await; "
    "the task may catch it to clean up, and should raise it again",
    "inotify limits": "Each watch costs kernel memory: fs.inotify.max_user_watches caps "
    "them per user, and a watcher that runs out gets ENOSPC",
}
"""What the researcher answers each question the demo asks it (a planner's two children
ask one part each: two texts, not one twice)."""


def answer_words(question: str) -> list[str]:
    """The words the researcher streams for ``question``: its answer, or, to a question
    the demo has no answer to, that it found none (not another question's answer)."""
    text = ANSWERS.get(question.strip().lower())
    if text is None:
        text = f"The pages found on {question} did not agree: no answer worth quoting"
    return text.split(" ")


def page_url(question: str) -> str:
    """The page the researcher's search finds first for ``question``, to read next."""
    slug = "-".join("".join(c if c.isalnum() else " " for c in question.lower()).split())
    return f"https://example.com/{slug or 'search'}"


RESEARCHER_PROMPT: Final = (
    "You answer a question from the web: search, read the best page, and answer in a "
    "few sentences, quoting nothing you did not read."
)


class Researcher:
    """Thinks about the question, searches for it, reads the page found first, and streams
    an answer to it."""

    name = "researcher"

    def __init__(self, pace: float) -> None:
        self.pace = pace

    async def run(self, input: str) -> str:
        return "".join([e.text async for e in self.run_stream(input) if isinstance(e, Content)])

    async def run_stream(self, input: str) -> AsyncIterator[AgentEvent]:
        asked: list[dict[str, object]] = [
            {"role": "system", "content": RESEARCHER_PROMPT},
            {"role": "user", "content": input},
        ]
        yield ModelRequest(model="claude-sonnet", messages=list(asked))
        await asyncio.sleep(0.3 * self.pace)
        thought = f"Asked about {input}. A search first, then the best page, read whole."
        for word in thought.split(" "):
            yield Thinking(word + " ")
            await asyncio.sleep(0.05 * self.pace)
        url = page_url(input)
        found = random.randint(2, 9)
        steps = [
            ("web_search", {"query": input}, {"results": found, "first": url}),
            ("read_page", {"url": url}, f"{random.randint(800, 4000)} words read from {url}"),
        ]
        calls = [(f"call_{random.getrandbits(64):016x}", *step) for step in steps]
        asked.append(
            {
                "role": "assistant",
                "content": [{"type": "thinking", "text": thought}]
                + [
                    {"type": "tool_call", "id": call_id, "name": tool, "arguments": arguments}
                    for call_id, tool, arguments, _ in calls
                ],
            }
        )
        yield Complete(
            model="claude-sonnet",
            provider="anthropic",
            prompt_tokens=600,
            output_tokens=40,
            cost_usd=0.0024,
            response=asked[-1:],
        )
        for call_id, tool, arguments, result in calls:
            yield ToolCallEvent(id=call_id, name=tool, arguments=arguments)
            await asyncio.sleep(random.uniform(0.3, 1.5) * self.pace)
            yield ToolCallEvent(id=call_id, name=tool, status="completed", result=result)
            output = result if isinstance(result, str) else json.dumps(result)
            answered = {"type": "tool_result", "id": call_id, "name": tool, "output": output}
            asked.append({"role": "tool", "content": [answered]})
        yield ModelRequest(model="claude-sonnet", messages=list(asked))
        await asyncio.sleep(0.4 * self.pace)
        words = answer_words(input)
        for number, word in enumerate(words):
            yield Content(word if number == len(words) - 1 else word + " ")
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
            call.output = f"deployment.apps/{input} configured"
        async with tool_call("shell", {"cmd": f"kubectl rollout status deploy/{input}"}) as call:
            await asyncio.sleep((1.5 if first else 0.7) * self.pace)
            if first:
                raise RuntimeError("timed out waiting for the condition")
            call.output = f'deployment "{input}" successfully rolled out'
        return f"deployed {input}"


class Migrator:
    """Waits for a human before migrating; denied, it fails, saying why (the migration was
    not applied: a run that succeeded would say it was done)."""

    name = "migrator"

    def __init__(self, pace: float) -> None:
        self.pace = pace

    async def run(self, input: str) -> str:
        async with tool_call("plan_migration", {"target": input}) as call:
            await asyncio.sleep(0.3 * self.pace)
            call.output = {"steps": 12, "tables": ["users", "orders"]}
        decision = await approval(f"Apply migration {input} to production?", name="apply")
        if not decision.approved:
            raise RuntimeError(f"migration denied: {decision.reason}")
        async with tool_call("apply_migration", {"target": input}) as call:
            await asyncio.sleep(0.8 * self.pace)
            call.output = "12 steps applied"
        return f"migrated to {input}"


class Summarizer:
    """Summarises a long log, chunk by chunk: long enough to cancel."""

    name = "summarizer"
    CHUNKS: Final = 600

    def __init__(self, pace: float) -> None:
        self.pace = pace

    async def run(self, input: str) -> str:
        counts = random.Random(input)  # the same log says the same each time it is read
        errors = 0
        asked = [
            {"role": "system", "content": "Summarise the log part by part: its errors."},
            {"role": "user", "content": f"The log: {input}"},
        ]
        async with model_call("claude-haiku", provider="anthropic", messages=asked) as model:
            model.chunk(f"{input}, read in {self.CHUNKS} parts. ")
            for number in range(self.CHUNKS):
                found = counts.choice([0, 0, 0, 1, 2])
                errors += found
                said = f"{found} error{'' if found == 1 else 's'}" if found else "no errors"
                model.chunk(f"Part {number + 1}: {said}. ")
                # What was spent so far, so that a run cancelled as a runaway says what it cost.
                written = 4_000 * (number + 1) // self.CHUNKS
                model.usage(
                    prompt_tokens=52_000, output_tokens=written, cost_usd=0.0416 + written * 4e-6
                )
                await asyncio.sleep(0.25 * self.pace)
        return f"{input}: {errors} errors in {self.CHUNKS} parts"


class Classifier:
    """Labels a ticket with one quick model call: the label of the first of its
    :attr:`LABELS` words the ticket says, else :attr:`OTHERWISE`."""

    name = "classifier"
    LABELS: tuple[tuple[str, str], ...] = (
        ("charged", "billing"),
        ("refund", "billing"),
        ("invoice", "billing"),
        ("password", "account"),
        ("login", "account"),
    )
    OTHERWISE = "other"

    def __init__(self, pace: float) -> None:
        self.pace = pace

    def label(self, input: str) -> str:
        said = input.lower()
        return next((label for word, label in self.LABELS if word in said), self.OTHERWISE)

    async def run(self, input: str) -> str:
        label = self.label(input)
        choices = ", ".join(sorted({label for _, label in self.LABELS} | {self.OTHERWISE}))
        asked = [
            {"role": "system", "content": f"Answer with one label: {choices}."},
            {"role": "user", "content": input},
        ]
        async with model_call("claude-haiku", provider="anthropic", messages=asked) as model:
            await asyncio.sleep(0.6 * self.pace)
            model.chunk(label)
            model.usage(prompt_tokens=420, output_tokens=3, cost_usd=0.0004)
        return label


class Triager(Classifier):
    """Sorts an alert by urgency (the classifier's model call, its own words)."""

    name = "triager"
    LABELS = (
        ("down", "urgent"),
        ("disk 9", "urgent"),
        ("5xx", "urgent"),
        ("disk", "soon"),
        ("latency", "soon"),
    )
    OTHERWISE = "routine"


class Reviewer:
    """Reads a diff with two tools and writes a review."""

    name = "reviewer"

    def __init__(self, pace: float) -> None:
        self.pace = pace

    async def run(self, input: str) -> str:
        async with tool_call("git_diff", {"ref": input}) as diff:
            await asyncio.sleep(0.5 * self.pace)
            diff.output = "3 files changed, 41 insertions(+), 7 deletions(-)"
        async with tool_call("run_tests", {"path": "tests/"}) as tests:
            await asyncio.sleep(2.0 * self.pace)
            tests.output = {"passed": 212, "failed": 0}
        asked = [
            {"role": "system", "content": "Review the change: say whether it can be merged."},
            {
                "role": "user",
                "content": f"The diff of {input}: {diff.output}. Tests: {json.dumps(tests.output)}",
            },
        ]
        async with model_call("claude-sonnet", provider="anthropic", messages=asked) as model:
            for word in [
                input,
                "looks",
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
        return f"{input} approved"


class Planner:
    """Splits a question in two and hands each half to a child run."""

    name = "planner"

    def __init__(self, pace: float, manager: Manager | None = None) -> None:
        self.pace = pace
        self.manager = manager

    async def run(self, input: str) -> str:
        asked = [{"role": "user", "content": f"Split into two questions: {input}"}]
        async with model_call("claude-sonnet", provider="anthropic", messages=asked) as model:
            model.chunk(f"Two parts of {input}: its widgets, then its events.")
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


class Translator:
    """Translates a manual chapter by chapter, a model call of about $0.10 each: on
    :data:`TRANSLATION_BUDGET` it asks to go on at $0.80 (eight chapters in), and again
    at $1.60 when let; it is done at $2.00."""

    name = "translator"
    CHAPTERS: Final = 20

    def __init__(self, pace: float) -> None:
        self.pace = pace

    async def run(self, input: str) -> str:
        for number in range(1, self.CHAPTERS + 1):
            asked = [
                {
                    "role": "system",
                    "content": "Translate the chapter into French, keeping its markup.",
                },
                {"role": "user", "content": f"{input}, chapter {number} of {self.CHAPTERS}."},
            ]
            async with model_call("claude-sonnet", provider="anthropic", messages=asked) as model:
                model.chunk(f"Chapitre {number}. ")
                await asyncio.sleep(0.5 * self.pace)
                model.chunk(f"{input}, chapitre {number}, traduit.")
                model.usage(prompt_tokens=21_000, output_tokens=2_500, cost_usd=0.10)
        return f"{input}: {self.CHAPTERS} chapters translated"


TRANSLATION_BUDGET: Final = Budget(cost_usd=1.00)
"""The translator's budget in the demo: it asks at $0.80, a few seconds in."""


def demo_agents(pace: float = 1.0, manager: Manager | None = None) -> list[Agent]:
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
        Translator(pace),
    ]


async def start_demo(manager: Manager, *, pace: float = 1.0, forever: bool = True) -> None:
    """Start the demo's runs, and new ones now and then while ``forever``."""
    agents = {agent.name: agent for agent in demo_agents(pace, manager)}
    for agent in agents.values():
        manager.register(agent)
    manager.stream(agents["researcher"], "python tui frameworks with mouse support", detached=True)
    deploy = manager.start(agents["deployer"], "billing-staging", detached=True)
    manager.start(agents["migrator"], "v42", detached=True)
    manager.start(agents["summarizer"], "logs/2026-11-28.txt", detached=True)
    manager.start(agents["planner"], "textual", detached=True)
    manager.start(agents["translator"], "the user guide", budget=TRANSLATION_BUDGET, detached=True)
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
            city = random.choice(["Paris", "Oslo", "Lima"])
            manager.stream(weather, f"What's the weather in {city}?", detached=True)
        else:
            manager.stream(agents["researcher"], random.choice(questions), detached=True)


FORECASTS: Final = {"paris": "sunny, 21 °C", "oslo": "light snow, -3 °C", "lima": "overcast, 18 °C"}
"""What the weather agent's forecast tool says of each city it knows."""


def city_asked(question: str) -> str:
    """The city a weather question names: ``Paris`` of "What's the weather in Paris?"."""
    named = re.search(r"\bin ([^?.!]+)", question)
    return (named.group(1) if named else question).strip(" ?.!") or "nowhere"


def forecast(city: str) -> str:
    return FORECASTS.get(city.lower(), f"no forecast for {city}")


def weather_agent(pace: float = 1.0) -> object | None:
    """A PydanticAI agent on a PydanticAI function model that asks the forecast of the city
    its question names (PydanticAI's test model asked it of ``a``: the demo said "sunny in
    a" to "What's the weather in Paris?"); ``None`` without runtop-agents[pydantic-ai]."""
    try:
        from pydantic_ai import Agent
        from pydantic_ai.messages import (
            ModelMessage,
            ModelRequest,
            ModelResponse,
            TextPart,
            ToolCallPart,
            ToolReturnPart,
            UserPromptPart,
        )
        from pydantic_ai.models.function import (
            AgentInfo,
            DeltaToolCall,
            DeltaToolCalls,
            FunctionModel,
        )
    except ImportError:
        return None
    import pydantic_ai

    # The app owns the terminal: PydanticAI's first-run banner, written to a terminal's
    # stderr, would be drawn over the demo's screen.
    pydantic_ai.BANNER_ENABLED = False

    def asked(messages: list[ModelMessage]) -> tuple[str, str | None]:
        """The city asked about, and the forecast tool's answer once it gave one."""
        question, answer = "", None
        for message in messages:
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    question = part.content
                elif isinstance(part, ToolReturnPart):
                    answer = str(part.content)
        return city_asked(question), answer

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        city, answer = asked(messages)
        if answer is None:
            return ModelResponse(parts=[ToolCallPart("get_forecast", {"city": city})])
        return ModelResponse(parts=[TextPart(f"{city}: {answer}.")])

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        city, answer = asked(messages)
        if answer is None:
            arguments = json.dumps({"city": city})
            yield {0: DeltaToolCall(name="get_forecast", json_args=arguments)}
            return
        words = f"{city}: {answer}.".split(" ")
        for number, word in enumerate(words):
            await asyncio.sleep(0.05 * pace)
            yield word if number == len(words) - 1 else word + " "

    model = FunctionModel(reply, stream_function=stream, model_name="forecaster")
    agent = Agent(model, name="weather")

    @agent.tool_plain
    async def get_forecast(city: str) -> str:
        """The forecast for a city."""
        await asyncio.sleep(1.5 * pace)
        return forecast(city)

    return agent
