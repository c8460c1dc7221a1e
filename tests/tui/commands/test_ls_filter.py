"""``runtop ls --filter`` keeps the runs the app's ``/`` filter passes, ``has:`` included."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import line, runs_listed
from tui.cli import main

FOUND = "run_20261129T064500001_aaaaaaaaaaaaaaaa"
FAILED = "run_20261129T064500002_bbbbbbbbbbbbbbbb"
QUIET = "run_20261129T064500003_cccccccccccccccc"


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    for run_id, said, status in [
        (FOUND, 'the server said "connection refused"', "ok"),
        (FAILED, "connection refused", "error"),
        (QUIET, "nothing went wrong", "ok"),
    ]:
        (tmp_path / f"{run_id}.jsonl").write_bytes(
            line(1, "run_started", {"skill": "fetch", "input": "q"}, run_id=run_id)
            + line(2, "tool_result", {"call_id": "c", "output": said}, run_id=run_id)
            + line(3, "run_completed", {"status": status}, run_id=run_id)
        )
    return tmp_path


def listed(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["ls", *argv, "--json", "--no-cache"]) == 0
    return sorted(run["run_id"] for run in runs_listed(capsys.readouterr().out))


def test_has_keeps_the_runs_whose_events_hold_the_words(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert listed(capsys, str(runs), "--filter", 'has:"connection refused"') == [FOUND, FAILED]
    assert listed(capsys, str(runs), "--filter", "has:'said \"connection'") == [FOUND]
    assert listed(capsys, str(runs), "--filter", "has:Connection") == []
    assert listed(capsys, str(runs), "--filter=-has:refused") == [QUIET]


def test_has_goes_with_the_other_terms(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert listed(capsys, str(runs), "--filter", "has:refused status:failed") == [FAILED]
    assert listed(capsys, str(runs), "--filter", f"run:{FOUND[-4:]} has:refused") == [FOUND]
    assert listed(capsys, str(runs), "--filter", "source:" + runs.name) == [FOUND, FAILED, QUIET]


def test_a_filter_that_does_not_parse_says_why(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ls", str(runs), "--filter", "colour:red"]) == 2
    assert "unknown field colour" in capsys.readouterr().err
