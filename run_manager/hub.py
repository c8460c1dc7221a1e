"""The live fan-out of run events to any number of subscribers.

Publishing never blocks a run: each subscriber has a bounded queue, and
one that falls behind loses events and is told so with a :class:`Lagged`
marker at the place of the gap (it can re-read the ledger). A subscriber
that joins mid-run first receives a replay of what it missed, bounded in
count and in bytes, and a :class:`Lagged` marker first if the replay could
not reach back to the run's start.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, overload

from ledger_reader import RunEvent

DEFAULT_QUEUE: Final = 10_000
"""Events a subscriber may have pending before it starts losing them."""
REPLAY_EVENTS: Final = 1_000
REPLAY_BYTES: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Lagged:
    """``missed`` events of ``run_id`` (or of any run, for ``None``) were not delivered here.

    It stands where the gap is: what came before and after it arrived in order. The
    events lost are in the run's ledger, for a subscriber that needs them all.
    """

    run_id: str | None
    """The run whose events were lost (``None``: a subscriber of every run lost some)."""
    missed: int
    """How many events were lost at this place."""


HubItem = RunEvent | Lagged
"""What a :class:`Subscription` yields: a run's event as its ledger has it (one of
:mod:`ledger_reader.events`: ``RunStarted`` ... ``RunCompleted``, each with its
``run_id``, ``seq``, ``time``, ``type`` and ``payload``), or a :class:`Lagged` marker."""


class LedgerLines(Sequence[bytes]):
    """Consecutive ledger lines in the one buffer they were written as, split when first read.

    A writer that encodes a batch in one call (OTLP ingest) publishes its lines
    like this: the attach server's feed keeps the buffer as it is, and the
    lines are cut apart only if a reader asks for one, once.

    Args:
        data: the lines, each ended by a newline, none holding one (JSON text
            holds no raw newline).
        count: how many lines ``data`` holds, as the writer encoded them:
            counting them here would cost what splitting does. A buffer that
            does not hold ``count`` lines is refused when it is split.
    """

    __slots__ = ("_count", "_split", "data")

    def __init__(self, data: bytes, count: int) -> None:
        self.data = data
        self._count = count
        self._split: list[bytes] | None = None

    @property
    def size(self) -> int:
        """Bytes of the lines without their newlines (what ``sum(map(len, self))`` says)."""
        return len(self.data) - self._count

    @property
    def is_split(self) -> bool:
        return self._split is not None

    def lines(self) -> list[bytes]:
        """The lines, split from the buffer on the first call."""
        found = self._split
        if found is None:
            found = self.data.split(b"\n")
            if found.pop() or len(found) != self._count:
                raise ValueError(f"the buffer does not hold {self._count} whole lines")
            self._split = found
        return found

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...

    def __getitem__(self, index: int | slice) -> bytes | list[bytes]:
        return self.lines()[index]

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.lines())


class Subscription:
    """One subscriber's view: an async iterator of events and lag markers.

    Iteration ends after :meth:`close`, or once a per-run subscription has
    delivered its run's terminal event.
    """

    def __init__(self, hub: Hub, run_id: str | None, max_pending: int) -> None:
        self.run_id = run_id
        """The run followed; ``None`` for every run."""
        self._hub = hub
        self._max_pending = max_pending
        self._items: deque[HubItem] = deque()
        self._pending = 0
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self.missed = 0
        """Events this subscriber has lost in all."""

    def _offer(self, item: HubItem) -> None:
        """Called by the hub: queue ``item`` or count it lost; never blocks."""
        if self._closed:
            return
        if (
            self._pending >= self._max_pending
            and not isinstance(item, Lagged)
            and item.type != "run_completed"  # always delivered: it ends the run's stream
        ):
            self.missed += 1
            last = self._items[-1] if self._items else None
            run_id = self.run_id
            if isinstance(last, Lagged) and last.run_id == run_id:
                self._items[-1] = Lagged(run_id, last.missed + 1)
            else:
                self._items.append(Lagged(run_id, 1))
        else:
            self._items.append(item)
            if not isinstance(item, Lagged):
                self._pending += 1
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def close(self) -> None:
        """Stop receiving; a pending ``__anext__`` ends the iteration."""
        if not self._closed:
            self._closed = True
            self._hub._remove(self)
            self._wake()

    def __aiter__(self) -> AsyncIterator[HubItem]:
        return self

    async def __anext__(self) -> HubItem:
        while not self._items:
            if self._closed:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        item = self._items.popleft()
        if not isinstance(item, Lagged):
            self._pending -= 1
            if self.run_id is not None and item.type == "run_completed":
                self.close()
        return item

    def drain(self) -> list[HubItem]:
        """Everything queued now, without waiting."""
        items = list(self._items)
        self._items.clear()
        self._pending = 0
        return items


class _Replay:
    """A run's recent events, bounded in count and bytes."""

    __slots__ = ("bytes", "dropped", "events")

    def __init__(self) -> None:
        self.events: deque[tuple[RunEvent, int]] = deque()
        self.bytes = 0
        self.dropped = 0

    def add(self, event: RunEvent, size: int, max_events: int, max_bytes: int) -> None:
        events = self.events
        events.append((event, size))
        self.bytes += size
        if len(events) > max_events or self.bytes > max_bytes:
            while events and (len(events) > max_events or self.bytes > max_bytes):
                _, old = events.popleft()
                self.bytes -= old
                self.dropped += 1


class Hub:
    """Fans each run's events out to subscribers of that run and of all runs.

    The manager publishes every event it writes to a ledger here, as it writes it;
    a subscriber receives the same events (:data:`HubItem`), so it can follow runs
    live without reading files::

        async for item in manager.hub.subscribe(handle.run_id):
            if isinstance(item, Lagged):
                ...  # item.missed events lost here: the ledger has them
            elif item.type == "tool_call":
                print(item.payload.name, item.payload.arguments)

    A per-run subscription ends after the run's ``run_completed``.

    Args:
        replay_events: how many of each run's recent events a late subscriber is
            replayed.
        replay_bytes: the most bytes of ledger lines replayed per run.
    """

    def __init__(
        self, *, replay_events: int = REPLAY_EVENTS, replay_bytes: int = REPLAY_BYTES
    ) -> None:
        self.replay_events = replay_events
        """Recent events kept per run for late subscribers."""
        self.replay_bytes = replay_bytes
        """The most bytes of ledger lines kept per run for late subscribers."""
        self._by_run: dict[str, set[Subscription]] = {}
        self._everyone: set[Subscription] = set()
        self._replays: dict[str, _Replay] = {}
        self._listeners: list[Callable[[RunEvent, bytes], None]] = []
        self._batch_listeners: list[Callable[[Sequence[RunEvent], Sequence[bytes]], None]] = []

    def add_listener(self, listener: Callable[[RunEvent, bytes], None]) -> None:
        """Call ``listener(event, line)`` on every publish, with the event's ledger line.

        For a fan-out of its own (the attach server's): it runs on the event
        loop inside :meth:`publish`, so it must be quick and must not raise.
        """
        self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[RunEvent, bytes], None]) -> None:
        """Stop calling ``listener`` (one not added is ignored)."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def add_batch_listener(
        self, listener: Callable[[Sequence[RunEvent], Sequence[bytes]], None]
    ) -> None:
        """Call ``listener(events, lines)`` on every publish: one call per :meth:`publish_many`.

        As :meth:`add_listener`, for a fan-out that folds a batch cheaper than
        its events one by one (the attach server's run book and feed).
        """
        self._batch_listeners.append(listener)

    def remove_batch_listener(
        self, listener: Callable[[Sequence[RunEvent], Sequence[bytes]], None]
    ) -> None:
        """Stop calling ``listener`` (one not added is ignored)."""
        with contextlib.suppress(ValueError):
            self._batch_listeners.remove(listener)

    def subscribe(
        self, run_id: str | None = None, *, replay: bool = True, max_pending: int = DEFAULT_QUEUE
    ) -> Subscription:
        """Follow one run (``run_id``) or every run (``None``).

        With ``replay``, the run's recent events (every retained run's, for
        ``None``) are queued first.
        """
        subscription = Subscription(self, run_id, max_pending)
        if replay:
            for replayed_id, events in self._replays.items():
                if run_id is not None and replayed_id != run_id:
                    continue
                if events.dropped:
                    subscription._offer(Lagged(replayed_id, events.dropped))
                for event, _ in events.events:
                    subscription._offer(event)
        if run_id is None:
            self._everyone.add(subscription)
        else:
            self._by_run.setdefault(run_id, set()).add(subscription)
        return subscription

    def publish(self, event: RunEvent, line: bytes) -> None:
        """Hand ``event`` (written as ``line``, without its newline) to every subscriber.

        Never blocks.
        """
        run_id = event.run_id
        replay = self._replays.get(run_id)
        if replay is None:
            replay = self._replays[run_id] = _Replay()
        replay.add(event, len(line), self.replay_events, self.replay_bytes)
        for listener in self._listeners:
            listener(event, line)
        for batch_listener in self._batch_listeners:
            batch_listener((event,), (line,))
        for subscription in self._by_run.get(run_id, ()):
            subscription._offer(event)
        for subscription in self._everyone:
            subscription._offer(event)

    def publish_many(
        self, events: Sequence[RunEvent], lines: Sequence[bytes], *, ended: bool = False
    ) -> None:
        """Publish consecutive events of one run, as :meth:`publish` each in order, at once.

        ``lines`` may be a :class:`LedgerLines`: it is split only if something
        here needs the lines one by one (a replay kept, a per-event listener).
        With ``ended``, the run is over with these events and not kept: its
        replay is dropped (as :meth:`forget` right after would), so none is built.
        """
        if not events:
            return
        if len(events) != len(lines):
            raise ValueError("one line per event")
        run_id = events[0].run_id
        if [event.run_id for event in events].count(run_id) != len(events):
            raise ValueError("publish_many takes the events of one run")
        if ended:
            self._replays.pop(run_id, None)
        else:
            replay = self._replays.get(run_id)
            if replay is None:
                replay = self._replays[run_id] = _Replay()
            most, most_bytes = self.replay_events, self.replay_bytes
            for event, line in zip(events, lines, strict=True):
                replay.add(event, len(line), most, most_bytes)
        for listener in self._listeners:
            for event, line in zip(events, lines, strict=True):
                listener(event, line)
        for batch_listener in self._batch_listeners:
            batch_listener(events, lines)
        subscribers = [*self._by_run.get(run_id, ()), *self._everyone]
        for subscription in subscribers:
            for event in events:
                subscription._offer(event)

    def replay(self, run_id: str) -> list[RunEvent]:
        """The recent events of ``run_id`` kept for late subscribers."""
        events = self._replays.get(run_id)
        return [event for event, _ in events.events] if events is not None else []

    def history(self, run_id: str) -> tuple[int, list[RunEvent]]:
        """How many of the run's first events are no longer kept, and the ones that are."""
        events = self._replays.get(run_id)
        if events is None:
            return 0, []
        return events.dropped, [event for event, _ in events.events]

    def forget(self, run_id: str) -> None:
        """Drop a run's replay (it was evicted from the manager)."""
        self._replays.pop(run_id, None)

    def _remove(self, subscription: Subscription) -> None:
        if subscription.run_id is None:
            self._everyone.discard(subscription)
            return
        subscribers = self._by_run.get(subscription.run_id)
        if subscribers is not None:
            subscribers.discard(subscription)
            if not subscribers:
                del self._by_run[subscription.run_id]

    @property
    def subscriber_count(self) -> int:
        """Subscriptions open now, of one run or of all."""
        return len(self._everyone) + sum(len(s) for s in self._by_run.values())
