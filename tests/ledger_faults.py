"""Fault injection for the ledger writer, in the spirit of SQLite's test VFS.

``LedgerFaults.arm(n, kind)`` makes the n-th low-level write of any
:class:`~run_manager.ledger.LedgerWriter` from then on fail: with ENOSPC,
with EIO, or as a short write (half the bytes land, then the disk is
full). Every write after a failure fails the same way, as on a disk that
stays full. The real write is used for every other call.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from typing import Final

import pytest

from run_manager.ledger import LedgerWriter

KINDS: Final = ("enospc", "eio", "short")


class LedgerFaults:
    def __init__(self) -> None:
        self.countdown: int | None = None
        self.kind = "enospc"
        self.failing = False
        self.writes = 0
        """Low-level writes that reached the file whole or in part."""

    def arm(self, nth: int, kind: str = "enospc") -> None:
        assert kind in KINDS
        self.countdown = nth
        self.kind = kind
        self.failing = False

    def write(self, fd: int, data: bytes) -> int:
        if self.countdown is not None and not self.failing:
            self.countdown -= 1
            if self.countdown == 0:
                self.failing = True
                if self.kind == "short":
                    self.writes += 1
                    return os.write(fd, data[: max(1, len(data) // 2)])
        if self.failing:
            code = errno.EIO if self.kind == "eio" else errno.ENOSPC
            raise OSError(code, os.strerror(code))
        self.writes += 1
        return os.write(fd, data)


@pytest.fixture
def ledger_faults(monkeypatch: pytest.MonkeyPatch) -> Iterator[LedgerFaults]:
    faults = LedgerFaults()

    def write_some(self: LedgerWriter, data: bytes) -> int:
        return faults.write(self._fd, data)

    monkeypatch.setattr(LedgerWriter, "_write_some", write_some)
    return faults
