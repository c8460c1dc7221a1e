"""How a run's events become the lines of its event stream.

Streamed text and reasoning arrive as many small chunks; a tool call and
its result are two events. A reader wants a paragraph and one line per
call, so consecutive events that belong together make one *entry*:

- ``llm_chunk`` events of one node: a paragraph of text;
- ``reasoning_chunk`` events of one node: a paragraph of reasoning;
- a ``tool_call`` with its ``tool_result`` right after it (and the tool
  node's enter and exit around them): one call, with its outcome;
- where steps are folded (the app's default), a step's ``node_enter`` and
  ``node_exit`` (a graph node, a chain: any node that is no model call,
  tool call or approval) join the entry before them: the entry says how
  many it holds (:func:`folded_steps`), and they stay in the ledger.

A paragraph ends where the text does: at the next event that is not a
chunk of the same node (a tool call, the model call's end), or after a
chunk that ends a blank line; however many chunks it took.

Entries are found from the events near the ones on screen only (by looking
at neighbours), never by a pass over the whole run. A long paragraph is
walked once: :class:`EntryIndex` remembers the spans of events it found
joined, so the next walk jumps over them, and a run of a million events
scrolls like one of ten.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from inspector.ledger import (
    DamagedLine,
    LedgerItem,
    LlmChunk,
    NodeEnter,
    NodeExit,
    ReasoningChunk,
    ToolCall,
    ToolResult,
)
from inspector.timeline_nodes import NodeKind, node_kind

SPAN_KEPT: Final = 16
"""Joined spans at least this long are remembered (shorter ones are cheap to walk again)."""

ItemAt = Callable[[int], LedgerItem | None]
"""The item at a position, or ``None`` when it is not read yet."""


def _node(item: LedgerItem) -> str | None:
    if isinstance(item, NodeEnter | NodeExit):
        return item.payload.node_id
    return None


def _ends_paragraph(before: str | None, after: str | None) -> bool:
    """Whether a blank line falls between two chunks (at the end of the first)."""
    text = before or ""
    return text.endswith("\n\n") or (text.endswith("\n") and (after or "").startswith("\n"))


def is_step(item: LedgerItem | None) -> bool:
    """Whether ``item`` enters or exits a step (a node that is no model call, tool call or
    approval, as the timeline tells them)."""
    return isinstance(item, NodeEnter | NodeExit) and (
        node_kind(item.payload.node_id) is NodeKind.STEP
    )


def joins(previous: LedgerItem, item: LedgerItem, *, fold_steps: bool = False) -> bool:
    """Whether ``item`` continues the entry ``previous`` is in (a step always does, where
    steps are folded)."""
    if isinstance(previous, DamagedLine) or isinstance(item, DamagedLine):
        return False
    if fold_steps and is_step(item):
        return True
    if isinstance(item, LlmChunk):
        return (
            isinstance(previous, LlmChunk)
            and previous.payload.node_id == item.payload.node_id
            and not _ends_paragraph(previous.payload.delta, item.payload.delta)
        )
    if isinstance(item, ReasoningChunk):
        return (
            isinstance(previous, ReasoningChunk)
            and previous.payload.node_id == item.payload.node_id
            and not _ends_paragraph(previous.payload.delta, item.payload.delta)
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


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of the stream: events ``start`` to ``end`` (exclusive)."""

    start: int
    end: int


class EntryIndex:
    """Finds the entries of one run near a position, remembering long spans already walked.

    A *joined span* ``[a, b)`` is a stretch of events each of which joins
    the one before it: all of one entry. Spans never break (a ledger only
    grows), so once walked they are jumped over; :meth:`clear` forgets them
    when the run's events are replaced.
    """

    def __init__(self, item_at: ItemAt, *, fold_steps: bool = False) -> None:
        self.item_at = item_at
        self.fold_steps = fold_steps
        """Steps join the entry before them; changed, the index is :meth:`clear`-ed."""
        self._starts: list[int] = []
        self._ends: list[int] = []

    def clear(self) -> None:
        self._starts.clear()
        self._ends.clear()

    def _span_at(self, position: int) -> int:
        """The index of the remembered span holding ``position``, or -1."""
        at = bisect_right(self._starts, position) - 1
        return at if at >= 0 and position < self._ends[at] else -1

    def _remember(self, start: int, end: int) -> None:
        if end - start < SPAN_KEPT:
            return
        at = bisect_right(self._starts, start) - 1
        if at >= 0 and self._ends[at] >= start:
            start = self._starts[at]  # overlaps or touches the one before: grow it
            end = max(end, self._ends[at])
            del self._starts[at], self._ends[at]
        else:
            at += 1
        while at < len(self._starts) and self._starts[at] <= end:
            end = max(end, self._ends[at])
            del self._starts[at], self._ends[at]
        self._starts.insert(at, start)
        self._ends.insert(at, end)

    def start(self, position: int) -> int:
        """Where the entry holding ``position`` starts (as far back as events are read)."""
        fold = self.fold_steps
        start = position
        while start > 0:
            span = self._span_at(start)
            if span >= 0 and self._starts[span] < start:
                start = self._starts[span]
                continue
            previous, item = self.item_at(start - 1), self.item_at(start)
            if previous is None or item is None or not joins(previous, item, fold_steps=fold):
                break
            start -= 1
        self._remember(start, position + 1)
        return start

    def end(self, start: int, count: int) -> int:
        """Where the entry starting at ``start`` ends (exclusive; as far as events are read)."""
        fold = self.fold_steps
        end = start + 1
        while end < count:
            span = self._span_at(end - 1)
            if span >= 0 and self._ends[span] > end:
                end = min(self._ends[span], count)
                continue
            previous, item = self.item_at(end - 1), self.item_at(end)
            if previous is None or item is None or not joins(previous, item, fold_steps=fold):
                break
            end += 1
        self._remember(start, end)
        return end

    def entry_of(self, position: int, count: int) -> Entry:
        """The entry holding ``position``."""
        start = self.start(position)
        return Entry(start, self.end(start, count))

    def entries_from(self, top: int, wanted: int, count: int) -> list[Entry]:
        """Up to ``wanted`` entries from the one holding ``top`` on."""
        found: list[Entry] = []
        if count <= 0:
            return found
        position = self.start(min(top, count - 1))
        while position < count and len(found) < wanted:
            end = self.end(position, count)
            found.append(Entry(position, end))
            position = end
        return found

    def before(self, position: int, wanted: int) -> int:
        """The start of the entry ``wanted`` entries before the one holding ``position``."""
        start = self.start(position)
        for _ in range(wanted):
            if start == 0:
                break
            start = self.start(start - 1)
        return start


def folded_steps(entry: Entry, item_at: ItemAt) -> int:
    """The steps folded into ``entry``: they end it (a step joins the entry before it, and
    nothing joins a step but another), so they are counted from its end, never walked
    through a paragraph of a thousand chunks."""
    count = 0
    position = entry.end - 1
    while position >= entry.start and is_step(item_at(position)):
        count += 1
        position -= 1
    return count
