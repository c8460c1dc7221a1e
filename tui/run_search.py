"""Search inside one run: which events hold a text, in arguments, outputs and paragraphs.

A paragraph's text is split over chunks at arbitrary points, so a chunk
is searched together with the end of the chunk before it; a model call
is searched in its conversation's words as the detail shows them (a quote in
a message is a quote, not JSON's ``\\"``) and its other fields as JSON; every
other event is searched in its payload as JSON (arguments, outputs, errors,
prompts). Matching is case-insensitive. What ``n`` and ``N`` step
through, and the counter counts, are *entries* (the lines of the event
list: a paragraph of many chunks is one), so the search groups the events
that match into the entries holding them as :mod:`tui.text.entries` does.
The run is read page by page from its source, so a run of a million
events is searched without holding it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

import msgspec

from inspector import RunKey, RunStore
from inspector.ledger import (
    DamagedLine,
    LedgerItem,
    LlmCall,
    LlmChunk,
    ReasoningChunk,
    conversation,
)
from tui.text.entries import joins

SEARCH_PAGE: Final = 2048
"""Events read from the source at a time."""
MATCHES_KEPT: Final = 100_000
"""Entries with a match remembered at most (n and N step through these)."""


class Found(msgspec.Struct, frozen=True):
    """What one page of the search found."""

    entries: list[int]
    """Where each entry holding a match starts, in order; none already given before."""
    events: int
    """The events that match in the page (an entry may hold several)."""


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
    searched = item.payload
    if isinstance(item, LlmCall):
        said = conversation(item.payload.messages) + conversation(item.payload.response)
        if any(needle in message.text.lower() for message in said):
            return True
        searched = msgspec.structs.replace(item.payload, messages=None, response=None)
    try:
        payload = msgspec.json.encode(searched).decode()
    except (TypeError, msgspec.EncodeError):
        payload = str(item.payload)
    return needle in payload.lower() or needle in item.type


async def matches(store: RunStore, key: RunKey, text: str) -> AsyncIterator[Found]:
    """The entries holding ``text``, page by page as they are found."""
    needle = text.lower()
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
            if holds(item, needle, carry):
                events += 1
                if entry != given:
                    entries.append(entry)
                    given = entry
        kept += len(entries)
        yield Found(entries, events)
        if kept >= MATCHES_KEPT:
            return
