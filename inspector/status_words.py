"""The one word for each status a run can show, and every spelling a user may type for it.

The table, the filter, ``runtop ls`` and the attach API say the same word
for a status: its :class:`~ledger_reader.RunStatus` value
(``awaiting_approval``, ``canceled``). A user filtering may type that
word, the ledger's own spelling (``ok``, ``error``, ``cancelled``), or an
unambiguous start of either (``await``, ``fail``); anything else is named
back, with the words there are (:mod:`ledger_reader.status_names`, where the
attach server reads them too).

One status is not the run's but the watcher's: while the source of a live
run is disconnected, nobody knows what the run is doing, and it shows as
``unknown`` until the source returns.
"""

from __future__ import annotations

from typing import Final

from inspector.model import RunView
from ledger_reader import RunStatus
from ledger_reader.status_names import (
    LEDGER_SPELLINGS,
    UNKNOWN,
    WORDS,
    UnknownStatus,
    status_named,
    statuses_named,
)

__all__ = [
    "CALL_CANCELED",
    "CALL_DENIED",
    "CALL_ERROR",
    "CALL_OK",
    "CALL_UNFINISHED",
    "LEDGER_SPELLINGS",
    "STILL_GOING",
    "UNKNOWN",
    "WORDS",
    "UnknownStatus",
    "call_outcome",
    "ended_reason",
    "exit_word",
    "open_call_word",
    "status_named",
    "status_word",
    "statuses_named",
    "unanswered",
    "without_status_word",
]

STILL_GOING: Final = RunStatus.RUNNING.value
"""The one word for anything not finished yet: a run, a tool call, a model call, a step
(``running``, as the status says it; never ``in flight`` in one place and ``running`` in
another)."""

CALL_OK: Final = "ok"
"""A tool call that returned (the timeline's word, and the ledger's for a step that ended
well); never ``done`` in one place and ``ok`` in another."""

CALL_ERROR: Final = "error"
"""A tool call whose result is an error (the ledger's ``is_error``)."""

CALL_CANCELED: Final = RunStatus.CANCELED.value
"""A call or step stopped by a cancel: the run's word (``canceled``), never the ledger's
``cancelled`` nor ``error``."""

CALL_DENIED: Final = "denied"
"""An approval answered no (its node left unsuccessful): the timeline's word, never
``error``."""

CALL_UNFINISHED: Final = "unfinished"
"""A call begun and never ended in a run that no longer writes (it ended, its writer is
gone or went quiet, a session is idle): going nowhere, so not ``running``."""


def open_call_word(*, live: bool) -> str:
    """What a call begun and not ended is: ``running`` while its run is live
    (:attr:`~ledger_reader.RunStatus.is_live`, the rule the table's status follows),
    ``unfinished`` once it is not. Every view of a call says it by this one rule: the
    event stream, the detail, the tool calls' screens, the timeline and the comparison."""
    return STILL_GOING if live else CALL_UNFINISHED


def unanswered(status: str | None) -> str | None:
    """How a model call that got no answer ended (its ``llm_call.status``), in the run's
    words: ``canceled``, ``failed``; ``None`` for a call answered."""
    if not status:
        return None
    return LEDGER_SPELLINGS.get(status, status)


def status_word(run: RunView, *, source_down: bool = False) -> str:
    """The word the run's status shows as (``unknown`` while its live source is away)."""
    if source_down and run.live:
        return UNKNOWN
    return run.status.value


def exit_word(success: bool | None, *, after_cancel: bool, approval: bool = False) -> str:
    """How a node's ``node_exit`` says it ended, in one word: ``ok``; ``canceled`` for a
    failure after the run was asked to cancel (a model call stopped mid-answer); ``denied``
    for an approval's node (``approval``) answered no; else ``error``. The timeline's
    outcome (:mod:`inspector.timeline`) goes by the same rule."""
    if success is not False:
        return CALL_OK
    if after_cancel:
        return CALL_CANCELED
    return CALL_DENIED if approval else CALL_ERROR


def call_outcome(*, done: bool, is_error: bool, live: bool) -> str:
    """How a tool call stands, in one word: ``ok``, ``error``, or, till its result, what
    :func:`open_call_word` says of it (``running`` in a live run, else ``unfinished``)."""
    if not done:
        return open_call_word(live=live)
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
