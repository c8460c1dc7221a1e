"""How live a coding agent's session is: a session file has no end record, only writes.

The rule, in one place:

- ``awaiting_approval``: a tool use waits on the person (a permission prompt,
  a question: :meth:`~ledger_reader.sessions.fold.SessionFold.rest`), for up to
  :data:`WAIT_LIMIT` without a write (an agent closed at its prompt waits on
  nobody after that);
- ``running``: written in the last :data:`IDLE_AFTER` seconds;
- ``idle``: quiet for longer, waiting on nobody: the agent has answered, or
  stopped; the session may be taken up again, so it never ends.

Quiet is told by the file's write time or, whichever says longer, by its last
event's own time (less :data:`IDLE_AFTER`, for an agent's clock that is off
this one): a session copied, synced or checked out is as new as the copy, and
one of last year's read "running" for two minutes, 7,000 hours long. The rule
ledgers of other writers follow too (:func:`ledger_reader.liveness.judge_liveness`).
"""

from __future__ import annotations

import time
from typing import Final

from ledger_reader.events import parse_time
from ledger_reader.summary import RunStatus, RunSummary

IDLE_AFTER: Final = 120.0
"""Seconds without a write after which a session that waits on nobody is ``idle``."""
WAIT_LIMIT: Final = 3600.0
"""Seconds a session waiting on the person stays ``awaiting_approval`` without a write."""


def judge_session(summary: RunSummary, *, mtime: float, now: float | None = None) -> RunSummary:
    """``summary`` (its events folded) with its status judged by the rule above, in place."""
    if summary.status is RunStatus.UNKNOWN:
        return summary
    now = time.time() if now is None else now
    quiet = now - mtime
    last = parse_time(summary.last_event_at) if summary.last_event_at else None
    if last is not None:
        quiet = max(quiet, now - last.timestamp() - IDLE_AFTER)
    if summary.pending_approval is not None:
        summary.status = RunStatus.AWAITING_APPROVAL if quiet <= WAIT_LIMIT else RunStatus.IDLE
    else:
        summary.status = RunStatus.RUNNING if quiet <= IDLE_AFTER else RunStatus.IDLE
    return summary


__all__ = ["IDLE_AFTER", "WAIT_LIMIT", "judge_session"]
