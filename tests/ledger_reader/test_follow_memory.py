"""Followers hold an index of what was appended, and bounded batches of it, never all of it.

A writer can append faster than a follower handles lines (hundreds of MB a
second); whatever it appended meanwhile, a follower's next read must not
hold it all at once, and a file kept open for range reads keeps newline
positions, not lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ledger_reader import LedgerDirectory, LedgerFile, LedgerTail, iter_events
from ledger_reader.tail import FOLLOW_BYTES
from tests.conftest import completed, line, started

RUN = "run_20261129T064500123_9f2c4e1a0b3d5e7f"
NOW = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ").encode()
"""The lines' time: a run another writer wrote a week ago is stale, not followed."""
LINE = (
    b'{"run_id":"' + RUN.encode() + b'","seq":%d,"time":"' + NOW + b'",'
    b'"type":"llm_chunk","payload":{"index":%d,"delta":"' + b"streamed text " * 16 + b'"}}\n'
)
"""A typical line of about 300 bytes."""


def chunk_lines(first_seq: int, count: int) -> bytes:
    return b"".join(LINE % (seq, seq) for seq in range(first_seq, first_seq + count))


def append_megabytes(path: Path, megabytes: int, first_seq: int) -> int:
    """Append about ``megabytes`` MB of lines from ``first_seq``; return the next seq."""
    seq = first_seq
    with path.open("ab") as handle:
        while handle.tell() < megabytes * 1_000_000:
            handle.write(chunk_lines(seq, 10_000))
            seq += 10_000
    return seq


@contextlib.contextmanager
def traced_peak() -> Iterator[list[int]]:
    """The peak of Python's (and numpy's) allocations inside the block, in bytes."""
    peak: list[int] = []
    tracemalloc.start()
    try:
        yield peak
        peak.append(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()


def test_an_open_file_indexes_growth_without_holding_its_lines(tmp_path: Path) -> None:
    path = tmp_path / f"{RUN}.jsonl"
    path.write_bytes(started())
    with LedgerFile(path) as ledger:
        ledger.build_index()
        end = append_megabytes(path, 24, 2)
        with traced_peak() as peak:
            growth = ledger.poll()
        # 70,000 lines: their positions take 0.6 MB; decoded, they took over 60.
        assert peak[0] < 6_000_000
        assert growth.lines == end - 2
        assert ledger.line_count == end - 1
        last = ledger.lines(end - 2, end - 1)
        assert [event.seq for event in iter_events(last)] == [end - 1]


def test_a_tail_reads_a_big_append_in_bounded_batches(tmp_path: Path) -> None:
    path = tmp_path / f"{RUN}.jsonl"
    path.write_bytes(started())
    tail = LedgerTail(path)
    assert [event.seq for event in iter_events(tail.poll().items)] == [1]
    end = append_megabytes(path, 24, 2)
    seqs: list[int] = []
    batches = 0
    biggest = 0
    while True:
        with traced_peak() as peak:
            batch = tail.poll()
        biggest = max(biggest, peak[0])
        batches += 1
        seqs.extend(event.seq for event in iter_events(batch.items))
        if not batch.more:
            break
    assert seqs == list(range(2, end))
    assert batches >= 24_000_000 // FOLLOW_BYTES
    assert biggest < 8 * FOLLOW_BYTES  # one batch decoded, not 24 MB of them


@pytest.mark.timeout(60)
async def test_a_watched_directory_hands_a_big_append_on_in_bounded_updates(
    tmp_path: Path,
) -> None:
    path = tmp_path / f"{RUN}.jsonl"
    path.write_bytes(started())
    directory = LedgerDirectory(tmp_path, liveness_interval=0.2)
    stop = asyncio.Event()
    seqs: list[int] = []
    largest = 0
    end = 0
    async for update in directory.watch(stop):
        for change in update.changes:
            largest = max(largest, len(change.items))
            seqs.extend(event.seq for event in iter_events(change.items))
        if update.initial:
            end = await asyncio.to_thread(append_megabytes, path, 24, 2)
            with path.open("ab") as handle:
                handle.write(completed(end))
        if end and seqs and seqs[-1] == end:
            stop.set()
    assert seqs == list(range(2, end + 1))
    assert largest <= 2 * FOLLOW_BYTES // len(chunk_lines(2, 1))  # 80,000 lines in all


PEAK = """
import atexit, sys
def _peak() -> None:
    with open("/proc/self/status") as status:
        sys.stderr.write(next(line for line in status if line.startswith("VmHWM")))
atexit.register(_peak)
"""
"""Prepended to a follower's code: it says its own peak RSS as it exits. The kernel's
account of a child (``wait4``'s ``ru_maxrss``) also counts the pytest process it was
forked from, before ``exec``: hundreds of MB once the whole suite is imported."""


FOLLOWER = (
    PEAK
    + """
import asyncio, sys
from ledger_reader import LedgerDirectory, iter_events
from ledger_reader.directory import lines_before

async def main() -> None:
    stop = asyncio.Event()
    directory = LedgerDirectory(sys.argv[1])
    handed = None
    out_of_turn = 0
    print("watching", flush=True)
    async for update in directory.watch(stop):
        for change in update.changes:
            if handed is None:
                # The run's first report: the lines its scan read came as its summary,
                # as many as end before its history_end (the writer may be lines ahead).
                handed = lines_before(change.path, directory.history_end(change.path) or 0)
            for event in iter_events(change.items):
                out_of_turn += event.seq != handed + 1
                handed = event.seq
            if change.summary.status.value in ("succeeded", "failed", "canceled"):
                stop.set()  # its end line read: every line is in
    print(handed, out_of_turn, flush=True)

asyncio.run(main())
"""
)


SHOW = PEAK + "from tui.cli import main; raise SystemExit(main())"


def _peak_rss_mb(process: subprocess.Popen[str]) -> float:
    """A follower's own peak RSS (``VmHWM``), as it said when it exited."""
    assert process.stderr is not None
    said = process.stderr.read()
    process.stderr.close()
    process.wait(timeout=60)
    [line] = [line for line in said.splitlines() if line.startswith("VmHWM")]
    return int(line.split()[1]) / 1024


def _started_follower(args: list[str], path: Path) -> subprocess.Popen[str]:
    path.write_bytes(line(1, "run_started", {"skill": "research"}, time=NOW.decode()))
    return subprocess.Popen(
        [sys.executable, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )


@pytest.mark.soak
@pytest.mark.timeout(600)
def test_a_directory_follower_stays_small_while_300_mb_are_appended(tmp_path: Path) -> None:
    path = tmp_path / f"{RUN}.jsonl"
    follower = _started_follower(["-c", FOLLOWER, str(tmp_path)], path)
    assert follower.stdout is not None
    assert follower.stdout.readline() == "watching\n"
    end = append_megabytes(path, 300, 2)
    with path.open("ab") as handle:
        handle.write(completed(end))
    said = follower.stdout.readline()
    peak = _peak_rss_mb(follower)
    follower.stdout.close()
    assert follower.returncode == 0
    # Every line once and in turn: those the scan read as the run's history, then the rest.
    assert said.split() == [str(end), "0"]
    assert peak < 120  # it peaked at 900 MB holding all it had read


@pytest.mark.soak
@pytest.mark.timeout(600)
def test_show_follow_stays_small_and_ends_while_300_mb_are_appended(tmp_path: Path) -> None:
    path = tmp_path / f"{RUN}.jsonl"
    show = _started_follower(
        ["-c", SHOW, "show", str(path), "--follow", "--json"],
        path,
    )
    assert show.stdout is not None
    assert show.stdout.readline().startswith("{")  # its first line: it follows now
    end = append_megabytes(path, 300, 2)
    with path.open("ab") as handle:
        handle.write(completed(end))
    printed = 1 + sum(1 for _ in show.stdout)
    peak = _peak_rss_mb(show)
    show.stdout.close()
    assert show.returncode == 0
    assert printed == end
    assert peak < 150
