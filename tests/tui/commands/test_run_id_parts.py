"""A run id may be typed whole, or as any unique start or end of it, as git takes commits."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.cli import main
from tui.commands.targets import CommandError, match_run_id

IDS = [
    "run_20261128T143000012_4f1a9c2e7b3d8a60",
    "run_20261128T143000031_9c8b7a6f5e4d3c2b",
    "run_20261128T143000045_1f2e3d4c5b6a7980",
]


@pytest.mark.parametrize(
    ("part", "found"),
    [
        ("run_20261128T143000012_4f1a9c2e7b3d8a60", IDS[0]),  # whole
        ("run_20261128T143000031", IDS[1]),  # its start
        ("7b3d8a60", IDS[0]),  # its end, as the app shows it
        ("9c8b7a", IDS[1]),  # the start of its last part
        ("6a7980", IDS[2]),
    ],
)
def test_a_unique_part_names_its_run(part: str, found: str) -> None:
    assert match_run_id(part, IDS, "here") == found


def test_an_ambiguous_part_names_every_run_it_could_be() -> None:
    with pytest.raises(CommandError) as raised:
        match_run_id("run_20261128", IDS, "under runs")
    said = str(raised.value)
    assert said.startswith("run_20261128 is ambiguous under runs: it names ")
    assert all(run_id in said for run_id in IDS)


@pytest.mark.parametrize("part", ["zzzz", "4f1", "run_2026112899"])
def test_a_part_that_names_nothing_is_refused(part: str) -> None:
    with pytest.raises(CommandError, match=f"no ledger for run {part} here"):
        match_run_id(part, IDS, "here")


def test_show_and_cancel_take_a_part_of_the_id(
    capsys: pytest.CaptureFixture[str], fixtures: Path
) -> None:
    assert main(["show", "9c8b7a6f", "--from", str(fixtures)]) == 0
    assert "▶ started deploy" in capsys.readouterr().out
    # the finished run is found by its end, and refused for what it is, not for its id
    assert main(["cancel", "5e4d3c2b", "--from", str(fixtures)]) == 1
    assert "9c8b7a6f5e4d3c2b" in capsys.readouterr().err
