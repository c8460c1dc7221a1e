"""A watched directory hands on every line of a ledger once and in turn, whenever it was written.

A run's first report carries the lines read so far as its summary, and
:meth:`LedgerDirectory.history_end` says where they end; every line after
comes as items. Together they are the whole ledger, however a write falls
against the scan, the watcher's start, a read's chunk or another ledger's
growth, and from the start again after a truncation or a replacement.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from ledger_reader import (
    DirectoryUpdate,
    LedgerDirectory,
    LedgerState,
    iter_events,
    read_ledger_lines,
    read_ledger_state,
)
from ledger_reader.head_tail import WHOLE_FILE_BYTES
from ledger_reader.tail import FOLLOW_BYTES
from tests.conftest import line, written_ago
from tests.ledger_reader.test_directory import watching

FILLER = {"delta": "streamed text " * 16}
"""A payload that makes a line about 300 bytes."""


def lines_of(run_id: str, first: int, last: int) -> bytes:
    """Lines ``first`` to ``last`` of a live run (``first`` 1 starts it)."""
    now = written_ago(0)
    return b"".join(
        line(seq, "run_started" if seq == 1 else "llm_chunk", FILLER, run_id=run_id, time=now)
        for seq in range(first, last + 1)
    )


def ended(run_id: str, seq: int) -> bytes:
    return line(seq, "run_completed", {"status": "ok"}, run_id=run_id, time=written_ago(0))


def seqs_in(path: Path, end: int | None = None) -> list[int]:
    return [
        event.seq for event in iter_events(line.item for line in read_ledger_lines(path, 0, end))
    ]


class Handed:
    """What a watch handed on, per ledger: its history (the lines before its history end,
    read from the file when the run first came) and then its items."""

    def __init__(self, directory: LedgerDirectory) -> None:
        self.directory = directory
        self.seqs: dict[Path, list[int]] = {}
        self.resets = 0

    def take(self, update: DirectoryUpdate) -> None:
        for change in update.changes:
            if change.path not in self.seqs:
                self.seqs[change.path] = seqs_in(
                    change.path, self.directory.history_end(change.path) or 0
                )
            elif change.reset:
                self.resets += 1
                self.seqs[change.path] = []
            self.seqs[change.path].extend(event.seq for event in iter_events(change.items))

    async def until(self, updates: asyncio.Queue[DirectoryUpdate], last: dict[Path, int]) -> None:
        """Take updates until each ledger's last line named in ``last`` was handed on."""
        async with asyncio.timeout(20):
            while any(self.seqs.get(path, [0])[-1:] != [seq] for path, seq in last.items()):
                self.take(await updates.get())


def append(path: Path, data: bytes, *, piece: int | None = None) -> None:
    """Append ``data``, in writes of ``piece`` bytes (tearing lines) when given."""
    piece = piece or len(data)
    with path.open("ab") as handle:
        for at in range(0, len(data), piece):
            handle.write(data[at : at + piece])
            handle.flush()


def written_again(run_id: str, before: bytes, last: int) -> bytes:
    """A ledger written again: the same first line (the same head), other lines after it,
    longer than ``before``."""
    now = written_ago(0)
    start = before[: before.index(b"\n") + 1]
    return start + b"".join(
        line(seq, "llm_chunk", {"delta": "written again " * 20}, run_id=run_id, time=now)
        for seq in range(2, last + 1)
    )


def write_again(path: Path, data: bytes, how: str) -> None:
    """Truncate ``path`` and write ``data`` in place, or replace it by a file holding them."""
    if how == "truncated":
        with path.open("r+b") as handle:
            handle.truncate(0)
            handle.write(data)
    else:
        other = path.with_suffix(".next")
        other.write_bytes(data)
        os.replace(other, path)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("scanned", [3, WHOLE_FILE_BYTES // 300 + 100], ids=["whole", "head-tail"])
async def test_lines_written_around_the_scan_are_handed_on_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: int
) -> None:
    """Lines written just after the scan read a ledger, and before the watcher starts,
    follow its history as items; a line torn at the scan is handed on once it ends."""
    path = tmp_path / "run_1.jsonl"
    torn = lines_of("run_1", scanned + 1, scanned + 1)
    path.write_bytes(lines_of("run_1", 1, scanned) + torn[:40])
    read_whole = path.stat().st_size <= WHOLE_FILE_BYTES
    assert read_whole == (scanned == 3)  # the other ledger is read by its head and tail
    later = [torn[40:] + lines_of("run_1", scanned + 2, scanned + 2_000)]

    def read_then_write(*args: Any, **kwargs: Any) -> LedgerState:
        state = read_ledger_state(*args, **kwargs)
        if later:
            append(path, later.pop())
        return state

    monkeypatch.setattr("ledger_reader.directory.read_ledger_state", read_then_write)
    directory = LedgerDirectory(tmp_path, liveness_interval=0.2)
    handed = Handed(directory)
    async with watching(directory) as updates:
        handed.take(await updates.get())
        assert handed.seqs[path] == list(range(1, scanned + 1))  # its history: what was read
        await asyncio.to_thread(append, path, ended("run_1", scanned + 2_001))
        await handed.until(updates, {path: scanned + 2_001})
    assert handed.seqs[path] == list(range(1, scanned + 2_002))


@pytest.mark.timeout(30)
async def test_a_big_ledger_moved_in_while_watched_is_handed_on_once(tmp_path: Path) -> None:
    """A ledger that comes in bigger than a whole read (its history by head and tail),
    its last line torn, then finished and grown."""
    root = tmp_path / "runs"
    root.mkdir()
    outside = tmp_path / "run_2.jsonl"
    body = lines_of("run_2", 1, 3_000)
    assert len(body) > 2 * WHOLE_FILE_BYTES
    outside.write_bytes(body[:-100])
    directory = LedgerDirectory(root, liveness_interval=0.2)
    handed = Handed(directory)
    path = root / outside.name
    async with watching(directory) as updates:
        handed.take(await updates.get())
        outside.rename(path)
        await handed.until(updates, {path: 2_999})
        await asyncio.to_thread(append, path, body[-100:] + lines_of("run_2", 3_001, 4_000))
        await handed.until(updates, {path: 4_000})
    assert handed.seqs[path] == list(range(1, 4_001))


@pytest.mark.timeout(30)
async def test_ledgers_growing_at_once_are_each_handed_on_once(tmp_path: Path) -> None:
    """Several ledgers, each appended more than one poll reads, in writes that tear lines
    and end across read chunks, taking turns."""
    paths = [tmp_path / f"run_{index}.jsonl" for index in range(3)]
    for path in paths:
        path.write_bytes(lines_of(path.stem, 1, 1))
    bodies = {path: lines_of(path.stem, 2, 12_000) for path in paths}
    assert all(len(body) > 3 * FOLLOW_BYTES for body in bodies.values())
    piece = FOLLOW_BYTES // 3 + 7  # not a divisor of a chunk, nor a multiple of a line

    def write_in_turns() -> None:
        for at in range(0, max(map(len, bodies.values())), piece):
            for path, body in bodies.items():
                append(path, body[at : at + piece], piece=4_099)

    directory = LedgerDirectory(tmp_path, liveness_interval=0.2)
    handed = Handed(directory)
    async with watching(directory) as updates:
        handed.take(await updates.get())
        await asyncio.to_thread(write_in_turns)
        await handed.until(updates, dict.fromkeys(paths, 12_000))
    for path in paths:
        assert handed.seqs[path] == list(range(1, 12_001)), path.name


@pytest.mark.timeout(30)
@pytest.mark.parametrize("how", ["truncated", "replaced"])
async def test_a_ledger_written_again_while_watched_is_handed_on_from_its_start(
    tmp_path: Path, how: str
) -> None:
    """Truncated and written again in place, or replaced by another file: the run starts
    over (a reset) and every line of the new ledger comes once, a big one too."""
    path = tmp_path / "run_3.jsonl"
    first = lines_of("run_3", 1, 500)
    path.write_bytes(first[:3_000])
    directory = LedgerDirectory(tmp_path, liveness_interval=0.2)
    handed = Handed(directory)
    again = written_again("run_3", first, 6_000)
    async with watching(directory) as updates:
        handed.take(await updates.get())
        await asyncio.to_thread(append, path, first[3_000:])
        await handed.until(updates, {path: 500})
        write_again(path, again, how)
        await handed.until(updates, {path: 6_000})
        await asyncio.to_thread(append, path, ended("run_3", 6_001))
        await handed.until(updates, {path: 6_001})
    assert handed.resets == 1
    assert handed.seqs[path] == list(range(1, 6_002))


@pytest.mark.timeout(30)
@pytest.mark.parametrize("how", ["truncated", "replaced"])
async def test_a_ledger_written_again_just_after_the_scan_is_handed_on_from_its_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Written again between the scan's read and the first poll (before the watcher
    starts): that poll has only what the scan read to tell, and starts the run over."""
    path = tmp_path / "run_4.jsonl"
    first = lines_of("run_4", 1, 300)
    path.write_bytes(first)
    again = written_again("run_4", first, 2_000)
    rewrites = [how]

    def read_then_rewrite(*args: Any, **kwargs: Any) -> LedgerState:
        state = read_ledger_state(*args, **kwargs)
        if rewrites:
            write_again(path, again, rewrites.pop())
        return state

    monkeypatch.setattr("ledger_reader.directory.read_ledger_state", read_then_rewrite)
    directory = LedgerDirectory(tmp_path, liveness_interval=0.2)
    handed = Handed(directory)
    async with watching(directory) as updates:
        handed.take(await updates.get())
        await handed.until(updates, {path: 2_000})
    assert handed.resets == 1
    assert handed.seqs[path] == list(range(1, 2_001))
