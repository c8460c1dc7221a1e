"""Shared helpers: sample ledgers copied into tmp_path, and lines written as a writer would."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tui" / "samples"
"""The sample ledgers runtop ships (``runtop samples`` opens a copy of them)."""

RUN_ID = "run_20261129T064500123_9f2c4e1a0b3d5e7f"
LINE_EPOCH = datetime(2026, 11, 29, 6, 45, tzinfo=UTC)
"""Line ``seq`` is written ``seq`` seconds after it: times rise as a writer's clock does."""

# A shell that starts the tests in the background (`make test &`, nohup, some CI runners)
# starts them with Ctrl-C ignored, and every command they start inherits that: the tests
# that end `runtop ls --watch` with Ctrl-C would wait on it for ever. A handler of
# Python's own is not inherited: each command starts with Ctrl-C as a terminal gives it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def line(
    seq: int,
    kind: str,
    payload: dict[str, Any] | None = None,
    *,
    run_id: str = RUN_ID,
    time: str | None = None,
) -> bytes:
    """One ledger line as an independent writer (the stdlib) would write it."""
    record: dict[str, Any] = {
        "run_id": run_id,
        "seq": seq,
        "time": time or f"{LINE_EPOCH + timedelta(seconds=seq):%Y-%m-%dT%H:%M:%S}.{seq:06d}Z",
        "type": kind,
    }
    if payload is not None:
        record["payload"] = payload
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def runs_listed(out: str | bytes) -> list[dict[str, Any]]:
    """The runs ``runtop ls --json`` printed: JSON Lines, a run a line (no runs: no line)."""
    return [json.loads(text) for text in out.splitlines()]


def written_ago(seconds: float) -> str:
    """A line's ``time`` that many seconds before now: a run whose lines say so is live
    (another writer's is judged by its last event's own time, not only the file's)."""
    return f"{datetime.now(UTC) - timedelta(seconds=seconds):%Y-%m-%dT%H:%M:%S.%fZ}"


def started(seq: int = 1, **payload: Any) -> bytes:
    return line(seq, "run_started", {"skill": "research", "input": {"q": "x"}, **payload})


def completed(seq: int, status: str = "ok", **payload: Any) -> bytes:
    return line(seq, "run_completed", {"status": status, **payload})


@pytest.fixture(scope="session", autouse=True)
def _private_runtop_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The test session's own ``RUNTOP_HOME``: ``runtop ls`` writes its summary cache there,
    a ``Manager()`` its ledgers (in ``runs``), and no test may write into (or read from) the
    home of whoever runs the tests, nor the ledger folder their ``RUNTOP_LEDGER_DIR`` names.
    Session-wide, so module-scoped fixtures that list ledgers are set up inside it too."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RUNTOP_HOME", str(tmp_path_factory.mktemp("runtop-home")))
        # A test that takes RUNTOP_HOME away (to see where a cache goes without it) writes
        # its cache here, not in the user's ~/.cache.
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache-home")))
        patch.delenv("RUNTOP_LEDGER_DIR", raising=False)
        yield


SESSIONS_HOME = REPO / "tests" / "sessions_home"
"""Real coding agents' sessions, laid out as a home (its README says whose)."""
READ_IN_PLACE = (SESSIONS_HOME, FIXTURES)
"""Folders of the repository that tests read where they are (``HOME`` pointed at the
sessions, ``ls`` of the samples): nothing may be written there."""


def _files_under(folders: tuple[Path, ...]) -> dict[str, tuple[int, int]]:
    return {
        str(path): (path.lstat().st_size, path.lstat().st_mtime_ns)
        for folder in folders
        for path in folder.rglob("*")
    }


@pytest.fixture(scope="session", autouse=True)
def _repository_read_only() -> Iterator[None]:
    """No test writes into the folders of the repository it reads in place (a summary
    cache beside the sessions, a ``~/.runtop`` in the sessions' home): checked at the
    end of the session, every file's size and write time as they were."""
    before = _files_under(READ_IN_PLACE)
    yield
    after = _files_under(READ_IN_PLACE)
    changed = sorted(
        path for path in before.keys() | after.keys() if before.get(path) != after.get(path)
    )
    assert not changed, f"the tests wrote into the repository: {changed[:10]}"


@pytest.fixture
def fixtures(tmp_path: Path) -> Path:
    """The sample ledgers, copied so a test may change them."""
    assert FIXTURES.is_dir(), f"sample ledgers missing at {FIXTURES}"
    target = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, target)
    # A checkout's files are as new as the checkout (CI's are minutes old, a long
    # session's hours): make them an hour old, so liveness is judged the same anywhere.
    written = time.time() - 3600
    for path in target.iterdir():
        path.chmod(0o600)
        os.utime(path, (written, written))
    target.chmod(0o700)
    return target


@pytest.fixture
def write_ledger(tmp_path: Path) -> Callable[..., Path]:
    """Write a ledger file from lines; return its path."""

    def write(*lines: bytes, name: str = f"{RUN_ID}.jsonl", directory: Path | None = None) -> Path:
        path = (directory or tmp_path) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(lines))
        return path

    return write


HOLDER = textwrap.dedent(
    """
    import fcntl, json, os, sys, time
    path = sys.argv[1]
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    record = {"run_id": "r", "seq": 1, "time": "2026-11-29T00:00:00Z", "type": "run_started",
              "payload": {"writer": "runtop", "pid": os.getpid(), "host": os.uname().nodename}}
    os.write(fd, (json.dumps(record) + "\\n").encode())
    print("ready", flush=True)
    time.sleep(60)
    """
)
"""A runtop-like writer in another process: holds the ledger's flock and sleeps."""


@pytest.fixture
def held_ledger(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """A ledger whose writer process is alive (until the test kills it)."""
    path = tmp_path / "held" / "r.jsonl"
    path.parent.mkdir()
    writer = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "ready"
        yield path, writer
    finally:
        if writer.poll() is None:
            writer.kill()
        writer.wait()
        if writer.stdout is not None:
            writer.stdout.close()


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    """One local Ray cluster (2 CPUs) for every test that executes runs on Ray.

    Starting one takes seconds, so it is made once; its workers import the
    tests' agents from this checkout.
    """
    import ray

    # The cluster's processes inherit the environment of the one that starts it:
    # its pooled workers (quicker to hand out than ones made for a runtime_env)
    # then import the tests' agents.
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), saved]))
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved
    try:
        yield
    finally:
        ray.shutdown()
