"""The attach server's record of recent events, shared by every stream it serves.

One ring, not a queue per client: the hub's listener appends each event
once (its ledger line, as written), and every SSE stream reads the ring
from its own cursor. Fanning out to a hundred clients therefore costs the
run one append, and a client that falls behind by more than the ring
holds is told so (``stream_restarted``) instead of holding memory for it.
The ring also answers ``Last-Event-ID``: a client that reconnects within
its reach gets exactly the events it missed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Final

from ledger_reader import RunEvent

FEED_EVENTS: Final = 65_536
FEED_BYTES: Final = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FeedEntry:
    """One published event: its place in the feed and its ledger line."""

    number: int
    """1 for the first event the feed saw, rising by one."""
    run_id: str
    seq: int
    type: str
    line: bytes


class Feed:
    """The newest events of every run, bounded in count and bytes.

    Args:
        max_events, max_bytes: how far behind a stream may fall before it
            must start over.
    """

    def __init__(self, *, max_events: int = FEED_EVENTS, max_bytes: int = FEED_BYTES) -> None:
        if max_events < 1:
            raise ValueError("max_events must be 1 or more")
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._ring: list[FeedEntry | None] = [None] * max_events
        self.head = 0
        """The number of the newest entry (0 before the first)."""
        self.oldest = 1
        """The number of the oldest entry still held."""
        self._bytes = 0
        self._numbers: dict[tuple[str, int], int] = {}
        self._waiter: asyncio.Future[None] | None = None
        self.closed = False

    def add(self, event: RunEvent, line: bytes) -> None:
        """Append one event (the hub's listener); wakes every waiting stream at once."""
        number = self.head + 1
        slot = number % self.max_events
        ring = self._ring
        evicted = ring[slot]
        if evicted is not None:
            self._drop(evicted)
        entry = FeedEntry(number, event.run_id, event.seq, event.type, line)
        ring[slot] = entry
        self.head = number
        self._bytes += len(line)
        self._numbers[(event.run_id, event.seq)] = number
        while self._bytes > self.max_bytes and self.oldest < number:
            old = ring[self.oldest % self.max_events]
            if old is not None:
                ring[self.oldest % self.max_events] = None
                self._drop(old)
            else:
                self.oldest += 1
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def _drop(self, entry: FeedEntry) -> None:
        self._bytes -= len(entry.line)
        self._numbers.pop((entry.run_id, entry.seq), None)
        self.oldest = entry.number + 1

    def number_of(self, run_id: str, seq: int) -> int | None:
        """The feed number of an event still held, for ``Last-Event-ID``."""
        return self._numbers.get((run_id, seq))

    def after(self, cursor: int, limit: int = 4096) -> list[FeedEntry] | None:
        """Up to ``limit`` entries after ``cursor``; ``None`` if some were already dropped."""
        if cursor + 1 < self.oldest:
            return None
        stop = min(self.head, cursor + limit)
        ring, size = self._ring, self.max_events
        found = [ring[number % size] for number in range(cursor + 1, stop + 1)]
        return [entry for entry in found if entry is not None]

    async def wait(self, cursor: int) -> None:
        """Return once there is an entry after ``cursor`` or the feed is closed."""
        while self.head <= cursor and not self.closed:
            if self._waiter is None:
                self._waiter = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._waiter)

    def close(self) -> None:
        """End every stream reading the feed."""
        self.closed = True
        waiter = self._waiter
        self._waiter = None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
