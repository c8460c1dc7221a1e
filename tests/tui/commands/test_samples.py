"""`runtop samples`: the sample ledgers the package ships, copied into the home and opened."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tui.cli import main
from tui.commands.samples import SHIPPED


def test_the_package_ships_the_samples_the_tests_read() -> None:
    assert SHIPPED == FIXTURES
    assert len(list(SHIPPED.glob("*.jsonl"))) == 6


def test_samples_path_copies_them_into_the_home_and_prints_where(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNTOP_HOME", str(tmp_path / "home"))
    assert main(["samples", "--path"]) == 0
    folder = Path(capsys.readouterr().out.strip())
    assert folder == tmp_path / "home" / "samples"
    assert sorted(path.name for path in folder.iterdir()) == sorted(
        path.name for path in SHIPPED.glob("*.jsonl")
    )
    assert (folder.stat().st_mode & 0o777) == 0o700
    changed = folder / next(SHIPPED.glob("*.jsonl")).name
    changed.write_text("edited by hand\n")
    assert main(["samples", "--path"]) == 0
    assert changed.read_bytes() == (SHIPPED / changed.name).read_bytes()  # restored


def test_fresh_copies_of_the_samples_are_not_running(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy is as new as the copying; the two unfinished samples ended days ago by their
    own times, so they are stale, not ``running … 179h``."""
    monkeypatch.setenv("RUNTOP_HOME", str(tmp_path / "home"))
    assert main(["samples", "--path"]) == 0
    folder = capsys.readouterr().out.strip()
    assert main(["ls", folder, "--json"]) == 0
    statuses = {run["run_id"][-4:]: run["status"] for run in json.loads(capsys.readouterr().out)}
    assert statuses == {
        "8a60": "succeeded",
        "3c2b": "failed",
        "7980": "canceled",
        "0617": "stale",
        "b4c5": "stale",
        "6f5e": "succeeded",
    }
