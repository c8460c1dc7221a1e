"""The one word for each status a run can show, and every spelling a user may type for it.

The table, the filter, ``runtop ls`` and the attach API say the same word
for a status: its :class:`~ledger_reader.RunStatus` value
(``awaiting_approval``, ``canceled``). A user filtering may type that
word, the ledger's own spelling (``ok``, ``error``, ``cancelled``), or an
unambiguous start of either (``await``, ``fail``); anything else is named
back, with the words there are.

One status is not the run's but the watcher's: while the source of a live
run is disconnected, nobody knows what the run is doing, and it shows as
``unknown`` until the source returns.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from inspector.model import RunView
from ledger_reader import RunStatus

STILL_GOING: Final = RunStatus.RUNNING.value
"""The one word for anything not finished yet: a run, a tool call, a model call, a step
(``running``, as the status says it; never ``in flight`` in one place and ``running`` in
another)."""

CALL_OK: Final = "ok"
"""A tool call that returned (the timeline's word, and the ledger's for a step that ended
well); never ``done`` in one place and ``ok`` in another."""

CALL_ERROR: Final = "error"
"""A tool call whose result is an error (the ledger's ``is_error``)."""

UNKNOWN: Final = "unknown"
"""A live run whose source is disconnected: it may have ended, or not."""

WORDS: Final = tuple(dict.fromkeys((*(status.value for status in RunStatus), UNKNOWN)))
"""Every status word, in the order the help lists them (a ledger nothing could be read
from is ``unknown`` too: :attr:`RunStatus.UNKNOWN`)."""

LEDGER_SPELLINGS: Final = {
    "ok": RunStatus.SUCCEEDED.value,
    "error": RunStatus.FAILED.value,
    "cancelled": RunStatus.CANCELED.value,
    "approval": RunStatus.AWAITING_APPROVAL.value,
}
"""What the ledger's ``run_completed`` (and older versions of this table) call a status."""


def unanswered(status: str | None) -> str | None:
    """How a model call that got no answer ended (its ``llm_call.status``), in the run's
    words: ``canceled``, ``failed``; ``None`` for a call answered."""
    if not status:
        return None
    return LEDGER_SPELLINGS.get(status, status)


class UnknownStatus(ValueError):
    """A status a user typed that is no status: the message names it and the words there are."""


def status_word(run: RunView, *, source_down: bool = False) -> str:
    """The word the run's status shows as (``unknown`` while its live source is away)."""
    if source_down and run.live:
        return UNKNOWN
    return run.status.value


def call_outcome(*, done: bool, is_error: bool) -> str:
    """How a tool call stands, in one word: ``ok``, ``error``, or ``running`` till its result."""
    if not done:
        return STILL_GOING
    return CALL_ERROR if is_error else CALL_OK


def ended_reason(run: RunView) -> str:
    """Why a canceled or failed run ended, without the status word repeated in front."""
    return without_status_word(run.error or "")


def without_status_word(text: str) -> str:
    """``canceled: wrong input file`` reads ``wrong input file`` beside the status word."""
    for spelling in ("canceled", "cancelled", "failed", "error"):
        if text.lower().startswith(spelling + ": "):
            return text[len(spelling) + 2 :]
    return text


def status_named(text: str) -> str:
    """The status word ``text`` stands for: a word, a ledger spelling or an unambiguous start."""
    wanted = text.strip().lower()
    if wanted in WORDS:
        return wanted
    if wanted in LEDGER_SPELLINGS:
        return LEDGER_SPELLINGS[wanted]
    if wanted:
        candidates = {word for word in WORDS if word.startswith(wanted)}
        candidates |= {word for key, word in LEDGER_SPELLINGS.items() if key.startswith(wanted)}
        if len(candidates) == 1:
            return candidates.pop()
        if len(candidates) > 1:
            raise UnknownStatus(f"status {text!r} could be any of {', '.join(sorted(candidates))}")
    raise UnknownStatus(f"unknown status {text!r}: one of {', '.join(WORDS)}")


def statuses_named(parts: Iterable[str]) -> frozenset[str]:
    """The status words of a comma list's parts (see :func:`status_named`)."""
    return frozenset(status_named(part) for part in parts if part.strip())
