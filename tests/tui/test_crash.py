"""A crash is loud: the terminal given back, one line saying what happened and where the
traceback is, and a non-zero exit status. Run as a user would, in a real terminal."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.terminal import LEAVE_ALTERNATE_SCREEN, Terminal

LEDGER = next(iter(sorted(FIXTURES.glob("*.jsonl"))))

BROKEN = """
import sys
from tui.cli import main
from tui.screens.runs import RunsScreen

def broken(self, *args):
    raise RuntimeError("injected \\x1b[31mfault")

RunsScreen.{method} = broken
sys.exit(main(sys.argv[1:]))
"""
"""runtop with one of the runs screen's handlers raising: on mount, or on a key."""


def crash_lines(output: bytes) -> list[str]:
    """What the terminal shows once the app gave the screen back."""
    assert LEAVE_ALTERNATE_SCREEN in output, "the terminal was not restored"
    after = output.rsplit(LEAVE_ALTERNATE_SCREEN, 1)[1]
    modes = re.compile(rb"\x1b\[\??[0-9;]*[a-zA-Z]")  # the terminal's modes turned back off
    text = modes.sub(b"", after).decode("utf-8", "replace").replace("\r", "")
    assert "\x1b" not in text, text
    return [line for line in text.split("\n") if line.strip()]


@pytest.mark.parametrize(("method", "key"), [("on_mount", ""), ("action_sort", "s")])
def test_a_crash_restores_the_terminal_says_one_line_and_exits_non_zero(
    tmp_path: Path, method: str, key: str
) -> None:
    argv = [sys.executable, "-c", BROKEN.format(method=method), "replay", str(LEDGER)]
    with Terminal(argv, size=(80, 24), home=tmp_path) as terminal:
        if key:
            terminal.wait_for(LEDGER.stem[-12:])
            terminal.press(key)
        status = terminal.wait_exit()
        output = bytes(terminal.output)
    assert status == 70
    lines = crash_lines(output)
    assert len(lines) == 1, lines
    said = lines[0]
    assert said.startswith("runtop: crashed with RuntimeError: injected ␛[31mfault;"), said
    kept = Path(said.split("the full traceback is in ", 1)[1].split(". Please report it", 1)[0])
    assert kept.parent == tmp_path / ".runtop"
    assert kept.stat().st_mode & 0o777 == 0o600
    traceback = kept.read_text()
    assert traceback.startswith("Traceback (most recent call last):")
    assert "in broken" in traceback
    assert "RuntimeError: injected" in traceback


def test_a_crash_before_the_app_starts_is_said_the_same_way(tmp_path: Path) -> None:
    script = BROKEN.replace(
        "RunsScreen.{method} = broken", "import tui.app; tui.app.make_app = broken"
    )
    argv = [sys.executable, "-c", script, "replay", str(LEDGER)]
    with Terminal(argv, size=(80, 24), home=tmp_path) as terminal:
        status = terminal.wait_exit()
        text = terminal.text().replace("\r", "")
    assert status == 70
    lines = [line for line in text.split("\n") if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("runtop: crashed with RuntimeError: injected"), lines


def test_the_report_address_is_the_packages_issues_url() -> None:
    """Where a crash says to report it comes from ``[project.urls]`` as installed: one
    place to set it; a package that names none is told so, not sent to a made-up address."""
    from tui.crash import issues_address

    lines = ["Homepage, https://example.org/runtop", "Issues, https://example.org/runtop/issues"]
    assert issues_address(lines) == "https://example.org/runtop/issues"
    assert issues_address(["Bug Tracker, https://example.org/bugs"]) == "https://example.org/bugs"
    assert issues_address(["Homepage, https://example.org/runtop"]) is None
    assert issues_address(["Issues,"]) is None
    assert issues_address([]) is None
