"""The filter language of the runs table.

Terms are separated by spaces and must all match::

    deploy                      free text: run id, skill, agent, error, source
    status:running              a field (status, skill, agent, source, run, parent, error)
    status:running,awaiting_approval   any of several values
    skill:/^deploy-(prod|eu)$/  a regular expression, between slashes
    -status:succeeded           negation (``!`` works too)
    since:1h                    started within the last hour (s, m, h, d), or since a time
    error:"timed out"           the run's error mentions "timed out"
    "two words"                 a quoted phrase ("a:b" is text, not a field)
    has:"connection refused"    the run's events hold the words (its files are searched)
    session:s-7 user:ada        who it was for: its session, user (or conversation)
    tag:nightly service:api     a tag it carries, the service that sent it

A status may be written as the table writes it (``awaiting_approval``), as
the ledger does (``ok``, ``error``, ``cancelled``) or by an unambiguous
start (``await``); see :mod:`inspector.status_words`. Matching is
case-insensitive. A filter that does not parse (an unknown field or status,
a bad regular expression) raises :class:`FilterError` naming what is wrong,
for the UI to show as it is.

``has:`` is answered from the run's files, not its summary: :meth:`RunFilter.matches`
checks every other term, and :mod:`inspector.content_search` the filter's
:attr:`~RunFilter.phrases` (case: :mod:`ledger_reader.text_search`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Final

import msgspec

from inspector.model import RunView
from inspector.status_words import UnknownStatus, status_word, statuses_named
from ledger_reader import timespan
from ledger_reader.text_search import Phrase

FIELDS: Final = (
    "status",
    "skill",
    "agent",
    "source",
    "run",
    "parent",
    "error",
    "since",
    "has",
    "session",
    "user",
    "tag",
    "service",
)

_WORD: Final = re.compile(r"""(?:[^\s"']+|"[^"]*"|'[^']*')+""")
_PART: Final = re.compile(r"""[^"']+|"([^"]*)"|'([^']*)'""")
_FIELD: Final = re.compile(r"^[A-Za-z_]+$")


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


def _status_test(value: str) -> Callable[[str], bool]:
    if value.startswith("/"):
        return _text_test(value)
    try:
        wanted = statuses_named(value.split(","))
    except UnknownStatus as error:
        raise FilterError(str(error)) from error
    if not wanted:
        raise FilterError("status: needs a value")
    return lambda candidate: candidate in wanted


def _words(text: str) -> list[tuple[str, bool]]:
    """The filter's words, unquoted, and whether each began with a quote."""
    if _WORD.sub("", text).strip():  # a quote left over: one no other closes
        raise FilterError("cannot read the filter: a quote is not closed")
    words: list[tuple[str, bool]] = []
    for match in _WORD.finditer(text):
        word = match.group()
        sign = word[:1] if word[:1] in {"-", "!"} and len(word) > 1 else ""
        quoted = word[len(sign) : len(sign) + 1] in {'"', "'"}
        # Each quoted part without its quotes: 'say "hi"' is say "hi".
        unquoted = "".join(
            next((group for group in part.groups() if group is not None), part.group())
            for part in _PART.finditer(word[len(sign) :])
        )
        words.append((sign + unquoted, quoted))
    return words


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
    phrases: tuple[tuple[Phrase, bool], ...] = ()
    """The ``has:`` terms: each phrase, and whether it is negated (``-has:``)."""

    @classmethod
    def parse(cls, text: str, *, now: float | None = None) -> RunFilter:
        terms: list[Term] = []
        since: float | None = None
        since_negated = False
        phrases: list[tuple[Phrase, bool]] = []
        for word, quoted in _words(text):
            negated = word[:1] in {"-", "!"} and len(word) > 1
            body = word[1:] if negated else word
            field, sep, value = body.partition(":")
            if quoted or not sep or not _FIELD.match(field):
                terms.append(Term(None, _text_test(body), negated, word))
                continue
            field = field.lower()
            if field not in FIELDS:
                raise FilterError(
                    f"unknown field {field}: (one of {', '.join(f + ':' for f in FIELDS)}); "
                    f'quote "{body}" to find it as text'
                )
            if not value:
                raise FilterError(f"{field}: needs a value")
            if field == "since":
                since = since_seconds(value, now if now is not None else time.time())
                since_negated = negated
                continue
            if field == "has":
                phrases.append((Phrase(value), negated))
                continue
            if field == "status":
                test = _status_test(value)
            elif field == "source":
                test = _exact_test(value)
            else:
                test = _text_test(value)
            terms.append(Term(field, test, negated, word))
        return cls(
            text=text,
            terms=tuple(terms),
            since=since,
            since_negated=since_negated,
            phrases=tuple(phrases),
        )

    def matches(self, run: RunView, *, source_down: bool = False) -> bool:
        """Whether ``run`` passes every term but ``has:`` (``source_down``: its source is
        away, so it shows unknown); :attr:`phrases` are for a search of its files."""
        if self.since is not None:
            inside = run.started_at is not None and run.started_at >= self.since
            if inside == self.since_negated:
                return False
        for term in self.terms:
            values = _values(run, term.field, status_word(run, source_down=source_down))
            if any(term.test(value) for value in values) == term.negated:
                return False
        return True


def _values(run: RunView, field: str | None, status: str) -> list[str]:
    match field:
        case "status":
            return [status]
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
        case "session":
            summary = run.summary
            return [summary.session_id or "", summary.conversation_id or ""]
        case "user":
            return [run.summary.user_id or ""]
        case "tag":
            return list(run.summary.tags or ()) or [""]
        case "service":
            return [run.summary.service or ""]
        case _:
            return [
                run.run_id,
                run.skill or "",
                run.agent or "",
                run.error or "",
                run.source,
                status,
            ]
