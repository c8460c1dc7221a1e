"""Whether a ledger's writer is still alive, and the status of an unfinished run that follows.

runtop's writer holds an exclusive ``flock`` on its ledger for as long as
the run lives. The kernel drops the lock when the process dies however it
dies (SIGKILL included), so a free lock on an unfinished runtop ledger on
this host means the writer is gone.
"""

from __future__ import annotations

import fcntl
import os
import time as time_module
from typing import Final

from ledger_reader.events import parse_time
from ledger_reader.summary import PendingApproval, RunStatus, RunSummary

_HOST: Final = os.uname().nodename
"""This host's name, as ``socket.gethostname()`` gives it (both are ``uname``'s nodename),
without loading the socket module into every ``runtop ls``."""

DEFAULT_STALE_AFTER: Final = 300.0
"""Seconds without a write after which another writer's unfinished run is ``stale``."""


def writer_holds_lock(fd: int) -> bool | None:
    """Probe the writer's lock through ``fd`` (an open descriptor of the ledger).

    Takes a shared lock without waiting and drops it at once, so it never
    holds up a writer. Returns ``None`` where locks cannot be probed (some
    network file systems).
    """
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False


def ledger_lock_held(path: str | os.PathLike[str]) -> bool | None:
    """:func:`writer_holds_lock` for a path; ``None`` when it cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return writer_holds_lock(fd)
    finally:
        os.close(fd)


def live_writer(
    path: str | os.PathLike[str], *, pid: int | None = None, host: str | None = None
) -> str | None:
    """Who holds the writer's lock on the ledger at ``path`` now, or ``None`` if nobody does.

    The rule ``ls`` judges a run live by (:func:`judge_liveness`), for a process
    that is about to act on a run it does not write itself: a manager asked to
    resume or cancel a run another manager writes in the same directory. Says
    the writer as its ``run_started`` has it (``pid 4242 on host build-3``).
    """
    if ledger_lock_held(path) is not True:
        return None
    said = [
        part for part in (f"pid {pid}" if pid else "", f"on host {host}" if host else "") if part
    ]
    return " ".join(said) or "another process"


def writer_exited(summary: RunSummary, *, host: str | None = None) -> bool:
    """Whether the process that wrote the run (its ``run_started``'s pid, on this host) has
    exited, so that nothing it ran will take a request any more. ``False`` where that
    cannot be told: another host's run, or one that named no pid."""
    if not summary.pid or summary.host is None or summary.host != (host or _HOST):
        return False
    try:
        os.kill(summary.pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, another user's
    return False


def judge_liveness(
    summary: RunSummary,
    *,
    mtime: float,
    lock_held: bool | None,
    now: float | None = None,
    stale_after: float = DEFAULT_STALE_AFTER,
    host: str | None = None,
) -> RunStatus:
    """The status of an unfinished run once its writer's liveness is known.

    A runtop writer on this host holds an exclusive ``flock`` while its run
    lives, so a free lock means it is gone (``abandoned``). For any other
    writer only time tells: no write for ``stale_after`` seconds makes the run
    ``stale``, by the file's write time or, whichever is older, its last event's time
    (less ``stale_after``, for a writer's clock that is off); a pending approval
    stretches that to its own timeout, until the approval's deadline (its request's
    time plus the timeout) has passed. A ledger nothing could be read from stays
    ``unknown`` until it is as quiet, then ``stale``.
    """
    if summary.status is RunStatus.UNKNOWN:
        quiet = (now if now is not None else time_module.time()) - mtime
        return RunStatus.STALE if quiet > stale_after else RunStatus.UNKNOWN
    if not summary.status.is_live:
        return summary.status
    local = summary.host is None or summary.host == (host or _HOST)
    if summary.writer == "runtop" and local and lock_held is not None:
        return summary.status if lock_held else RunStatus.ABANDONED
    now = now if now is not None else time_module.time()
    quiet = now - mtime
    limit = stale_after
    approval = summary.pending_approval
    if approval is not None and approval.timeout_seconds:
        deadline = approval_deadline(approval)
        if deadline is None or now <= deadline:
            limit = max(limit, approval.timeout_seconds)  # waiting, as it may
    last = parse_time(summary.last_event_at) if summary.last_event_at else None
    if last is not None:
        # A copied or checked-out ledger is as new as the copy (a fresh clone's samples
        # would run for days): its last event's own time says how long it has been quiet,
        # the writer's clock allowed to be ``limit`` off this one.
        quiet = max(quiet, now - last.timestamp() - limit)
    return RunStatus.STALE if quiet > limit else summary.status


def approval_deadline(approval: PendingApproval) -> float | None:
    """When a pending approval times out, by the time its request was written.

    A writer that is alive records the timeout once it passes; a ledger that
    still waits after it (its write time aside: a copied or checked-out file is
    as new as the copy) is judged by quiet time alone, as any other run.
    """
    asked = parse_time(approval.requested_at) if approval.requested_at else None
    if asked is None or not approval.timeout_seconds:
        return None
    return asked.timestamp() + approval.timeout_seconds
