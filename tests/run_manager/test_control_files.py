"""Control files that are not what they seem: directories, FIFOs, symlinks, requests that fail.

In-process against a real manager and watcher, and once against a real
``runtop serve``: the watcher must never block the event loop, never die,
and answer a request it cannot carry out exactly once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import time
from pathlib import Path

import pytest

from ledger_reader.control import (
    MAX_REQUEST_BYTES,
    ControlFileError,
    read_request,
    request_cancel,
    request_resume,
)
from run_manager import Manager, Status
from tests.agents import Echo, Sleeper
from tests.tui.commands.test_serve import post, server

__all__ = ["server"]

pytestmark = pytest.mark.timeout(30)


def control(ledger_dir: Path) -> Path:
    directory = ledger_dir / ".control"
    directory.mkdir(mode=0o700, exist_ok=True)
    return directory


async def until(condition: object, seconds: float = 5.0) -> None:
    """Wait for ``condition()`` by polling the filesystem (what the watcher changes)."""
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


# -- reading one request ---------------------------------------------------------------


def test_only_a_regular_file_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "run_a.cancel"
    os.mkfifo(fifo)
    (tmp_path / "run_b.cancel").mkdir()
    (tmp_path / "run_c.cancel").symlink_to(fifo)
    (tmp_path / "run_d.cancel").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "run_e.cancel").write_bytes(b" " * (MAX_REQUEST_BYTES + 1))
    (tmp_path / "run_f.cancel").write_text("[1, 2]")
    (tmp_path / "run_g.cancel").write_bytes(b"\xff\xfe")
    expected = {
        "run_a.cancel": "not a regular file (a FIFO)",
        "run_b.cancel": "not a regular file (a directory)",
        "run_c.cancel": "not a regular file (a symlink)",
        "run_d.cancel": "not a regular file (a symlink)",
        "run_e.cancel": "over the 65536",
        "run_f.cancel": "not a JSON object",
        "run_g.cancel": "not JSON",
    }
    for name, message in expected.items():
        with pytest.raises(ControlFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
            read_request(tmp_path / name)
    (tmp_path / "run_h.cancel").write_text("")
    assert read_request(tmp_path / "run_h.cancel") == {}


def test_a_request_is_written_whole_and_private(tmp_path: Path) -> None:
    path = request_cancel(tmp_path, "run_x", reason="stop", source="cli")
    assert path == tmp_path / ".control" / "run_x.cancel"
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / ".control").stat().st_mode & 0o777 == 0o700
    body = json.loads(path.read_text())
    assert (body["reason"], body["source"]) == ("stop", "cli")
    assert body["requested_at"].endswith("Z")
    assert sorted(p.name for p in path.parent.iterdir()) == ["run_x.cancel"]  # no temp left
    with pytest.raises(ValueError, match="invalid run id"):
        request_cancel(tmp_path, "../escape")


# -- the watcher, in process ---------------------------------------------------------------


async def test_a_directory_named_like_a_cancel_does_not_stop_the_watcher(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        first, second = Sleeper(), Sleeper()
        one = manager.start(first, "30")
        two = manager.start(second, "30")
        await first.started.wait()
        (control(tmp_path) / f"{one.run_id}.cancel").mkdir()
        failed = tmp_path / ".control" / f"{one.run_id}.cancel.failed"
        await until(failed.is_dir)  # set aside, untouched inside
        request_cancel(tmp_path, two.run_id, reason="still listening")
        info = await asyncio.wait_for(two.wait(), 5)
        assert info.status is Status.CANCELED
        assert info.cancel_reason == "still listening"
        assert one.status is Status.RUNNING  # a directory is no request
    skipped = [r.getMessage() for r in caplog.records if "not carried out" in r.getMessage()]
    assert len(skipped) == 1
    assert "a directory" in skipped[0]


@pytest.mark.parametrize("shape", ["fifo", "symlink to a fifo"])
async def test_a_fifo_named_like_a_cancel_does_not_block_the_loop(
    tmp_path: Path, shape: str
) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        agent, other = Sleeper(), Sleeper()
        handle = manager.start(agent, "30")
        second = manager.start(other, "30")
        await agent.started.wait()
        name = control(tmp_path) / f"{handle.run_id}.cancel"
        if shape == "fifo":
            os.mkfifo(name)
        else:
            os.mkfifo(tmp_path / "pipe")
            name.symlink_to(tmp_path / "pipe")
        # The loop keeps turning: a blocking open() of the FIFO would stop this for ever.
        for _ in range(50):
            await asyncio.sleep(0.01)
        await until(
            lambda: (
                (name.parent / f"{name.name}.failed").exists()
                or os.path.lexists(name.parent / f"{name.name}.failed")
            )
        )
        request_cancel(tmp_path, second.run_id)
        assert (await asyncio.wait_for(second.wait(), 5)).status is Status.CANCELED
        assert handle.status is Status.RUNNING


async def test_a_resume_that_cannot_be_done_is_answered_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    unknown = "run_20261129T000000000_0123456789abcdef"
    # Echo is not registered, and its finished run is not retained: only its ledger says it.
    async with Manager(ledger_dir=tmp_path, retained_runs=0) as manager:
        done = manager.start(Echo(), "x")
        await done.wait()
        request_resume(tmp_path, unknown)
        request_resume(tmp_path, done.run_id)
        answers = [
            tmp_path / ".control" / f"{unknown}.resume.failed",
            tmp_path / ".control" / f"{done.run_id}.resume.failed",
        ]
        await until(lambda: all(answer.exists() for answer in answers))
        await asyncio.sleep(1.5)  # past a rescan: nothing is tried again
        names = sorted(p.name for p in (tmp_path / ".control").iterdir())
        assert names == sorted(answer.name for answer in answers)
        assert "no run" in json.loads(answers[0].read_text())["error"]
        assert "not registered" in json.loads(answers[1].read_text())["error"]
        assert json.loads(answers[1].read_text())["request"]["source"] == "control-file"
        assert manager.list() == []
    lines = [r for r in caplog.records if "not carried out" in r.getMessage()]
    assert len(lines) == 2  # one line each, not one a wake-up


async def test_junk_in_the_control_directory_is_logged_once_and_left(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with Manager(ledger_dir=tmp_path) as manager:
        agent = Sleeper()
        handle = manager.start(agent, "30")
        await agent.started.wait()
        (control(tmp_path) / "notes.txt").write_text("hello")
        (control(tmp_path) / "run_%.cancel").write_text("{}")  # not a run id
        await asyncio.sleep(1.5)
        request_cancel(tmp_path, handle.run_id)
        assert (await asyncio.wait_for(handle.wait(), 5)).status is Status.CANCELED
    left = [r.getMessage() for r in caplog.records if "left alone" in r.getMessage()]
    assert len(left) == 2
    assert (tmp_path / ".control" / "notes.txt").read_text() == "hello"


# -- against a real runtop serve ---------------------------------------------------------------


def test_hostile_control_files_do_not_freeze_runtop_serve(
    server: tuple[str, dict[str, str], subprocess.Popen[str]], tmp_path: Path
) -> None:
    url, _, process = server
    port = url.rsplit(":", 1)[1]
    token = (tmp_path / "home" / "tokens" / f"127.0.0.1_{port}").read_text().strip()
    runs = [str(post(url, "runs", {"skill_name": "slow", "input": "30"}, token)["run_id"])]
    runs += [str(post(url, "runs", {"skill_name": "slow", "input": "30"}, token)["run_id"])]
    directory = control(tmp_path / "runs")
    os.mkfifo(directory / f"{runs[0]}.cancel")
    (directory / "pipe").unlink(missing_ok=True)
    os.mkfifo(tmp_path / "pipe")
    (directory / f"{runs[1]}.resume").symlink_to(tmp_path / "pipe")
    (directory / "run_20261129T000000000_0123456789abcdef.resume").write_text("{}")
    (directory / f"{runs[1]}x.cancel").mkdir()
    time.sleep(1.5)
    # Still serving HTTP, and still taking control files.
    listed = json.loads(
        urlopen_json(url, "runs", token)  # type: ignore[arg-type]
    )
    assert {run["run_id"] for run in listed["runs"]} >= set(runs)
    request_cancel(tmp_path / "runs", runs[1], reason="by file")
    deadline = time.monotonic() + 10
    while True:
        run = json.loads(urlopen_json(url, f"runs/{runs[1]}", token))["run"]
        if run["status"] == "canceled":
            break
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert process.poll() is None
    names = sorted(p.name for p in directory.iterdir())
    assert f"{runs[0]}.cancel.failed" in names
    assert f"{runs[1]}.resume.failed" in names
    assert "run_20261129T000000000_0123456789abcdef.resume.failed" in names


def urlopen_json(url: str, path: str, token: str) -> bytes:
    import urllib.request

    request = urllib.request.Request(
        f"{url}/api/agent/{path}", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        data: bytes = response.read()
        return data
