"""Search inside one run: which events hold a text, in arguments, outputs and paragraphs.

A paragraph's text is split over chunks at arbitrary points, so a chunk
is searched together with the end of the chunk before it; every other
event is searched in its payload as JSON (arguments, outputs, errors,
prompts). Matching is case-insensitive. The run is read page by page from
its source, so a run of a million events is searched without holding it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

import msgspec

from inspector import RunKey, RunStore
from ledger_reader import DamagedLine, LedgerItem, LlmChunk, ReasoningChunk

SEARCH_PAGE: Final = 2048
"""Events read from the source at a time."""
MATCHES_KEPT: Final = 100_000
"""Matches remembered at most (n and N step through these)."""


class ChunkCarry:
    """The end of the last chunk seen, for a match split across two chunks."""

    def __init__(self) -> None:
        self.tail = ""


def holds(item: LedgerItem, needle: str, carry: ChunkCarry) -> bool:
    """Whether ``item`` holds ``needle`` (lower case)."""
    if isinstance(item, LlmChunk | ReasoningChunk):
        text = (item.payload.delta or "").lower()
        found = needle in carry.tail + text
        carry.tail = (carry.tail + text)[-max(0, len(needle) - 1) :] if len(needle) > 1 else ""
        return found
    carry.tail = ""
    if isinstance(item, DamagedLine):
        return needle in item.reason.lower()
    try:
        payload = msgspec.json.encode(item.payload).decode()
    except (TypeError, msgspec.EncodeError):
        payload = str(item.payload)
    return needle in payload.lower() or needle in item.type


async def matches(store: RunStore, key: RunKey, text: str) -> AsyncIterator[list[int]]:
    """The positions of the events that hold ``text``, page by page as they are found."""
    needle = text.lower()
    carry = ChunkCarry()
    count = await store.event_count(key)
    found = 0
    for start in range(0, count, SEARCH_PAGE):
        items = await store.events(key, start, min(count, start + SEARCH_PAGE))
        page = [start + offset for offset, item in enumerate(items) if holds(item, needle, carry)]
        found += len(page)
        yield page
        if found >= MATCHES_KEPT:
            return
