"""Agents that spend: for the budget tests of the library, the adapters and the server."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from run_manager import Handle, current_run_id, model_call, tool_call
from run_manager.manager import Manager


class Spender:
    """Makes ``calls`` model calls of ``cost`` dollars and ``tokens`` tokens each, a tool
    call of ``pause`` seconds after each, and says how many it made."""

    def __init__(
        self,
        calls: int = 20,
        cost: float = 0.2,
        tokens: int = 100,
        name: str = "spender",
        pause: float = 0.0,
    ) -> None:
        self.name = name
        self.calls = calls
        self.cost = cost
        self.tokens = tokens
        self.pause = pause

    async def run(self, input: str) -> str:
        for number in range(self.calls):
            async with model_call("gpt-4o", provider="openai") as model:
                model.usage(prompt_tokens=self.tokens, output_tokens=0, cost_usd=self.cost)
            async with tool_call("note", {"n": number}) as call:
                await asyncio.sleep(self.pause)
                call.output = "noted"
        return f"{self.calls} calls"


def spending_function(input: str) -> str:
    """A synchronous agent (run in a thread) that spends $0.20 a model call, ten times."""
    for _ in range(10):
        with model_call("gpt-4o") as model:
            model.usage(prompt_tokens=10, output_tokens=10, cost_usd=0.2)
    return "done"


class Delegator:
    """Starts a :class:`Spender` as its child run and waits for it."""

    name = "delegator"

    def __init__(self, manager: Manager, child: Spender) -> None:
        self.manager = manager
        self.child = child
        self.child_ids: list[str] = []

    async def run(self, input: str) -> str:
        handle = self.manager.start(self.child, input)
        self.child_ids.append(handle.run_id)
        assert handle.info().parent_run_id == current_run_id()
        return await handle.result()


async def until(condition: Any, seconds: float = 10.0) -> None:
    """Wait until ``condition()`` holds: a run's state or its ledger, read every few ms."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.005)


async def question_of(manager: Manager, run_id: str) -> str:
    """Wait until the run asks, and return its question (from the live hub's events)."""
    handle = manager.get(run_id)
    await until(lambda: handle.info().pending_approvals or handle.info().ended_at)
    return asked(handle.info().ledger_path)[-1]


def events(path: Path | None, kind: str | None = None) -> list[dict[str, Any]]:
    assert path is not None
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [line for line in lines if kind is None or line["type"] == kind]


def asked(path: Path | None) -> list[str]:
    """The questions a run's ledger says it asked."""
    return [line["payload"]["prompt"] for line in events(path, "approval_request")]


def model_calls(handle: Handle) -> int:
    return len(events(handle.info().ledger_path, "llm_call"))
