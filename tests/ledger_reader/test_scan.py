"""Listing many ledgers at once (``runtop ls``): the same answer as scanning and summarising."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

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


def test_the_listing_is_the_scan_summarised(ledgers: Path) -> None:
    result = scan_paths([ledgers])
    summaries, errors = scan_summaries([ledgers], now=NOW)
    assert msgspec.to_builtins(summaries) == msgspec.to_builtins(result.summaries(NOW))
    assert sorted(map(str, errors)) == sorted(map(str, result.errors))
    readable_as_root = os.geteuid() == 0
    assert len(summaries) == 13 + (1 if readable_as_root else 0)
    assert len(errors) == (0 if readable_as_root else 1)
    started = [summary.started for summary in summaries]
    assert started == sorted(started, reverse=True)
