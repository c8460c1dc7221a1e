"""The run manager under faults: a ledger that cannot be written, agents that will not stop.

Each test keeps the four promises of issue 12: the run ends (failed or
cancelled, with the reason), ``result()`` returns or raises, ``close()``
returns within its bound, nothing is left running that was not reported,
and every line written whole before a fault is kept.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest

from ledger_reader import ledger_lock_held
from run_manager import LedgerWriter, Manager, RunCanceled, RunFailed, Status, tool_call
from run_manager.manager import CLOSE_MARGIN
from tests.ledger_faults import KINDS, LedgerFaults, ledger_faults

__all__ = ["ledger_faults"]

pytestmark = pytest.mark.timeout(30)


class Worker:
    """One recorded tool call, then an answer (or a failure, when asked)."""

    name = "worker"

    async def run(self, input: str) -> str:
        async with tool_call("lookup", {"q": input}) as call:
            call.output = "found"
        if input == "fail":
            raise RuntimeError("the agent gave up")
        return "done"


# Ledger writes of a Worker run: run_started, node_enter, tool_call, tool_result,
# node_exit, then (failing) error, run_completed; (succeeding) run_completed.
FAULT_POINTS = {
    "before run_started": ("ok", 1),
    "mid-run": ("ok", 3),
    "in the error handler": ("fail", 6),
    "in run_completed": ("ok", 6),
}


def whole_lines(path: Path) -> list[dict[str, object]]:
    data = path.read_bytes()
    complete = data[: data.rfind(b"\n") + 1] if b"\n" in data else b""
    return [json.loads(line) for line in complete.splitlines() if line.strip()]


def other_tasks() -> list[asyncio.Task[object]]:
    current = asyncio.current_task()
    return [task for task in asyncio.all_tasks() if task is not current]


def run_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("run ")]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("point", list(FAULT_POINTS))
async def test_a_ledger_write_fault_fails_the_run_and_loses_no_whole_line(
    tmp_path: Path, ledger_faults: LedgerFaults, point: str, kind: str
) -> None:
    agent_input, nth = FAULT_POINTS[point]
    manager = Manager(ledger_dir=tmp_path)
    ledger_faults.arm(nth, kind)
    handle = manager.start(Worker(), agent_input)
    with pytest.raises(RunFailed) as failed:
        await asyncio.wait_for(handle.result(), 5)
    reason = str(failed.value)
    assert "ledger" in reason
    assert ("Input/output error" if kind == "eio" else "No space left") in reason
    info = handle.info()
    assert info.status is Status.FAILED
    assert info.error == reason
    assert manager.active() == []
    _, events = manager.hub.history(handle.run_id)
    assert events[-1].type == "run_completed"
    assert events[-1].payload.status == "error"  # type: ignore[union-attr]
    began = time.monotonic()
    closed = await manager.close(grace=2)
    assert time.monotonic() - began < 2 + CLOSE_MARGIN
    assert closed.left == ()
    assert other_tasks() == []
    assert run_threads() == []
    path = info.ledger_path
    assert path is not None
    if nth == 1:  # its first line failed: no ledger is left behind
        assert not path.exists()
        return
    assert not ledger_lock_held(path)
    lines = whole_lines(path)
    assert [line["seq"] for line in lines] == list(range(1, nth))  # every whole line, no more
    assert path.read_bytes().endswith(b"\n")  # what the failed write left is taken back


async def test_a_later_writer_starts_on_a_fresh_line_after_a_torn_one(tmp_path: Path) -> None:
    """A writer killed half-way through a line (no chance to take it back) left it torn."""
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(Worker(), "ok")
        await handle.wait()
    path = tmp_path / f"{handle.run_id}.jsonl"
    whole = len(path.read_bytes().splitlines())
    with path.open("ab") as ledger:
        ledger.write(b'{"run_id":"%s","seq":' % handle.run_id.encode())
    writer = LedgerWriter(tmp_path, handle.run_id)
    assert writer.last_seq == whole
    line = b'{"run_id":"%s","seq":%d,"time":"x","type":"error"}\n'
    writer.write(line % (handle.run_id.encode(), whole + 1))
    writer.close()
    raw = path.read_bytes().split(b"\n")
    assert json.loads(raw[-2])["seq"] == whole + 1  # whole, on a line of its own
    assert len(raw) == whole + 3  # the whole lines, the torn one, the new one, the final empty


class SwallowsCancel:
    """Catches ``CancelledError`` ``times`` times (``None``: until released), sleeping on."""

    name = "swallower"

    def __init__(self, times: int | None) -> None:
        self.times = times
        self.swallowed = 0
        self.started = asyncio.Event()
        self.released = False

    async def run(self, input: str) -> str:
        self.started.set()
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                if self.released or (self.times is not None and self.swallowed >= self.times):
                    raise
                self.swallowed += 1


async def test_a_cancel_swallowed_once_is_delivered_again(tmp_path: Path) -> None:
    manager = Manager(ledger_dir=tmp_path)
    agent = SwallowsCancel(times=1)
    handle = manager.start(agent, "x")
    await agent.started.wait()
    began = time.monotonic()
    closed = await manager.close(grace=3)
    assert time.monotonic() - began < 1.5
    assert closed.left == ()
    assert agent.swallowed == 1
    info = handle.info()
    assert info.status is Status.CANCELED
    with pytest.raises(RunCanceled, match="shutting down"):
        await handle.result()
    assert other_tasks() == []
    assert info.ledger_path is not None
    assert not ledger_lock_held(info.ledger_path)
    last = whole_lines(info.ledger_path)[-1]
    assert last["type"] == "run_completed"
    assert last["payload"] == {  # type: ignore[comparison-overlap]
        "status": "cancelled",
        "error": "canceled: the manager is shutting down",
        "reason": "shutdown",
    }


async def test_a_user_cancel_swallowed_once_still_stops_the_run() -> None:
    async with Manager() as manager:
        agent = SwallowsCancel(times=1)
        handle = manager.start(agent, "x")
        await agent.started.wait()
        handle.cancel("enough")
        with pytest.raises(RunCanceled, match="enough"):
            await asyncio.wait_for(handle.result(), 2)
        assert agent.swallowed == 1


async def test_an_agent_that_always_swallows_is_left_and_reported(tmp_path: Path) -> None:
    manager = Manager(ledger_dir=tmp_path)
    agent = SwallowsCancel(times=None)
    handle = manager.start(agent, "x")
    await agent.started.wait()
    began = time.monotonic()
    closed = await manager.close(grace=0.5)
    assert time.monotonic() - began < 0.5 + CLOSE_MARGIN
    assert closed.left == (handle.run_id,)
    assert agent.swallowed >= 2  # delivered again and again within the grace
    info = handle.info()
    assert info.status is Status.CANCELED
    assert manager.active() == []
    assert info.ledger_path is not None
    assert not ledger_lock_held(info.ledger_path)
    last = whole_lines(info.ledger_path)[-1]
    assert last["type"] == "run_completed"
    assert last["payload"]["reason"] == "shutdown"  # type: ignore[index]
    agent.released = True  # let the test end cleanly: the task is still there, as reported
    (task,) = other_tasks()
    task.cancel()
    await asyncio.wait([task], timeout=2)
    assert task.done()


async def test_a_thread_that_never_checks_its_token_is_left_and_reported(tmp_path: Path) -> None:
    release = threading.Event()
    entered = threading.Event()

    def deaf(input: str) -> str:
        entered.set()
        release.wait(20)
        return "finally"

    manager = Manager(ledger_dir=tmp_path)
    handle = manager.start(deaf, "x")
    await asyncio.to_thread(entered.wait, 5)
    began = time.monotonic()
    closed = await manager.close(grace=0.3)
    assert time.monotonic() - began < 0.3 + CLOSE_MARGIN
    assert closed.left == (handle.run_id,)
    assert handle.info().status is Status.CANCELED
    assert other_tasks() == []  # the run's task does not wait on the thread for ever
    assert len(run_threads()) == 1
    release.set()
    for thread in run_threads():
        await asyncio.to_thread(thread.join, 5)
    assert run_threads() == []


FULL_DISK_SCRIPT = r"""
import asyncio, json, sys, threading, time
from run_manager import Manager, RunFailed, tool_call

class Filler:
    name = "filler"
    async def run(self, input: str) -> str:
        for n in range(1000):
            async with tool_call("write", {"n": n, "blob": "x" * 30000}) as call:
                call.output = "ok"
            await asyncio.sleep(0)
        return "never"

async def main() -> None:
    manager = Manager(ledger_dir=sys.argv[1])
    handle = manager.start(Filler(), "go")
    try:
        await asyncio.wait_for(handle.result(), 10)
        error = None
    except RunFailed as failed:
        error = str(failed)
    began = time.monotonic()
    closed = await manager.close(grace=2)
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    print(json.dumps({
        "error": error,
        "status": handle.info().status.value,
        "path": str(handle.info().ledger_path),
        "close_seconds": time.monotonic() - began,
        "left": list(closed.left),
        "tasks": len(others),
        "threads": [t.name for t in threading.enumerate() if t.name.startswith("run ")],
        "active": len(manager.active()),
    }))

asyncio.run(main())
"""


def test_a_real_full_disk_fails_the_run_cleanly(tmp_path: Path) -> None:
    """A 256 KiB tmpfs in a private mount namespace (root only; skipped elsewhere)."""
    import shutil
    import subprocess
    import sys

    if shutil.which("unshare") is None:
        pytest.skip("no unshare here")
    mount = tmp_path / "small"
    mount.mkdir()
    script = tmp_path / "fill.py"
    script.write_text(FULL_DISK_SCRIPT)
    # The ledger is copied out of the tmpfs before the namespace (and the mount) goes away.
    command = (
        f"mount -t tmpfs -o size=256k tmpfs {mount} || exit 77; "
        f"{sys.executable} {script} {mount}/runs > {tmp_path}/out.json; code=$?; "
        f"cp -a {mount}/runs {tmp_path}/runs; exit $code"
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", command], capture_output=True, text=True, timeout=40
    )
    if done.returncode == 77 or "Operation not permitted" in done.stderr:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out.json").read_text())
    assert result["status"] == "failed"
    assert "ledger could not be written" in result["error"]
    assert "No space left on device" in result["error"]
    assert result["close_seconds"] < 2 + CLOSE_MARGIN
    assert result["left"] == []
    assert result["tasks"] == 0
    assert result["threads"] == []
    assert result["active"] == 0
    ledger = tmp_path / "runs" / Path(result["path"]).name
    assert ledger.read_bytes().endswith(b"\n")  # the line the disk cut is taken back
    lines = whole_lines(ledger)
    assert len(lines) > 4  # some tool calls fitted before the disk filled
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
