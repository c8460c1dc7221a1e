"""A history's frames as the server reads them, a block at a time, holding nothing between reads.

A hundred clients waiting their turn to send a history each hold a reader:
one that decoded a block's lines ahead of what it sent held thousands of
small objects per client, spread over the heap's arenas, and any one of
them left alive kept its arena after the storm.
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from ledger_reader import DamagedLine, read_ledger_lines
from run_manager.server.history import LedgerFrames
from run_manager.server.sse import damaged_frame, sse_frame
from tests.conftest import completed, line, started

pytestmark = pytest.mark.timeout(30)


def expected(path: Path, *, torn_tail: bool) -> bytes:
    """The ledger's frames from its lines read whole by ledger_reader."""
    frames = []
    for read in read_ledger_lines(path, keep_raw=True, torn_tail=torn_tail):
        if isinstance(read.item, DamagedLine):
            item = read.item
            frames.append(damaged_frame(read.start, item.reason, read.raw, item.length))
        elif read.item is not None:
            frames.append(sse_frame(read.item.seq, read.raw))
    return b"".join(frames)


def every_batch(path: Path, *, torn_tail: bool) -> list[tuple[bytes, int, bool]]:
    reader = LedgerFrames(str(path), torn_tail=torn_tail)
    assert reader.seek_after(0)
    batches = []
    while (batch := reader.read()) is not None:
        batches.append(batch)
    reader.close()
    return batches


@pytest.mark.parametrize("torn_tail", [False, True])
def test_a_history_read_a_block_at_a_time_is_every_line_once(
    tmp_path: Path, torn_tail: bool
) -> None:
    ledger = tmp_path / "run.jsonl"
    with ledger.open("wb") as out:
        out.write(started())
        for seq in range(2, 400):
            out.write(line(seq, "log", {"message": "x" * (seq % 7) * 90}))
        out.write(b'{"run_id": "not a whole event\n')
        out.write(line(400, "log", {"message": "y" * 3 * LedgerFrames.BLOCK}))  # spans blocks
        out.write(completed(401))
        out.write(b'{"run_id": "torn')
    batches = every_batch(ledger, torn_tail=torn_tail)
    assert len(batches) > 3
    assert b"".join(frames for frames, _, _ in batches) == expected(ledger, torn_tail=torn_tail)
    ends = [(last_seq, ended) for _, last_seq, ended in batches if last_seq]
    assert ends[-1] == (401, True)
    assert (b"event: damaged" in batches[-1][0]) is torn_tail


def test_a_reader_holds_no_lines_between_reads(tmp_path: Path) -> None:
    ledger = tmp_path / "run.jsonl"
    with ledger.open("wb") as out:
        out.write(started())
        for seq in range(2, 3000):
            out.write(line(seq, "tool_call", {"name": "say", "arguments": {"text": "x" * 200}}))
    reader = LedgerFrames(str(ledger))
    assert reader.seek_after(0)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        batch = reader.read()
        assert batch is not None
        assert len(batch[0]) > LedgerFrames.BLOCK // 2
        del batch
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        reader.close()
    # A block's lines decoded ahead are some 150 of them (hundreds of KB of objects);
    # what is left is at most a torn line's bytes.
    assert held < 16 * 1024, f"the reader holds {held} bytes between reads"
