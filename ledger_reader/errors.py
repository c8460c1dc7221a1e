"""What can go wrong when reading ledgers, as types a caller can tell apart.

Each error carries the path and a sentence a user understands; the UI shows
``str(error)`` as it is.
"""

from __future__ import annotations

import os
from pathlib import Path


class LedgerError(Exception):
    """Base of every error ledger_reader raises on purpose."""

    def __init__(self, path: str | os.PathLike[str], message: str) -> None:
        self.path = Path(path)
        super().__init__(message)


class LedgerGone(LedgerError):
    """The file or directory no longer exists (deleted, or never did)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, f"{path}: no such file or directory")


class LedgerUnreadable(LedgerError):
    """The file or directory exists but cannot be read (permissions, I/O, not a file)."""

    def __init__(self, path: str | os.PathLike[str], cause: OSError | str) -> None:
        reason = cause if isinstance(cause, str) else (cause.strerror or str(cause))
        self.reason = reason
        super().__init__(path, f"{path}: cannot read: {reason.lower()}")


class NoLedgers(LedgerError):
    """A path that exists holds no ``*.jsonl`` ledger."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, f"{path}: no ledgers (*.jsonl) found")
