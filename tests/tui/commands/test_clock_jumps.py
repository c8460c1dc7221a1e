"""``runtop ls``, ``show`` and ``show --timeline`` say one duration for a run whose clock
jumped, no offset below zero, and ``ls`` counts the clock's warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.inspector.test_clock_jumps import jumped, stepped_back
from tui.cli import main

pytestmark = pytest.mark.timeout(30)


def printed(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_ls_and_the_timeline_say_the_same_duration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = jumped(tmp_path)
    row = printed(capsys, "ls", str(tmp_path)).splitlines()[1]
    assert " 20s " in row
    assert "1 warning" in row
    assert "wall 20s" in printed(capsys, "show", str(path), "--timeline")


def test_show_never_prints_a_negative_offset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = printed(capsys, "show", str(stepped_back(tmp_path)))
    offsets = [text.split()[0] for text in shown.splitlines() if text.strip()]
    assert offsets
    assert all(not offset.startswith("-") for offset in offsets), shown
    assert "wall 0s" in printed(capsys, "show", str(stepped_back(tmp_path)), "--timeline")
