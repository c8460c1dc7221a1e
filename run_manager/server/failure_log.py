"""One log line per kind of failure per interval, and no traceback for a peer that left.

A hostile or merely unlucky crowd of clients makes the same failure thousands of
times a second: a reset connection, an ``accept`` out of open files. Logged each
time, with a traceback, they filled the server's log (a million lines under
1,100 idle connections) and cost more than the failures themselves. While
:func:`failure_log` is in force, the first record of each kind (its logger, its
message and its exception's type) in an interval is written, the rest counted
and said with the next one that is written. A failure a client causes by going
away (:data:`PEER_GONE`) is written as one line, never with a traceback.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from typing import Final

INTERVAL: Final = 10.0
"""Seconds during which a second failure of one kind is only counted."""
LOGGERS: Final = ("asyncio", "aiohttp", "run_manager")
"""Where the failures a crowd of clients causes are logged: these loggers and those under
them (a logger's filter sees only its own records, so each is held)."""
PEER_GONE: Final = (ConnectionError, TimeoutError, EOFError)
"""Exceptions that say a client went away or stopped answering: nothing wrong here."""


class FailureLog(logging.Filter):
    """A filter that lets through one record of each kind per :data:`INTERVAL`."""

    def __init__(self, interval: float = INTERVAL) -> None:
        super().__init__()
        self.interval = interval
        self._last: dict[tuple[str, str, str], float] = {}
        self._held: dict[tuple[str, str, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        kind = (record.name, str(record.msg), type(error).__name__ if error else "")
        now = time.monotonic()
        last = self._last.get(kind)
        if last is not None and now - last < self.interval:
            self._held[kind] = self._held.get(kind, 0) + 1
            return False
        if len(self._last) > 1000:  # kinds come from a few call sites; bounded all the same
            self._last.clear()
        self._last[kind] = now
        held = self._held.pop(kind, 0)
        if held:
            record.msg = f"{record.msg} (and {held} more like it in the last {self.interval:g} s)"
        if isinstance(error, PEER_GONE):
            record.msg = f"{record.msg}: {type(error).__name__}: {error}"
            record.exc_info = None
            record.exc_text = None
        return True


@contextlib.contextmanager
def failure_log(interval: float = INTERVAL) -> Iterator[FailureLog]:
    """Hold every logger of :data:`LOGGERS` to one record of a kind per ``interval``."""
    log_filter = FailureLog(interval)
    known = [*LOGGERS, *logging.root.manager.loggerDict]
    loggers = [
        logging.getLogger(name)
        for name in dict.fromkeys(known)
        if any(name == top or name.startswith(top + ".") for top in LOGGERS)
    ]
    for logger in loggers:
        logger.addFilter(log_filter)
    try:
        yield log_filter
    finally:
        for logger in loggers:
            logger.removeFilter(log_filter)


__all__ = ["INTERVAL", "FailureLog", "failure_log"]
