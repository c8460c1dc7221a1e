"""Clients that drop their connection at any moment cost ``runtop serve`` no traceback."""

from __future__ import annotations

import asyncio
import logging
import random
from pathlib import Path

import pytest

from tests.agents import Sleeper
from tests.run_manager.server.test_attach_api import TOKEN, served

pytestmark = pytest.mark.timeout(60)


async def test_followers_that_vanish_leave_no_traceback_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    chooser = random.Random(28)
    async with served(tmp_path) as s:
        sleeper = next(a for a in s.manager.agents.values() if isinstance(a, Sleeper))
        handle = s.manager.start(sleeper, "30", detached=True)
        host, port = s.url.removeprefix("http://").split(":")
        request = (
            f"GET /api/agent/runs/{handle.run_id}/events?follow=1 HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {TOKEN}\r\n\r\n"
        ).encode()

        async def vanish() -> None:
            _, writer = await asyncio.open_connection(host, int(port))
            writer.write(request)
            for _ in range(chooser.randint(0, 3)):
                await asyncio.sleep(0)
            writer.transport.abort()  # gone at once, as a killed client goes

        for _ in range(5):
            await asyncio.gather(*(vanish() for _ in range(50)))
        status, listed = await s.get("runs")  # and the server goes on
        assert status == 200
        assert listed["runs"][0]["status"] == "running"
        handle.cancel("done")
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
