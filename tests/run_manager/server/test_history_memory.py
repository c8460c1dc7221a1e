"""Histories are sent from the ledger a piece at a time: clients that read slowly hold little."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, completed, line, started

pytestmark = pytest.mark.timeout(60)

RUN = "run_20261129T064500123_9f2c4e1a0b3d5e7f"
EVENTS = 4000


def rss_mb(pid: int) -> float:
    for text in Path(f"/proc/{pid}/status").read_text().splitlines():
        if text.startswith("VmRSS:"):
            return int(text.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.fixture
def big_run(tmp_path: Path) -> Iterator[tuple[str, int, str, int]]:
    """``runtop serve`` over a directory holding one finished run of 8 MB."""
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    with (runs / f"{RUN}.jsonl").open("wb") as ledger:
        ledger.write(started(run_id=RUN))
        for seq in range(2, EVENTS):
            ledger.write(line(seq, "log", {"message": "x" * 2000}, run_id=RUN))
        ledger.write(completed(EVENTS, run_id=RUN))
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0", "--ledger-dir", str(runs)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith("runtop serve: http://127.0.0.1:"), first
    host, port = first.split()[2].rstrip(",").removeprefix("http://").split(":")
    [token_file] = (tmp_path / "home" / "tokens").iterdir()
    try:
        yield host, int(port), token_file.read_text().strip(), process.pid
    finally:
        process.terminate()
        process.communicate(timeout=10)


async def test_clients_that_stop_reading_a_history_hold_little_of_it(
    big_run: tuple[str, int, str, int],
) -> None:
    host, port, token, pid = big_run
    before = rss_mb(pid)
    held = []
    for number in range(12):
        reader, writer = await asyncio.open_connection(host, port)
        path = f"/api/agent/runs/{RUN}" + ("/events" if number % 2 else "")
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n".encode()
        )
        first = await asyncio.wait_for(reader.readexactly(4096), 20)  # then reads no more
        assert first.startswith(b"HTTP/1.1 200 ")
        held.append(writer)
    grown = rss_mb(pid) - before
    for writer in held:
        writer.transport.abort()
    # Twelve 8 MB histories built whole would hold well over 100 MB.
    assert grown < 40, f"the server grew {grown:.0f} MB for twelve histories left unread"
