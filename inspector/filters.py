"""The filter language, read of the runs the app shows (its views).

The language itself, and its one parser, are :mod:`ledger_reader.run_filter`'s: the
app's ``/``, ``runtop ls --filter`` (which makes views of the runs it lists, as the app
does, so the two select the same runs) and the attach API's ``?filter=`` all read it
there. Here is how each field is read of a :class:`~inspector.model.RunView`: its status
as the table shows it (``unknown`` while its live source is away), its source by name,
its tokens and cost as the store summed them, its duration by the table's rule.

The store keeps every run's fields as columns (:class:`FilterColumns`), read once for
each view and again only when the view changes, so that filtering 100,000 runs is a few
passes over arrays (``bench/store.py``), not 100,000 views read field by field.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import compress
from operator import attrgetter, itemgetter
from typing import Any, Final, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from inspector.model import LIVE, RunKey, RunView
from inspector.run_order import Places
from inspector.status_words import status_word
from ledger_reader import run_filter as language
from ledger_reader.collector import collector_held
from ledger_reader.run_filter import (
    FIELDS,
    NUMBERS,
    PREPARED,
    FilterError,
    Read,
    Term,
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


TEXT_PARTS: Final = ("run", "skill", "agent", "error", "source", "status")
"""The fields free text looks in (each read as its field is, ``""`` where not known)."""

_FIXED: Final[dict[str, Read]] = {
    "skill": attrgetter("summary.skill"),
    "agent": attrgetter("summary.agent"),
    "model": _models,
    "source": attrgetter("key.source"),
    "run": attrgetter("key.run_id"),
    "parent": attrgetter("summary.parent_run_id"),
    "error": attrgetter("summary.error"),
    # What the table shows: with the run's child runs' (its Σ), else its own.
    "cost": attrgetter("total.cost_usd"),
    "tokens": attrgetter("total.tokens"),
    "calls": attrgetter("total.model_calls"),
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

    fields: dict[str, Read] = {
        **_FIXED,
        "status": status if sources_down else attrgetter("summary.status"),
        "duration": duration,
    }
    parts = [fields[part] for part in TEXT_PARTS]

    def text(run: RunView) -> tuple[str, ...]:
        return tuple([read(run) or "" for read in parts])

    fields["text"] = text
    return fields


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

NUMBERED: Final = frozenset({*NUMBERS, "started"})
"""The fields kept as an array of numbers (``float64``, NaN: not known), compared at once."""
OWN: Final = frozenset({"run", "text"})
"""The fields no two runs read alike (free text holds the run's id), kept as their
lower-cased strings (:data:`PREPARED`), searched one by one in C. Every other field is
kept coded: a number for each different value, and the values (a few statuses, models,
skills among 100,000 runs), each tested once."""

MANY_CHANGES: Final = 10_000
"""Changes to views kept for the columns to read before every column reads them and they
are forgotten."""

FEW_PIECES: Final = 256
"""Stretches of rows up to which a column laid out again is copied stretch by stretch
(beyond, gathered row by row)."""

_STATUS: Final = attrgetter("summary.status")

Item = TypeVar("Item")
Rows = npt.NDArray[np.intp]
"""Rows of the columns, in order."""
Passed = npt.NDArray[np.bool_]
"""Of each row (or each of some rows), whether its run passes a term."""


class _Column:
    """What a field reads of each run, a row a run: numbers, strings, or codes
    (:data:`NUMBERED`, :data:`OWN`); the rows added since it was laid out kept apart
    (:meth:`taken`, in the store's new order)."""

    __slots__ = ("added", "codes", "distinct", "field", "prepare", "read_to", "values")

    def __init__(self, field: str, read: list[Any], *, prepared: bool = False) -> None:
        """The column of what ``field`` reads of each run (``prepared``: as kept already)."""
        self.field = field
        self.prepare = PREPARED.get(field) if field in NUMBERED or field in OWN else None
        self.distinct: list[Any] = []
        """A coded column's values as read, by code."""
        self.codes: dict[Any, int] = {}
        if field in NUMBERED:
            self.values: npt.NDArray[Any] = np.fromiter(
                map(self.prepare or float, read), np.float64, len(read)
            )
        elif field in OWN:
            self.values = np.empty(len(read), object)
            self.values[:] = read if prepared or not self.prepare else list(map(self.prepare, read))
        else:
            self.codes = dict.fromkeys(read, 0)  # each different value, in order: in C
            for code, value in enumerate(self.codes):
                self.codes[value] = code
            self.distinct = list(self.codes)
            self.values = np.fromiter(map(self.codes.__getitem__, read), np.int32, len(read))
        self.added: list[Any] = []
        """The rows after :attr:`values`' (runs come since it was laid out), as kept."""
        self.read_to = 0
        """How far it has read the rows whose views changed (:attr:`FilterColumns._changed`)."""

    def kept(self, value: Any) -> Any:
        """``value``, read of a run, as the column keeps it."""
        if self.prepare is not None:
            return self.prepare(value)
        if self.field in NUMBERED or self.field in OWN:
            return value
        code = self.codes.get(value)
        if code is None:
            code = self.codes[value] = len(self.distinct)
            self.distinct.append(value)
        return code

    def set(self, row: int, value: Any) -> None:
        laid = len(self.values)
        if row < laid:
            self.values[row] = self.kept(value)
        else:
            self.added[row - laid] = self.kept(value)

    def append(self, value: Any) -> None:
        self.added.append(self.kept(value))

    def taken(self, pieces: Sequence[slice], rows: Rows | None) -> None:
        """Laid out again: its rows, those added among them, in stretches (``pieces``),
        or as ``rows`` say where they are many (row ``n`` is the row ``rows[n]`` was)."""
        values, laid = self.values, len(self.values)
        added = np.empty(len(self.added), values.dtype)
        added[:] = self.added
        self.added = []
        if rows is not None:
            self.values = np.concatenate((values, added))[rows]
            return
        # A copy of each stretch: a tenth of the time of a gather, for strings.
        self.values = np.concatenate(
            [
                values[piece]
                if piece.start < laid
                else added[piece.start - laid : piece.stop - laid]
                for piece in pieces
            ]
            or [values[:0]]
        )

    def at(self, rows: Rows | None) -> npt.NDArray[Any]:
        """The column's values (all of them laid out) at ``rows`` (``None``: every row)."""
        return self.values if rows is None else self.values[rows]


def _at_rows(items: Sequence[Item], rows: Rows) -> list[Item]:
    """``items`` at ``rows``, in their order (an item getter of them all: half the time of
    a loop)."""
    if len(rows) > 1:
        return list(itemgetter(*rows.tolist())(items))
    return [items[row] for row in rows.tolist()]


class _Filtering(NamedTuple):
    """A filtering of the store's runs, and the rows it kept."""

    run_filter: RunFilter
    runs: Sequence[RunView]
    sources_down: frozenset[str]
    replayed_at: Mapping[str, float]
    at: float
    rows: Rows


class FilterColumns:
    """Every run's fields as the filter reads them (:func:`view_fields`), a column a field,
    kept by the store as its views change.

    A column is made the first time a filter reads its field, from every view at once (or
    before, :meth:`make`); from then on the store hands over only the views that changed
    (:meth:`update`), each read again by a column when a filter next reads it, and a view
    whose summary and totals did not change keeps what was read of it. A column is an array:
    a number's compared at once; a field of a few different values (a status, a model, a
    skill) coded, each value tested once and the codes looked up at once; a run's own text
    (its id, free text) searched string by string in C. The columns are laid out in the
    store's order (a run's row is its place), so that a filter keeps the runs in order. When
    the store sorts its runs again (a run came, went, or started at another time), they are
    laid out again at the next filtering: the runs that stayed keep their order, so each
    column is taken in stretches between the runs that came or went (work in proportion to
    the runs that came or went, and a copy in C of each column). A filter typed on from the
    last one (a letter, a term: :meth:`RunFilter.narrowing`) tests only the runs that one
    kept, while the runs, the sources' health and, for a duration, the moment are the same.
    Only the store's runs now are answered (:meth:`select`): an earlier snapshot's views are
    older than the columns.
    """

    def __init__(self, current: Callable[[], tuple[Sequence[RunView] | None, Places]]) -> None:
        self._current = current
        """The store's runs now, in order, and each one's place among them."""
        self._laid: Places | None = None
        """The places of the order the columns are laid out in (``None``: none made yet):
        each run's row."""
        self._added: dict[RunKey, int] = {}
        """The rows of the runs come (or moved) since, after the others."""
        self._views: list[RunView] = []
        """Each row's run."""
        self._columns: dict[str, _Column] = {}
        """What each field reads of each row's run."""
        self._live: dict[int, None] = {}
        """The rows of live runs (:data:`MOMENTARY`)."""
        self._gone: set[int] = set()
        """The rows of the order laid out whose runs went or moved (started at another time)."""
        self._last: _Filtering | None = None
        """The last filtering: a filter typed on from it tests only the runs it kept."""
        self._changed: list[int] = []
        """The rows whose views changed since the columns were laid out, in turn: each
        column reads them again when a filter reads it (:meth:`_column`), not each time
        (a hundred live runs change twenty times a second; a filtering reads a few fields)."""
        self._reads = view_fields()

    def clear(self) -> None:
        """Forget every run (the store closed)."""
        self._laid, self._added, self._views, self._columns, self._live = None, {}, [], {}, {}
        self._gone, self._last, self._changed = set(), None, []

    def update(self, views: Iterable[RunView]) -> None:
        """Read again the fields of the runs whose views changed (new runs among them): a
        new run, or one that moved in the order, takes a row after the others until the
        columns are laid out again."""
        if self._laid is None:
            return  # never filtered yet: nothing is kept
        kept, columns, reads = self._views, self._columns, self._reads
        for view in views:
            row = self._row(view.key)
            if row is not None and (row in self._gone or kept[row].started_at != view.started_at):
                self._gone.add(row)  # it moves (or went, and came back): as a new run
                self._live.pop(row, None)
                row = None
            if row is None:  # after the others, until laid out in the store's new order
                row = len(kept)
                self._added[view.key] = row
                kept.append(view)
                for field, column in columns.items():
                    column.append(reads[field](view))
            else:
                old = kept[row]
                kept[row] = view
                if (
                    old.summary is view.summary
                    and old.totals == view.totals
                    and old.with_children == view.with_children
                ):
                    continue  # the same summary and totals: the same fields
                self._changed.append(row)  # read again by each column as a filter reads it
            if view.summary.status in LIVE:
                self._live[row] = None
            else:
                self._live.pop(row, None)
        if len(self._changed) > MANY_CHANGES:  # every column reads them, and they are forgotten
            for column in columns.values():
                self._read_again(column)
                column.read_to = 0
            self._changed = []

    def remove(self, key: RunKey) -> None:
        """A run went: its row is left out when the columns are laid out again."""
        row = self._row(key)
        if row is not None:
            self._gone.add(row)
            self._live.pop(row, None)

    def unmade(self) -> list[str]:
        """The fields whose columns are not made (all of them until a first filtering)."""
        return [field for field in self._reads if field not in self._columns]

    def make(self, fields: Iterable[str]) -> None:
        """Make the columns of ``fields`` not made yet, laid out in the store's order now,
        so that the first filtering of them does not (the store asks when its runs are
        many and it is idle)."""
        runs, places = self._current()
        if runs is None:
            return
        if places is not self._laid:
            self._lay_out(runs, places)
        for field in fields:
            self._column(field)

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
        last, terms = self._last, None
        if (
            last is not None
            and last.runs is runs  # the same runs, read the same way
            and last.sources_down == sources_down
            and last.replayed_at == (replayed_at or {})
            and (last.at == at or not any(t.field == "duration" for t in last.run_filter.terms))
        ):
            terms = run_filter.narrowing(last.run_filter)
        momentary: dict[str, Read] = {}
        if self._live:
            reads = view_fields(sources_down, at, replayed_at)
            momentary["duration"] = reads["duration"]
            if sources_down:
                momentary.update(status=reads["status"], text=reads["text"])
        rows: Rows | None = None
        if terms is not None and last is not None:
            rows = last.rows
        for term in run_filter.terms if terms is None else terms:
            if rows is not None and not len(rows):
                break
            passed = self._passed(term, rows)
            read = momentary.get(term.field)
            if read is not None:
                self._passed_now(term, read, rows, passed)
            rows = np.flatnonzero(passed) if rows is None else rows[passed]
        if rows is None:
            rows = np.arange(len(runs))
        self._last = _Filtering(run_filter, runs, sources_down, dict(replayed_at or {}), at, rows)
        return list(runs) if len(rows) == len(runs) else _at_rows(runs, rows)

    def _passed(self, term: Term, rows: Rows | None) -> Passed:
        """Of each row (of ``rows``, or every row), whether its run passes ``term``."""
        column = self._column(term.field)
        passed: Passed
        if term.field in NUMBERED:
            assert term.sweep is not None  # every number's term compares
            passed = term.sweep(column.at(rows))
        elif term.field in OWN and term.sweep is not None:
            strings = column.at(rows)
            passed = np.fromiter(term.sweep(strings), np.bool_, len(strings))
        elif term.field in OWN:
            passed = self._found(term, rows)
        else:
            passed = self._coded(column, term.test, rows)
        return ~passed if term.negated else passed

    @staticmethod
    def _coded(column: _Column, test: Callable[[Any], Any], rows: Rows | None) -> Passed:
        """Of each row of a coded column, whether its value passes ``test``: each
        different value tested once, the rows looked up at once."""
        said = np.fromiter(
            (test(value) is True for value in column.distinct), np.bool_, len(column.distinct)
        )
        passed: Passed = said[column.at(rows)]
        return passed

    def _found(self, term: Term, rows: Rows | None) -> Passed:
        """Of each row, whether a regular expression is found in a run's id or, for free
        text, in one of its fields (:data:`TEXT_PARTS`), as read (``""``: not known)."""
        assert term.search is not None  # a term of these fields without a sweep is one
        lowered, search = term.lowered, term.search
        ids = self._column("run").at(rows)
        said: Iterable[Any]
        if lowered is not None:
            said = map(lowered.search, ids)
        else:  # one that does not read lower-cased text alike: of the ids as read
            said = map(search, map(attrgetter("key.run_id"), self._at(rows)))
        passed = np.fromiter(map(bool, said), np.bool_, len(ids))
        if term.field == "text":  # the fields of a few values: each value's test, once

            def test(value: Any) -> bool:
                return search(value or "")

            for part in TEXT_PARTS[1:]:
                passed |= self._coded(self._column(part), test, rows)
        return passed

    def _at(self, rows: Rows | None) -> Sequence[RunView]:
        return self._views if rows is None else _at_rows(self._views, rows)

    def _passed_now(self, term: Term, read: Read, rows: Rows | None, passed: Passed) -> None:
        """The live runs' rows of ``passed`` as their fields read at this moment."""
        views, test, negated = self._views, term.test, term.negated
        live = np.fromiter(self._live, np.intp, len(self._live))
        if rows is None:
            places, live_rows = live, live
        else:
            places = np.searchsorted(rows, live)
            inside = places < len(rows)
            inside[inside] = rows[places[inside]] == live[inside]
            places, live_rows = places[inside], live[inside]
        for place, row in zip(places.tolist(), live_rows.tolist(), strict=True):
            passed[place] = (test(read(views[row])) is True) != negated

    def _row(self, key: RunKey) -> int | None:
        """``key``'s row, if it has one."""
        row = self._added.get(key)
        if row is None and self._laid is not None:
            return self._laid.get(key)
        return row

    def _lay_out(self, runs: Sequence[RunView], places: Places) -> None:
        """Lay the columns out in the order of ``runs`` (whose places are ``places``)."""
        if self._laid is None:
            self._made_again(runs)
        else:
            laid = len(self._laid)
            gone = sorted(row for row in self._gone if row < laid)
            came = self._came(places, laid)
            live = [self._views[row].key for row in self._live]
            pieces = self._pieces(runs, gone, came, laid)
            if pieces is None:
                self._made_again(runs)  # not the order foreseen
            else:
                for column in self._columns.values():
                    self._read_again(column)
                rows = None
                if len(pieces) > FEW_PIECES:
                    rows = np.concatenate([np.arange(p.start, p.stop) for p in pieces])
                for column in self._columns.values():
                    column.taken(pieces, rows)
                self._views = list(runs)
                self._live = {places[key]: None for key in live if key in places}
        self._laid, self._added = places, {}
        self._gone, self._changed = set(), []
        for column in self._columns.values():
            column.read_to = 0

    def _made_again(self, runs: Sequence[RunView]) -> None:
        """Forget the columns (made again as filters read them), laid out as ``runs``."""
        self._columns, self._views = {}, list(runs)
        live = map(LIVE.__contains__, map(_STATUS, runs))
        self._live = dict.fromkeys(compress(range(len(runs)), live))

    def _came(self, places: Places, laid: int) -> list[tuple[int, int]]:
        """The rows of the runs that came (or moved) since the columns were laid out, by
        their places in the order now (of those still there)."""
        views, added = self._views, self._added
        return sorted(
            (place, row)
            for row in range(laid, len(views))
            if row not in self._gone
            and (place := places.get(views[row].key)) is not None
            and added.get(views[row].key) == row
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
        # Each stretch begins and ends with the runs foreseen (the runs between keep the
        # order they had: a run that starts at another time moves, as one gone and come).
        done = 0
        for piece in pieces:
            last = done + piece.stop - piece.start - 1
            if runs[done] is not views[piece.start] or runs[last] is not views[piece.stop - 1]:
                return None
            done = last + 1
        return pieces

    def _column(self, field: str) -> _Column:
        column = self._columns.get(field)
        if column is None:
            with collector_held():
                if field == "text":
                    column = _Column(field, self._texts(), prepared=True)
                else:
                    column = _Column(field, list(map(self._reads[field], self._views)))
            column.read_to = len(self._changed)
            self._columns[field] = column
        else:
            self._read_again(column)
        return column

    def _read_again(self, column: _Column) -> None:
        """Read again what ``column`` holds of the runs whose views changed since it last did."""
        changed = self._changed
        if column.read_to < len(changed):
            read, views = self._reads[column.field], self._views
            for row in dict.fromkeys(changed[column.read_to :]):
                column.set(row, read(views[row]))
            column.read_to = len(changed)

    def _texts(self) -> list[str]:
        """Free text's strings of every run, as the column keeps them (:data:`PREPARED`),
        of its fields' columns (made if not yet): joined in C, not a tuple a run."""
        parts: list[Iterable[str]] = []
        for part in TEXT_PARTS:
            column = self._column(part)
            if part in OWN:
                parts.append(column.values.tolist())  # lower-cased already, as the whole is
            else:
                values = [value or "" for value in column.distinct]  # not known: ""
                parts.append(map(values.__getitem__, column.values.tolist()))
        return list(map(str.lower, map("\n".join, zip(*parts, strict=True))))
