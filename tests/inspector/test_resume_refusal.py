"""``r`` on a run whose writer has exited is refused with the reason and leaves nothing
behind: a resume request in ``.control/`` is taken by the manager that wrote the run, and
with that process gone nothing would ever take it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector import ActionRefused, LedgerDirectorySource, RunKey, RunStore
from tests.conftest import line

pytestmark = pytest.mark.timeout(30)

GONE = "run_20261129T064500001_aaaaaaaaaaaaaaaa"
HERE = "run_20261129T064500002_bbbbbbbbbbbbbbbb"


def exited_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def finished_run(directory: Path, run_id: str, pid: int) -> None:
    started = {"writer": "runtop", "pid": pid, "host": os.uname().nodename, "input": "q"}
    lines = [
        line(1, "run_started", started, run_id=run_id),
        line(2, "run_completed", {"status": "ok"}, run_id=run_id),
    ]
    (directory / f"{run_id}.jsonl").write_bytes(b"".join(lines))


async def test_resume_is_refused_when_the_writer_has_exited(tmp_path: Path) -> None:
    pid = exited_pid()
    finished_run(tmp_path, GONE, pid)
    finished_run(tmp_path, HERE, os.getpid())  # this process wrote it, and lives
    async with RunStore() as store:
        store.add_source(LedgerDirectorySource(tmp_path, name="dir"))
        changes = store.changes()
        while len(store.snapshot().runs) < 2:
            await anext(changes)
        gone, here = RunKey("dir", GONE), RunKey("dir", HERE)
        said = f"its writer (pid {pid}) is gone: nothing would take the request"
        assert store.refusal(gone, "resume") == said
        with pytest.raises(ActionRefused, match="is gone"):
            await store.resume(gone)
        assert not (tmp_path / ".control").exists()
        assert store.refusal(here, "resume") is None
