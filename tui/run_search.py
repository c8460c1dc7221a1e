"""Search inside one run: which entries hold a phrase, in arguments, outputs and paragraphs.

The phrase is matched as ``has:`` matches it (:mod:`ledger_reader.text_search`):
in the strings of an event (values, not field names), with smart case. A run
read from a file of its own (:meth:`inspector.RunStore.run_file`: event n is
line n) is searched by that file's bytes, decoding only the lines the phrase
may be in, so the first match shows as soon as the scan gets there; a run
of any other source is read page by page and each event searched.

A paragraph's text is split over chunks at arbitrary points, so a phrase
may hold the end of one chunk and the start of the next: once the bytes are
searched, the chunks are read (their lines found by their type's bytes) and
searched each with the end of the chunk before it. What ``n`` and ``N``
step through, and the counter counts, are *entries* (the lines of the event
list: a paragraph of many chunks is one), so the events that match are
grouped into the entries holding them as :mod:`tui.text.entries` does.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Final

import msgspec

from inspector import RunKey, RunStore
from inspector.ledger import (
    DamagedLine,
    FileSearch,
    Hit,
    LedgerItem,
    LlmChunk,
    Phrase,
    ReasoningChunk,
    decode_line,
)
from tui.text.entries import joins

SEARCH_PAGE: Final = 2048
"""Events read from the source at a time (a run without a file of its own)."""
MATCHES_KEPT: Final = 100_000
"""Entries with a match remembered at most (n and N step through these)."""
HITS_BATCH: Final = 0.05
"""Seconds of scanning the hits of one batch stay in it: the first hit is given at once."""
LOOK_BACK: Final = 32
"""Events read before a hit, to find where its entry starts (more if they all join)."""


class Found(msgspec.Struct, frozen=True):
    """What one step of the search found."""

    entries: list[int]
    """Where each entry holding a match starts, in order within the step; none given
    before. A later step may give entries before these (a phrase across two chunks)."""
    events: int
    """The events that match in the step (an entry may hold several)."""


class ChunkCarry:
    """The end of the last chunk seen, for a match split across two chunks."""

    def __init__(self) -> None:
        self.tail = ""

    def joined(self, item: LlmChunk | ReasoningChunk, phrase: Phrase) -> tuple[bool, bool]:
        """Whether the phrase is in the chunk with the end of the one before, and whether
        it is in the chunk alone; the chunk's end is kept for the next."""
        text = item.payload.delta or ""
        joined = self.tail + text
        keep = len(phrase.text) - 1
        self.tail = joined[-keep:] if keep > 0 else ""
        return phrase.in_text(joined), phrase.in_text(text)


def holds(item: LedgerItem, phrase: Phrase, carry: ChunkCarry) -> bool:
    """Whether ``item`` holds ``phrase`` (a chunk: with the end of the chunk before)."""
    if isinstance(item, LlmChunk | ReasoningChunk):
        return carry.joined(item, phrase)[0]
    carry.tail = ""
    if isinstance(item, DamagedLine):
        return phrase.in_text(item.reason)
    try:
        return phrase.in_line(msgspec.json.encode(item))
    except (TypeError, msgspec.EncodeError):
        return phrase.in_text(str(item.payload))


async def matches(store: RunStore, key: RunKey, text: str) -> AsyncIterator[Found]:
    """The entries holding ``text``, step by step as they are found."""
    phrase = Phrase(text)
    path = store.run_file(key)
    found = _scanned(store, key, path, phrase) if path else _read(store, key, phrase)
    async for step in found:
        yield step


async def _read(store: RunStore, key: RunKey, phrase: Phrase) -> AsyncIterator[Found]:
    """Every event read from the source and searched, page by page."""
    carry = ChunkCarry()
    count = await store.event_count(key)
    kept = 0
    previous: LedgerItem | None = None
    entry = -1  # where the entry of the event just read starts
    given = -1  # the last entry given
    for start in range(0, count, SEARCH_PAGE):
        items = await store.events(key, start, min(count, start + SEARCH_PAGE))
        entries: list[int] = []
        events = 0
        for offset, item in enumerate(items):
            if previous is None or not joins(previous, item):
                entry = start + offset
            previous = item
            if holds(item, phrase, carry):
                events += 1
                if entry != given:
                    entries.append(entry)
                    given = entry
        kept += len(entries)
        yield Found(entries, events)
        if kept >= MATCHES_KEPT:
            return


class ChunkLines:
    """The lines of streamed chunks, found by their type's bytes (every one passes)."""

    anchors: Final = (b'"llm_chunk"', b'"reasoning_chunk"')
    case_sensitive: Final = True

    def in_line(self, line: bytes) -> bool:
        return True


async def _scanned(store: RunStore, key: RunKey, path: str, phrase: Phrase) -> AsyncIterator[Found]:
    """The run's file searched by its bytes, then its chunks for phrases across two."""
    stop = threading.Event()
    given: set[int] = set()
    entries = EntryStarts(store, key)
    try:
        hits = iter(FileSearch(path, phrase, numbered=True, stop=stop))
        first = True
        while batch := await asyncio.to_thread(_next_hits, hits, first):
            first = False
            starts = await entries.of([hit.number for hit in batch])
            new = [start for start in dict.fromkeys(starts) if start not in given]
            given.update(new)
            yield Found(new, len(batch))
            if len(given) >= MATCHES_KEPT:
                return
        chunks = iter(FileSearch(path, ChunkLines(), numbered=True, stop=stop))
        carry = ChunkCarry()
        before = -2  # the line of the chunk before
        while batch := await asyncio.to_thread(_next_hits, chunks, False):
            split: list[int] = []
            for hit in batch:
                item = decode_line(hit.line, hit.start)
                if not isinstance(item, LlmChunk | ReasoningChunk):
                    continue
                if before != hit.number - 1:  # an event between: as reading every one does
                    carry.tail = ""
                before = hit.number
                joined, alone = carry.joined(item, phrase)
                if joined and not alone:  # alone, the bytes found it
                    split.append(hit.number)
            if split:
                starts = await entries.of(split)
                new = sorted(start for start in dict.fromkeys(starts) if start not in given)
                given.update(new)
                yield Found(new, len(split))
    finally:
        stop.set()


def _next_hits(hits: Iterator[Hit], at_once: bool) -> list[Hit]:
    """The next hits of a search: the first alone if ``at_once``, else those found within
    :data:`HITS_BATCH` of the first; an empty list at the end."""
    batch: list[Hit] = []
    began = 0.0
    for hit in hits:
        batch.append(hit)
        if at_once:
            break
        if not began:
            began = time.monotonic()
        elif time.monotonic() - began >= HITS_BATCH:
            break
    return batch


class EntryStarts:
    """Where the entries holding given events start: the events before each read back
    from the source until one does not join, a window of them for hits close together."""

    def __init__(self, store: RunStore, key: RunKey) -> None:
        self._store = store
        self._key = key
        self._last: tuple[int, int] | None = None
        """The last event asked about and where its entry starts."""

    async def of(self, numbers: list[int]) -> list[int]:
        """The entry start of each event of ``numbers`` (in increasing order)."""
        starts: list[int] = []
        low, items = 0, list[LedgerItem]()
        for index, number in enumerate(numbers):
            if not low <= number < low + len(items):
                last = max(n for n in numbers[index:] if n - number < SEARCH_PAGE)
                low = max(0, number - LOOK_BACK)
                items = await self._store.events(self._key, low, last + 1)
                if len(items) != last + 1 - low:
                    low, items = 0, []  # blank lines: positions are not line numbers here
                    starts.append(self._finish(number, number))
                    continue
            starts.append(await self._start(number, low, items))
        return starts

    async def _start(self, number: int, low: int, items: list[LedgerItem]) -> int:
        back = LOOK_BACK
        while True:
            at = number
            while at > low and joins(items[at - 1 - low], items[at - low]):
                at -= 1
                if self._last is not None and at == self._last[0]:
                    return self._finish(number, self._last[1])
            if at > low or low == 0:
                return self._finish(number, at)
            back *= 4  # a long paragraph: further back
            low = max(0, number - back)
            items = await self._store.events(self._key, low, number + 1)
            if len(items) != number + 1 - low:
                return self._finish(number, number)

    def _finish(self, number: int, start: int) -> int:
        self._last = (number, start)
        return start
