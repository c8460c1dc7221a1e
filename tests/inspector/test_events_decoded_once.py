"""A live run's newest events are decoded once: the store serves them from those it folded
as they arrived, and the event list's page is the same events, not the ledger's lines read
back and decoded again. Whatever the ledger holds (damaged lines, blank ones, a ``seq``
skipped, a line torn), the two ways give the same events."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from inspector import LedgerDirectorySource, ManagerSource, RunKey, RunStore
from ledger_reader import DamagedLine
from tests.conftest import line

pytestmark = pytest.mark.timeout(30)

RUN = "run_20261129T064500001_aaaaaaaaaaaaaaaa"


def write(path: Path, seqs: range, *, damaged: bool = False) -> None:
    with path.open("ab") as ledger:
        for seq in seqs:
            if seq == 1:
                ledger.write(line(1, "run_started", {"skill": "s", "input": "q"}, run_id=RUN))
            else:
                ledger.write(line(seq, "llm_chunk", {"delta": f"word {seq} "}, run_id=RUN))
            if damaged and seq == 2:
                ledger.write(b"{not json\n")


async def following(directory: Path, count: int) -> tuple[RunStore, RunKey]:
    store = RunStore(flush_interval=0.01)
    store.add_source(LedgerDirectorySource(directory, name="dir"))
    key = RunKey("dir", RUN)
    changes = store.changes()
    while (view := store.get(key)) is None or (view.event_count or 0) < count:
        await anext(changes)
    return store, key


async def test_the_newest_page_is_the_events_the_store_folded(tmp_path: Path) -> None:
    ledger = tmp_path / f"{RUN}.jsonl"
    write(ledger, range(1, 2))
    store, key = await following(tmp_path, 1)
    try:
        write(ledger, range(2, 301))  # live: arriving after the run was first read
        changes = store.changes()
        while (view := store.get(key)) is None or (view.event_count or 0) < 300:
            await anext(changes)
        assert await store.event_count(key) == 300
        page = await store.events(key, 256, 512)
        assert [item.seq for item in page if not isinstance(item, DamagedLine)] == list(
            range(257, 301)
        )
        folded = {id(item) for item in store.recent(key)}
        assert all(id(item) in folded for item in page)  # not decoded a second time
    finally:
        await store.close()


async def test_a_damaged_line_keeps_its_place(tmp_path: Path) -> None:
    ledger = tmp_path / f"{RUN}.jsonl"
    write(ledger, range(1, 2))
    store, key = await following(tmp_path, 1)
    try:
        write(ledger, range(2, 41), damaged=True)  # a line with no seq: positions part
        changes = store.changes()
        while (view := store.get(key)) is None or (view.event_count or 0) < 40:
            await anext(changes)
        page = await store.events(key, 0, 256)
        assert len(page) == 41 == await store.event_count(key)
        assert isinstance(page[2], DamagedLine)
        assert [item.seq for item in page[3:] if not isinstance(item, DamagedLine)] == list(
            range(3, 41)
        )
    finally:
        await store.close()


async def folded(store: RunStore, key: RunKey, seq: int) -> None:
    """Wait for the store to have folded the event ``seq`` (and every line before it)."""
    changes = store.changes()
    while (view := store.get(key)) is None or view.summary.last_seq < seq:
        await anext(changes)


async def truth_of(directory: Path, run_id: str = RUN) -> LedgerDirectorySource:
    """Another source over the same ledger, read only through its line index: the events
    as the app read them before the store served any."""
    truth = LedgerDirectorySource(directory, name="truth")
    async for update in truth.updates():
        if any(run.run_id == run_id for run in update.runs):
            return truth
    raise AssertionError("the ledger was never listed")


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("before", [1, 4000], ids=["new", "read-by-head-and-tail"])
async def test_every_page_is_the_ledger_read_back(tmp_path: Path, seed: int, before: int) -> None:
    """Written in bursts of every kind of line (damaged ones, blank ones, a ``seq`` skipped,
    a line torn and finished in the next burst), each page the store serves is the one the
    ledger's line index reads: a new run's, and one big enough when found (4,000 lines,
    with a damaged and a blank one) to be read by its head and tail."""
    rng = random.Random(seed)
    ledger = tmp_path / f"{RUN}.jsonl"
    write(ledger, range(1, before + 1))
    if before > 1:
        with ledger.open("ab") as out:
            out.write(b"{not json\n\n")
    store, key = await following(tmp_path, 1)
    truth = await truth_of(tmp_path)
    seq, torn = before + 1, b""
    try:
        for _ in range(10):
            burst = [torn] if torn else []
            torn = b""
            for _ in range(rng.randrange(1, 120)):
                kind = rng.random()
                if kind < 0.05:
                    burst.append(b"{not json\n")
                elif kind < 0.08:
                    burst.append(b"\n")
                else:
                    seq += 2 if kind < 0.1 else 1  # now and then a seq skipped
                    burst.append(line(seq, "llm_chunk", {"delta": f"w{seq} "}, run_id=RUN))
            if rng.random() < 0.3:
                seq += 1
                whole = line(seq, "llm_chunk", {"delta": "torn"}, run_id=RUN)
                burst.append(whole[:10])
                torn = whole[10:]
            with ledger.open("ab") as out:
                out.write(b"".join(burst))
            count = await truth.event_count(RUN)
            changes = store.changes()
            while await store.event_count(key) < count:
                await anext(changes)
            assert await store.event_count(key) == count
            starts = [*range(0, count, 256), *(rng.randrange(count) for _ in range(5))]
            for start in starts:
                stop = start + rng.choice([1, 17, 256])
                assert await store.events(key, start, stop) == await truth.events(
                    RUN, start, stop
                ), (start, stop)
        with ledger.open("ab") as out:  # the rest of a torn line, and one whole line
            out.write(torn + line(seq + 1, "llm_chunk", {}, run_id=RUN))
        await folded(store, key, seq + 1)
        with ledger.open("ab") as out:  # then a burst of whole ones
            out.write(b"".join(line(seq + n, "llm_chunk", {}, run_id=RUN) for n in range(2, 52)))
        await folded(store, key, seq + 51)
        count = await truth.event_count(RUN)
        newest = await store.events(key, count - 50, count)
        assert newest == await truth.events(RUN, count - 50, count)
        held = {id(item) for item in store.recent(key)}
        assert all(id(item) in held for item in newest)  # as folded, not decoded again
    finally:
        await truth.close()
        await store.close()


@pytest.mark.parametrize("ledger", [True, False], ids=["ledger", "no-ledger"])
async def test_a_managers_run_is_decoded_once(tmp_path: Path, ledger: bool) -> None:
    """An in-process run's events come from the hub: its newest page is those events, as
    its ledger numbers its lines (or as the source keeps them, without a ledger)."""
    from run_manager import Manager
    from tests.agents import Chatty

    async with Manager(ledger_dir=tmp_path if ledger else False) as manager:
        store = RunStore(flush_interval=0.01)
        store.add_source(ManagerSource(manager, name="local"))
        changes = store.changes()
        await anext(changes)
        handle = manager.start(Chatty(), "600")
        await handle.wait()
        key = RunKey("local", handle.run_id)
        while (view := store.get(key)) is None or view.live:
            await anext(changes)
        try:
            count = await store.event_count(key)
            assert count == view.event_count
            newest = await store.events(key, count - 256, count)
            held = {id(item) for item in store.recent(key)}
            assert all(id(item) in held for item in newest)  # not decoded a second time
            if ledger:
                truth = await truth_of(tmp_path, handle.run_id)
                try:
                    for start in range(0, count, 100):
                        assert await store.events(key, start, start + 256) == await truth.events(
                            handle.run_id, start, start + 256
                        )
                finally:
                    await truth.close()
        finally:
            await store.close()
