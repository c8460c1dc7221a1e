"""The filter language of the runs table.

Terms are separated by spaces and must all match::

    deploy                      free text: run id, skill, agent, error, source
    status:running              a field (status, skill, agent, source, run, parent, error)
    status:running,awaiting_approval   any of several values
    skill:/^deploy-(prod|eu)$/  a regular expression, between slashes
    -status:succeeded           negation (``!`` works too)
    since:1h                    started within the last hour (s, m, h, d), or since a time
    error:timeout               the run's error mentions "timeout"
    "two words"                 a quoted phrase

Matching is case-insensitive. A filter that does not parse raises
:class:`FilterError` with the reason, for the UI to show as it is.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from typing import Final

import msgspec

from inspector.model import RunView
from ledger_reader import timespan

FIELDS: Final = ("status", "skill", "agent", "source", "run", "parent", "error", "since")


class FilterError(ValueError):
    """A filter that cannot be understood; the message says why."""


class Term(msgspec.Struct, frozen=True):
    field: str | None
    test: Callable[[str], bool]
    negated: bool
    text: str


def _text_test(value: str) -> Callable[[str], bool]:
    if len(value) >= 2 and value.startswith("/") and value.endswith("/"):
        try:
            pattern = re.compile(value[1:-1], re.IGNORECASE)
        except re.error as error:
            raise FilterError(f"bad regular expression {value}: {error}") from error
        return lambda candidate: pattern.search(candidate) is not None
    wanted = [part.lower() for part in value.split(",") if part]
    if not wanted:
        raise FilterError("an empty value")
    return lambda candidate: any(part in candidate.lower() for part in wanted)


def _exact_test(value: str) -> Callable[[str], bool]:
    if value.startswith("/"):
        return _text_test(value)
    wanted = {part.lower() for part in value.split(",") if part}
    return lambda candidate: candidate.lower() in wanted


def since_seconds(value: str, now: float) -> float:
    """The start of a ``since:`` window as a POSIX time."""
    try:
        return timespan.since(value, now)
    except timespan.BadTimeSpan:
        raise FilterError(
            f"since:{value} is neither a duration (30s, 5m, 1h, 7d) nor a time"
        ) from None


class RunFilter(msgspec.Struct, frozen=True):
    """A parsed filter; call :meth:`matches` on runs."""

    text: str
    terms: tuple[Term, ...]
    since: float | None = None
    since_negated: bool = False

    @classmethod
    def parse(cls, text: str, *, now: float | None = None) -> RunFilter:
        try:
            words = shlex.split(text)
        except ValueError as error:
            raise FilterError(f"cannot read the filter: {error}") from error
        terms: list[Term] = []
        since: float | None = None
        since_negated = False
        for word in words:
            negated = word[:1] in {"-", "!"} and len(word) > 1
            body = word[1:] if negated else word
            field, sep, value = body.partition(":")
            if not sep or field.lower() not in FIELDS:
                terms.append(Term(None, _text_test(body), negated, word))
                continue
            field = field.lower()
            if not value:
                raise FilterError(f"{field}: needs a value")
            if field == "since":
                since = since_seconds(value, now if now is not None else time.time())
                since_negated = negated
                continue
            test = _exact_test(value) if field in {"status", "source"} else _text_test(value)
            terms.append(Term(field, test, negated, word))
        return cls(text=text, terms=tuple(terms), since=since, since_negated=since_negated)

    def matches(self, run: RunView) -> bool:
        if self.since is not None:
            inside = run.started_at is not None and run.started_at >= self.since
            if inside == self.since_negated:
                return False
        for term in self.terms:
            if any(term.test(value) for value in _values(run, term.field)) == term.negated:
                return False
        return True


def _values(run: RunView, field: str | None) -> list[str]:
    match field:
        case "status":
            return [run.status.value]
        case "skill":
            return [run.skill or ""]
        case "agent":
            return [run.agent or ""]
        case "source":
            return [run.source]
        case "run":
            return [run.run_id]
        case "parent":
            return [run.parent_run_id or ""]
        case "error":
            return [run.error or ""]
        case _:
            return [
                run.run_id,
                run.skill or "",
                run.agent or "",
                run.error or "",
                run.source,
                run.status.value,
            ]
