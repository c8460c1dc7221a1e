"""``runtop ls --watch``: the table again as the runs change, until Ctrl-C, which ends it
with status 0; on a terminal redrawn in place, into a pipe written again only when the
runs changed."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import line, written_ago
from tests.terminal import REPO, RUNTOP, Terminal

pytestmark = pytest.mark.timeout(60)

FIRST = "run_20261129T064500001_aaaaaaaaaaaaaaaa"
SECOND = "run_20261129T064500002_bbbbbbbbbbbbbbbb"


def write_run(directory: Path, run_id: str, *, ended: bool = True, now: bool = False) -> None:
    """A run of two lines (one while not ``ended``), written an hour ago or, ``now``, just
    now (a run not ended is then running)."""
    when = written_ago(0) if now else None
    lines = line(1, "run_started", {"skill": "fetch", "input": "q"}, run_id=run_id, time=when)
    if ended:
        lines += line(2, "run_completed", {"status": "ok"}, run_id=run_id, time=when)
    (directory / f"{run_id}.jsonl").write_bytes(lines)


class Piped:
    """``argv`` with its output into a pipe, read as it comes."""

    def __init__(self, argv: list[str], home: Path) -> None:
        env = {**os.environ, "RUNTOP_HOME": str(home), "PYTHONPATH": str(REPO)}
        self.process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO
        )
        self.out = b""

    def read_until(self, wanted: bytes, count: int = 1, timeout: float = 20.0) -> str:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while self.out.count(wanted) < count:
            left = deadline - time.monotonic()
            assert left > 0, f"{wanted!r} x{count} never came; got:\n{self.out.decode()}"
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                assert chunk, f"ended early:\n{self.out.decode()}"
                self.out += chunk
        return self.out.decode()

    def interrupt(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGINT)
        _, err = self.process.communicate(timeout=20)
        return self.process.returncode, err.decode()


def test_into_a_pipe_a_table_is_written_each_time_the_runs_change(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    write_run(runs, FIRST)
    piped = Piped([*RUNTOP, "ls", str(runs), "--watch"], tmp_path / "home")
    said = piped.read_until(FIRST.encode())
    assert " · 1 run\n" in said
    assert "STATUS" in said
    time.sleep(2.5)  # listed twice more meanwhile, unchanged: not written again
    piped.read_until(b"STATUS", 1)
    assert piped.out.count(b"STATUS") == 1
    write_run(runs, SECOND, ended=False)
    said = piped.read_until(b"STATUS", 2)
    assert " · 2 runs\n" in said
    assert SECOND in said.split(" · 2 runs\n")[1]
    status, err = piped.interrupt()
    assert (status, err) == (0, "")


def test_json_is_the_runs_then_each_run_that_changed_came_or_left(tmp_path: Path) -> None:
    """As ``ls --json``, a run a line; then a line for each run that changed or came, and
    one for each that left the listing (here: no longer passing ``--filter``)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    write_run(runs, FIRST, ended=False, now=True)
    piped = Piped(
        [*RUNTOP, "ls", str(runs), "--watch", "--json", "--filter", "status:running"],
        tmp_path / "home",
    )
    piped.read_until(b"\n")
    time.sleep(2.5)  # listed twice more meanwhile, unchanged: nothing written
    write_run(runs, SECOND, ended=False, now=True)
    piped.read_until(b"\n", 2)
    write_run(runs, FIRST, now=True)  # it ends: it is no longer running
    said = piped.read_until(b"\n", 3)
    lines = [json.loads(text) for text in said.splitlines()]
    assert [(run["run_id"], run.get("status"), run.get("removed")) for run in lines] == [
        (FIRST, "running", None),
        (SECOND, "running", None),
        (FIRST, None, True),
    ]
    assert lines[2] == {"run_id": FIRST, "path": str(runs / f"{FIRST}.jsonl"), "removed": True}
    status, err = piped.interrupt()
    assert (status, err) == (0, "")


def test_on_a_terminal_the_table_is_redrawn_until_ctrl_c(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    write_run(runs, FIRST)
    with Terminal([*RUNTOP, "ls", str(runs), "--watch"], size=(160, 24), home=tmp_path) as tty:
        tty.wait_for(FIRST[-16:])
        tty.wait_for("Ctrl-C ends")
        mark = tty.mark()
        write_run(runs, SECOND, ended=False)
        tty.wait_for(SECOND[-16:], since=mark)
        tty.press("\x03")
        assert tty.wait_exit() == 0
        assert "Traceback" not in tty.text()
        assert "KeyboardInterrupt" not in tty.text()


def test_a_place_that_cannot_be_read_is_said_once(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    write_run(runs, FIRST)
    piped = Piped([*RUNTOP, "ls", str(runs), str(tmp_path / "gone"), "--watch"], tmp_path / "home")
    piped.read_until(FIRST.encode())
    time.sleep(2.5)  # listed twice more
    status, err = piped.interrupt()
    assert status == 0
    assert err.count("gone") == 1, err


def test_through_a_view_its_filter_and_columns(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    write_run(runs, FIRST)
    write_run(runs, SECOND, ended=False)
    home = tmp_path / "home"
    home.mkdir()
    (home / "views.toml").write_text(
        '[views.done]\nfilter = "status:succeeded"\ncolumns = ["status", "run"]\n'
    )
    piped = Piped([*RUNTOP, "ls", str(runs), "--watch", "--view", "done"], home)
    said = piped.read_until(FIRST.encode())
    assert said.splitlines()[1].split() == ["STATUS", "RUN", "ID"]
    assert SECOND not in said
    status, err = piped.interrupt()
    assert (status, err) == (0, "")
