"""One ledger file: first and last at once, seq search, the background index, growth."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from ledger_reader import DamagedLine, LedgerFile, LedgerGone, LedgerUnreadable, iter_events
from ledger_reader.events import RunEvent
from tests.conftest import completed, line, started


def big_ledger(path: Path, count: int, *, torn_tail: bool = False) -> Path:
    with path.open("wb") as handle:
        handle.write(started())
        for seq in range(2, count + 1):
            handle.write(line(seq, "llm_chunk", {"index": seq, "delta": "x" * (seq % 97)}))
        if torn_tail:
            handle.write(line(count + 1, "llm_chunk", {"delta": "torn"})[:30])
    return path


def test_first_and_last_event(write_ledger: Callable[..., Path]) -> None:
    path = write_ledger(
        b"\n", b"garbage\n", started(), line(2, "error", {"message": "m"}), completed(3), b"{torn"
    )
    with LedgerFile(path) as ledger:
        first = ledger.first_event()
        last = ledger.last_event()
    assert first is not None
    assert (first.seq, first.type) == (1, "run_started")
    assert last is not None
    assert (last.seq, last.type) == (3, "run_completed")


def test_empty_file(write_ledger: Callable[..., Path]) -> None:
    with LedgerFile(write_ledger()) as ledger:
        assert ledger.first_event() is None
        assert ledger.last_event() is None
        assert ledger.find_seq(1) is None
        ledger.build_index()
        assert ledger.index_complete
        assert ledger.line_count == 0


def test_find_seq_before_any_index(tmp_path: Path) -> None:
    path = big_ledger(tmp_path / "big.jsonl", 20_000, torn_tail=True)
    with LedgerFile(path) as ledger:
        assert not ledger.index_complete
        for seq in (1, 2, 777, 12_345, 19_999, 20_000):
            event = ledger.find_seq(seq)
            assert event is not None, seq
            assert event.seq == seq
        assert ledger.find_seq(20_001) is None  # the torn line is not an event yet
        window = ledger.events_from_seq(10_000, 100)
        assert [event.seq for event in window] == list(range(10_000, 10_100))


def test_background_index_matches_the_lines(tmp_path: Path) -> None:
    path = big_ledger(tmp_path / "big.jsonl", 50_000)
    with LedgerFile(path) as ledger:
        ledger.start_indexing()
        assert ledger.wait_indexed(timeout=20)
        assert ledger.line_count == 50_000
        items = ledger.lines(0, 50_000)
        assert [event.seq for event in iter_events(items)] == list(range(1, 50_001))
        last = ledger.line(49_999)
        assert last is not None
        assert not isinstance(last, DamagedLine)
        assert last.seq == 50_000
        assert ledger.raw_line(0) == started().rstrip(b"\n")


def test_index_across_chunk_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ledger_reader.file.INDEX_CHUNK", 4096)
    path = big_ledger(tmp_path / "big.jsonl", 3_000)
    with LedgerFile(path) as ledger:
        ledger.build_index()
        assert ledger.line_count == 3_000
        expected = path.read_bytes().split(b"\n")
        for number in (0, 1, 17, 1_500, 2_999):
            assert ledger.raw_line(number) == expected[number]


def test_damaged_lines_keep_their_place(write_ledger: Callable[..., Path]) -> None:
    path = write_ledger(started(), b"not json\n", b"\n", line(2, "error", {"message": "m"}))
    with LedgerFile(path) as ledger:
        ledger.build_index()
        assert ledger.line_count == 4
        damaged = ledger.line(1)
        assert isinstance(damaged, DamagedLine)
        assert damaged.offset == len(started())
        assert ledger.line(2) is None  # blank
        items = ledger.lines(0, 4)
        assert [type(item).__name__ for item in items] == [
            "RunStarted",
            "DamagedLine",
            "NoneType",
            "ErrorEvent",
        ]


def test_growth_is_followed_and_indexed(write_ledger: Callable[..., Path]) -> None:
    tail_piece = line(3, "llm_chunk", {"delta": "later"})
    path = write_ledger(started(), line(2, "llm_chunk", {"delta": "a"}), tail_piece[:20])
    with LedgerFile(path) as ledger:
        ledger.build_index()
        assert ledger.line_count == 2
        assert ledger.poll().lines == 0
        with path.open("ab") as handle:
            handle.write(tail_piece[20:] + completed(4))
        assert ledger.poll().lines == 2
        assert [event.seq for event in iter_events(ledger.lines(2, 4))] == [3, 4]
        assert ledger.line_count == 4
        event = ledger.line(3)
        assert event is not None
        assert not isinstance(event, DamagedLine)
        assert event.type == "run_completed"
        last = ledger.last_event()
        assert last is not None
        assert last.seq == 4


def test_truncation_and_replacement_start_over(
    write_ledger: Callable[..., Path], tmp_path: Path
) -> None:
    path = write_ledger(started(), line(2, "error", {"message": "m"}), completed(3))
    with LedgerFile(path) as ledger:
        ledger.build_index()
        path.write_bytes(started())
        growth = ledger.poll()
        assert growth.reset == "truncated"
        assert [event.seq for event in iter_events(ledger.lines(0, 9))] == [1]
        assert ledger.line_count == 1
        other = tmp_path / "other"
        other.write_bytes(started(skill="replaced") + completed(2))
        os.replace(other, path)
        growth = ledger.poll()
        assert growth.reset == "replaced"
        events: list[RunEvent] = list(iter_events(ledger.lines(0, 9)))
        assert [event.seq for event in events] == [1, 2]
        assert ledger.line_count == 2


def test_open_errors_are_typed(tmp_path: Path) -> None:
    with pytest.raises(LedgerGone):
        LedgerFile(tmp_path / "missing.jsonl")
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(LedgerUnreadable, match="not a regular file"):
        LedgerFile(tmp_path / "dir.jsonl")


def test_a_wait_for_the_index_ends_when_the_file_is_closed(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(line(seq, "llm_chunk", {"delta": "x"}) for seq in range(1, 2000)))
    ledger = LedgerFile(path)
    ledger.close()
    ledger.start_indexing()  # too late: a reader thread racing the close
    outcome: list[bool] = []
    waiter = threading.Thread(target=lambda: outcome.append(ledger.wait_indexed()))
    waiter.start()
    waiter.join(2)
    assert outcome == [False]
