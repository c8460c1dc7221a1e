"""A directory of ledgers: the recursive scan, and the watch as files come, grow and go."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from ledger_reader import (
    DirectoryUpdate,
    LedgerDirectory,
    LedgerGone,
    NoLedgers,
    RunStatus,
    iter_events,
    scan_paths,
)
from tests.conftest import REPO, completed, line, started


def test_scan_is_recursive_and_survives_a_symlink_loop(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "run_one.jsonl").write_bytes(started() + completed(2))
    (root / "run_two.jsonl").write_bytes(started())
    (root / "notes.txt").write_text("not a ledger")
    (root / ".control").mkdir()
    (root / ".control" / "run_two.cancel").write_text("{}")
    (root / "a" / "b" / "loop").symlink_to(root, target_is_directory=True)
    (root / "a" / "self").symlink_to(root / "a", target_is_directory=True)
    result = scan_paths([root])
    assert result.errors == []
    assert sorted(Path(path).name for path in result.states) == ["run_one.jsonl", "run_two.jsonl"]


def test_scan_reports_missing_empty_and_unreadable(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    os.mkfifo(tmp_path / "fifo.jsonl")
    good = tmp_path / "good"
    good.mkdir()
    (good / "run_ok.jsonl").write_bytes(started())
    result = scan_paths([tmp_path / "missing", empty, tmp_path / "fifo.jsonl", good])
    kinds = [type(error).__name__ for error in result.errors]
    assert kinds == ["LedgerGone", "NoLedgers", "LedgerUnreadable"]
    assert "not a regular file" in str(result.errors[2])
    assert [summary.run_id for summary in result.summaries()] == ["run_ok"]
    assert isinstance(result.errors[1], NoLedgers)


def _without_root_powers(command: list[str]) -> list[str]:
    """Run ``command`` unable to bypass file permissions, even as root (CI runs as root)."""
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "setpriv (util-linux) is needed to test permissions as root"
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--", *command]


def test_unreadable_file_is_reported_and_the_rest_listed(tmp_path: Path) -> None:
    (tmp_path / "run_ok.jsonl").write_bytes(started())
    secret = tmp_path / "run_secret.jsonl"
    secret.write_bytes(started())
    secret.chmod(0o000)
    result = subprocess.run(
        _without_root_powers([sys.executable, "-m", "tui.cli", "ls", "--json", str(tmp_path)]),
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
    )
    assert result.returncode == 1
    assert "run_secret.jsonl: cannot read: permission denied" in result.stderr
    assert "Traceback" not in result.stderr
    assert '"run_id":"run_ok"' in result.stdout


@asynccontextmanager
async def watching(directory: LedgerDirectory) -> AsyncIterator[asyncio.Queue[DirectoryUpdate]]:
    stop = asyncio.Event()
    updates: asyncio.Queue[DirectoryUpdate] = asyncio.Queue()

    async def pump() -> None:
        async for update in directory.watch(stop):
            await updates.put(update)

    task = asyncio.create_task(pump())
    try:
        yield updates
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)


async def next_matching(
    updates: asyncio.Queue[DirectoryUpdate], predicate: Callable[[DirectoryUpdate], bool]
) -> DirectoryUpdate:
    async with asyncio.timeout(10):
        while True:
            update = await updates.get()
            if predicate(update):
                return update


@pytest.mark.timeout(30)
async def test_watch_sees_new_growing_and_removed_ledgers(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    existing = root / "run_old.jsonl"
    existing.write_bytes(line(1, "run_started", run_id="run_old"))
    async with watching(LedgerDirectory(root, liveness_interval=0.2)) as updates:
        first = await updates.get()
        assert first.initial
        assert [change.summary.run_id for change in first.changes] == ["run_old"]
        assert first.changes[0].items == []

        fresh = root / "sub" / "run_new.jsonl"
        fresh.parent.mkdir()
        fresh.write_bytes(line(1, "run_started", run_id="run_new"))
        update = await next_matching(
            updates, lambda u: any(c.summary.run_id == "run_new" for c in u.changes)
        )
        change = next(c for c in update.changes if c.summary.run_id == "run_new")
        assert [e.seq for e in iter_events(change.items)] == [1]

        with existing.open("ab") as handle:
            handle.write(line(2, "llm_chunk", {"delta": "x"}, run_id="run_old")[:15])
        with existing.open("ab") as handle:
            handle.write(line(2, "llm_chunk", {"delta": "x"}, run_id="run_old")[15:])
            handle.write(line(3, "run_completed", {"status": "ok"}, run_id="run_old"))
        seen: list[int] = []
        while seen != [2, 3]:
            update = await next_matching(updates, lambda u: bool(u.changes))
            for change in update.changes:
                if change.summary.run_id == "run_old":
                    seen.extend(e.seq for e in iter_events(change.items))
        assert change.summary.status == RunStatus.SUCCEEDED

        existing.unlink()
        update = await next_matching(updates, lambda u: bool(u.removed))
        assert update.removed == [existing]


@pytest.mark.timeout(30)
async def test_watch_reports_a_removed_directory_and_recovers(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    (root / "run_a.jsonl").write_bytes(line(1, "run_started", run_id="run_a"))
    async with watching(LedgerDirectory(root, liveness_interval=0.1)) as updates:
        assert (await updates.get()).initial
        shutil.rmtree(root)
        removed: list[Path] = []
        gone = await next_matching(updates, lambda u: removed.extend(u.removed) or not u.available)
        assert isinstance(gone.errors[0], LedgerGone)
        assert removed == []  # the runs stay while the directory is away
        root.mkdir()
        (root / "run_b.jsonl").write_bytes(line(1, "run_started", run_id="run_b"))
        added: list[str] = []
        while "run_b" not in added:
            back = await next_matching(updates, lambda u: u.available)
            removed.extend(back.removed)
            added.extend(c.summary.run_id for c in back.changes)
        assert added == ["run_b"]
        assert removed == [root / "run_a.jsonl"]
        with (root / "run_b.jsonl").open("ab") as handle:
            handle.write(line(2, "run_completed", {"status": "ok"}, run_id="run_b"))
        done = await next_matching(updates, lambda u: bool(u.changes))
        assert done.changes[0].summary.status == RunStatus.SUCCEEDED


@pytest.mark.timeout(30)
async def test_watch_notices_a_writer_killed_mid_run(
    held_ledger: tuple[Path, subprocess.Popen[str]],
) -> None:
    path, writer = held_ledger
    async with watching(LedgerDirectory(path.parent, liveness_interval=0.1)) as updates:
        first = await updates.get()
        assert first.changes[0].summary.status == RunStatus.RUNNING
        os.kill(writer.pid, signal.SIGKILL)
        update = await next_matching(updates, lambda u: bool(u.changes))
        assert update.changes[0].summary.status == RunStatus.ABANDONED


def ledgers_written_in_turn(tmp_path: Path, count: int) -> Path:
    """``runs/run_0.jsonl`` .. ``run_<count - 1>``, each modified a second after the one before."""
    root = tmp_path / "runs"
    root.mkdir()
    for number in range(count):
        path = root / f"run_{number}.jsonl"
        path.write_bytes(line(1, "run_started", run_id=f"run_{number}"))
        os.utime(path, (1_000_000 + number, 1_000_000 + number))
    return root


@pytest.mark.timeout(30)
async def test_a_big_scan_reports_the_newest_ledgers_first_in_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The newest runs of a big directory show before the rest are read; none is lost."""
    monkeypatch.setattr("ledger_reader.directory.FIRST_STEP", 2)
    root = ledgers_written_in_turn(tmp_path, 7)  # run_6 written last
    async with watching(LedgerDirectory(root)) as updates:
        first = await updates.get()
        second = await updates.get()
    assert (first.initial, first.pending) == (True, 5)
    assert [change.summary.run_id for change in first.changes] == ["run_6", "run_5"]
    assert (second.initial, second.pending) == (False, 0)
    assert [change.summary.run_id for change in second.changes] == [
        "run_4",
        "run_3",
        "run_2",
        "run_1",
        "run_0",
    ]


@pytest.mark.timeout(30)
async def test_ledgers_that_come_and_go_during_a_scan_are_not_missed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher starts after the scan: what changed while it read is caught at its end."""
    monkeypatch.setattr("ledger_reader.directory.FIRST_STEP", 1)
    root = ledgers_written_in_turn(tmp_path, 3)
    read = LedgerDirectory._read_new

    def read_then_change(self: LedgerDirectory, names: list[str], update: DirectoryUpdate) -> None:
        read(self, names, update)
        if names == [str(root / "run_2.jsonl")]:  # the first step: run_2 goes, run_9 comes
            (root / "run_2.jsonl").unlink()
            (root / "run_9.jsonl").write_bytes(line(1, "run_started", run_id="run_9"))

    monkeypatch.setattr(LedgerDirectory, "_read_new", read_then_change)
    seen: list[str] = []
    removed: list[Path] = []
    async with watching(LedgerDirectory(root)) as updates:
        while True:
            update = await updates.get()
            seen.extend(change.summary.run_id for change in update.changes)
            removed.extend(update.removed)
            if not update.pending:
                break
    assert seen == ["run_2", "run_1", "run_0", "run_9"]
    assert removed == [root / "run_2.jsonl"]
