"""Listing many ledgers at once: the same answer read here or shared among processes."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import msgspec
import pytest

from ledger_reader import scan as scan_module
from ledger_reader import scan_paths, scan_summaries
from tests.ledger_fixtures import write_fixture_ledgers

NOW = 1_900_000_000.0


@pytest.fixture
def ledgers(tmp_path: Path) -> Path:
    directory = tmp_path / "runs"
    write_fixture_ledgers(directory)
    (directory / "unreadable.jsonl").write_bytes(b"{}\n")
    (directory / "unreadable.jsonl").chmod(0)
    return directory


def _plain(summaries: list[object]) -> object:
    return msgspec.to_builtins(summaries)


def _expected(directory: Path) -> tuple[object, list[str]]:
    result = scan_paths([directory])
    return _plain(result.summaries(NOW)), sorted(str(error) for error in result.errors)


def _readable_as_root() -> bool:
    return os.geteuid() == 0


def test_shared_among_processes_the_answer_is_the_same(ledgers: Path) -> None:
    expected, expected_errors = _expected(ledgers)
    summaries, errors = scan_summaries([ledgers], now=NOW, workers=3, fork_at=0)
    assert _plain(summaries) == expected
    assert sorted(str(error) for error in errors) == expected_errors
    assert len(summaries) == 13 + (1 if _readable_as_root() else 0)


def test_a_share_whose_process_fails_is_read_here(
    ledgers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = os.getpid()
    real = scan_module._summarise

    def failing_in_children(*args: object, **kwargs: object) -> object:
        if os.getpid() != parent:
            raise RuntimeError("a child that dies")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_module, "_summarise", failing_in_children)
    expected, _ = _expected(ledgers)
    summaries, _ = scan_summaries([ledgers], now=NOW, workers=2, fork_at=0)
    assert _plain(summaries) == expected


def test_no_fork_where_threads_run(ledgers: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise AssertionError("forked with a thread running")

    monkeypatch.setattr(os, "fork", no_fork)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        summaries, _ = scan_summaries([ledgers], now=NOW, workers=2, fork_at=0)
    finally:
        stop.set()
        thread.join()
    assert _plain(summaries) == _expected(ledgers)[0]


def test_when_fork_fails_the_share_is_read_here(
    ledgers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_fork() -> int:
        raise OSError("no more processes")

    monkeypatch.setattr(os, "fork", no_fork)
    summaries, _ = scan_summaries([ledgers], now=NOW, workers=2, fork_at=0)
    assert _plain(summaries) == _expected(ledgers)[0]
