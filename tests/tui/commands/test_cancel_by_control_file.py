"""``runtop cancel RUN --from DIR``: the ledger directory's source decides, as in the app.

A real run manager follows the directory; ``runtop cancel`` runs as its own
process, as a user types it.
"""

from __future__ import annotations

import asyncio
import getpass
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
    # The app's LedgerDirectorySource records itself as "runtop": so does the command, and
    # who asked: the OS user.
    payload = asked["payload"]
    assert (payload["reason"], payload["source"]) == ("stop", "runtop")
    assert payload["requested_by"] == getpass.getuser()
    assert lines[-1]["payload"]["status"] == "cancelled"


async def app_refusal(fixtures: Path, run_id: str) -> str | None:
    """What the app says beside a greyed ``c`` on ``run_id``, read from a directory."""
    from inspector import LedgerDirectorySource, RunKey, RunStore

    async with RunStore() as store:
        store.add_source(LedgerDirectorySource(fixtures, name="dir"))
        changes = store.changes()
        while store.get(RunKey("dir", run_id)) is None:
            await anext(changes)
        return store.refusal(RunKey("dir", run_id), "cancel")


def test_every_run_the_app_refuses_is_refused_in_the_apps_words(
    tmp_path: Path, fixtures: Path
) -> None:
    """Ended, stale, another writer's: the words the app says beside a greyed ``c``; no
    control file is left behind."""
    run_ids = sorted(path.stem for path in fixtures.glob("*.jsonl"))
    assert len(run_ids) >= 5
    for run_id in run_ids:
        said = asyncio.run(app_refusal(fixtures, run_id))
        assert said is not None, run_id
        refused = runtop("cancel", run_id, "--from", str(fixtures), home=tmp_path)
        assert refused.returncode == 1
        assert refused.stderr.strip() == f"runtop: cannot cancel {run_id}: {said}"
        assert not (fixtures / ".control").exists()
