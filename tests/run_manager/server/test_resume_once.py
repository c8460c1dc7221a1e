"""A resume carries an idempotency key: sent again (a retry, or fifty at once), it starts
one run, and every answer names it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.agents import Echo
from tests.run_manager.server.test_attach_api import served

pytestmark = pytest.mark.timeout(30)


async def test_fifty_resumes_with_one_key_start_one_run(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        finished = s.manager.start(Echo(), "again")
        await finished.wait()
        before = len(s.manager.list())
        answers = await asyncio.gather(
            *(
                s.post(f"runs/{finished.run_id}/resume", {"idempotency_key": "press-1"})
                for _ in range(50)
            )
        )
        assert {status for status, _ in answers} == {200}
        assert len({body["new_run_id"] for _, body in answers}) == 1
        assert len(s.manager.list()) == before + 1
        # The header works as the body does; another key is another resume.
        status, by_header = await s.post(
            f"runs/{finished.run_id}/resume", headers={"Idempotency-Key": "press-1"}
        )
        assert by_header["new_run_id"] == answers[0][1]["new_run_id"]
        status, other = await s.post(
            f"runs/{finished.run_id}/resume", {"idempotency_key": "press-2"}
        )
        assert status == 200
        assert other["new_run_id"] != by_header["new_run_id"]
        assert len(s.manager.list()) == before + 2
