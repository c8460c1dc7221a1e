"""The live hub: fan-out, late joiners' bounded replay, slow subscribers."""

from __future__ import annotations

import asyncio
import time

import pytest

from ledger_reader import LlmChunk
from ledger_reader.events import ChunkPayload
from run_manager import Hub, Lagged, Manager
from tests.agents import Chatty, Echo

pytestmark = pytest.mark.timeout(30)


def chunk(run_id: str, seq: int, text: str = "x") -> LlmChunk:
    return LlmChunk(run_id=run_id, seq=seq, payload=ChunkPayload(delta=text))


async def test_every_subscriber_gets_every_event() -> None:
    async with Manager() as manager:
        everyone = manager.hub.subscribe()
        handle = manager.start(Echo(), "x")
        mine = manager.hub.subscribe(handle.run_id)
        await handle.wait()
        got = [item async for item in mine]  # ends with the run's run_completed
        assert [e.type for e in got if not isinstance(e, Lagged)][-1] == "run_completed"
        assert [e.seq for e in got if not isinstance(e, Lagged)] == list(range(1, 7))
        assert [e.seq for e in everyone.drain() if not isinstance(e, Lagged)] == list(range(1, 7))
        everyone.close()


async def test_a_late_subscriber_gets_a_bounded_replay() -> None:
    hub = Hub(replay_events=5, replay_bytes=10_000)
    for seq in range(1, 21):
        hub.publish(chunk("run_a", seq), b"x" * 100)
    late = hub.subscribe("run_a")
    items = late.drain()
    assert items[0] == Lagged("run_a", 15)
    assert [e.seq for e in items[1:] if not isinstance(e, Lagged)] == [16, 17, 18, 19, 20]
    by_bytes = Hub(replay_events=100, replay_bytes=350)
    for seq in range(1, 11):
        by_bytes.publish(chunk("run_b", seq), b"x" * 100)
    items = by_bytes.subscribe("run_b").drain()
    assert items[0] == Lagged("run_b", 7)
    assert len(items) == 4


async def test_a_slow_subscriber_never_stalls_the_run() -> None:
    async with Manager() as manager:
        slow = manager.hub.subscribe(max_pending=10)  # never read while the run goes
        started = time.perf_counter()
        handle = manager.start(Chatty(), "5000")
        assert await handle.result() == "done"
        elapsed = time.perf_counter() - started
        items = slow.drain()
        lagged = [item for item in items if isinstance(item, Lagged)]
        assert len(lagged) == 1
        assert lagged[0].missed == slow.missed > 4_000
        assert items[-1].type == "run_completed"  # type: ignore[union-attr]
        assert elapsed < 5
        slow.close()


async def test_closing_a_subscription_ends_its_iteration() -> None:
    hub = Hub()
    subscription = hub.subscribe()
    reader = asyncio.create_task(anext(subscription, None))
    await asyncio.sleep(0.01)
    subscription.close()
    assert await reader is None
    assert hub.subscriber_count == 0
