"""How runs and events are written on screen: cells, glyphs, times, numbers.

Every string that came from a run passes through :func:`tui.text.inert`
here, and everything is returned as :class:`rich.text.Text`, never markup.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Final

from rich.text import Text

from inspector import RunView
from inspector.ledger import RunStatus, RunTotals, under_a_tenth
from inspector.status_words import STILL_GOING, UNKNOWN, status_word
from tui.text import (
    WITH_CHILDREN,
    at_least,
    cost,
    duration,
    inert,
    spent,
    spent_with_children,
    tokens,
)
from tui.text.status_glyphs import STATUS_GLYPHS

__all__ = [
    "MODEL_CALL_RUNNING",
    "STATUS",
    "model_call_running",
    "now_or",
    "plain",
    "relative",
    "run_time",
    "short_id",
    "spent_forms",
    "status_mark",
    "tokens_and_cost",
    "tokens_said",
]

_STATUS_COLOURS: Final = {
    RunStatus.RUNNING: "$accent",
    RunStatus.AWAITING_APPROVAL: "$warning",
    RunStatus.SUCCEEDED: "$success",
    RunStatus.FAILED: "$error",
    RunStatus.CANCELED: "$secondary",
    RunStatus.SUSPENDED: "$warning",
    RunStatus.ABANDONED: "$error",
    RunStatus.STALE: "$text-muted",
    RunStatus.IDLE: "$text-muted",
    RunStatus.UNKNOWN: "$text-muted",
}

STATUS: Final = {status: (STATUS_GLYPHS[status], _STATUS_COLOURS[status]) for status in RunStatus}
"""Glyph (:mod:`tui.text.status_glyphs`, as ``runtop ls`` marks it) and theme colour of each status
(colours are resolved by the widget); the word is the status's own
(:mod:`inspector.status_words`), as ``runtop ls`` and the API say it."""

UNKNOWN_MARK: Final = ("◌", "$text-muted")
"""A live run whose source is disconnected."""


def status_mark(run: RunView, *, source_down: bool = False) -> tuple[str, str, str]:
    """Glyph, word and colour of a run's status as shown (``cancelling`` while it stops)."""
    word = status_word(run, source_down=source_down)
    if word == UNKNOWN and run.status is not RunStatus.UNKNOWN:  # disconnected, not unread
        return (*UNKNOWN_MARK[:1], word, UNKNOWN_MARK[1])
    glyph, colour = STATUS[run.status]
    if run.cancel_requested and run.live:
        word = "cancelling"
    return glyph, word, colour


def relative(moment: float | None, now: float) -> str:
    """``now``, ``2.6s ago``, ``15s ago``, ``3m ago``, ``2h ago``, ``4d ago``.

    The one way a moment is written relative to now. Under a minute, the span is
    written by :func:`duration`, as precise as a run's TIME, so a run never reads as
    younger than it ran (``2s ago`` beside a TIME of ``2.6s``). ``now`` is what
    :func:`duration` would write in milliseconds (under a tenth of a second).
    """
    if moment is None:
        return ""
    seconds = max(0.0, now - moment)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    if under_a_tenth(seconds):
        return "now"
    return f"{duration(seconds)} ago"


def run_time(
    run: RunView, now: float, down_since: float | None = None, replayed_at: float | None = None
) -> str:
    """A run's TIME: how long it ran, or has run until ``now`` while live.

    While its source is down (since ``down_since``, a moment the store took) nobody
    knows what a live run does: its clock stops at that moment, not at its last event
    (a remote run's last event may be long before, and its TIME would fall back). A
    replayed run still playing has run until the moment its replay has played up to,
    ``replayed_at``, as its STARTED says (its last event would read ``0.1s`` beside a
    STARTED of ``11s ago``); one that has only started so far shows nothing: how long it
    ran is not known yet, and ``0s`` would say it was.
    """
    until = now
    if down_since is not None and run.live:
        until = min(now, down_since)
    took = run.duration(until, replayed_at)
    if run.live and run.recorded and not took:
        return ""
    return duration(took)


def _tokens_known(run: RunView) -> bool:
    """Some model call said what it used or cost (a run whose calls never said used
    an unknown number of tokens, not 0): its own, or one of its child runs'."""
    return run.total.said


def tokens_and_cost(run: RunView, width: int | None = None) -> str:
    """``1.9k $0.0082``: the TOKENS / COST cell, its cost when a model call recorded one
    (``$0`` when recorded as nothing; nothing at all when never recorded; ``…`` while the
    run's events are still being counted); a parent run's with its child runs', marked
    ``Σ`` (``Σ5.8k $0.0204``).

    Given a ``width`` too narrow for both, the cost stays and the tokens give way, then
    the cost too (``…``): a number is never cut, so ``$0.0082`` never reads ``$0.00``.
    """
    if not _tokens_known(run):
        return "" if run.detailed else "…"
    total = run.total
    mark = WITH_CHILDREN if run.with_children is not None else ""
    floor = at_least(total)
    count = f"{mark}{floor}{tokens(total.tokens or 0)}"
    spent = f"{floor}{cost(total.cost_usd)}" if total.cost_usd is not None else ""
    for text in (f"{count} {spent}".strip(), f"{mark}{spent}" if spent else count):
        if width is None or len(text) <= width:
            return text
    return "…"


def model_call_running(run: RunView, *, source_down: bool = False) -> bool:
    """The run is in a model call now (its node an ``llm:`` one): live, its source up."""
    node = run.current_node or ""
    return run.live and not source_down and node.partition(":")[0] == "llm"


def tokens_said(run: RunView, *, source_down: bool = False) -> str:
    """``1.9k tokens $0.0082``: the runs table's figure with its unit, for the run's
    header; ``no tokens recorded`` when no model call said (not 0: a run whose model
    calls never said is not a run that used none), ``tokens …`` while they are counted.

    A model call under way is always said (``model call running``, as the comparison's
    ``call running``), whatever the calls before it spent: beside the tokens, or in
    their place while none said (``no tokens recorded`` would be wrong beside a call
    still streaming)."""
    running = model_call_running(run, source_down=source_down)
    if not _tokens_known(run) and not run.detailed:
        return "tokens …"
    said = spent_forms(run, running=running)[0]
    return ", ".join(part for part in (said, MODEL_CALL_RUNNING if running else "") if part)


MODEL_CALL_RUNNING: Final = f"model call {STILL_GOING}"
"""Said of a run in a model call now, beside its tokens or in their place."""


def spent_forms(run: RunView, *, running: bool = False) -> tuple[str, str, str]:
    """What a run spent, in three forms, longest first, for a header with less room:
    ``5.8k tokens $0.0204 with its child runs (own 2.9k tokens $0.0102)``, then
    ``Σ5.8k tok $0.0204 (own 2.9k tok $0.0102)``, then ``Σ5.8k tok $0.0204`` (a run
    without child runs: ``2.9k tokens $0.0102``, then ``2.9k tok $0.0102``, as the runs
    screen's source line says it). A figure is never cut. ``no tokens recorded`` when no
    model call said, nothing then while one is ``running`` (that is said instead),
    ``tokens …`` while they are counted."""
    if not _tokens_known(run):
        said = "tokens …" if not run.detailed else "" if running else "no tokens recorded"
        return said, said, said
    family = run.with_children
    if family is None:
        said = spent(run.totals)
        return said, _short(run.totals), _short(run.totals)
    total = f"{WITH_CHILDREN}{_short(family)}"
    return (
        spent_with_children(family, run.totals),
        f"{total} (own {_short(run.totals)})",
        total,
    )


def _short(totals: RunTotals) -> str:
    """``2.9k tok $0.0102``: :func:`~tui.text.spent` in fewer cells (``≥2.9k tok
    ≥$0.0102`` where not every call was read)."""
    if not totals.said:
        return "not counted" if totals.partial else "no tokens"
    floor = at_least(totals)
    said = f"{floor}{tokens(totals.tokens or 0)} tok"
    return f"{said} {floor}{cost(totals.cost_usd)}" if totals.cost_usd is not None else said


def short_id(run_id: str) -> str:
    """The distinctive end of a run id: a runtop id starts with its date (shown elsewhere),
    a coding agent's session id with its time (UUIDv7: sessions of one afternoon share a
    start), and a sub-agent's is its session's and then its own (``…agent-aac57f5``, not
    its parent's start). Any unique end is also what ``show`` takes for the id."""
    clean = inert(run_id, single_line=True)
    _, sub_agent, agent = clean.rpartition(".agent-")
    own = f"agent-{agent}" if sub_agent else clean  # a sub-agent's own part, or the whole id
    if len(own) > 14:
        return "…" + own[-12:]
    return own


def now_or(clock: float | None) -> float:
    return clock if clock is not None else time.time()


def plain(text: str) -> Text:
    return Text(text, no_wrap=True, overflow="ellipsis")


def replay_moments(runs: Iterable[RunView]) -> dict[str, float]:
    """Each replay's moment: its last event played (a replay's runs are a few files')."""
    moments: dict[str, float] = {}
    for run in runs:
        if run.recorded and run.last_event_at is not None:
            moments[run.source] = max(moments.get(run.source, 0.0), run.last_event_at)
    return moments
