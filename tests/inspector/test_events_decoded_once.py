"""A live run's newest events are decoded once: the store serves them from those it folded
as they arrived, and the event list's page is the same events, not the ledger's lines read
back and decoded again. Where positions and ``seq`` part (a damaged line), the ledger is
read, and the two ways give the same events."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import LedgerDirectorySource, RunKey, RunStore
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


async def test_a_damaged_line_sends_the_store_to_the_ledger(tmp_path: Path) -> None:
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
        assert [item.seq for item in page[3:]] == list(range(3, 41))
    finally:
        await store.close()
