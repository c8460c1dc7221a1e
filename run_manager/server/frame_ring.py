"""The attach server's record of recent events, shared by every stream it serves.

One ring, not a queue per client: the hub's listener appends each event
once (its ledger line, as written), and every SSE stream reads the ring
from its own cursor. Fanning out to a hundred clients therefore costs the
run one append, and a client that falls behind by more than the ring
holds is told so (``stream_restarted``) instead of holding memory for it.
The ring also answers ``Last-Event-ID``: a client that reconnects within
its reach gets exactly the events it missed.

A batch published as :class:`~run_manager.hub.LedgerLines` (OTLP ingest's:
a run's lines in the one buffer they were written as) is kept as that
buffer, each of its slots pointing at it, and cut into lines the first
time a stream reads one of them or the byte bound needs their sizes: with
no stream attached, it is never cut.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Final, NamedTuple

from ledger_reader import RunEvent
from ledger_reader.events import EVENT_TYPES
from run_manager.hub import LedgerLines

RING_EVENTS: Final = 65_536
RING_BYTES: Final = 64 * 1024 * 1024

_TAGS: Final[dict[type, str]] = {cls: tag for tag, cls in EVENT_TYPES.items()}
"""The ``type`` of each known event class (``event.type`` works it out on every call)."""
_KNOWN: Final = frozenset(_TAGS)


class RingEntry(NamedTuple):
    """One published event: its place in the feed and its ledger line."""

    number: int
    """1 for the first event the feed saw, rising by one."""
    run_id: str
    seq: int
    type: str
    line: bytes


class _Block:
    """A published batch's lines, uncut: every slot of the batch holds this one object."""

    __slots__ = ("first", "lines")

    def __init__(self, lines: LedgerLines, first: int) -> None:
        self.lines = lines
        self.first = first
        """The feed number of its first event."""


class FrameRing:
    """The newest events of every run, bounded in count and bytes.

    Kept as parallel lists, not an object per event: publishing is on the
    runs' own path, and the global stream's frames are made here once, so a
    hundred clients share them.

    Args:
        max_events, max_bytes: how far behind a stream may fall before it
            must start over.
    """

    def __init__(self, *, max_events: int = RING_EVENTS, max_bytes: int = RING_BYTES) -> None:
        if max_events < 1:
            raise ValueError("max_events must be 1 or more")
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._run_ids: list[str] = [""] * max_events
        self._seqs: list[int] = [0] * max_events
        self._types: list[str | type] = [""] * max_events
        """Each event's ``type``, or the class of a known one (named when read: the class is
        what publishing can take without a lookup per event)."""
        self._lines: list[bytes | _Block] = [b""] * max_events
        self._sizes: list[int] = [0] * max_events
        """The bytes each slot is counted for: its line's length; for a block not yet cut, 0
        in every slot of it but the last, which counts them all (a batch's slots leave the
        ring first to last, and the buffer is held until its last one has gone)."""
        self._frames: list[bytes] = [b""] * max_events
        self._run_frames: list[bytes] = [b""] * max_events
        """Each event's frame in its run's stream (``id: <seq>``), made when first read: every
        follower of the run, and every one that reconnects, sends the same bytes."""
        """The global stream's frame of each event (``id: <run_id>:<seq>``), made when a
        stream first reads it: with no stream attached, none is made."""
        self.head = 0
        """The number of the newest entry (0 before the first)."""
        self.oldest = 1
        """The number of the oldest entry still held."""
        self._bytes = 0
        self._waiter: asyncio.Future[None] | None = None
        self.closed = False
        self._firsts: dict[str, tuple[int, int]] = {}
        """Each run's first event the ring took: its number and seq (see :meth:`reaches_back`)."""

    def add(self, event: RunEvent, line: bytes) -> None:
        """Append one event (the hub's listener); wakes every waiting stream at once."""
        self.add_many((event,), (line,))

    def add_many(self, events: Sequence[RunEvent], lines: Sequence[bytes]) -> None:
        """Append events in order (the hub's batch listener); wakes waiting streams once.

        A batch that fits before the ring's end is written as slices, not event by
        event: the state after it is the one adding its events one by one leaves. Its
        lines given as uncut :class:`LedgerLines` are kept as that one buffer.
        """
        count = len(events)
        if count != len(lines):
            raise ValueError("one line per event")
        if count:
            self._note_first(events[0].run_id, self.head + 1, events[0].seq)
        size = self.max_events
        low = (self.head + 1) % size
        high = low + count
        if high <= size:
            held, sizes = self._lines, self._sizes
            # The slots' old events leave the ring (those shed already count 0 bytes).
            gone = sum(sizes[low:high])
            if isinstance(lines, LedgerLines) and not lines.is_split and count:
                block = _Block(lines, self.head + 1)
                held[low:high] = [block] * count
                added = lines.size
                sizes[low:high] = [0] * (count - 1) + [added]
            else:
                held[low:high] = lines
                sizes[low:high] = counted = list(map(len, lines))
                added = sum(counted)
            self._bytes += added - gone
            head = self.head = self.head + count
            self.oldest = max(self.oldest, head - size + 1)
            kinds: list[str | type] = list(map(type, events))
            if not _KNOWN.issuperset(kinds):  # an unknown event's type is its own, not its class's
                kinds = [_TAGS.get(type(event)) or event.type for event in events]
            self._run_ids[low:high] = [event.run_id for event in events]
            self._seqs[low:high] = [event.seq for event in events]
            self._types[low:high] = kinds
            self._frames[low:high] = [b""] * count  # made when a stream first reads them
            self._run_frames[low:high] = [b""] * count
            if self._bytes > self.max_bytes:
                self._shed(head)
        else:  # wraps past the ring's end: one by one
            self._add_each(events, lines)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def _note_first(self, run_id: str, number: int, seq: int) -> None:
        """Keep where a run first entered the ring (a batch is one run's, as the hub gives it)."""
        firsts = self._firsts
        if run_id in firsts:
            return
        firsts[run_id] = (number, seq)
        if len(firsts) > 2 * self.max_events:  # forget runs whose first event has left
            oldest = self.oldest
            for gone in [key for key, (first, _) in firsts.items() if first < oldest]:
                del firsts[gone]

    def reaches_back(self, run_id: str, after: int) -> int | None:
        """A cursor from which the ring holds every event of the run after seq ``after``.

        ``None`` when it does not: the run's first events here have left the ring (or
        it never had them, as for a run that started before the server), and the
        ledger must be read. A reconnecting follower then costs no ledger read, no
        decoding and no thread: the stream reads the ring from the cursor on.
        """
        first = self._firsts.get(run_id)
        if first is None:
            return None
        number, seq = first
        if number < self.oldest or seq > after + 1:
            return None
        return number - 1

    def _add_each(self, events: Sequence[RunEvent], lines: Sequence[bytes]) -> None:
        size = self.max_events
        held, sizes = self._lines, self._sizes
        run_ids, seqs, types, frames = self._run_ids, self._seqs, self._types, self._frames
        run_frames = self._run_frames
        number = self.head
        tags = _TAGS
        for event, line in zip(events, lines, strict=True):
            number += 1
            slot = number % size
            if number - size >= self.oldest:  # the slot's event leaves the ring
                self._bytes -= sizes[slot]
                self.oldest = number - size + 1
            run_ids[slot] = event.run_id
            seqs[slot] = event.seq
            types[slot] = tags.get(type(event)) or event.type
            held[slot] = line
            sizes[slot] = len(line)
            frames[slot] = run_frames[slot] = b""
            self.head = number
            self._bytes += len(line)
            if self._bytes > self.max_bytes:
                self._shed(number)

    def _cut(self, block: _Block) -> None:
        """Put a block's lines in the slots that still hold it, each counted for its own bytes."""
        lines = block.lines.lines()
        held, sizes = self._lines, self._sizes
        size = self.max_events
        for number in range(max(block.first, self.oldest), block.first + len(lines)):
            slot = number % size
            if held[slot] is block:
                line = lines[number - block.first]
                self._bytes += len(line) - sizes[slot]
                held[slot] = line
                sizes[slot] = len(line)

    def _line(self, slot: int) -> bytes:
        line = self._lines[slot]
        if isinstance(line, _Block):
            self._cut(line)
            line = self._lines[slot]
            assert isinstance(line, bytes)  # the block was in this slot, so its line is now
        return line

    def _shed(self, newest: int) -> None:
        """Drop the oldest events until the ring is within its bytes (big events only)."""
        size = self.max_events
        held, sizes = self._lines, self._sizes
        while self._bytes > self.max_bytes and self.oldest < newest:
            slot = self.oldest % size
            line = held[slot]
            if isinstance(line, _Block):
                # Each of its lines counted for itself, as they would be added one by one
                # (the block's earlier slots may have been written over: the rest counts less).
                self._cut(line)
                continue
            self._bytes -= sizes[slot]
            sizes[slot] = 0
            held[slot] = self._frames[slot] = self._run_frames[slot] = b""
            self.oldest += 1

    def number_of(self, run_id: str, seq: int) -> int | None:
        """The feed number of an event still held, for ``Last-Event-ID`` (a scan: rare)."""
        size = self.max_events
        for number in range(self.head, self.oldest - 1, -1):
            slot = number % size
            if self._seqs[slot] == seq and self._run_ids[slot] == run_id:
                return number
        return None

    def _slots(self, cursor: int, limit: int) -> tuple[int, int] | None:
        if cursor + 1 < self.oldest:
            return None
        return cursor + 1, min(self.head, cursor + limit) + 1

    def frames_after(self, cursor: int, limit: int = 4096) -> tuple[int, list[bytes]] | None:
        """The global frames after ``cursor`` (up to ``limit``) and the last one's number.

        ``None`` if some were already dropped: the stream must start over.
        """
        span = self._slots(cursor, limit)
        if span is None:
            return None
        first, stop = span
        if first >= stop:
            return cursor, []
        size = self.max_events
        frames = self._frames
        for number in range(first, stop):  # each frame is made once, for every stream
            slot = number % size
            if not frames[slot]:
                frames[slot] = b"id: %s:%d\ndata: %s\n\n" % (
                    self._run_ids[slot].encode(),
                    self._seqs[slot],
                    self._line(slot),
                )
        low, high = first % size, (stop - 1) % size + 1
        chosen = frames[low:high] if low < high else frames[low:] + frames[:high]
        return stop - 1, chosen

    def run_frames_after(
        self, run_id: str, cursor: int, after: int, limit: int = 4096
    ) -> tuple[int, bytes, int, bool] | None:
        """One run's frames among the entries after ``cursor`` (up to ``limit``) past ``after``.

        Returns the last entry's number, the frames joined, the last seq sent (``after``
        if none) and whether the run's end was among them; ``None`` if some entries were
        already dropped (the stream must start over). No object is made per event, and
        each frame is made once for every stream of the run.
        """
        span = self._slots(cursor, limit)
        if span is None:
            return None
        first, stop = span
        if first < stop:
            whole = self._one_run_frames(run_id, first, stop, after)
            if whole is not None:
                return whole
        size = self.max_events
        run_ids, seqs, types, cache = self._run_ids, self._seqs, self._types, self._run_frames
        chosen: list[bytes] = []
        last = after
        ended = False
        for number in range(first, stop):
            slot = number % size
            if run_ids[slot] != run_id:
                continue
            seq = seqs[slot]
            if seq <= last:
                continue
            frame = cache[slot]
            if not frame:
                frame = cache[slot] = b"id: %d\ndata: %s\n\n" % (seq, self._line(slot))
            chosen.append(frame)
            last = seq
            kind = types[slot]
            if (kind if isinstance(kind, str) else _TAGS[kind]) == "run_completed":
                ended = True
        return max(cursor, stop - 1), b"".join(chosen), last, ended

    def _one_run_frames(
        self, run_id: str, first: int, stop: int, after: int
    ) -> tuple[int, bytes, int, bool] | None:
        """:meth:`run_frames_after` over entries that are all the run's, in seq order.

        The common case (one busy run; a follower reconnecting, sent the run's events
        the ring holds): found with list operations, not a step per entry. ``None``
        when the entries are not all the run's consecutive events, or wrap around the
        ring's end: the caller looks at them one by one.
        """
        size = self.max_events
        low, high = first % size, (stop - 1) % size + 1
        if high <= low:
            return None
        run_ids, seqs = self._run_ids, self._seqs
        count = high - low
        if run_ids[high - 1] != run_id or run_ids[low:high].count(run_id) != count:
            return None
        lowest = seqs[low]
        if seqs[low:high] != list(range(lowest, lowest + count)):
            return None
        start = low + max(0, min(count, after + 1 - lowest))
        last_seq = seqs[high - 1]
        if start == high:
            return stop - 1, b"", after, False
        cache = self._run_frames
        if b"" in cache[start:high]:
            for slot in range(start, high):
                if not cache[slot]:
                    cache[slot] = b"id: %d\ndata: %s\n\n" % (seqs[slot], self._line(slot))
        kind = self._types[high - 1]
        ended = (kind if isinstance(kind, str) else _TAGS[kind]) == "run_completed"
        return stop - 1, b"".join(cache[start:high]), last_seq, ended

    def after(self, cursor: int, limit: int = 4096) -> list[RingEntry] | None:
        """Up to ``limit`` entries after ``cursor``; ``None`` if some were already dropped."""
        span = self._slots(cursor, limit)
        if span is None:
            return None
        size = self.max_events
        run_ids, seqs, types = self._run_ids, self._seqs, self._types
        found = []
        for number in range(*span):
            slot = number % size
            kind = types[slot]
            if not isinstance(kind, str):
                kind = _TAGS[kind]
            found.append(RingEntry(number, run_ids[slot], seqs[slot], kind, self._line(slot)))
        return found

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
