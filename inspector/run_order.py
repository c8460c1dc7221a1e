"""The store's runs in the order the runs table shows them: newest first.

Runs are ordered by their start (a run whose start is not known yet, as the oldest), then
by their key. A new run most often starts after every other (a live run just begun), or
before every other (one whose start is not known yet, an old ledger found): it joins its
end of the order without the others being looked at. A run whose view changes but not its
start keeps its place. Only a run that starts among the others, or starts at another time
than it did, sorts them again; a run gone leaves a gap, closed in one pass.

Each order shown is a tuple (a snapshot's, never changed) with its :class:`Places`, each
run's place in it, kept as long as that order's places hold.
"""

from __future__ import annotations

import bisect
from collections import Counter
from typing import Final

from inspector.model import RunKey, RunView
from ledger_reader.collector import collector_held


def _sort_key(view: RunView) -> tuple[float, RunKey]:
    return (view.started_at or 0.0, view.key)


class Places:
    """Each run's place in one order shown (0: the newest), read from the runs' numbers
    in the order oldest first: runs that joined either end since have numbers outside it,
    and no place in it."""

    __slots__ = ("_count", "_first", "_numbers")

    def __init__(self, numbers: dict[RunKey, int], first: int, count: int) -> None:
        self._numbers, self._first, self._count = numbers, first, count

    def __getitem__(self, key: RunKey) -> int:
        place = self.get(key)
        if place is None:
            raise KeyError(key)
        return place

    def get(self, key: RunKey) -> int | None:
        """``key``'s place, if it has one in this order."""
        number = self._numbers.get(key)
        if number is None:
            return None
        oldest_first = number - self._first
        if not 0 <= oldest_first < self._count:
            return None
        return self._count - 1 - oldest_first

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: RunKey) -> bool:
        return self.get(key) is not None


FEW_MOVES: Final = 64
"""Runs come, gone or moved up to which the order is changed in place (beyond, sorted
again whole)."""


class RunOrder:
    """The runs, oldest first, each with a number: its place, from :attr:`_first`.

    A run joins (or leaves) its place in the order, and the runs on the shorter side of
    it are numbered again: none for a run at either end. The numbers are a mapping the
    places of an order shown read (:class:`Places`): one to be changed is copied first,
    never changed under them.
    """

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """No runs."""
        self._runs: list[RunView] = []
        """Oldest first."""
        self._numbers: dict[RunKey, int] = {}
        """Each run's number: its place in :attr:`_runs` is its number less :attr:`_first`."""
        self._first = 0
        self._shared = False
        """Whether :attr:`_numbers` is read by the places of an order shown."""
        self._came: dict[RunKey, RunView] = {}
        """Runs come (or moved: taken out first) since the order was last shown."""
        self._gone: dict[RunKey, None] = {}
        """Runs to be taken out (gone, or moved) before they are."""
        self._shown: tuple[RunView, ...] | None = ()
        self._places = Places({}, 0, 0)
        self.counts: Counter[str] = Counter()
        """The runs of each source."""

    def put(self, view: RunView) -> None:
        """A run's view, new or changed."""
        key = view.key
        number = self._numbers.get(key)
        if number is None or key in self._gone:
            if key not in self._came:
                self.counts[key.source] += 1
            self._came[key] = view
        else:
            place = number - self._first
            old = self._runs[place]
            self._runs[place] = view
            if old.started_at != view.started_at:  # it moves: out, and in again
                self._gone[key] = None
                self._came[key] = view
        self._shown = None

    def remove(self, key: RunKey) -> None:
        """A run went."""
        if self._came.pop(key, None) is not None or (
            key in self._numbers and key not in self._gone
        ):
            self.counts[key.source] -= 1
            if not self.counts[key.source]:
                del self.counts[key.source]
        if key in self._numbers:
            self._gone[key] = None
        self._shown = None

    def current(self) -> tuple[tuple[RunView, ...] | None, Places]:
        """The order last shown (``None``: it changed since) and its places."""
        return self._shown, self._places

    def shown(self) -> tuple[tuple[RunView, ...], Places]:
        """The runs, newest first, and their places."""
        if self._shown is None:
            if self._came or self._gone:  # else the same places, new views
                with collector_held():  # a sort of 100,000 makes as many keys
                    self._arrange()
                self._places = Places(self._numbers, self._first, len(self._runs))
                self._shared = True
            self._shown = tuple(reversed(self._runs))
        return self._shown, self._places

    def _arrange(self) -> None:
        came, gone = self._came, self._gone
        self._came, self._gone = {}, {}
        if len(came) + len(gone) > FEW_MOVES:
            kept = [view for view in self._runs if view.key not in gone]
            self._renumber(sorted((*kept, *came.values()), key=_sort_key))
            return
        for key in gone:
            self._take_out(key)
        for view in came.values():
            self._put_in(view)

    def _numbers_to_change(self) -> dict[RunKey, int]:
        """The numbers, to be changed: copied first if an order shown reads them (a run
        numbered past either end is no change to its places)."""
        if self._shared:
            self._numbers = dict(self._numbers)
            self._shared = False
        return self._numbers

    def _take_out(self, key: RunKey) -> None:
        runs, numbers = self._runs, self._numbers_to_change()
        place = numbers.pop(key) - self._first
        del runs[place]
        if place < len(runs) - place:  # the older side moves up a number
            for older in runs[:place]:
                numbers[older.key] += 1
            self._first += 1
        else:
            for newer in runs[place:]:
                numbers[newer.key] -= 1

    def _put_in(self, view: RunView) -> None:
        runs, numbers = self._runs, self._numbers
        place = bisect.bisect_left(runs, _sort_key(view), key=_sort_key)
        if 0 < place < len(runs):
            numbers = self._numbers_to_change()
        if place < len(runs) - place:  # the older side moves down a number
            for older in runs[:place]:
                numbers[older.key] -= 1
            self._first -= 1
        else:
            for newer in runs[place:]:
                numbers[newer.key] += 1
        runs.insert(place, view)
        numbers[view.key] = self._first + place

    def _renumber(self, runs: list[RunView]) -> None:
        """The runs in this order, numbered afresh (a new mapping: the places of an order
        shown before read the old)."""
        self._runs = runs
        self._numbers = {view.key: number for number, view in enumerate(runs)}
        self._first = 0
        self._shared = False
