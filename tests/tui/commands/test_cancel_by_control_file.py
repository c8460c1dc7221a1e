"""``runtop cancel RUN --from DIR``: the ledger directory's source decides, as in the app.

A real run manager follows the directory; ``runtop cancel`` runs as its own
process, as a user types it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from run_manager import Manager, RunCanceled
from tests.conftest import REPO

pytestmark = pytest.mark.timeout(60)


class Waiting:
    """Waits until it is cancelled."""

    name = "waiting"

    async def run(self, input: str) -> str:
        await asyncio.Event().wait()
        return "never"


def runtop(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "RUNTOP_HOME": str(home)},
        cwd=REPO,
        timeout=30,
        check=False,
    )


async def test_a_live_run_is_cancelled_with_the_reason_and_the_apps_source(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    async with Manager(ledger_dir=runs) as manager:
        handle = manager.start(Waiting(), "x")
        done = await asyncio.to_thread(
            runtop, "cancel", handle.run_id, "--from", str(runs), "--reason", "stop", home=tmp_path
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"cancel requested: {handle.run_id}"), done.stdout
        with pytest.raises(RunCanceled):
            await asyncio.wait_for(handle.result(), 30)
    lines = [
        json.loads(line) for line in (runs / f"{handle.run_id}.jsonl").read_text().splitlines()
    ]
    asked = next(line for line in lines if line["type"] == "cancel_requested")
    # The app's LedgerDirectorySource records itself as "runtop": so does the command.
    assert (asked["payload"]["reason"], asked["payload"]["source"]) == ("stop", "runtop")
    assert lines[-1]["payload"]["status"] == "cancelled"


@pytest.mark.parametrize(
    ("sample", "said"),
    [
        ("143000045", "the run already ended (canceled)"),
        ("143000058", "its writer does not take control files (only runtop's does)"),
    ],
)
def test_a_run_the_source_refuses_is_refused_in_its_words(
    tmp_path: Path, fixtures: Path, sample: str, said: str
) -> None:
    """The words the app says beside a greyed ``c``; no control file is left behind."""
    run_id = next(path.stem for path in fixtures.glob("*.jsonl") if sample in path.name)
    refused = runtop("cancel", run_id, "--from", str(fixtures), home=tmp_path)
    assert refused.returncode == 1
    assert refused.stderr.strip() == f"runtop: cannot cancel {run_id}: {said}"
    assert not (fixtures / ".control").exists()
