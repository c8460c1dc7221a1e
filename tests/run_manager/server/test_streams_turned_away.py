"""While the event loop runs late and many streams are open, a new stream is turned away.

The runs share the server's event loop: admitting one more stream then would
take turns from them. The new stream gets a ``503`` at once, with
``Retry-After`` and a JSON error; the streams already open keep theirs, and
once the loop keeps time again a stream is admitted.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from run_manager.server.loop_lag import LoopLag
from run_manager.server.streams import ADMIT_FREELY
from tests.agents import Sleeper
from tests.run_manager.server.test_attach_api import served

pytestmark = pytest.mark.timeout(30)


async def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Return once ``condition()`` holds (looked at every 5 ms, for 10 s at most)."""
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"never came: {what}")


def hold_the_loop(seconds: float) -> None:
    """Work that keeps the event loop from its other callbacks for ``seconds``."""
    time.sleep(seconds)


async def late_turns(stop: asyncio.Event) -> None:
    """Hold the loop 30 ms every turn: the loop of a server swamped by work."""
    while not stop.is_set():
        hold_the_loop(0.03)
        await asyncio.sleep(0)


async def test_a_new_stream_is_turned_away_while_the_loop_is_late(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        handle = s.manager.start(Sleeper(), "30", detached=True)
        url = s.api(f"runs/{handle.run_id}/events")
        opened = []
        async with contextlib.AsyncExitStack() as streams:
            for _ in range(ADMIT_FREELY):
                response = await streams.enter_async_context(
                    s.session.get(url, params={"follow": "1"})
                )
                assert response.status == 200
                opened.append(response)
            await wait_for(lambda: len(s.server.streams._streams) >= ADMIT_FREELY, "streams")
            stop = asyncio.Event()
            blocking = asyncio.create_task(late_turns(stop))
            try:
                await wait_for(lambda: s.server.streams.lag.lagging, "the loop late")
                async with s.session.get(url, params={"follow": "1"}) as refused:
                    assert refused.status == 503
                    assert refused.headers["Retry-After"] == "1"
                    assert "busy" in (await refused.json())["error"]
            finally:
                stop.set()
                await blocking
            await wait_for(lambda: not s.server.streams.lag.lagging, "the loop on time")
            async with s.session.get(url, params={"follow": "1"}) as admitted:
                assert admitted.status == 200
            assert all(not response.closed for response in opened)
        handle.cancel()


async def test_the_loop_counts_as_late_only_after_a_run_of_late_turns() -> None:
    lag = LoopLag(interval=0.005, behind=0.01)
    lag.watch()
    try:
        await asyncio.sleep(0.01)  # measuring
        hold_the_loop(0.03)  # one late turn
        await asyncio.sleep(0.02)
        assert not lag.lagging
        for _ in range(20):
            hold_the_loop(0.03)
            await asyncio.sleep(0)
        assert lag.lagging
    finally:
        lag.stop()
    assert not lag.lagging
