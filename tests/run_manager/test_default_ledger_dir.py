"""``Manager()`` writes where every runtop looks: ``$RUNTOP_LEDGER_DIR``, else
``$RUNTOP_HOME/runs``; ``ledger_dir=False`` writes no ledger."""

from __future__ import annotations

from pathlib import Path

import pytest

from run_manager import Manager


class Echo:
    name = "echo"

    async def run(self, input: str) -> str:
        return input


async def test_a_manager_writes_into_runtop_home_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNTOP_HOME", str(tmp_path / "home"))
    async with Manager() as manager:
        handle = manager.start(Echo(), "hello")
        assert await handle.result() == "hello"
    assert manager.ledger_dir == tmp_path / "home" / "runs"
    assert (tmp_path / "home" / "runs" / f"{handle.run_id}.jsonl").is_file()
    assert (tmp_path / "home" / "runs").stat().st_mode & 0o777 == 0o700


async def test_runtop_ledger_dir_moves_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNTOP_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RUNTOP_LEDGER_DIR", str(tmp_path / "ledgers"))
    async with Manager() as manager:
        handle = manager.start(Echo(), "hello")
        await handle.wait()
    assert (tmp_path / "ledgers" / f"{handle.run_id}.jsonl").is_file()
    assert not (tmp_path / "home" / "runs").exists()


async def test_ledger_dir_false_writes_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNTOP_HOME", str(tmp_path / "home"))
    async with Manager(ledger_dir=False) as manager:
        assert manager.ledger_dir is None
        assert await manager.start(Echo(), "hello").result() == "hello"
    assert not (tmp_path / "home").exists()
