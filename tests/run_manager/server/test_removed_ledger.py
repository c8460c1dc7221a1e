"""A run whose ledger was removed under ``runtop serve`` is a JSON 410 that names no path."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.agents import Echo
from tests.run_manager.server.test_attach_api import served

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize("read_before", [False, True], ids=["never read", "read before"])
async def test_a_run_whose_ledger_was_removed_is_gone_in_json(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, read_before: bool
) -> None:
    caplog.set_level(logging.ERROR)
    async with served(tmp_path) as s:
        handle = s.manager.start(Echo(), "hello", detached=True)
        await handle.result()
        if read_before:  # the server keeps the ledgers it read open, and indexed
            status, _ = await s.get(f"runs/{handle.run_id}")
            assert status == 200
            async with s.session.get(
                s.api(f"runs/{handle.run_id}/events"), params={"start": "0"}
            ) as response:
                assert response.status == 200
        (tmp_path / "runs" / f"{handle.run_id}.jsonl").unlink()
        for path, query in [
            (f"runs/{handle.run_id}", {}),
            (f"runs/{handle.run_id}/events", {}),
            (f"runs/{handle.run_id}/events", {"follow": "1"}),
            (f"runs/{handle.run_id}/events", {"start": "0"}),
        ]:
            async with s.session.get(s.api(path), params=query) as response:
                text = await response.text()
                assert response.status == 410, (path, query, text)
                assert response.content_type == "application/json"
                assert (await response.json())["error"] == (
                    "the run's ledger is gone: it was removed from the ledger directory"
                )
                assert str(tmp_path) not in text
        status, listed = await s.get("runs")  # and the server goes on
        assert status == 200
        assert [run["run_id"] for run in listed["runs"]] == [handle.run_id]
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
