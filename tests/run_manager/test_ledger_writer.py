"""The ledger a run writes: crashes, reopening, the cap, control files."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ledger_reader import RunStatus, summarize_ledger
from ledger_reader.control import request_cancel
from ledger_reader.events import PAYLOAD_CAP_BYTES
from run_manager import LedgerBusy, LedgerWriter, Manager, Status
from run_manager.ledger import cap_payload_value
from tests.agents import Echo, Sleeper
from tests.conftest import REPO, line

pytestmark = pytest.mark.timeout(30)

CRASHING_SERVICE = textwrap.dedent(
    """
    import asyncio, sys
    from run_manager import Manager
    from tests.agents import Sleeper

    async def main():
        manager = Manager(ledger_dir=sys.argv[1])
        handle = manager.start(Sleeper(), "60")
        print(handle.run_id, flush=True)
        await handle.wait()

    asyncio.run(main())
    """
)


def test_a_writer_killed_mid_run_leaves_an_abandoned_ledger(tmp_path: Path) -> None:
    service = subprocess.Popen(
        [sys.executable, "-c", CRASHING_SERVICE, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert service.stdout is not None
        run_id = service.stdout.readline().strip()
        path = tmp_path / f"{run_id}.jsonl"
        assert summarize_ledger(path).status == RunStatus.RUNNING
        os.kill(service.pid, signal.SIGKILL)
        service.wait(timeout=10)
        assert summarize_ledger(path).status == RunStatus.ABANDONED
    finally:
        if service.poll() is None:
            service.kill()
            service.wait()
        if service.stdout is not None:
            service.stdout.close()


def test_reopening_after_a_crash_continues_seq_on_a_fresh_line(tmp_path: Path) -> None:
    run_id = "run_crashed"
    path = tmp_path / f"{run_id}.jsonl"
    path.write_bytes(
        line(1, "run_started", run_id=run_id)
        + line(2, "llm_chunk", {"delta": "a"}, run_id=run_id)
        + line(3, "llm_chunk", run_id=run_id)[:20]
    )
    writer = LedgerWriter(tmp_path, run_id)
    assert writer.last_seq == 2
    writer.write(line(3, "run_completed", {"status": "error"}, run_id=run_id))
    writer.close()
    lines = path.read_bytes().split(b"\n")
    assert json.loads(lines[3])["seq"] == 3
    summary = summarize_ledger(path)
    assert (summary.damaged_lines, summary.event_count, summary.status) == (
        1,
        3,
        RunStatus.FAILED,
    )


def test_one_writer_per_run(tmp_path: Path) -> None:
    first = LedgerWriter(tmp_path, "run_one")
    try:
        with pytest.raises(LedgerBusy):
            LedgerWriter(tmp_path, "run_one")
    finally:
        first.close()
    with pytest.raises(ValueError, match="invalid run id"):
        LedgerWriter(tmp_path, "../escape")


def test_payload_cap() -> None:
    small, cut = cap_payload_value({"q": "x"})
    assert (small, cut) == ({"q": "x"}, False)
    big, cut = cap_payload_value({"blob": "é" * PAYLOAD_CAP_BYTES})
    assert cut
    assert isinstance(big, str)
    assert len(big.encode()) <= PAYLOAD_CAP_BYTES
    assert big.startswith('{"blob":"éé')


async def test_capped_input_is_marked_and_refused_for_resume(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(Echo(), "x" * (PAYLOAD_CAP_BYTES + 10))
        await handle.wait()
    started = json.loads(Path(str(handle.info().ledger_path)).read_text().splitlines()[0])
    assert started["payload"]["truncated"] is True
    assert len(started["payload"]["input"].encode()) <= PAYLOAD_CAP_BYTES
    async with Manager(ledger_dir=tmp_path, agents=[Echo()]) as later:
        with pytest.raises(Exception, match="cut at 64 KiB"):
            later.resume(handle.run_id)


async def test_a_control_file_cancels_a_run(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        agent = Sleeper()
        handle = manager.start(agent, "30")
        await agent.started.wait()
        control = request_cancel(tmp_path, handle.run_id, reason="from a script")
        info = await asyncio.wait_for(handle.wait(), 10)
        assert info.status is Status.CANCELED
        assert info.cancel_reason == "from a script"
        for _ in range(100):
            if not control.exists():
                break
            await asyncio.sleep(0.01)
        assert not control.exists()
    cancel = next(
        json.loads(raw)
        for raw in Path(str(info.ledger_path)).read_text().splitlines()
        if '"cancel_requested"' in raw
    )
    assert cancel["payload"]["source"] == "control-file"


async def test_a_control_file_resumes_a_run_once(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path, agents=[Echo()]) as manager:
        first = manager.start(Echo(), "hey")
        await first.wait()
        (tmp_path / ".control" / f"{first.run_id}.resume").write_text("{}")
        for _ in range(500):
            resumed = [i for i in manager.list() if i.resumed_from == first.run_id]
            if resumed:
                break
            await asyncio.sleep(0.01)
        assert len(resumed) == 1
        assert not list((tmp_path / ".control").glob(f"{first.run_id}.resume*"))


class Waiter:
    """Runs until told to finish."""

    name = "waiter"

    def __init__(self) -> None:
        self.finish = asyncio.Event()

    async def run(self, input: str) -> str:
        await self.finish.wait()
        return "done"


@pytest.mark.parametrize("removed", ["the ledger", "the ledger directory"])
async def test_a_run_whose_ledger_is_removed_ends_failed_saying_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, removed: str
) -> None:
    directory = tmp_path / "runs"
    manager = Manager(ledger_dir=directory)
    agent = Waiter()
    handle = manager.start(agent, "x")
    ledger = directory / f"{handle.run_id}.jsonl"
    assert ledger.exists()
    if removed == "the ledger":
        ledger.unlink()
    else:
        shutil.rmtree(directory)
    agent.finish.set()
    await handle.wait()
    said = "the ledger was removed (or its directory) while the run wrote it"
    assert handle.status is Status.FAILED
    assert said in (handle.info().error or "")
    ended = manager.hub.replay(handle.run_id)[-1]  # what watchers were told
    assert ended.type == "run_completed"
    assert ended.payload.status == "error"
    assert said in (ended.payload.error or "")
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [
        f"{ledger}: {said}; the run stops"
    ]
    assert not ledger.exists()
    await manager.close()


RUN_ID_FOR_FAULTS = "run_20261206T050000000_00000000000000aa"


def _failing_after(writer: LedgerWriter, whole: int, then: int) -> None:
    """Let ``whole`` writes through, write ``then`` bytes of the next, then fail as a full disk."""
    write = writer._write_some
    done = [0]

    def some(data: bytes) -> int:
        done[0] += 1
        if done[0] <= whole:
            return write(data)
        if done[0] == whole + 1 and then:
            return write(data[:then])
        raise OSError(errno.ENOSPC, "No space left on device")

    writer._write_some = some  # type: ignore[method-assign]


def test_a_line_the_disk_cuts_is_taken_back(tmp_path: Path) -> None:
    writer = LedgerWriter(tmp_path, RUN_ID_FOR_FAULTS)
    first = b'{"run_id": "r", "seq": 1, "type": "run_started", "payload": {}}\n'
    writer.write(first)
    _failing_after(writer, 0, 7)
    with pytest.raises(OSError, match="No space left"):
        writer.write(b'{"run_id": "r", "seq": 2, "type": "note", "payload": {"x": 1}}\n')
    writer.close()
    assert writer.path.read_bytes() == first


def test_a_ledger_whose_first_line_fails_is_not_left_behind(tmp_path: Path) -> None:
    writer = LedgerWriter(tmp_path, RUN_ID_FOR_FAULTS)
    _failing_after(writer, 0, 5)
    with pytest.raises(OSError, match="No space left"):
        writer.write(b'{"run_id": "r", "seq": 1, "type": "run_started", "payload": {}}\n')
    writer.close()
    assert not writer.path.exists()
    assert list(tmp_path.glob("*.jsonl")) == []
