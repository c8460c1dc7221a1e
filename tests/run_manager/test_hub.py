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


async def test_a_batch_is_published_as_its_events_one_by_one() -> None:
    one_by_one, batched = Hub(replay_events=5), Hub(replay_events=5)
    seen: list[tuple[int, bytes]] = []
    batches: list[int] = []
    batched.add_listener(lambda event, line: seen.append((event.seq, line)))
    batched.add_batch_listener(lambda events, lines: batches.append(len(events)))
    followers = [hub.subscribe("run_a") for hub in (one_by_one, batched)]
    everyone = [hub.subscribe() for hub in (one_by_one, batched)]
    events = [chunk("run_a", seq) for seq in range(1, 9)]
    lines = [b"line %d" % seq for seq in range(1, 9)]
    for event, line in zip(events, lines, strict=True):
        one_by_one.publish(event, line)
    batched.publish_many(events, lines)
    assert followers[0].drain() == followers[1].drain() == events
    assert everyone[0].drain() == everyone[1].drain() == events
    assert seen == [(seq, b"line %d" % seq) for seq in range(1, 9)]
    assert batches == [8]
    assert one_by_one.history("run_a") == batched.history("run_a") == (3, events[3:])


async def test_a_batch_that_ends_its_run_keeps_no_replay_and_mixed_runs_are_refused() -> None:
    hub = Hub()
    late_before = hub.subscribe("run_a")
    hub.publish_many([chunk("run_a", 1), chunk("run_a", 2)], [b"a", b"b"], ended=True)
    assert [e.seq for e in late_before.drain() if not isinstance(e, Lagged)] == [1, 2]
    assert hub.history("run_a") == (0, [])
    assert hub.subscribe("run_a").drain() == []
    with pytest.raises(ValueError, match="one run"):
        hub.publish_many([chunk("run_a", 3), chunk("run_b", 1)], [b"c", b"d"])
    with pytest.raises(ValueError, match="one line per event"):
        hub.publish_many([chunk("run_a", 3)], [])
    assert hub.history("run_a") == (0, [])  # nothing of a refused batch was published
