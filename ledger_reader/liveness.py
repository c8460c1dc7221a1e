"""Whether a ledger's writer is still alive.

runtop's writer holds an exclusive ``flock`` on its ledger for as long as
the run lives. The kernel drops the lock when the process dies however it
dies (SIGKILL included), so a free lock on an unfinished runtop ledger on
this host means the writer is gone.
"""

from __future__ import annotations

import fcntl
import os


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
