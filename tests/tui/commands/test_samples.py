"""`runtop samples`: the sample ledgers the package ships, copied into the home and opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES, runs_listed
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
    statuses = {run["run_id"][-4:]: run["status"] for run in runs_listed(capsys.readouterr().out)}
    assert statuses == {
        "8a60": "succeeded",
        "3c2b": "failed",
        "7980": "canceled",
        "0617": "stale",
        "b4c5": "stale",
        "6f5e": "succeeded",
    }


@pytest.mark.parametrize(
    "command",
    [
        ["ls", "{home}/samples"],
        ["ls", "{home}/samples", "--json"],
        ["show", "7b3d8a60", "--from", "{home}/samples"],
        ["show", "7b3d8a60", "--from={home}/samples"],
        ["show", "{home}/samples/run_20261128T143000012_4f1a9c2e7b3d8a60.jsonl"],
    ],
)
def test_a_line_naming_the_samples_folder_works_in_a_new_home(
    command: list[str],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The documents' ``runtop ls ~/.runtop/samples`` lines, each on its own, before any
    ``runtop samples``: the folder is made then, and the run is there."""
    home = tmp_path / "home"
    monkeypatch.setenv("RUNTOP_HOME", str(home))
    assert main([word.format(home=home) for word in command]) == 0
    said = capsys.readouterr()
    assert "research" in said.out  # the run of 4f1a9c2e7b3d8a60
    assert f"copied the sample runs runtop ships to {home / 'samples'}" in said.err
    assert main([word.format(home=home) for word in command]) == 0  # then, as any folder
    assert "copied" not in capsys.readouterr().err


def test_another_missing_folder_is_still_missing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNTOP_HOME", str(tmp_path / "home"))
    assert main(["ls", str(tmp_path / "home" / "sample")]) == 1
    said = capsys.readouterr().err
    assert "no such file or directory" in said
    assert not (tmp_path / "home" / "samples").exists()


def test_the_documents_folder_works_where_runtop_home_is_elsewhere(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``~/.runtop/samples`` as the README writes it, with $RUNTOP_HOME set to another
    folder: it said no such file or directory."""
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("RUNTOP_HOME", str(tmp_path / "elsewhere"))
    named = tmp_path / "user" / ".runtop" / "samples"
    assert main(["ls", str(named)]) == 0
    assert f"copied the sample runs runtop ships to {named}" in capsys.readouterr().err
    assert main(["show", "7b3d8a60", "--from", str(named)]) == 0
