"""Fault injection for the ledger writer, in the spirit of SQLite's test VFS.

``LedgerFaults.arm(n, kind)`` makes the n-th low-level write of any
:class:`~run_manager.ledger.LedgerWriter` from then on fail: with ENOSPC,
with EIO, or as a short write (half the bytes land, then the disk is
full). Every write after a failure fails the same way, as on a disk that
stays full. ``arm_next_writer(n, kind)`` does the same for the next
writer that writes only (a run's first write is its ``run_started``, made
inside ``Manager.start``, so arming just before a start picks that run).
The real write is used for every other call.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from typing import Final

import pytest

from run_manager.ledger import LedgerWriter

KINDS: Final = ("enospc", "eio", "short")


class _Plan:
    __slots__ = ("countdown", "failing", "kind")

    def __init__(self, countdown: int, kind: str) -> None:
        self.countdown = countdown
        self.kind = kind
        self.failing = False


class LedgerFaults:
    def __init__(self) -> None:
        self.countdown: int | None = None
        self.kind = "enospc"
        self.failing = False
        self.writes = 0
        """Low-level writes that reached the file whole or in part."""
        self._next: _Plan | None = None
        self._plans: dict[int, _Plan] = {}
        self._failed_paths: set[str] = set()

    def arm_next_writer(self, nth: int, kind: str = "enospc") -> None:
        assert kind in KINDS
        self._next = _Plan(nth, kind)

    def failed(self, path: os.PathLike[str] | str) -> bool:
        """Whether a planned fault fired for the writer of ``path``."""
        return os.fspath(path) in self._failed_paths

    def write_for(self, writer: LedgerWriter, data: bytes) -> int:
        plan = self._plans.get(id(writer))
        if plan is None and self._next is not None:
            plan = self._plans[id(writer)] = self._next
            self._next = None
        if plan is None:
            return self.write(writer._fd, data)
        if not plan.failing:
            plan.countdown -= 1
            if plan.countdown == 0:
                plan.failing = True
                self._failed_paths.add(os.fspath(writer.path))
                if plan.kind == "short":
                    return os.write(writer._fd, data[: max(1, len(data) // 2)])
        if plan.failing:
            code = errno.EIO if plan.kind == "eio" else errno.ENOSPC
            raise OSError(code, os.strerror(code))
        return os.write(writer._fd, data)

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
        return faults.write_for(self, data)

    monkeypatch.setattr(LedgerWriter, "_write_some", write_some)
    return faults
