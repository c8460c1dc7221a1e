"""``runtop FILE``: a ledger named among many is followed alone, without a walk or a watch
of the tree around it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

import ledger_reader.directory
from ledger_reader.directory import LedgerDirectory
from tests.conftest import line

pytestmark = pytest.mark.timeout(30)


def begun(run_id: str) -> bytes:
    return line(1, "run_started", {"skill": "s"}, run_id=run_id)


def ended(run_id: str) -> bytes:
    return line(2, "run_completed", {"status": "ok"}, run_id=run_id)


def crowd(root: Path, count: int) -> None:
    """``count`` finished ledgers in subdirectories, beside the one the test names."""
    for number in range(count):
        folder = root / f"day_{number % 10}"
        folder.mkdir(exist_ok=True)
        (folder / f"run_crowd{number}.jsonl").write_bytes(
            begun(f"run_crowd{number}") + ended(f"run_crowd{number}")
        )


async def test_a_named_ledger_is_followed_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crowd(tmp_path, 200)
    named = tmp_path / "run_named.jsonl"
    named.write_bytes(begun("run_named"))
    walks: list[str] = []
    walk = ledger_reader.directory.ledger_names

    def counted(root: str, errors: list[object]) -> list[str]:
        walks.append(root)
        return walk(root, errors)  # type: ignore[arg-type]

    monkeypatch.setattr(ledger_reader.directory, "ledger_names", counted)
    directory = LedgerDirectory(tmp_path, only=[named])
    stop = asyncio.Event()
    updates = directory.watch(stop)
    async with asyncio.timeout(20):
        first = await anext(updates)
        assert [change.summary.run_id for change in first.changes] == ["run_named"]
        (tmp_path / "day_3" / "run_late.jsonl").write_bytes(begun("run_late"))
        (tmp_path / "day_new").mkdir()
        (tmp_path / "day_new" / "run_moved.jsonl").write_bytes(begun("run_moved"))
        (tmp_path / "run_beside.jsonl").write_bytes(begun("run_beside"))
        with named.open("ab") as ledger:
            ledger.write(ended("run_named"))
        seen: set[str] = set()
        while True:
            update = await anext(updates)
            seen |= {change.summary.run_id for change in update.changes}
            finished = [c for c in update.changes if c.summary.run_id == "run_named"]
            if finished and finished[-1].summary.status.value == "succeeded":
                break
    stop.set()
    await updates.aclose()  # type: ignore[attr-defined]
    assert seen == {"run_named"}  # nothing else there was followed
    assert walks == []  # and the tree around it was never walked


def test_a_named_file_is_found_as_a_walk_finds_it(tmp_path: Path) -> None:
    crowd(tmp_path, 20)
    nested = tmp_path / "day_2" / "run_crowd2.jsonl"
    control = tmp_path / ".control"
    control.mkdir()
    (control / "run_x.jsonl").write_bytes(begun("run_x"))
    outside = tmp_path.parent / f"{tmp_path.name}-outside.jsonl"
    outside.write_bytes(begun("run_out"))
    named = [
        nested,
        tmp_path / "missing.jsonl",
        control / "run_x.jsonl",
        outside,
        tmp_path / "day_1",  # a directory, not a ledger
    ]
    for root in (tmp_path, Path(os.path.relpath(tmp_path))):
        directory = LedgerDirectory(root, only=named)
        errors: list[object] = []
        found = directory._named_now(errors)  # type: ignore[arg-type]
        walked = {
            name
            for name in ledger_reader.directory.ledger_names(os.fspath(root), [])
            if os.path.abspath(name) in {os.path.abspath(path) for path in named}
        }
        assert found == walked == {os.path.join(os.fspath(root), "day_2", "run_crowd2.jsonl")}
        assert errors == []
