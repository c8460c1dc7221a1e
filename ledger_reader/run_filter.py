"""The filter language of runs: the one parser of the app's ``/``, ``runtop ls --filter``
and the attach API's ``GET runs?filter=`` (docs/filters.md has every term).

Terms are separated by spaces and must all match::

    deploy                      free text: run id, skill, agent, error, source, status
    status:running,failed       a field, any of several values
    skill:/^deploy-(prod|eu)$/  a regular expression, between slashes
    model:claude-*              a glob (``*``, ``?``) over the whole name
    cost:>0.01  tokens:>=10k    numbers: > >= < <= =, or a range (cost:0.01..0.10)
    duration:>30s  calls:>5  events:<100
    -status:succeeded           negation (``!`` works too)
    since:1h                    started within the last hour (s, m, h, d), or since a time
    "two words"                 a quoted phrase ("a:b" is text, not a field)
    has:"connection refused"    the run's events hold the words (its files are searched)

A term that does not parse (an unknown field or status, a number that is none, a bad
regular expression, a quote left open) raises :class:`FilterError` naming the term and
what is wrong, for the app's box, ``ls``'s stderr or the server's 400 to say as it is.

The parser knows nothing of where runs come from: a filter tests a run through
*fields*, a mapping from each field's name (:data:`READS`) to a function that reads it
from the runs at hand: the app's views (:mod:`inspector.filters`), or run summaries
(:data:`SUMMARY_FIELDS`, the attach server's). ``has:`` is answered from the run's
files, not its summary: :attr:`RunFilter.phrases` (:mod:`ledger_reader.text_search`).
"""

from __future__ import annotations

import fnmatch
import math
import operator
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from itertools import compress, repeat
from typing import Any, Final, Self, TypeVar

import msgspec

from ledger_reader import quantities
from ledger_reader.status_names import UnknownStatus, statuses_named
from ledger_reader.summary import RunSummary
from ledger_reader.text_search import Phrase
from ledger_reader.timespan import BadTimeSpan, since

Run = TypeVar("Run")
Read = Callable[[Any], Any]
"""Reads one field of a run: a string (or ``None``), a tuple of strings for the fields in
:data:`MANY`, a number (or ``None``: not known) for the numbers and ``started``."""
Sweep = Callable[[Any], Any]
"""A term's test over a column of runs (prepared, :data:`PREPARED`): of a number's, an
array of ``float64`` (NaN: not known), an array of ``bool``; of free text's and a run
id's, an array of lower-cased strings, a true thing of each where the test passes and a
false one where it does not (in C where it can, never a frame of Python a run)."""

NUMBERS: Final = ("cost", "tokens", "duration", "calls", "events")
"""The fields compared as numbers."""

FIELDS: Final = (
    "status",
    "skill",
    "agent",
    "model",
    "source",
    "run",
    "parent",
    "error",
    "since",
    "has",
    *NUMBERS,
    "session",
    "user",
    "tag",
    "service",
)
"""Every field a term may name, in the order the help lists them."""

READS: Final = (
    *(field for field in FIELDS if field not in {"since", "has"}),
    "started",
    "text",
)
"""What a mapping of fields must read: every field but ``since`` (``started``, a POSIX
time) and ``has`` (the run's files), and ``text`` (the strings free text looks in)."""

MANY: Final = frozenset({"model", "session", "tag", "text"})
"""The fields read as a tuple of strings (never ``None``): a term matches when one of them
does."""

EXAMPLES: Final = {
    "cost": "cost:>0.01 or cost:0.01..0.10 (dollars)",
    "tokens": "tokens:>=10k (k, M)",
    "duration": "duration:>30s (ms, s, m, h, d)",
    "calls": "calls:>5 (model calls)",
    "events": "events:<100",
}
"""How each number is written, said when one is not."""


def _number(value: Any) -> Any:
    # A float made here (+ 0.0), beside the column's others in memory: a pass over them
    # reads memory in order, not the summaries' floats scattered among their fields.
    return math.nan if value is None else value + 0.0


def _joined(strings: tuple[str, ...]) -> str:
    # A newline, which no typed text holds (words end at spaces): one string to search.
    return "\n".join(strings).lower()


def _lowered(string: str | None) -> str:
    return "" if string is None else string.lower()


PREPARED: Final[Mapping[str, Callable[[Any], Any]]] = {
    **dict.fromkeys((*NUMBERS, "started"), _number),
    **dict.fromkeys(("skill", "agent", "run", "parent", "error", "user", "service"), _lowered),
    "text": _joined,
}
"""How a column holds what a field reads, where not as read: a number not known as NaN
(a comparison of it answers ``False`` in C, where ``None`` answers ``NotImplemented``),
a string lower-cased (``None`` as an empty one, which holds no text), free text's strings
as one, lower-cased (one search of one string a run)."""

_WORD: Final = re.compile(r"""(?:[^\s"']+|"[^"]*"|'[^']*')+""")
_PART: Final = re.compile(r"""[^"']+|"([^"]*)"|'([^']*)'""")
_FIELD: Final = re.compile(r"^[A-Za-z_]+$")
_COMPARISON: Final = re.compile(r"(>=|<=|>|<|=)?(.*)", re.DOTALL)
_RANK: Final = {"status": 0, "source": 0, "cost": 1, "calls": 1, "events": 1, "started": 1}
"""Which terms a filter tries first: the cheapest to read (the rest come after, the
duration, which reads a clock, and free text last)."""


class FilterError(ValueError):
    """A filter that cannot be understood; the message names the term and says why."""


class Term(msgspec.Struct, frozen=True):
    """One term of a filter: the field it reads, the test of what it reads."""

    field: str
    """What it reads (:data:`READS`)."""
    test: Callable[[Any], Any]
    """Says ``True`` of what passes (anything else does not: :func:`number_test`)."""
    negated: bool
    text: str
    """The term as typed."""
    sweep: Sweep | None = None
    """The test over a column of what it reads, prepared (:data:`PREPARED`): numbers,
    statuses and free text, tested in C; ``None``: :attr:`test` once of each different
    value as read (a few models, skills, agents among 100,000 runs)."""
    needle: str | None = None
    """The one text (lower-cased) its runs hold, where it tests that: a term of its field
    whose needle holds this one passes none of the runs this one does not (``deplo``,
    then ``deploy``: :meth:`RunFilter.narrowing`)."""
    search: Callable[[str], bool] | None = None
    """A regular expression's test of one string as read (:func:`regex_search`), where
    the term is one: free text's is tested of each of a run's strings."""
    lowered: re.Pattern[str] | None = None
    """Where the term is a regular expression that reads lower-cased text alike
    (:func:`lowered_regex`), what searches a column's lower-cased strings (:data:`PREPARED`)."""


def _text_test(value: str, *, many: bool = False) -> Callable[[Any], bool]:
    """The test of a text term: a string (or ``None``) holds the text, or one of a comma's
    texts, ignoring case; ``/regex/`` is searched for. ``many``: of a tuple of strings,
    one of which must (a run's models, tags; what free text looks in)."""
    if _is_regex(value):
        search = regex_search(value)
        if many:
            return lambda candidates: any(map(search, candidates))
        return lambda candidate: candidate is not None and search(candidate)
    wanted = _texts(value)
    # The strings joined as a column holds them (:data:`PREPARED`): one search of one
    # string, not one call per string.
    if len(wanted) == 1:
        only = wanted[0]
        if many:
            return lambda candidates: only in _joined(candidates)
        return lambda candidate: candidate is not None and only in candidate.lower()
    parts = re.compile("|".join(map(re.escape, wanted)))
    if many:
        return lambda candidates: parts.search(_joined(candidates)) is not None
    return lambda candidate: candidate is not None and parts.search(candidate.lower()) is not None


def _text_sweep(value: str) -> Sweep | None:
    """A text term's test over its column (lower-cased strings: :data:`PREPARED`): does
    each hold the text, or one of a comma's texts (a pass in C for each, not a regular
    expression: three times slower); ``None`` for a regular expression, which is searched
    for in each string as read."""
    if _is_regex(value):
        return None
    first, *others = _texts(value)

    def sweep(texts: Sequence[str]) -> Iterable[bool]:
        said: Iterable[bool] = map(operator.contains, texts, repeat(first))
        for other in others:
            said = map(operator.or_, said, map(operator.contains, texts, repeat(other)))
        return said

    return sweep


def _is_regex(value: str) -> bool:
    return len(value) >= 2 and value.startswith("/") and value.endswith("/")


def _regex(value: str) -> re.Pattern[str]:
    try:
        return re.compile(value[1:-1], re.IGNORECASE)
    except re.error as error:
        raise FilterError(f"bad regular expression {value}: {error}") from error


def regex_search(value: str) -> Callable[[str], bool]:
    """The test of one string by the regular expression ``/value/``: is it found there,
    ignoring case. Searched for in the string lower-cased, as other text is, where the
    expression reads lower-cased text alike (:func:`lowered_regex`): several times faster
    than ignoring case, which leaves the engine no literal text to skip ahead to."""
    pattern = _regex(value)
    lowered = lowered_regex(value)
    if lowered is None:
        return lambda text: pattern.search(text) is not None
    return lambda text: lowered.search(text.lower()) is not None


_CODES: Final = frozenset("xuUN0123456789")
"""What after a backslash names a character by its code (``\\x41``, ``\\N{...}``, an octal
or a group's number): not lower-cased by lowering the expression."""
_FLAGS_OFF: Final = re.compile(r"\(\?[A-Za-z]*-")


def lowered_regex(value: str) -> re.Pattern[str] | None:
    """The regular expression ``/value/`` as it finds the same in lower-cased text without
    ignoring case: its letters lower-cased, its escapes (``\\D``, ``\\W``) left as they are;
    ``None`` where lowering might change what it finds: a character named by its code, a
    flag turned off (``(?-i:...)``), an upper-case letter at a range's end in a set
    (``[A-z]``), one whose lower case is two characters, or what does not compile
    lower-cased (``(?P<name>...)``)."""
    source = value[1:-1]
    if _FLAGS_OFF.search(source):
        return None
    lowered: list[str] = []
    in_set = False
    place = 0
    while place < len(source):
        char = source[place]
        if char == "\\":
            after = source[place + 1 : place + 2]
            if after in _CODES and after:
                return None
            lowered.append(char + after)
            place += 2
            continue
        if in_set and char == "]" and source[place - 1] not in "[^":
            in_set = False
        elif not in_set and char == "[":
            in_set = True
        elif char != char.lower():
            if len(char.lower()) != 1:
                return None
            if in_set and "-" in (source[place - 1], source[place + 1 : place + 2]):
                return None
            char = char.lower()
        lowered.append(char)
        place += 1
    try:
        return re.compile("".join(lowered))
    except re.error:
        return None


def _texts(value: str) -> list[str]:
    """A comma's texts, lower-cased."""
    wanted = [part.lower() for part in value.split(",") if part]
    if not wanted:
        raise FilterError("an empty value")
    return wanted


def _glob_test(value: str, *, many: bool = False) -> Callable[[Any], bool]:
    """A name with ``*`` or ``?`` is a glob over the whole name (``claude-*``); without, the
    text it holds, as the other fields'."""
    if value.startswith("/") or not any(mark in value for mark in "*?["):
        return _text_test(value, many=many)
    pattern = re.compile(
        "|".join(f"(?:{fnmatch.translate(part)})" for part in value.split(",") if part),
        re.IGNORECASE,
    )
    if many:
        return lambda candidates: any(map(pattern.match, candidates))
    return lambda candidate: candidate is not None and pattern.match(candidate) is not None


def _status_test(value: str) -> Callable[[Any], bool]:
    if value.startswith("/"):
        return _text_test(value)
    try:
        wanted = statuses_named(value.split(","))
    except UnknownStatus as error:
        raise FilterError(str(error)) from error
    if not wanted:
        raise FilterError("status: needs a value")
    return wanted.__contains__


def _amount(field: str, text: str) -> float:
    """One number of ``field`` as written: ``0.01``, ``$0.01``, ``10k``, ``30s``, read as
    every amount typed is (:mod:`ledger_reader.quantities`; durations as spans of time)."""
    if field == "duration":
        try:
            return quantities.seconds(text)
        except quantities.BadQuantity:
            raise FilterError(f"{text!r} is not a duration: {EXAMPLES[field]}") from None
    try:
        number = quantities.usd(text) if field == "cost" else quantities.number(text)
    except quantities.BadQuantity:
        raise FilterError(f"{text!r} is not a number: {EXAMPLES[field]}") from None
    if not math.isfinite(number):
        raise FilterError(f"{text!r} is not a number: {EXAMPLES[field]}")
    return number


def number_test(field: str, value: str) -> tuple[Callable[[Any], Any], Sweep]:
    """The test of a number term's value: ``>x``, ``>=x``, ``<x``, ``<=x``, ``=x`` (or
    ``x``), or a range ``a..b`` (both ends in; either may be left out), and its sweep. A
    run whose number is not known (``None``: no model call said its cost) passes none.

    A comparison is the bound's own method (``cost:>0.01`` is ``(0.01).__lt__``): called
    from C, without a frame of Python per run. Of ``None`` it answers ``NotImplemented``,
    which is not ``True``: :meth:`RunFilter.select` keeps the runs whose test says
    ``True`` itself, never another truthy thing. The sweep compares an array of a
    column's numbers at once, where a number not known is NaN (:data:`PREPARED`), which
    no comparison passes."""
    low_text, dots, high_text = value.partition("..")
    if dots:
        if not low_text and not high_text:
            raise FilterError(f"a range needs an end: {EXAMPLES[field]}")
        low = _amount(field, low_text) if low_text else -math.inf
        high = _amount(field, high_text) if high_text else math.inf
        if low > high:
            raise FilterError(f"the range {value} is empty: its start is past its end")
        return (
            lambda number: number is not None and low <= number <= high,
            lambda numbers: (numbers >= low) & (numbers <= high),
        )
    match = _COMPARISON.fullmatch(value)
    assert match is not None  # the pattern takes any text
    bound = _amount(field, match[2])
    sign = match[1] or "="
    tests: dict[str, Callable[[Any], Any]] = {
        ">": bound.__lt__,
        ">=": bound.__le__,
        "<": bound.__gt__,
        "<=": bound.__ge__,
        "=": bound.__eq__,
    }
    compare = _OPERATORS[sign]
    return tests[sign], lambda numbers: compare(numbers, bound)


_OPERATORS: Final[Mapping[str, Callable[[Any, Any], bool]]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "=": operator.eq,
}


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
        return since(value, now)
    except BadTimeSpan:
        raise FilterError(
            f"since:{value} is neither a duration (30s, 5m, 1h, 7d) nor a time"
        ) from None


def _term(field: str, value: str, negated: bool, word: str, now: float | None) -> Term:
    """The term ``field:value``; a :class:`FilterError` names it when it is wrong."""
    sweep: Sweep | None = None
    needle: str | None = None
    if field == "since":
        start = since_seconds(value, now if now is not None else time.time())
        return Term(
            "started",
            lambda moment: moment is not None and moment >= start,
            negated,
            word,
            lambda moments: moments >= start,
        )
    if field in NUMBERS:
        try:
            test, sweep = number_test(field, value)
        except FilterError as error:
            raise FilterError(f"{word}: {error}") from None
    elif field == "status":
        test = _status_test(value)
        if not value.startswith("/"):
            sweep = partial(map, test)
    elif field == "model":
        test = _glob_test(value, many=True)
        if not any(mark in value for mark in "*?["):
            needle = _needle(value)
    else:
        return _text_term(field, value, negated, word)
    return Term(field, test, negated, word, sweep, needle)


def _text_term(field: str, value: str, negated: bool, word: str) -> Term:
    """A term that finds text (or a regular expression) in ``field`` (free text's: ``text``)."""
    test = _text_test(value, many=field in MANY)
    sweep = _text_sweep(value) if field in PREPARED else None
    if not _is_regex(value):
        return Term(field, test, negated, word, sweep, _needle(value))
    search, lowered = regex_search(value), lowered_regex(value)
    return Term(field, test, negated, word, sweep, None, search, lowered)


def _needle(value: str) -> str | None:
    """The one text a text term's runs hold, lower-cased (``None``: a regular expression,
    or a comma's texts)."""
    if _is_regex(value) or "," in value:
        return None
    return value.lower()


class RunFilter(msgspec.Struct, frozen=True):
    """A parsed filter: :meth:`select` the runs it passes, or ask of one (:meth:`passes`)."""

    text: str
    terms: tuple[Term, ...]
    """Every term but ``has:``, the cheapest to test first."""
    phrases: tuple[tuple[Phrase, bool], ...] = ()
    """The ``has:`` terms: each phrase, and whether it is negated (``-has:``)."""

    @classmethod
    def parse(cls, text: str, *, now: float | None = None) -> Self:
        """Read ``text`` (``now``: the present ``since:`` counts back from, default the
        clock); a term that is wrong raises :class:`FilterError` naming it."""
        terms: list[Term] = []
        phrases: list[tuple[Phrase, bool]] = []
        for word, quoted in _words(text):
            negated = word[:1] in {"-", "!"} and len(word) > 1
            body = word[1:] if negated else word
            field, sep, value = body.partition(":")
            if quoted or not sep or not _FIELD.match(field):
                terms.append(_text_term("text", body, negated, word))
                continue
            field = field.lower()
            if field not in FIELDS:
                import difflib  # only for a mistyped field

                close = difflib.get_close_matches(field, FIELDS, n=1, cutoff=0.6)
                if close:  # cots:>1: the field meant first, the others only then
                    raise FilterError(
                        f"unknown field {field}: (did you mean {close[0]}:?); "
                        f'quote "{body}" to find it as text'
                    )
                raise FilterError(
                    f"unknown field {field}: (one of {', '.join(f + ':' for f in FIELDS)}); "
                    f'quote "{body}" to find it as text'
                )
            if not value:
                raise FilterError(f"{field}: needs a value")
            if field == "has":
                phrases.append((Phrase(value), negated))
                continue
            terms.append(_term(field, value, negated, word, now))
        terms.sort(key=lambda term: _RANK.get(term.field, 2 + (term.field in {"duration", "text"})))
        return cls(text=text, terms=tuple(terms), phrases=tuple(phrases))

    def select(self, runs: Iterable[Run], fields: Mapping[str, Read]) -> list[Run]:
        """The runs that pass every term but ``has:``, in their order, read through
        ``fields``. Term by term over all the runs, each narrowing the next's: the loop
        over the runs runs in C, calling only the term's test (100,000 runs in a few
        milliseconds a term, ``bench/store.py``)."""
        chosen = list(runs)
        for term in self.terms:
            if not chosen:
                break
            said = map(term.test, map(fields[term.field], chosen))
            kept = operator.is_not if term.negated else operator.is_
            chosen = list(compress(chosen, map(kept, said, repeat(True))))
        return chosen

    def narrowing(self, before: RunFilter) -> tuple[Term, ...] | None:
        """The terms left to test of the runs ``before`` passed (but for ``has:``), where
        this filter passes none that ``before`` does not: it is ``before`` with terms added,
        or a word of it typed on (``deplo``, then ``deploy``); ``None`` where it may pass
        others. A ``since:`` counts back from when it was read: never the same twice."""
        left = list(self.terms)
        for old in before.terms:
            if old.field == "started":
                return None
            same = [
                place
                for place, new in enumerate(left)
                if (new.field, new.negated, new.text) == (old.field, old.negated, old.text)
            ]
            if same:
                del left[same[0]]  # passed already
                continue
            needle = old.needle
            if old.negated or needle is None:
                return None
            if not any(
                new.field == old.field and not new.negated and needle in (new.needle or "")
                for new in left
            ):
                return None
        return tuple(left)

    def passes(self, run: object, fields: Mapping[str, Read]) -> bool:
        """Whether ``run`` passes every term but ``has:`` (:attr:`phrases`: a search of its
        files), read through ``fields``."""
        return all(
            (term.test(fields[term.field](run)) is True) != term.negated for term in self.terms
        )


def _summary_tokens(summary: RunSummary) -> int | None:
    return summary.totals.tokens


def _summary_models(summary: RunSummary) -> tuple[str, ...]:
    return tuple(summary.models or ([summary.model] if summary.model else ()))


def _summary_started(summary: RunSummary) -> float | None:
    return summary.started or None


def summary_fields(*, source: str = "", now: float | None = None) -> dict[str, Read]:
    """The fields of run summaries (the attach server's runs): their ``source`` is the one
    given, their duration measured to ``now`` (default: the clock) while they run."""
    at = time.time() if now is None else now

    def text(summary: RunSummary) -> tuple[str, ...]:
        return (
            summary.run_id,
            summary.skill or "",
            summary.agent or "",
            summary.error or "",
            source,
            summary.status.value,
        )

    return {
        "status": operator.attrgetter("status"),
        "skill": operator.attrgetter("skill"),
        "agent": operator.attrgetter("agent"),
        "model": _summary_models,
        "source": lambda summary: source,
        "run": operator.attrgetter("run_id"),
        "parent": operator.attrgetter("parent_run_id"),
        "error": operator.attrgetter("error"),
        "cost": operator.attrgetter("cost_usd"),
        "tokens": _summary_tokens,
        "duration": lambda summary: summary.duration(at),
        "calls": operator.attrgetter("model_calls"),
        "events": operator.attrgetter("event_count"),
        "session": lambda summary: (summary.session_id or "", summary.conversation_id or ""),
        "user": operator.attrgetter("user_id"),
        "tag": lambda summary: tuple(summary.tags or ()),
        "service": operator.attrgetter("service"),
        "started": _summary_started,
        "text": text,
    }
