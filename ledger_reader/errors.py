"""What can go wrong when reading ledgers, as types a caller can tell apart.

Each error carries the path and a sentence a user understands; the UI shows
``str(error)`` as it is.
"""

from __future__ import annotations

import os
import stat
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


class NotALedgerFile(LedgerError):
    """A ``*.jsonl`` entry in a walked directory that is no regular file: skipped, and said.

    A named pipe would block a reader, a device could be endless, and a link
    to nothing holds nothing; a walk names each rather than pass over it
    silently.
    """

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        self.kind = kind
        super().__init__(path, f"{path}: skipped: not a regular file ({kind})")


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, in words: ``a FIFO``, ``a socket``..."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"
