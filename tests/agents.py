"""Small real agents for the run manager's tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

from run_manager import (
    AgentError,
    AgentEvent,
    CancelToken,
    Complete,
    Content,
    Thinking,
    ToolCallEvent,
    approval,
    current_run_id,
    model_call,
    tool_call,
)


class Echo:
    """Answers at once, upper-cased, after one recorded tool call."""

    name = "echo"

    async def run(self, input: str) -> str:
        async with tool_call("lookup", {"q": input}) as call:
            call.output = f"found {input}"
        return input.upper()


class Sleeper:
    """Sleeps ``input`` seconds (an async agent that honours cancellation)."""

    name = "sleeper"

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def run(self, input: str) -> str:
        self.started.set()
        await asyncio.sleep(float(input))
        return "rested"


class Failing:
    name = "failing"

    async def run(self, input: str) -> str:
        raise RuntimeError(f"cannot do {input}")


class WhoAmI:
    name = "whoami"

    async def run(self, input: str) -> str:
        return current_run_id() or "nobody"


class Streamer:
    """Streams reasoning, text, a tool call and usage; fails when asked to."""

    name = "streamer"

    async def run(self, input: str) -> str:
        return "".join([e.text async for e in self.run_stream(input) if isinstance(e, Content)])

    async def run_stream(self, input: str) -> AsyncIterator[AgentEvent]:
        yield Thinking("let me think")
        yield Content("Hello, ")
        yield ToolCallEvent(id="call_1", name="search", arguments={"q": input})
        await asyncio.sleep(0.01)
        yield ToolCallEvent(id="call_1", name="search", status="completed", result="3 hits")
        if input == "fail":
            yield AgentError("the model refused")
            return
        yield Content("world")
        yield Complete(model="m-1", provider="p", prompt_tokens=10, output_tokens=5, cost_usd=0.01)


class Gatekeeper:
    """Waits on an approval gate, then reports the decision."""

    name = "gatekeeper"

    async def run(self, input: str) -> str:
        async with model_call("m-1") as model:
            model.chunk("asking")
            model.usage(prompt_tokens=1, output_tokens=1)
        decision = await approval(f"may I {input}?", name="deploy", timeout_seconds=None)
        return "approved" if decision.approved else f"denied: {decision.reason}"


def stubborn_worker(input: str, token: CancelToken) -> str:
    """A synchronous agent that checks its token only every ``input`` seconds."""
    while True:
        time.sleep(float(input))  # busy with something that cannot be interrupted
        token.raise_if_cancelled()


def counting_worker(input: str) -> str:
    """A synchronous agent that records tool calls from its thread."""
    for number in range(int(input)):
        with tool_call("count", {"n": number}) as call:
            call.output = number
    return f"counted {input}"


class Chatty:
    """Emits many events fast (for slow-subscriber tests)."""

    name = "chatty"

    async def run(self, input: str) -> str:
        async with model_call("m") as model:
            for number in range(int(input)):
                model.chunk(f"chunk {number} ")
        return "done"


class Stepper:
    """A run the test drives step by step: a tool call, then a model call, each behind a gate."""

    name = "stepper"

    def __init__(self, *, fail: bool = False) -> None:
        self.gate: asyncio.Queue[None] = asyncio.Queue()
        self.fail = fail

    def open_all(self) -> None:
        for _ in range(4):
            self.gate.put_nowait(None)

    async def run(self, input: str) -> str:
        async with tool_call("fetch", {"url": input}) as call:
            await self.gate.get()
            call.output = "<html>page</html>"
        async with model_call("m-1", provider="p") as model:
            model.chunk("reading the page")
            await self.gate.get()
            model.usage(prompt_tokens=100, output_tokens=20, cost_usd=0.25)
        if self.fail:
            raise RuntimeError("the page made no sense")
        return "summary"


def slow_to_stop(input: str, token: CancelToken) -> str:
    """A synchronous agent that notices a cancel at once but takes ``input`` seconds to stop."""
    while not token.wait(0.05):
        pass
    time.sleep(float(input))  # cleaning up: the run is cancelling, not yet canceled
    token.raise_if_cancelled()
    return "unreachable"
