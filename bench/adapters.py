"""The framework adapters: their cancel, and what recording costs a model call.

    .venv/bin/python bench/adapters.py [--runs 200] [--calls-runs 30]

**Cancel**: from ``handle.cancel()`` to the running tool stopping.

A PydanticAI agent (its ``TestModel``) and an OpenAI Agents SDK agent (a
scripted model) each call a tool that waits forever; once the tool is
running, the run is cancelled. Two times per run: until the tool's
``CancelledError`` is raised inside it, and until ``handle.wait()``
returns with the run canceled (its ledger's ``run_completed`` written).
Medians and p99 over ``--runs`` runs; beside them, in the same process,
a plain async agent doing the same (the floor: the manager's own path).
The target is 10 ms.

**Per model call**: each framework's agent on an instant model asks it
:data:`CALLS` times (a tool call each time, then the answer); the run's
wall time through the manager (content recorded, and not) against the
same agent run by the framework alone, divided by the model calls: what
the adapter and the ledger add to each call. Medians over ``--calls-runs``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

Tool = Callable[..., Any]
DATA = Path(__file__).resolve().parent / "data"
"""Where the runs' ledgers go (not /tmp: creating a file there is slow on these machines)."""


def waiting_tool(entered: asyncio.Event, stopped: list[float]) -> Tool:
    async def wait_forever(seconds: int) -> str:
        """Waits."""
        entered.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            stopped.append(time.perf_counter())
            raise
        return "never"

    return wait_forever


def plain_agent(tool: Tool) -> object:
    class Plain:
        name = "plain"

        async def run(self, input: str) -> str:
            from run_manager import tool_call

            async with tool_call("wait_forever", {"seconds": 3600}) as call:
                call.output = await tool(3600)
            return "never"

    return Plain()


def pydantic_ai_agent(tool: Tool) -> object:
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel

    agent = Agent(TestModel(), name="waiter")
    agent.tool_plain(tool)
    return agent


def openai_agents_agent(tool: Tool) -> object:
    from agents import Agent, function_tool, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall

    set_tracing_disabled(True)

    class CallTheTool(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            call = ResponseFunctionToolCall(
                id="fc_1",
                call_id="c1",
                name="wait_forever",
                arguments=json.dumps({"seconds": 3600}),
                type="function_call",
                status="completed",
            )
            return ModelResponse(output=[call], usage=Usage(requests=1), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    return Agent(name="waiter", model=CallTheTool(), tools=[function_tool(tool)])


async def measure(make: Callable[[Tool], object], runs: int) -> tuple[list[float], list[float]]:
    from run_manager import Manager

    to_tool: list[float] = []
    to_end: list[float] = []
    with tempfile.TemporaryDirectory(dir=DATA) as directory:
        async with Manager(ledger_dir=directory, retained_runs=0) as manager:
            for _ in range(runs):
                entered = asyncio.Event()
                stopped: list[float] = []
                handle = manager.start(make(waiting_tool(entered, stopped)), "wait")
                await asyncio.wait_for(entered.wait(), 10)
                began = time.perf_counter()
                handle.cancel("bench")
                info = await handle.wait()
                ended = time.perf_counter()
                assert info.status.value == "canceled", info
                assert stopped, "the tool never saw the cancel"
                to_tool.append((stopped[0] - began) * 1000)
                to_end.append((ended - began) * 1000)
    return to_tool, to_end


CALLS = 9
"""Model calls per run of the per-call measure (8 tool calls, then the answer: the Agents
SDK stops a run at 10 turns)."""


def looping_pydantic_ai() -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        asked = (len(messages) - 1) // 2
        if asked < CALLS - 1:
            return ModelResponse(parts=[ToolCallPart("count", {"n": asked}, f"c{asked}")])
        return ModelResponse(parts=[TextPart("counted")])

    agent = Agent(FunctionModel(answer), name="counter", system_prompt="Count.")

    @agent.tool_plain
    def count(n: int) -> str:
        return f"counted {n}"

    return agent


def looping_openai_agents() -> Any:
    from agents import Agent, function_tool, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    set_tracing_disabled(True)

    class Counting(Model):
        def __init__(self) -> None:
            self.asked = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            self.asked += 1
            usage = Usage(requests=1, input_tokens=10, output_tokens=2, total_tokens=12)
            if self.asked < CALLS:
                call = ResponseFunctionToolCall(
                    id=f"fc_{self.asked}",
                    call_id=f"c{self.asked}",
                    name="count",
                    arguments=json.dumps({"n": self.asked}),
                    type="function_call",
                    status="completed",
                )
                return ModelResponse(output=[call], usage=usage, response_id=None)
            text = ResponseOutputText(text="counted", type="output_text", annotations=[])
            said = ResponseOutputMessage(
                id="m", content=[text], role="assistant", status="completed", type="message"
            )
            return ModelResponse(output=[said], usage=usage, response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    def count(n: int) -> str:
        """Counts."""
        return f"counted {n}"

    return Agent(name="counter", model=Counting(), tools=[count])


async def per_call(make: Callable[[], Any], runs: int) -> dict[str, float]:
    """Median CPU milliseconds per model call, alone and through the manager (CPU time, not
    wall: on a shared machine the wall time is mostly other processes')."""
    from run_manager import Manager

    async def alone() -> None:
        agent = make()
        if hasattr(agent, "iter"):  # PydanticAI
            await agent.run("count")
        else:
            from agents import Runner

            await Runner.run(agent, "count")

    async def managed(manager: Any) -> None:
        await manager.start(make(), "count").result()

    timings: dict[str, list[float]] = {"alone": [], "content": [], "no content": []}
    with tempfile.TemporaryDirectory(dir=DATA) as directory:
        managers: dict[str, Any] = {}
        for label, content in (("content", True), ("no content", False)):
            try:
                managers[label] = Manager(
                    ledger_dir=directory, retained_runs=0, record_content=content
                )
            except TypeError:  # a runtop before record_content: it records none
                managers[label] = Manager(ledger_dir=directory, retained_runs=0)
        for _ in range(runs):
            began = time.process_time()
            await alone()
            timings["alone"].append(time.process_time() - began)
            for label, manager in managers.items():
                began = time.process_time()
                await managed(manager)
                timings[label].append(time.process_time() - began)
        for manager in managers.values():
            await manager.close()
    return {label: statistics.median(values) * 1000 / CALLS for label, values in timings.items()}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--calls-runs", type=int, default=30)
    parser.add_argument("--only-calls", action="store_true", help="only the per-call measure")
    args = parser.parse_args()
    DATA.mkdir(exist_ok=True)
    for label, looping in (
        ("PydanticAI", looping_pydantic_ai),
        ("OpenAI Agents SDK", looping_openai_agents),
    ):
        ms = asyncio.run(per_call(looping, args.calls_runs))
        print(
            f"{label}: per model call {ms['alone']:.3f} CPU ms alone; through the manager "
            f"+{ms['content'] - ms['alone']:.3f} ms recording content, "
            f"+{ms['no content'] - ms['alone']:.3f} ms without"
        )
    if args.only_calls:
        return
    kinds = {
        "plain async agent (floor)": plain_agent,
        "PydanticAI": pydantic_ai_agent,
        "OpenAI Agents SDK": openai_agents_agent,
    }
    for label, make in kinds.items():
        to_tool, to_end = asyncio.run(measure(make, args.runs))
        print(
            f"{label}: cancel to the tool's CancelledError median "
            f"{statistics.median(to_tool):.3f} ms (p99 {percentile(to_tool, 0.99):.3f}); "
            f"to canceled median {statistics.median(to_end):.3f} ms "
            f"(p99 {percentile(to_end, 0.99):.3f}); target < 10 ms"
        )


if __name__ == "__main__":
    main()
