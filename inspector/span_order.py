"""The order a run's events are listed in: its ledger's, but no node before the one it is in.

An OTLP run's spans are written as they arrive, and exporters send a span when
it ends: a step's children are written before the step, the root's chain last
(``docs/ledger.md``). Each ``node_enter`` of such a run says its ``span_id`` and
its parent's, so a reader can list a node's ``node_enter`` (its *head*) just
before the first listed event of the nodes inside it, whatever order they
came in; every other event keeps its place. A parent that never arrives moves
nothing, and a node that arrives after its parent is already listed after it.

:class:`SpanOrder` folds a run's events in ledger order, one at a time, and
moves a head only when the node arriving is the parent of nodes already
folded (work in proportion to the heads moved, never a sort of the run). A
head moved sits in a *chain*: the heads listed just before one event of the
ledger that did not move (its *anchor*), outermost first. Positions (the
ledger's order, from 0) and indexes (the list's) are mapped both ways by
binary searches over the heads moved; a run none of whose heads moved maps
each to itself.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from typing import Final

from inspector.ledger import LedgerItem, NodeEnter
from ledger_reader.summary import OTLP_WRITER

MAX_MOVES: Final = 256
"""Heads moved for one event at most (a cycle of parents in hostile input ends there)."""


def ordered_by_spans(writer: str | None) -> bool:
    """Whether a run its ``writer`` wrote is listed in :class:`SpanOrder`: the writers whose
    nodes may come before the node they are inside (OTLP ingest's), as other runs' never do
    and are not read whole for it."""
    return writer == OTLP_WRITER


class SpanOrder:
    """Where each of one run's events is listed; see the module's docstring."""

    def __init__(self) -> None:
        self.folded = 0
        """Events folded so far: the position the next :meth:`add` takes."""
        self.version = 0
        """Changes whenever a head moves: indexes found before may point elsewhere."""
        self._at: dict[str, int] = {}
        """Each span's ``node_enter`` position."""
        self._parent: dict[str, str] = {}
        """Each span's parent span, where it says one."""
        self._first_inside: dict[str, str] = {}
        """For a span not folded yet: the first listed of the spans folded inside it."""
        self._moved: list[int] = []
        """Positions of the heads moved, sorted."""
        self._slots: list[int] = []
        """The anchor of each head moved, sorted (an anchor holds as many as its chain)."""
        self._chains: dict[int, list[int]] = {}
        """The heads listed before each anchor, in the order they are listed."""
        self._anchor: dict[int, int] = {}
        """Each moved head's anchor."""

    @property
    def moved(self) -> int:
        """How many heads are listed elsewhere than their ledger's place."""
        return len(self._moved)

    def add(self, item: LedgerItem | None) -> None:
        """Fold the event at position :attr:`folded` (``None``: a position that holds none)."""
        position = self.folded
        self.folded += 1
        if not isinstance(item, NodeEnter):
            return
        span, parent = item.payload.span_id, item.payload.parent_span_id
        if not span or span in self._at:
            return  # no span, or a span said twice (hostile input): it stays where it is
        self._at[span] = position
        if parent and parent != span:
            self._parent[span] = parent
        inside = self._first_inside.pop(span, None)
        if inside is not None:
            # Listed before the nodes inside it: just before the first of them.
            anchor, rank = self._place(self._at[inside])
            self._put(position, anchor, rank)
            self._lift(span)
        if parent and parent != span and parent not in self._at:
            self._wait(parent, span)

    def _place(self, position: int) -> tuple[int, int]:
        """Where the event at ``position`` is listed, as (anchor, rank): a head moved is
        ``rank``-th of its anchor's chain, an event in its place comes after its chain."""
        anchor = self._anchor.get(position)
        if anchor is None:
            return position, len(self._chains.get(position, ()))
        return anchor, self._chains[anchor].index(position)

    def _put(self, head: int, anchor: int, rank: int) -> None:
        """List the node_enter at ``head`` as the ``rank``-th of ``anchor``'s chain."""
        was = self._anchor.get(head)
        if was is None:
            insort(self._moved, head)
        else:
            self._chains[was].remove(head)
            if not self._chains[was]:
                del self._chains[was]
            del self._slots[bisect_left(self._slots, was)]
            if was == anchor:
                rank = min(rank, len(self._chains.get(anchor, ())))
        self._chains.setdefault(anchor, []).insert(rank, head)
        insort(self._slots, anchor)
        self._anchor[head] = anchor
        self.version += 1

    def _lift(self, span: str) -> None:
        """The node of ``span`` moved earlier: each node above it listed after it moves to
        just before it (its other nodes inside were listed after it, and still are)."""
        seen = {span}
        for _ in range(MAX_MOVES):
            parent = self._parent.get(span)
            if parent is None or parent in seen:
                break
            seen.add(parent)
            at = self._at.get(parent)
            if at is None:
                self._wait(parent, span)  # it waits with a place it moved to
                break
            here = self._place(self._at[span])
            if self._place(at) < here:
                break
            self._put(at, here[0], here[1])
            span = parent

    def _wait(self, parent: str, span: str) -> None:
        """``span`` is inside ``parent``, not folded yet: the first listed of its nodes
        inside is where its head will go."""
        first = self._first_inside.get(parent)
        if first is None or self._place(self._at[span]) < self._place(self._at[first]):
            self._first_inside[parent] = span

    def chain(self, position: int) -> list[int]:
        """The positions of the heads listed just before the event at ``position``, in their
        order (none for an event moved itself)."""
        return list(self._chains.get(position, ()))

    def is_moved(self, position: int) -> bool:
        """Whether the event at ``position`` is a head listed before its place."""
        return position in self._anchor

    # -- positions and indexes ------------------------------------------------------------

    def _base(self, position: int) -> int:
        """The index of an event in its place (its chain listed just before it)."""
        return position - bisect_left(self._moved, position) + bisect_right(self._slots, position)

    def index(self, position: int) -> int:
        """The index the event at ledger ``position`` is listed at (a position not folded
        yet is listed after every one folded, in the ledger's order)."""
        if not self._moved:
            return position
        anchor = self._anchor.get(position)
        if anchor is None:
            return self._base(position)
        chain = self._chains[anchor]
        return self._base(anchor) - len(chain) + chain.index(position)

    def position(self, index: int) -> int:
        """The ledger position of the event listed at ``index``."""
        slots = self._slots
        if not slots or index < slots[0]:
            return index  # before the first chain nothing is out of place
        low, high = 0, max(self.folded, index + 1)
        while low < high:  # the first position whose index is at least ``index``
            middle = (low + high) // 2
            if self._base(middle) < index:
                low = middle + 1
            else:
                high = middle
        position = low
        while position in self._anchor:
            position += 1  # a head moved away: the next event in its place
        chain = self._chains.get(position)
        if chain:
            before = self._base(position) - index
            if 0 < before <= len(chain):
                return chain[len(chain) - before]
        return position


__all__ = ["SpanOrder", "ordered_by_spans"]
