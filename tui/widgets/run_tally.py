"""What the runs shown add up to, kept as they change (:class:`RowTally`): the ``Fill`` the
runs table is laid out for and the totals the source line says; and DOING NOW's text, which
the fill measures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import compress
from operator import and_, attrgetter, is_not, not_
from typing import Final

from inspector import RunView
from inspector.events import RunStatus
from inspector.ledger_source import Recording
from inspector.status_words import UNKNOWN, WORDS, ended_reason
from tui.text import cost as cost_said
from tui.text import tokens as tokens_said
from tui.text.runs import status_mark
from tui.widgets.run_columns import DOING_MAX, SOURCE_MAX, UNKNOWN_FILL, Fill

_SAYS_WHY: Final = frozenset({RunStatus.FAILED, RunStatus.CANCELED})
"""Ended runs whose DOING NOW says why they ended."""


QUESTION_ROOM: Final = 16
"""Cells of an unanswered question DOING NOW keeps, the word ``approval`` dropped for them
(at 80 columns the cell read ``approval unanswer…``, the question gone)."""

LAST_KNOWN: Final = "last known: "
"""Before what a run of a source down was last known to do: nobody knows what it does now."""


def doing_now(run: RunView, *, damage: bool = False, down: bool = False) -> str:
    """The DOING NOW cell: what a live run does, why an ended one failed or was canceled;
    with ``damage`` (no DAMAGED column on screen), a finished run's damaged lines. A live
    run of a source ``down`` (its status ``unknown``) did that when last heard of: said so
    (``llm default`` alone beside ``unknown`` would read as under way)."""
    doing = run.doing
    if down and doing:
        return LAST_KNOWN + doing
    if run.live or run.pending_approval is not None:  # what it waits on, or waited on
        return doing
    if run.status in _SAYS_WHY:
        return ended_reason(run)
    if damage and run.damaged_lines:
        return f"{run.damaged_lines} damaged line{'s' if run.damaged_lines != 1 else ''}"
    return ""


_SUMMARY_OF: Final = attrgetter("summary")
_STATUS_OF: Final = attrgetter("status")
_DAMAGED_OF: Final = attrgetter("damaged_lines")
_KEY_OF: Final = attrgetter("key")
_SOURCE_OF: Final = attrgetter("source")
_PROMPT_OF: Final = attrgetter("prompt_tokens")
_OUTPUT_OF: Final = attrgetter("output_tokens")
_COST_OF: Final = attrgetter("cost_recorded")
_TOTALS_OF: Final = attrgetter("totals")
_SAID_OF: Final = attrgetter("said")
_DETAILED_OF: Final = attrgetter("detailed")
_PENDING_OF: Final = attrgetter("pending_approval")


def fill_of(rows: Sequence[RunView], sources_down: frozenset[str] = frozenset()) -> Fill:
    """The :class:`Fill` of ``rows``, every run looked at (:class:`RowTally` keeps it as
    the rows change, looking at the runs that changed)."""
    return RowTally(rows, sources_down).fill()


_COST_USD_OF: Final = attrgetter("cost_usd")
_NANO: Final = 1e9
"""Costs are added in billionths of a dollar, as integers: taken away again as runs change,
a float sum drifts (and would read ``-$0`` with every run gone); a billionth is well below
the four decimals a cost is written with."""


class RowTally:
    """What the rows shown add up to, kept as they change: the :class:`Fill` the table is
    laid out for, and the runs by status, tokens and cost the source line says.

    With 10,000 runs shown and a hundred live, the store has news twenty
    times a second and each time a hundred views are new: counted afresh,
    the table's fill and the source line's totals would take over half a
    core (``bench/tui.py --only keys`` runs that load). :meth:`update` finds
    the views that changed (by identity: the store makes a new view only for
    a run that changed) and takes each old one out of the counts and puts
    the new one in; only when most rows changed, or the sources down did (a
    live run's mark depends on them), is everything counted again, in
    passes in C.
    """

    __slots__ = (
        "costs",
        "damaged",
        "doing",
        "down",
        "looked_at",
        "marks",
        "recorded",
        "rows",
        "sources",
        "statuses",
        "tokens",
        "tokens_said",
    )

    def __init__(
        self, rows: Sequence[RunView] = (), sources_down: frozenset[str] = frozenset()
    ) -> None:
        self.rows: Sequence[RunView] = ()
        self.down: frozenset[str] = frozenset()
        self.statuses: Counter[RunStatus] = Counter()
        self.sources: Counter[str] = Counter()
        self.marks: Counter[tuple[str, str]] = Counter()
        """The runs by the glyph and word of their status as shown."""
        self.doing: Counter[int] = Counter()
        """The runs that say something in DOING NOW, by its length (up to DOING_MAX)."""
        self.tokens_said = 0
        """Runs whose TOKENS / COST cell says something (``…`` while counted included)."""
        self.damaged = 0
        """Runs with damaged lines."""
        self.tokens = 0
        self.costs = 0
        """Their costs added up, in billionths of a dollar."""
        self.recorded = 0
        """Runs some model call of which said its cost."""
        self.looked_at = 0
        """The runs the last update looked at (each view that went, each that came)."""
        self.recount(rows, sources_down)

    # -- keeping up ------------------------------------------------------------------

    def update(self, rows: Sequence[RunView], sources_down: frozenset[str]) -> None:
        """Count ``rows`` now shown in place of the last ones."""
        if sources_down != self.down:
            self.recount(rows, sources_down)
            return
        old = self.rows
        limit = 64 + len(rows) // 16
        gone: list[RunView]
        came: list[RunView]
        if len(old) == len(rows):
            # Same runs in the same places (the store patches new views in by position):
            # the places whose view is another object, found in C.
            places = [*compress(range(len(rows)), map(is_not, old, rows))]
            gone = [old[place] for place in places]
            came = [rows[place] for place in places]
        else:
            gone, came = [], []
        if len(old) != len(rows) or len(gone) > limit:
            before = dict(zip(map(id, old), old, strict=True))
            after = dict(zip(map(id, rows), rows, strict=True))
            if len(before.keys() ^ after.keys()) > 2 * limit:
                self.recount(rows, sources_down)
                return
            gone = [before[ident] for ident in before.keys() - after.keys()]
            came = [after[ident] for ident in after.keys() - before.keys()]
        self.looked_at = len(gone) + len(came)
        for run in gone:
            self._count(run, -1)
        for run in came:
            self._count(run, 1)
        self.rows = rows
        for counter in (self.statuses, self.sources, self.marks, self.doing):
            if any(count <= 0 for count in counter.values()):
                for key in [key for key, count in counter.items() if count <= 0]:
                    del counter[key]

    def _count(self, run: RunView, sign: int) -> None:
        summary = run.summary
        status = summary.status
        self.statuses[status] += sign
        self.sources[run.key.source] += sign
        down = status.is_live and run.key.source in self.down
        glyph, word, _ = status_mark(run, source_down=down)
        self.marks[(glyph, word)] += sign
        if status.is_live or status in _SAYS_WHY or summary.pending_approval is not None:
            length = min(DOING_MAX, len(doing_now(run, down=down)))
            if length:
                self.doing[length] += sign
        if run.totals.said or not run.detailed:
            self.tokens_said += sign
        if summary.damaged_lines:
            self.damaged += sign
        self.tokens += sign * (run.prompt_tokens + run.output_tokens)
        self.costs += sign * round(run.cost_usd * _NANO)
        self.recorded += sign * run.cost_recorded

    def recount(self, rows: Sequence[RunView], sources_down: frozenset[str]) -> None:
        """Count every run of ``rows``, in passes in C but for the few live runs and those
        that say why they ended (10,000 runs stay within a refresh)."""
        self.rows, self.down = rows, sources_down
        self.looked_at = len(rows)
        summaries = list(map(_SUMMARY_OF, rows))
        statuses = list(map(_STATUS_OF, summaries))
        self.statuses = Counter(statuses)
        self.sources = Counter(map(_SOURCE_OF, map(_KEY_OF, rows)))
        live = frozenset(status for status in self.statuses if status.is_live)
        self.marks = Counter()
        for status, count in self.statuses.items():
            if status not in live:  # an ended run's mark is its status's
                example = next(compress(rows, map(status.__eq__, statuses)))
                glyph, word, _ = status_mark(example)
                self.marks[(glyph, word)] += count
        # The runs DOING NOW says something of: live, ended saying why, or asked an approval.
        says = list(map((live | _SAYS_WHY).__contains__, statuses))
        asked = map(bool, map(_PENDING_OF, summaries))
        few = [*compress(rows, says), *compress(rows, map(and_, asked, map(not_, says)))]
        self.doing = Counter()
        for run in few:
            down = run.live and run.source in sources_down
            if run.live:
                glyph, word, _ = status_mark(run, source_down=down)
                self.marks[(glyph, word)] += 1
            length = min(DOING_MAX, len(doing_now(run, down=down)))
            if length:
                self.doing[length] += 1
        self.tokens_said = sum(
            map(
                any,
                zip(
                    map(_SAID_OF, map(_TOTALS_OF, rows)),
                    map(not_, map(_DETAILED_OF, rows)),
                    strict=True,
                ),
            )
        )
        self.damaged = sum(map(bool, map(_DAMAGED_OF, summaries)))
        self.tokens = sum(map(_PROMPT_OF, rows)) + sum(map(_OUTPUT_OF, rows))
        self.costs = sum(map(round, map(_NANO.__mul__, map(_COST_USD_OF, rows))))
        self.recorded = sum(map(_COST_OF, rows))

    # -- what they add up to --------------------------------------------------------

    def fill(self, kept: frozenset[str] = frozenset()) -> Fill:
        """What the rows put in the columns; those ``kept`` are laid out as if the runs to
        come were shown (not empty; STATUS as wide as a live run's words)."""
        if not self.statuses:
            return UNKNOWN_FILL
        words = [status.value for status in self.statuses]
        if "status" in kept or any(status.is_live for status in self.statuses):
            # A live run may be canceled (it says so) or come to wait on an approval at any
            # moment: STATUS has their room already, and no column moves when one does.
            words += ["cancelling", RunStatus.AWAITING_APPROVAL.value]
            if self.down:
                words.append(UNKNOWN)
        empty = set()
        if not self.tokens_said:
            empty.add("tokens")
        if not self.damaged:
            empty.add("damaged")
        empty -= kept
        return Fill(
            status=2 + max(map(len, words)),  # the glyph, a space, the word
            source=min(SOURCE_MAX, max(map(len, self.sources))),
            empty=frozenset(empty),
            sources=len(self.sources),
            # Only said while a column is empty: DOING NOW asks their room for it.
            doing=max(self.doing, default=0) if empty else 0,
        )

    def totals(self) -> tuple[str, str]:
        """The runs by status (glyph and count, ``●2 ✔7 ✘1``); and their tokens and cost
        (``14.5k tok $0.0560``): nothing when no run said any, as the table says nothing."""
        if not self.rows:
            return "", ""
        counts = " ".join(
            f"{glyph}{count}" for (glyph, _), count in sorted(self.marks.items(), key=_by_word)
        )
        spent = f"{tokens_said(self.tokens)} tok" if self.tokens or self.recorded else ""
        if self.recorded:  # no run recorded a cost: say nothing, as the table does, never $0
            spent += f" {cost_said(self.costs / _NANO)}"
        return counts, spent


def _by_word(item: tuple[tuple[str, str], int]) -> tuple[int, str, str]:
    """Status words in the help's order; ``cancelling`` (of a run and of one awaiting an
    approval) after them, by glyph: the order never depends on which run was counted first."""
    (glyph, word), _ = item
    return (WORDS.index(word) if word in WORDS else len(WORDS), word, glyph)


def recorded_columns(recording: Recording) -> frozenset[str]:
    """The columns laid out for what a replay's runs will come to show, by what its
    recording holds: STATUS as wide as a live run's words (its runs are live as they are
    played), DAMAGED and TOKENS / COST where they will have something in them. Laid out
    for the first run played, they stayed put: DAMAGED came once a damaged line was
    played, TOKENS / COST with the first model call, and STATUS narrowed by eight cells
    each time no run was live."""
    kept = {"status"}
    if recording.damage:
        kept.add("damaged")
    if recording.spending:
        kept.add("tokens")
    return frozenset(kept)
