"""Agents for the Ray executor's tests: they run in Ray workers, so they report through files."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from run_manager import model_call, tool_call


class WorkerPid:
    """Answers with the pid of the process it ran in, after one recorded tool call."""

    name = "worker_pid"

    async def run(self, input: str) -> str:
        async with tool_call("getpid", {"asked": input}) as call:
            call.output = os.getpid()
        return str(os.getpid())


class Holder:
    """Holds a tool call open until cancelled; its ``finally`` writes where and why it stopped.

    The input is the path of that file (a real file the test reads back).
    """

    name = "holder"

    async def run(self, input: str) -> str:
        stopped_by = "nothing"
        try:
            async with tool_call("wait", {"marker": input}):
                await asyncio.sleep(3600)
        except asyncio.CancelledError as error:
            stopped_by = f"CancelledError{error.args!r}"
            raise
        finally:
            Path(input).write_text(f"{os.getpid()} {stopped_by}")
        return "held to the end"


class Chatty:
    """Streams ``input`` chunks of text through one model call, yielding now and then."""

    name = "chatty"

    async def run(self, input: str) -> str:
        async with model_call("m", provider="p") as model:
            for number in range(int(input)):
                model.chunk(f"chunk {number} ")
                if number % 100 == 99:
                    await asyncio.sleep(0)
            model.usage(prompt_tokens=1, output_tokens=int(input))
        return "done"


class Stubborn:
    """Swallows every cancel: only the end of its process stops it."""

    name = "stubborn"

    async def run(self, input: str) -> str:
        while True:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(3600)


def serve_agents() -> list[object]:
    """The agents ``runtop serve --ray`` is given in the tests."""
    return [WorkerPid(), Holder()]
