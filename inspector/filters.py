"""The filter language, read of the runs the app shows (its views).

The language itself, and its one parser, are :mod:`ledger_reader.run_filter`'s: the
app's ``/``, ``runtop ls --filter`` (which makes views of the runs it lists, as the app
does, so the two select the same runs) and the attach API's ``?filter=`` all read it
there. Here is how each field is read of a :class:`~inspector.model.RunView`: its status
as the table shows it (``unknown`` while its live source is away), its source by name,
its tokens and cost as the store summed them, its duration by the table's rule.

The store keeps every run's fields as columns (:class:`FilterColumns`), read once for
each view and again only when the view changes, so that filtering 100,000 runs is a few
passes in C over lists (``bench/store.py``), not 100,000 views read field by field.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import compress
from operator import attrgetter
from typing import Any, Final, NamedTuple

from inspector.model import LIVE, RunKey, RunView
from inspector.status_words import status_word
from ledger_reader import run_filter as language
from ledger_reader.run_filter import (
    FIELDS,
    NUMBERS,
    PREPARED,
    FilterError,
    Read,
    since_seconds,
)

__all__ = [
    "FIELDS",
    "NUMBERS",
    "FilterColumns",
    "FilterError",
    "RunFilter",
    "since_seconds",
    "view_fields",
]


def _models(run: RunView) -> tuple[str, ...]:
    summary = run.summary
    return tuple(summary.models or ([summary.model] if summary.model else ()))


def _session(run: RunView) -> tuple[str, str]:
    return (run.summary.session_id or "", run.summary.conversation_id or "")


def _tags(run: RunView) -> tuple[str, ...]:
    return tuple(run.summary.tags or ())


_FIXED: Final[dict[str, Read]] = {
    "skill": attrgetter("summary.skill"),
    "agent": attrgetter("summary.agent"),
    "model": _models,
    "source": attrgetter("key.source"),
    "run": attrgetter("key.run_id"),
    "parent": attrgetter("summary.parent_run_id"),
    "error": attrgetter("summary.error"),
    "cost": attrgetter("totals.cost_usd"),
    "tokens": attrgetter("totals.tokens"),
    "calls": attrgetter("totals.model_calls"),
    "events": attrgetter("summary.event_count"),
    "session": _session,
    "user": attrgetter("summary.user_id"),
    "tag": _tags,
    "service": attrgetter("summary.service"),
    "started": attrgetter("started_at"),
}
"""The fields read the same way whatever the moment and the sources' health."""


def view_fields(
    sources_down: frozenset[str] = frozenset(),
    now: float | None = None,
    replayed_at: Mapping[str, float] | None = None,
) -> dict[str, Read]:
    """How the filter reads each field of a view: the live runs of ``sources_down`` show
    ``unknown``; a live run's duration runs to ``now`` (default: the clock), a replayed
    one's to where its replay has played (``replayed_at``, by source)."""
    at = time.time() if now is None else now
    played = replayed_at or {}

    def status(run: RunView) -> str:
        return status_word(run, source_down=run.source in sources_down)

    def duration(run: RunView) -> float | None:
        lasted = run.lasted  # a run that lasts no longer: read, not worked out again
        if lasted is not None:
            return lasted
        return run.duration(at, played.get(run.source) if played else None)

    def text(run: RunView) -> tuple[str, ...]:
        summary, key = run.summary, run.key
        return (
            key.run_id,
            summary.skill or "",
            summary.agent or "",
            summary.error or "",
            key.source,
            status(run) if sources_down else summary.status,
        )

    return {
        **_FIXED,
        "status": status if sources_down else attrgetter("summary.status"),
        "duration": duration,
        "text": text,
    }


class RunFilter(language.RunFilter, frozen=True):
    """A parsed filter (:meth:`~ledger_reader.run_filter.RunFilter.parse`) that reads views."""

    def matches(self, run: RunView, *, source_down: bool = False, now: float | None = None) -> bool:
        """Whether ``run`` passes every term but ``has:`` (``source_down``: its source is
        away, so it shows unknown); :attr:`phrases` are for a search of its files."""
        down = frozenset({run.source}) if source_down else frozenset()
        return self.passes(run, view_fields(down, now))

    def select_views(
        self,
        runs: Iterable[RunView],
        sources_down: frozenset[str] = frozenset(),
        now: float | None = None,
        replayed_at: Mapping[str, float] | None = None,
    ) -> list[RunView]:
        """The runs that pass every term but ``has:``, in their order."""
        return self.select(runs, view_fields(sources_down, now, replayed_at))


MOMENTARY: Final = ("status", "duration", "text")
"""The fields whose reading of a live run changes with the moment (its duration runs on)
or with its source's health (away, it shows ``unknown``): read again at each filtering,
of the live runs only."""

FEW_MOVES: Final = 64
"""Runs come, gone or moved up to which the columns are laid out again in place."""

_STATUS: Final = attrgetter("summary.status")
_KEY: Final = attrgetter("key")


class _Filtering(NamedTuple):
    """A filtering of the store's runs, and the rows it kept."""

    run_filter: RunFilter
    runs: Sequence[RunView]
    sources_down: frozenset[str]
    replayed_at: Mapping[str, float]
    at: float
    rows: Sequence[int]


class FilterColumns:
    """Every run's fields as the filter reads them (:func:`view_fields`), a column a field,
    kept by the store as its views change.

    A column is made the first time a filter reads its field, from every view at once;
    from then on the store hands over only the views that changed (:meth:`update`), and a
    view whose summary and totals did not change keeps what was read of it. The columns
    are laid out in the store's order (a run's row is its place), so that a filter reads
    each column straight through and keeps the runs in order. When the store sorts its
    runs again (a run came, went, or started at another time), they are laid out again at
    the next filtering: the runs that stayed keep their order, so each column is its
    stretches between the runs that came or went, copied whole, with the new runs'
    values put in their places (work in proportion to the runs that came or went, and a
    copy in C of each column). A filter typed on from the last one (a letter, a term:
    :meth:`RunFilter.narrowing`) tests only the runs that one kept, while the runs, the
    sources' health and, for a duration, the moment are the same. Only the store's runs
    now are answered (:meth:`select`): an earlier snapshot's views are older than the
    columns.
    """

    def __init__(
        self, current: Callable[[], tuple[Sequence[RunView] | None, dict[RunKey, int]]]
    ) -> None:
        self._current = current
        """The store's runs now, in order, and each one's place among them."""
        self._laid: dict[RunKey, int] | None = None
        """The places of the order the columns are laid out in (``None``: none made yet)."""
        self._rows: dict[RunKey, int] = {}
        """Each run's row: its place in that order, and the runs come since after them."""
        self._views: list[RunView] = []
        """Each row's run."""
        self._columns: dict[tuple[str, bool], list[Any]] = {}
        """What each field reads of each row's run, prepared or as read (by field, prepared)."""
        self._live: dict[int, None] = {}
        """The rows of live runs (:data:`MOMENTARY`)."""
        self._gone: set[int] = set()
        """The rows of the order laid out whose runs went or moved (started at another time)."""
        self._last: _Filtering | None = None
        """The last filtering: a filter typed on from it tests only the runs it kept."""
        self._reads = view_fields()

    def clear(self) -> None:
        """Forget every run (the store closed)."""
        self._laid, self._rows, self._views, self._columns, self._live = None, {}, [], {}, {}
        self._gone, self._last = set(), None

    def update(self, views: Iterable[RunView]) -> None:
        """Read again the fields of the runs whose views changed (new runs among them): a
        new run, or one that moved in the order, takes a row after the others until the
        columns are laid out again."""
        if self._laid is None:
            return  # never filtered yet: nothing is kept
        kept, columns = self._views, self._columns
        for view in views:
            row = self._rows.get(view.key)
            if row is not None and (row in self._gone or kept[row].started_at != view.started_at):
                self._gone.add(row)  # it moves (or went, and came back): as a new run
                self._live.pop(row, None)
                row = None
            if row is None:  # after the others, until laid out in the store's new order
                if self._rows is self._laid:
                    self._rows = dict(self._rows)  # the store's places: not to be written
                row = len(kept)
                self._rows[view.key] = row
                kept.append(view)
                for (field, prepared), column in columns.items():
                    column.append(self._read(field, prepared, view))
            else:
                old = kept[row]
                kept[row] = view
                if old.summary is view.summary and old.totals == view.totals:
                    continue  # the same summary and totals: the same fields
                for (field, prepared), column in columns.items():
                    column[row] = self._read(field, prepared, view)
            if view.summary.status in LIVE:
                self._live[row] = None
            else:
                self._live.pop(row, None)

    def remove(self, key: RunKey) -> None:
        """A run went: its row is left out when the columns are laid out again."""
        row = self._rows.get(key)
        if row is not None and self._laid is not None:
            self._gone.add(row)
            self._live.pop(row, None)

    def select(
        self,
        run_filter: RunFilter,
        runs: Sequence[RunView],
        sources_down: frozenset[str] = frozenset(),
        now: float | None = None,
        replayed_at: Mapping[str, float] | None = None,
    ) -> list[RunView] | None:
        """The runs that pass every term but ``has:``, in their order, as
        :meth:`RunFilter.select_views` says; ``None`` when ``runs`` are not the store's
        runs now (an earlier snapshot: the views here are newer)."""
        current, places = self._current()
        if runs is not current:
            return None
        if places is not self._laid:
            self._lay_out(runs, places)
        at = time.time() if now is None else now
        momentary = view_fields(sources_down, at, replayed_at) if self._live else {}
        last, terms = self._last, None
        if (
            last is not None
            and last.runs is runs  # the same runs, read the same way
            and last.sources_down == sources_down
            and last.replayed_at == (replayed_at or {})
            and (last.at == at or not any(t.field == "duration" for t in last.run_filter.terms))
        ):
            terms = run_filter.narrowing(last.run_filter)

        def column(field: str, prepared: bool) -> Sequence[Any]:
            values = self._column(field, prepared)
            if field not in momentary or (field != "duration" and not sources_down):
                return values
            values = list(values)  # a copy, with the live runs read at this moment
            read, prepare = momentary[field], PREPARED.get(field) if prepared else None
            for row in self._live:
                value = read(self._views[row])
                values[row] = prepare(value) if prepare is not None else value
            return values

        if terms is None or last is None:
            rows = run_filter.sweep(column, len(runs))
        else:
            rows = run_filter.sweep(column, len(runs), within=last.rows, terms=terms)
        self._last = _Filtering(run_filter, runs, sources_down, dict(replayed_at or {}), at, rows)
        return list(runs) if len(rows) == len(runs) else list(language.at(runs, rows))

    def _lay_out(self, runs: Sequence[RunView], places: dict[RunKey, int]) -> None:
        """Lay the columns out in the order of ``runs`` (whose places are ``places``)."""
        if self._laid is None:
            self._made_again(runs)
        else:
            laid, views = len(self._laid), self._views
            gone = sorted(row for row in self._gone if row < laid)
            came = self._came(places, laid)
            live = [views[row].key for row in self._live]
            if len(gone) + len(came) <= FEW_MOVES:
                # In place: a list's insert or delete moves its pointers in C, where a copy
                # touches every value it holds (most of the time of a copy of 100,000).
                for column in (views, *self._columns.values()):
                    new = column[laid:]
                    del column[laid:]
                    for row in reversed(gone):
                        del column[row]
                    for place, row in came:
                        column.insert(place, new[row - laid])
                laid_out = len(views) == len(runs) and all(
                    views[place] is runs[place] for place, _ in came
                )
            else:
                pieces = self._pieces(runs, gone, came, laid) or []
                laid_out = bool(pieces) or not runs
                for name, column in self._columns.items():
                    moved: list[Any] = []
                    for piece in pieces:
                        moved += column[piece]
                    self._columns[name] = moved
                self._views = list(runs)
            if laid_out:
                self._live = {places[key]: None for key in live if key in places}
            else:
                self._made_again(runs)  # not the order foreseen
        self._laid = self._rows = places
        self._gone = set()

    def _made_again(self, runs: Sequence[RunView]) -> None:
        """Forget the columns (made again as filters read them), laid out as ``runs``."""
        self._columns, self._views = {}, list(runs)
        live = map(LIVE.__contains__, map(_STATUS, runs))
        self._live = dict.fromkeys(compress(range(len(runs)), live))

    def _came(self, places: dict[RunKey, int], laid: int) -> list[tuple[int, int]]:
        """The rows of the runs that came (or moved) since the columns were laid out, by
        their places in the order now (of those still there)."""
        views, rows = self._views, self._rows
        return sorted(
            (place, row)
            for row in range(laid, len(views))
            if row not in self._gone
            and (place := places.get(views[row].key)) is not None
            and rows.get(views[row].key) == row
        )

    def _pieces(
        self, runs: Sequence[RunView], gone: list[int], came: list[tuple[int, int]], laid: int
    ) -> list[slice] | None:
        """The stretches of rows that make the columns in the order of ``runs``: those of
        the runs that stayed (all but the ``gone`` rows), in their order, and between them
        each row that ``came``; ``None`` when ``runs`` are not in that order."""
        views = self._views
        pieces: list[slice] = []
        start, done = 0, 0
        stops = iter(gone)
        stop = next(stops, laid)
        for place, row in [*came, (len(runs), -1)]:
            while done < place:  # the runs that stayed, up to this new run's place
                while start == stop:
                    start, stop = stop + 1, next(stops, laid)
                if start >= laid:
                    return None
                end = min(stop, start + place - done)
                pieces.append(slice(start, end))
                done += end - start
                start = end
            if row >= 0:
                pieces.append(slice(row, row + 1))
                done += 1
        if any(row not in self._gone for row in range(start, laid)):
            return None  # runs left over: not the order foreseen
        together: list[RunView] = []
        for piece in pieces:
            together += views[piece]
        return pieces if together == list(runs) else None

    def _column(self, field: str, prepared: bool) -> list[Any]:
        column = self._columns.get((field, prepared))
        if column is None:
            read = map(self._reads[field], self._views)
            prepare = PREPARED.get(field) if prepared else None
            # Each read prepared as it comes: a tuple of free text's strings is gone before
            # the next is made. Made without the collector, which would walk every object
            # again for each few hundred tuples kept (100,000 runs' models, free text).
            collecting = gc.isenabled()
            gc.disable()
            try:
                column = list(read if prepare is None else map(prepare, read))
            finally:
                if collecting:
                    gc.enable()
            self._columns[field, prepared] = column
        return column

    def _read(self, field: str, prepared: bool, view: RunView) -> Any:
        value = self._reads[field](view)
        prepare = PREPARED.get(field) if prepared else None
        return prepare(value) if prepare is not None else value
