"""The filter language, read of the runs the app shows (its views).

The language itself, and its one parser, are :mod:`ledger_reader.run_filter`'s: the
app's ``/``, ``runtop ls --filter`` (which makes views of the runs it lists, as the app
does, so the two select the same runs) and the attach API's ``?filter=`` all read it
there. Here is how each field is read of a :class:`~inspector.model.RunView`: its status
as the table shows it (``unknown`` while its live source is away), its source by name,
its tokens and cost as the store summed them, its duration by the table's rule.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from operator import attrgetter
from typing import Final

from inspector.model import RunView
from inspector.status_words import status_word
from ledger_reader import run_filter as language
from ledger_reader.run_filter import FIELDS, NUMBERS, FilterError, Read, since_seconds

__all__ = ["FIELDS", "NUMBERS", "FilterError", "RunFilter", "since_seconds", "view_fields"]


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
