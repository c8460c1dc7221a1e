"""While ledgers keep growing, a follower with ``gather`` reads each at most that often:
many writes come as a few updates, every line in them; a write after a quiet spell
comes at once."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from ledger_reader import DirectoryUpdate, LedgerDirectory, iter_events
from tests.conftest import line
from tests.ledger_reader.test_directory import watching

pytestmark = pytest.mark.timeout(60)

RUNS = 20
SECONDS = 1.0


async def write_steadily(root: Path) -> int:
    """Each ledger written every 5 ms for ``SECONDS``: returns the events written."""
    fds = [
        os.open(root / f"run_{n:02d}.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        for n in range(RUNS)
    ]
    seqs = [0] * RUNS
    started = time.monotonic()
    while time.monotonic() - started < SECONDS:
        for n, fd in enumerate(fds):
            seqs[n] += 1
            os.write(fd, line(seqs[n], "llm_chunk", {"delta": "x"}, run_id=f"run_{n:02d}"))
        await asyncio.sleep(0.005)
    for fd in fds:
        os.close(fd)
    return sum(seqs)


async def follow_a_steady_stream(tmp_path: Path, gather: float) -> tuple[int, int, int, float]:
    """(updates with changes, ledger reads, events delivered, seconds followed) while
    ``RUNS`` ledgers grow."""
    root = tmp_path / "runs"
    root.mkdir()
    updates_seen = reads = delivered = 0
    async with watching(LedgerDirectory(root, gather=gather)) as updates:
        assert (await updates.get()).initial
        began = time.monotonic()
        written = await write_steadily(root)
        async with asyncio.timeout(20):
            while delivered < written:
                update: DirectoryUpdate = await updates.get()
                if update.changes:
                    updates_seen += 1
                    reads += len(update.changes)
                    delivered += sum(len(list(iter_events(c.items))) for c in update.changes)
    assert delivered == written  # every line, none twice
    return updates_seen, reads, delivered, time.monotonic() - began


async def test_a_steady_stream_is_read_in_a_few_gathered_updates(tmp_path: Path) -> None:
    updates, reads, delivered, seconds = await follow_a_steady_stream(tmp_path, gather=0.1)
    # At most one read a ledger every 0.1 s while they grow (and the first, at once),
    # where every write could be read on its own: ~200 writes a ledger.
    assert updates <= seconds / 0.1 + 2
    assert reads <= RUNS * (seconds / 0.1 + 2)
    assert reads < delivered / 5


async def test_a_write_after_a_quiet_spell_is_read_at_once(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    ledger = root / "run_00.jsonl"
    ledger.write_bytes(line(1, "run_started", run_id="run_00"))
    async with watching(LedgerDirectory(root, gather=5.0)) as updates:
        assert (await updates.get()).initial
        for seq in (2, 3):
            await asyncio.sleep(0.3)  # quiet: nothing to gather
            with ledger.open("ab") as handle:
                handle.write(line(seq, "llm_chunk", {"delta": "x"}, run_id="run_00"))
            written = time.monotonic()
            async with asyncio.timeout(10):
                while True:
                    update = await updates.get()
                    if update.changes:
                        break
            # Not held for the 5 s a stream is gathered over: the second write too,
            # which comes 0.3 s after the first was read.
            assert time.monotonic() - written < 2.5
            assert [e.seq for e in iter_events(update.changes[0].items)] == [seq]


class CountedStop(asyncio.Event):
    """A stop event that counts how often it is looked at: the watcher's thread looks
    once a step, taking the GIL each time."""

    def __init__(self) -> None:
        super().__init__()
        self.looks = 0

    def is_set(self) -> bool:
        self.looks += 1
        return super().is_set()


async def test_a_quiet_directory_is_looked_at_as_often_as_notice_asks(tmp_path: Path) -> None:
    looks: dict[float, int] = {}
    for notice in (0.001, 0.05):
        root = tmp_path / f"runs-{notice}"
        root.mkdir()
        stop = CountedStop()
        updates = LedgerDirectory(root, notice=notice).watch(stop)
        assert (await anext(updates)).initial
        waiting = asyncio.ensure_future(anext(updates))
        await asyncio.sleep(0.3)
        before = stop.looks
        await asyncio.sleep(1.0)
        looks[notice] = stop.looks - before
        (root / "run_1.jsonl").write_bytes(line(1, "run_started", run_id="run_1"))
        async with asyncio.timeout(10):
            while not (await waiting).changes:  # still noticed
                waiting = asyncio.ensure_future(anext(updates))
        stop.set()
        await updates.aclose()
    assert looks[0.05] <= 1.0 / 0.05 + 5, looks
    assert looks[0.001] > 3 * looks[0.05], looks
