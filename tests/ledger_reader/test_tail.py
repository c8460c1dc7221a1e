"""Following a ledger as it grows: torn tails, truncation, replacement, another writer."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ledger_reader import DamagedLine, LedgerGone, LedgerTail, LineAssembler, iter_events
from tests.conftest import completed, line, started


def seqs(tail_items: list[object]) -> list[int]:
    return [event.seq for event in iter_events(tail_items)]  # type: ignore[arg-type]


def test_torn_last_line_waits_for_its_newline(write_ledger: Callable[..., Path]) -> None:
    second = line(2, "llm_chunk", {"delta": "hello"})
    path = write_ledger(started(), second[:25])
    tail = LedgerTail(path)
    assert seqs(tail.poll().items) == [1]
    assert tail.pending_bytes == 25
    with path.open("ab") as handle:
        handle.write(second[25:])
    batch = tail.poll()
    assert seqs(batch.items) == [2]
    assert not any(isinstance(item, DamagedLine) for item in batch.items)
    assert tail.poll().items == []


async def test_async_poll_reads_the_same(write_ledger: Callable[..., Path]) -> None:
    path = write_ledger(started(), line(2, "error", {"message": "x"}))
    tail = LedgerTail(path)
    assert seqs((await tail.apoll()).items) == [1, 2]
    with path.open("ab") as handle:
        handle.write(completed(3))
    assert seqs((await tail.apoll()).items) == [3]


def test_truncated_file_starts_over(write_ledger: Callable[..., Path]) -> None:
    path = write_ledger(started(), line(2, "llm_chunk", {"delta": "a"}), completed(3))
    tail = LedgerTail(path)
    assert seqs(tail.poll().items) == [1, 2, 3]
    path.write_bytes(started())
    batch = tail.poll()
    assert batch.reset == "truncated"
    assert seqs(batch.items) == [1]


def test_replaced_file_starts_over(write_ledger: Callable[..., Path], tmp_path: Path) -> None:
    path = write_ledger(started(), line(2, "llm_chunk", {"delta": "a"}))
    tail = LedgerTail(path)
    assert seqs(tail.poll().items) == [1, 2]
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(
        started(skill="other") + line(2, "error", {"message": "m"}) + completed(3)
    )
    os.replace(replacement, path)
    batch = tail.poll()
    assert batch.reset == "replaced"
    assert seqs(batch.items) == [1, 2, 3]


def test_rewritten_in_place_with_more_bytes_starts_over(write_ledger: Callable[..., Path]) -> None:
    path = write_ledger(line(1, "run_started", run_id="run_a"))
    tail = LedgerTail(path)
    tail.poll()
    with path.open("r+b") as handle:  # same inode, bigger, different content
        handle.write(line(1, "run_started", run_id="run_b") + line(2, "error", run_id="run_b"))
    batch = tail.poll()
    assert batch.reset == "replaced"
    assert [event.run_id for event in iter_events(batch.items)] == ["run_b", "run_b"]


@pytest.mark.parametrize("verify_head", [True, False], ids=["verifying", "under-load"])
@pytest.mark.parametrize("hold_open", [False, True], ids=["opened", "held"])
def test_rewritten_in_place_with_the_same_head_starts_over(
    write_ledger: Callable[..., Path], verify_head: bool, hold_open: bool
) -> None:
    """Truncated and written again, longer, between two polls, with the same first line:
    the bytes before where reading stopped differ, also on a poll that skips the head."""
    path = write_ledger(started(), line(2, "llm_chunk", {"delta": "a"}))
    tail = LedgerTail(path)
    assert seqs(tail.poll(hold_open=hold_open).items) == [1, 2]
    path.write_bytes(started() + line(2, "error", {"message": "said again"}) + completed(3))
    batch = tail.poll(hold_open=hold_open, verify_head=verify_head)
    tail.release()
    assert batch.reset == "replaced"
    assert seqs(batch.items) == [1, 2, 3]


def test_vanished_file_says_so(write_ledger: Callable[..., Path]) -> None:
    path = write_ledger(started())
    tail = LedgerTail(path)
    tail.poll()
    path.unlink()
    with pytest.raises(LedgerGone):
        tail.poll()


def test_over_long_line_is_reported_without_being_held() -> None:
    assembler = LineAssembler(max_line_bytes=1000)
    lines = assembler.feed(b"x" * 600)
    assert lines == []
    lines = assembler.feed(b"y" * 600)
    assert lines == []
    assert assembler.pending_bytes == 1200
    assert len(assembler._pending) == 0  # counted, not kept
    for _ in range(10):
        assembler.feed(b"z" * 10_000)
    assert len(assembler._pending) == 0
    lines = assembler.feed(b"tail\n" + line(2, "error", {"message": "after"}))
    assert len(lines) == 2
    damaged = lines[0].item
    assert isinstance(damaged, DamagedLine)
    assert damaged.offset == 0
    assert damaged.length == 1200 + 100_000 + 4
    assert "over the" in damaged.reason
    assert seqs([lines[1].item]) == [2]


def test_real_four_mebibyte_line_is_skipped(write_ledger: Callable[..., Path]) -> None:
    huge = b'{"type":"llm_chunk","payload":{"delta":"' + b"a" * (5 * 1024 * 1024) + b'"}}\n'
    path = write_ledger(started(), huge, completed(3))
    tail = LedgerTail(path)
    batch = tail.poll()
    assert batch.more  # a poll stops at its limit, partway through the long line
    items = batch.items
    while batch.more:
        batch = tail.poll()
        items += batch.items
    assert seqs(items) == [1, 3]
    damaged = [item for item in items if isinstance(item, DamagedLine)]
    assert len(damaged) == 1
    assert damaged[0].offset == len(started())


WRITER = textwrap.dedent(
    """
    import json, os, sys, time
    path, count = sys.argv[1], int(sys.argv[2])
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    for seq in range(1, count + 1):
        line = json.dumps({"run_id": "r", "seq": seq, "time": "2026-11-29T00:00:00Z",
                           "type": "llm_chunk", "payload": {"delta": "x" * (seq % 50)}}) + "\\n"
        data = line.encode()
        if seq % 7 == 0:  # a torn tail for a moment: two writes
            os.write(fd, data[:10]); time.sleep(0.002); os.write(fd, data[10:])
        else:
            os.write(fd, data)
        if seq % 10 == 0:
            time.sleep(0.001)
    os.close(fd)
    """
)


def test_writer_in_another_process(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.touch()
    tail = LedgerTail(path)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "500"])
    got: list[int] = []
    damaged = 0
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        batch = tail.poll()
        got.extend(seqs(batch.items))
        damaged += sum(isinstance(item, DamagedLine) for item in batch.items)
        if writer.poll() is not None and len(got) >= 500:
            break
        time.sleep(0.0005)
    assert writer.wait(timeout=10) == 0
    got.extend(seqs(tail.poll().items))
    assert got == list(range(1, 501))
    assert damaged == 0
