"""``runtop ls``, ``show`` and ``show --timeline`` say one duration for a run whose clock
jumped, an offset as written, and ``ls`` counts the clock's warning."""

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


def test_show_says_an_event_stamped_before_the_start_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the app's event list says it: the clock went back an hour, and the offset shows
    it (moved to the start, it hid it); the run's duration is still never below zero."""
    shown = printed(capsys, "show", str(stepped_back(tmp_path)))
    offsets = [text.split()[0] for text in shown.splitlines() if text.strip()]
    assert offsets[:2] == ["+0.000s", "+1.000s"]
    assert offsets[-1] == "-3594.000s"  # 05:45:06, after a start at 06:45:00
    assert "wall 0s" in printed(capsys, "show", str(stepped_back(tmp_path)), "--timeline")
