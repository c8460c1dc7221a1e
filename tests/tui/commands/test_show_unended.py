"""``runtop show`` of a run with no end in its ledger says where it stands, as ``ls`` does.

A walk read the stale migrate-db's three events, ending at its question, and nothing
said the run was stale or that nobody had answered (``--timeline`` said ``stale``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ledger_fixtures import abandoned_torn_run
from tui.cli import main


def shown(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    assert main(["show", *args]) == 0
    return capsys.readouterr().out.splitlines()


def sample(fixtures: Path, stamp: str) -> str:
    return str(next(path for path in fixtures.glob("*.jsonl") if stamp in path.name))


def test_a_stale_run_s_last_line_says_stale_and_the_approval_unanswered(
    fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = shown(capsys, sample(fixtures, "143000052"))
    assert "asked: Apply migration v42 to production?" in lines[-2]
    assert lines[-1].strip() == (
        "no end recorded: stale (its writer went quiet), "
        "approval unanswered: Apply migration v42 to production?"
    )


def test_an_abandoned_run_says_its_writer_is_gone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "run_20261130T010000007_dead0dead0dead0d.jsonl"
    ledger.write_bytes(abandoned_torn_run(ledger.stem))
    lines = shown(capsys, str(ledger))
    assert lines[-1].strip() == "no end recorded: abandoned (its writer is gone)"


def test_a_run_that_ended_and_json_get_no_such_line(
    fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ended = shown(capsys, sample(fixtures, "143000045"))
    assert "run canceled: wrong input file" in ended[-1]
    assert not any("no end" in line for line in ended)
    as_json = shown(capsys, sample(fixtures, "143000052"), "--json")
    assert not any("no end" in line for line in as_json)
    assert len(as_json) == 3  # one JSON line a ledger line, nothing else
