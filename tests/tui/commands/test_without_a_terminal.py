"""Without a terminal the app ends at once with one line, where Textual would draw its
escape codes into the pipe and wait for keys forever."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tui.commands.targets import NO_TERMINAL


@pytest.mark.parametrize(
    "arguments",
    [[], [str(FIXTURES)], ["demo"], ["replay", str(FIXTURES)], ["samples"], ["--read-only"]],
    ids=["runtop", "runtop DIR", "demo", "replay", "samples", "an option"],
)
def test_the_app_without_a_terminal_says_so_in_one_line(
    arguments: list[str], tmp_path: Path
) -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "tui.cli", *arguments],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={"RUNTOP_HOME": str(tmp_path), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        timeout=30,
        check=False,
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (1, "", f"runtop: {NO_TERMINAL}\n")
    assert not (tmp_path / "runs").exists()  # the demo started nothing


def test_what_needs_no_terminal_runs_without_one(tmp_path: Path) -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "tui.cli", "samples", "--path"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={"RUNTOP_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        timeout=30,
        check=False,
    )
    assert (ran.returncode, ran.stdout) == (0, f"{tmp_path / 'samples'}\n"), ran.stderr
