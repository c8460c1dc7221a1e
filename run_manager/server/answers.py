"""What every route of the attach API answers with: JSON bodies, errors and a run's summary.

Shared by the routes that act on runs (:mod:`run_manager.server.attach`) and
the ones that stream their events (:mod:`run_manager.server.streams`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

import msgspec
from aiohttp import web

from ledger_reader import RunSummary
from ledger_reader.totals import FIGURES, RunTotals, descendants_added
from run_manager.server.summary_index import IndexedRun, SummaryIndex

_encoder: Final = msgspec.json.Encoder()


class ApiError(Exception):
    """A client's request refused: answered ``{"error": message}`` with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_response(status: int, message: str) -> web.Response:
    return web.Response(
        status=status,
        body=_encoder.encode({"error": message}),
        content_type="application/json",
    )


def json_response(data: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=_encoder.encode(data), content_type="application/json")


def encode(data: Any) -> bytes:
    return _encoder.encode(data)


def as_listed(booked: IndexedRun, summary: RunSummary | None = None) -> RunSummary:
    """A run's summary as the API states it: its model calls' figures (tokens, cost, the
    calls counted) are ``None`` where they were not counted from every event (a ledger
    found at start-up, read by head and tail): unknown, never a 0 that reads as free. The
    listing's ``?filter=`` reads this, so what it selects is what the answer says."""
    summary = summary if summary is not None else booked.summary()
    if booked.counted:
        return summary
    return msgspec.structs.replace(summary, **dict.fromkeys(FIGURES))


class Families(Mapping[str, RunSummary]):
    """The runs the server holds, by parent: a run's total with its child runs' (and
    theirs) is worked out when asked for, for a page's runs, not for every parent at once
    (a listing of 10,000 runs, nine in ten a child, took 250 ms of the event loop).

    As a mapping: each run's summary as :func:`as_listed` states it, what its figures
    are added up from (:func:`~ledger_reader.totals.descendants_added`, the rule
    ``runtop ls`` adds them up by too); a run not counted from every event is
    ``partial`` there, as a ledger read at its head and tail is, so that a total with it
    says it is a floor (:attr:`~ledger_reader.totals.RunTotals.partial`).
    """

    def __init__(self, book: SummaryIndex) -> None:
        self.book = book
        self.summaries = {run_id: booked.summary() for run_id, booked in book.runs.items()}
        self.children: dict[str, list[str]] = {}
        for run_id, summary in self.summaries.items():
            parent = summary.parent_run_id
            if parent is not None and parent != run_id and parent in self.summaries:
                self.children.setdefault(parent, []).append(run_id)

    def total(self, run_id: str) -> RunTotals | None:
        """Its figures with its child runs' added; ``None`` for a run without any."""
        if run_id not in self.children:
            return None
        return descendants_added(self[run_id].totals, self.children, self, run_id)

    def __getitem__(self, run_id: str) -> RunSummary:
        booked = self.book.runs[run_id]
        summary = as_listed(booked, self.summaries[run_id])
        return summary if booked.counted else msgspec.structs.replace(summary, partial=True)

    def __iter__(self) -> Iterator[str]:
        return iter(self.summaries)

    def __len__(self) -> int:
        return len(self.summaries)


def wire_summary(
    booked: IndexedRun, summary: RunSummary | None = None, *, total: RunTotals | None = None
) -> dict[str, Any]:
    """A run's summary as the API names it (no server paths, no warnings list), its figures
    as :func:`as_listed` states them; ``tokens`` and ``cost_usd`` are also ``null`` where no
    model call said them. ``total``: its figures with its child runs' (:meth:`Families.total`);
    a run without any has its own."""
    summary = as_listed(booked, summary)
    wire = msgspec.to_builtins(summary)
    wire.pop("path", None)
    wire.pop("warnings", None)
    totals = summary.totals
    wire["total"] = msgspec.to_builtins(total if total is not None else totals.rounded())
    wire["tokens"] = totals.tokens
    wire["cost_usd"] = round(totals.cost_usd, 6) if totals.cost_usd is not None else None
    return wire  # type: ignore[no-any-return]


def booked_run(book: SummaryIndex, run_id: str) -> IndexedRun:
    """The run the server knows by ``run_id``, or a 404."""
    booked = book.get(run_id)
    if booked is None:
        raise ApiError(404, f"no run {run_id}")
    return booked


def whole_number(value: str | None, default: int, name: str) -> int:
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ApiError(400, f"{name} must be a whole number") from None
