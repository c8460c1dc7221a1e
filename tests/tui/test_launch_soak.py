"""The launch soak: ``runtop replay``, ``runtop DIR`` and ``runtop demo`` started 30 times
each at 80x24 and 160x48, in a real terminal, a key pressed as soon as the first screen
shows; every launch must draw, stay up, open a run, go back and quit with status 0.
Minutes long: ``make soak`` runs it.

Before, ``runtop replay FILE`` crashed on launch in 3 of 4 tries (a screen imported in a
thread while a key's check imported it too). Not timed: it counts failures.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.terminal import RUNTOP, Terminal

LAUNCHES = 30
WATCH = 1.5
"""Seconds each first screen is watched before a key: the crash above came ~1 s after
the first load, with no key pressed."""
AT_ONCE = 3
"""Launches in flight together: the machine's cores are shared."""

LEDGERS = sorted(FIXTURES.glob("*.jsonl"))

COMMANDS = {
    "replay": (["replay", str(LEDGERS[0])], LEDGERS[0].stem[-12:]),
    "dir": ([str(FIXTURES)], LEDGERS[-1].stem[-12:]),
    "demo": (["demo"], "researcher"),
}
"""Each command, and what its first screen shows once its first load is in (the end of
a run id, as the table shows it)."""


def launch(command: str, size: tuple[int, int], home: Path) -> str | None:
    """One launch, used as a user would; what went wrong, or ``None``."""
    arguments, first_screen = COMMANDS[command]
    home.mkdir()
    with Terminal(RUNTOP + arguments, size=size, home=home, env={"TMPDIR": str(home)}) as terminal:
        try:
            terminal.wait_for(first_screen)
            terminal.watch(WATCH)  # the first load settles, then the screen stays up a while
            mark = terminal.mark()
            terminal.press("\r")  # open the selected run at once: the run screen's first use
            terminal.wait_for("esc Back", since=mark)
            mark = terminal.mark()
            terminal.press("\x1b")  # alone: an ESC with a key after it reads as Alt+key
            terminal.wait_for("STATUS", since=mark)  # the runs' titles: back on the runs
            terminal.press("q")
            status = terminal.wait_exit()
        except AssertionError as error:
            return str(error)
        text = terminal.text()
    if status != 0 or "Traceback" in text or "crashed" in text:
        return f"exit status {status}:\n{text[-3000:]}"
    return None


@pytest.mark.soak
@pytest.mark.timeout(600)
@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_launch_soak(command: str, size: tuple[int, int], tmp_path: Path) -> None:
    with ThreadPoolExecutor(AT_ONCE) as pool:
        outcomes = list(
            pool.map(lambda number: launch(command, size, tmp_path / str(number)), range(LAUNCHES))
        )
    failures = [outcome for outcome in outcomes if outcome is not None]
    assert not failures, f"{len(failures)} of {LAUNCHES} launches failed; the first:\n{failures[0]}"
