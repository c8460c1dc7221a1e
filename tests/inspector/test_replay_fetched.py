"""A replay of a server's runs plays copies of their ledgers: a run left unfinished there
is not judged by its copy (free of any lock, its writer the server), which said abandoned
of a run the server was still running."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest

from inspector import ReplaySource
from ledger_reader import RunStatus
from tests.conftest import line

pytestmark = pytest.mark.timeout(30)

RUN = "run_20261206T120000000_aaaaaaaaaaaaaaaa"


async def played_to_the_end(path: Path, *, fetched: bool) -> RunStatus:
    """The run's status once the replay has played every event and said what it judged."""
    replay = ReplaySource([path], speed=0, fetched=[path] if fetched else [])
    status = RunStatus.UNKNOWN
    updates = replay.updates()
    try:
        while True:
            try:  # once played to the end, a judgement follows at once, or none
                wait = 1.0 if replay.finished.is_set() else 10.0
                update = await asyncio.wait_for(anext(updates), wait)
            except TimeoutError:
                return status
            for run in update.runs:
                status = run.summary.status
    finally:
        await replay.close()
        await updates.aclose()


@pytest.mark.parametrize("fetched", [True, False])
async def test_a_run_copied_from_a_server_is_as_the_server_said(
    tmp_path: Path, fetched: bool
) -> None:
    path = tmp_path / f"{RUN}.jsonl"
    started = {"skill": "s", "writer": "runtop", "pid": os.getpid(), "host": socket.gethostname()}
    path.write_bytes(
        line(1, "run_started", started, run_id=RUN)
        + line(2, "node_enter", {"node_id": "llm:m#1"}, run_id=RUN)
    )
    status = await played_to_the_end(path, fetched=fetched)
    # A copy holds no lock: judged as a directory's ledger, its writer is gone.
    assert status is (RunStatus.RUNNING if fetched else RunStatus.ABANDONED)
