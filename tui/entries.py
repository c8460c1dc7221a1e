"""How a run's events become the lines of its event stream.

Streamed text and reasoning arrive as many small chunks; a tool call and
its result are two events. A reader wants a paragraph and one line per
call, so consecutive events that belong together make one *entry*:

- ``llm_chunk`` events of one node: a paragraph of text;
- ``reasoning_chunk`` events of one node: a paragraph of reasoning;
- a ``tool_call`` with its ``tool_result`` right after it (and the tool
  node's enter and exit around them): one call, with its outcome.

Entries are found from the events near the ones on screen only (by looking
at neighbours), never by a pass over the whole run: a run of a million
events scrolls like one of ten. A paragraph longer than ``MAX_ENTRY``
events is cut into several entries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from ledger_reader import (
    DamagedLine,
    LedgerItem,
    LlmChunk,
    NodeEnter,
    NodeExit,
    ReasoningChunk,
    ToolCall,
    ToolResult,
)

MAX_ENTRY: Final = 96
"""Events in one entry at most: the walk to an entry's ends stays short."""

ItemAt = Callable[[int], LedgerItem | None]
"""The item at a position, or ``None`` when it is not read yet."""


def _node(item: LedgerItem) -> str | None:
    if isinstance(item, NodeEnter | NodeExit):
        return item.payload.node_id
    return None


def joins(previous: LedgerItem, item: LedgerItem) -> bool:
    """Whether ``item`` continues the entry ``previous`` is in."""
    if isinstance(previous, DamagedLine) or isinstance(item, DamagedLine):
        return False
    if isinstance(item, LlmChunk):
        return isinstance(previous, LlmChunk) and previous.payload.node_id == item.payload.node_id
    if isinstance(item, ReasoningChunk):
        return (
            isinstance(previous, ReasoningChunk)
            and previous.payload.node_id == item.payload.node_id
        )
    if isinstance(item, ToolCall):
        # A tool node's enter, then its call: one entry.
        node = _node(previous)
        return (
            isinstance(previous, NodeEnter)
            and node is not None
            and node == item.payload.node_id
            and node.startswith("tool:")
        )
    if isinstance(item, ToolResult):
        return (
            isinstance(previous, ToolCall)
            and bool(item.payload.call_id)
            and previous.payload.call_id == item.payload.call_id
        )
    if isinstance(item, NodeExit):
        # The exit of the tool node whose call and result came just before.
        return (
            isinstance(previous, ToolResult)
            and bool(item.payload.node_id)
            and (item.payload.node_id or "").startswith("tool:")
        )
    return False


def entry_start(position: int, item_at: ItemAt) -> int:
    """Where the entry holding ``position`` starts (as far back as events are read)."""
    start = position
    item = item_at(start)
    while item is not None and start > 0 and position - start < MAX_ENTRY:
        previous = item_at(start - 1)
        if previous is None or not joins(previous, item):
            break
        start -= 1
        item = previous
    return start


def entry_end(start: int, count: int, item_at: ItemAt) -> int:
    """Where the entry starting at ``start`` ends (exclusive; as far as events are read)."""
    end = start + 1
    previous = item_at(start)
    while previous is not None and end < count and end - start < MAX_ENTRY:
        item = item_at(end)
        if item is None or not joins(previous, item):
            break
        previous = item
        end += 1
    return end


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of the stream: events ``start`` to ``end`` (exclusive)."""

    start: int
    end: int


def entries_from(top: int, wanted: int, count: int, item_at: ItemAt) -> list[Entry]:
    """Up to ``wanted`` entries from the one holding ``top`` on."""
    found: list[Entry] = []
    if count <= 0:
        return found
    position = entry_start(min(top, count - 1), item_at)
    while position < count and len(found) < wanted:
        end = entry_end(position, count, item_at)
        found.append(Entry(position, end))
        position = end
    return found


def entries_before(position: int, wanted: int, item_at: ItemAt) -> int:
    """The start of the entry ``wanted`` entries before the one holding ``position``."""
    start = entry_start(position, item_at)
    for _ in range(wanted):
        if start == 0:
            break
        start = entry_start(start - 1, item_at)
    return start
