"""The first minutes on a fresh home connect: the app says there are no runs yet and how to
start; the demo's runs go where plain ``runtop`` and ``runtop ls`` look, and it says so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import runs_listed
from tests.terminal import Terminal
from tui.text import HOW_TO_START


def test_the_app_on_a_fresh_home_says_how_to_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with Terminal([sys.executable, "-m", "tui.cli"], size=(160, 48), home=home) as terminal:
        terminal.wait_for("No runs yet in", timeout=60)
        terminal.wait_for("runtop samples", timeout=10)
        terminal.press("q")
        assert terminal.wait_exit(30) == 0
        text = terminal.text()
    assert "cannot be read" not in text
    assert HOW_TO_START.split(":")[0] in text
    # made as a Manager() makes it, so the first runs there appear live
    assert (home / ".runtop" / "runs").is_dir()


def test_the_demo_writes_where_runtop_looks_and_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    runs = home / ".runtop" / "runs"
    argv = [sys.executable, "-m", "tui.cli", "demo", "--pace", "0.2"]
    with Terminal(argv, size=(160, 48), home=home) as terminal:
        terminal.wait_for("Quit", timeout=60)
        terminal.wait_for("succeeded", timeout=60)
        terminal.press("q")
        assert terminal.wait_exit(30) == 0
        text = terminal.text()
    assert f"The demo's runs are in {runs}" in text
    assert "Watch them again with:" in text
    listed = subprocess.run(
        [sys.executable, "-m", "tui.cli", "ls", "--json"],
        capture_output=True,
        text=True,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        timeout=60,
        check=True,
    )
    assert any(run["status"] == "succeeded" for run in runs_listed(listed.stdout))
