"""Every spelling a user may type for a run's status, and the one word each stands for.

The table, the filter, ``runtop ls`` and the attach API say the same word
for a status: its :class:`~ledger_reader.summary.RunStatus` value
(``awaiting_approval``, ``canceled``). A user filtering may type that
word, the ledger's own spelling (``ok``, ``error``, ``cancelled``), or an
unambiguous start of either (``await``, ``fail``); anything else is named
back, with the words there are. Here, under the attach server, so that its
``?filter=`` reads statuses as the app's ``/`` does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ledger_reader.summary import RunStatus

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


class UnknownStatus(ValueError):
    """A status a user typed that is no status: the message names it and the words there are."""


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
