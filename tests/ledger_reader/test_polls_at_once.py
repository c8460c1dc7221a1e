"""Threads that poll one growing ledger at once (a timeline counting its lines while the
event list reads a page) never take its growth for a truncation."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from ledger_reader import LedgerFile

pytestmark = pytest.mark.timeout(60)


def test_polls_from_several_threads_never_start_over(tmp_path: Path) -> None:
    path = tmp_path / "run_20261129T060000000_00000000000000aa.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    ledger = LedgerFile(path)
    written = threading.Event()
    resets: list[str] = []

    def write() -> None:
        for seq in range(1, 20_001):
            line = {
                "run_id": "r",
                "seq": seq,
                "time": "2026-11-29T06:00:01Z",
                "type": "llm_chunk",
                "payload": {"index": seq, "delta": "streamed text"},
            }
            os.write(fd, (json.dumps(line) + "\n").encode())
        written.set()

    def poll() -> None:
        while not written.is_set():
            batch = ledger.poll()
            if batch.reset is not None:
                resets.append(batch.reset)

    threads = [threading.Thread(target=write), *(threading.Thread(target=poll) for _ in range(3))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(50)
    os.close(fd)
    ledger.poll()
    assert resets == []
    assert (ledger.generation, ledger.line_count) == (0, 20_000)
