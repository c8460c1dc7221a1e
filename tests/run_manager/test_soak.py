"""The soak of issue 12: 1,000 runs with random faults, every promise checked, counts printed.

Each run draws one fault: a ledger write that fails (ENOSPC, EIO, or a
short write, at a random write), a cancel at a random moment, an agent
that swallows the cancel once or twice, an agent exception at a random
point, a timeout, or a synchronous agent in its thread cancelled by its
token; some draw nothing. Afterwards every run is terminal, no task or
agent thread is left, ``close()`` kept its bound, and every ledger reads
back with every line that was written whole (exactly the writes before
the fault, for a run with a write fault).

Run alone: ``.venv/bin/pytest tests/run_manager/test_soak.py -m soak -s``.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ledger_reader import LedgerFile
from run_manager import CancelToken, Handle, Manager, Status, tool_call
from run_manager.agents import FunctionAgent
from run_manager.manager import CLOSE_MARGIN
from tests.ledger_faults import KINDS, LedgerFaults, ledger_faults

__all__ = ["ledger_faults"]

pytestmark = [pytest.mark.soak, pytest.mark.timeout(120)]

RUNS = 1_000
BATCH = 50
SEED = 12


class Worker:
    """``steps`` recorded tool calls with tiny sleeps; fails at step ``fail_at``; may swallow."""

    name = "worker"

    def __init__(self, steps: int, fail_at: int | None = None, swallow: int = 0) -> None:
        self.steps = steps
        self.fail_at = fail_at
        self.swallow = swallow
        self.swallowed = 0

    async def run(self, input: str) -> str:
        for step in range(self.steps):
            if step == self.fail_at:
                raise RuntimeError(f"gave up at step {step}")
            async with tool_call("step", {"n": step}) as call:
                try:
                    await asyncio.sleep(0.001 * (step % 3))
                except asyncio.CancelledError:
                    if self.swallowed >= self.swallow:
                        raise
                    self.swallowed += 1  # a retry wrapper that eats the cancel
                call.output = "ok"
        return "done"


def thread_worker(steps: int) -> FunctionAgent:
    def work(input: str, token: CancelToken) -> str:
        for step in range(steps):
            token.raise_if_cancelled()
            with tool_call("step", {"n": step}) as call:
                token.wait(0.001)
                call.output = "ok"
        return "done"

    return FunctionAgent(work, name="thread-worker")


def whole_lines(path: Path) -> list[dict[str, Any]]:
    data = path.read_bytes()
    return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]


async def test_a_thousand_runs_with_random_faults(
    tmp_path: Path, ledger_faults: LedgerFaults, capsys: pytest.CaptureFixture[str]
) -> None:
    chooser = random.Random(SEED)
    manager = Manager(ledger_dir=tmp_path, retained_runs=RUNS)
    drawn: Counter[str] = Counter()
    planned: dict[str, tuple[int, str]] = {}
    handles: list[Handle] = []
    swallowers: list[Worker] = []
    began = time.monotonic()
    for first in range(0, RUNS, BATCH):
        batch: list[Handle] = []
        for _ in range(min(BATCH, RUNS - first)):
            fault = chooser.choice(
                ["none", "write", "cancel", "swallow", "exception", "timeout", "thread"]
            )
            drawn[fault] += 1
            steps = chooser.randint(1, 6)
            timeout = None
            if fault == "write":
                # run_started, then 4 lines a step, then run_completed: any of them may fail.
                nth, kind = chooser.randint(1, 4 * steps + 2), chooser.choice(KINDS)
                ledger_faults.arm_next_writer(nth, kind)
                drawn[f"write:{kind}"] += 1
            if fault == "thread":
                agent: object = thread_worker(steps)
            elif fault == "exception":
                agent = Worker(steps, fail_at=chooser.randrange(steps))
            else:
                agent = Worker(steps, swallow=chooser.randint(1, 2) if fault == "swallow" else 0)
                if fault == "swallow":
                    swallowers.append(agent)
            if fault == "timeout":
                timeout = chooser.uniform(0.0, 0.01)
            handle = manager.start(agent, "go", timeout=timeout)
            if fault == "write":
                planned[handle.run_id] = (nth, kind)
            if fault in {"cancel", "swallow", "thread"}:
                asyncio.get_running_loop().call_later(
                    chooser.uniform(0.0, 0.01), handle.cancel, "soak"
                )
            batch.append(handle)
        await asyncio.wait_for(asyncio.gather(*(h.wait() for h in batch)), 30)
        handles += batch
    closing = time.monotonic()
    closed = await manager.close(grace=2)
    close_seconds = time.monotonic() - closing

    outcomes = Counter(h.status.value for h in handles)
    ledger_failed = 0
    lines_checked = 0
    for handle in handles:
        info = handle.info()
        assert info.status is not Status.RUNNING, handle.run_id
        assert info.ledger_path is not None
        if not info.ledger_path.exists():  # its first line failed: no ledger left behind
            assert planned[handle.run_id][0] == 1
            assert info.status is Status.FAILED
            ledger_failed += 1
            continue
        with LedgerFile(info.ledger_path) as ledger:  # readable by the project's own reader
            ledger.last_event()
        lines = whole_lines(info.ledger_path)
        lines_checked += len(lines)
        assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
        plan = planned.get(handle.run_id)
        if plan is not None and ledger_faults.failed(info.ledger_path):
            ledger_failed += 1
            assert info.status is Status.FAILED
            assert info.error is not None
            assert "ledger could not be written" in info.error
            assert len(lines) == plan[0] - 1  # every write before the fault, whole
        else:
            last = lines[-1]
            assert last["type"] == "run_completed"
            expected = {"ok": "succeeded", "error": "failed", "cancelled": "canceled"}
            assert expected[last["payload"]["status"]] == info.status.value
    current = asyncio.current_task()
    tasks_left = [t for t in asyncio.all_tasks() if t is not current]
    threads_left = [t for t in threading.enumerate() if t.name.startswith("run ")]
    with capsys.disabled():
        print(
            f"\nsoak: {len(handles)} runs in {time.monotonic() - began:.1f} s; "
            f"drawn {dict(sorted(drawn.items()))}; "
            f"ended {dict(sorted(outcomes.items()))}; "
            f"ledger write failures {ledger_failed}; "
            f"cancels swallowed {sum(worker.swallowed for worker in swallowers)}; "
            f"lines checked {lines_checked}; "
            f"close {close_seconds:.2f} s, left {len(closed.left)}, "
            f"tasks left {len(tasks_left)}, threads left {len(threads_left)}"
        )
    assert outcomes["running"] == 0
    assert closed.left == ()
    assert close_seconds < 2 + CLOSE_MARGIN
    assert tasks_left == []
    assert threads_left == []
    assert ledger_failed > 0  # the faults really happened
    assert sum(worker.swallowed for worker in swallowers) > 0
