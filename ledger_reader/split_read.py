"""A listing's reads shared with a second, forked process, so both cores read.

Reading and folding a small ledger is Python work under one interpreter
lock; ``runtop ls`` of 10,000 ledgers spends most of its time there. With
``processes=2``, a listing of :data:`FORK_FROM` ledgers or more forks once:
the child reads the first half of the list and sends back what each read
found (:class:`~ledger_reader.head_tail.LedgerRead`, as msgpack through a
pipe), while this process reads the second half. The result is what reading
them all here gives, in the same order; liveness is judged here, afterwards.

It cannot race: each ledger is read by one process, through its own
descriptor, exactly as here; the child writes nothing but the pipe, and
exits with ``os._exit`` (no ``atexit``, no flush of buffers it inherited).
It never forks beside another thread (a lock that thread held would stay
held in the child), nor where there is no ``fork``. It cannot lose a ledger:
whatever the child does not deliver whole (it crashed, was killed, exited
non-zero, sent a short or corrupt answer, or answered nothing within
:data:`PATIENCE` and several times this process's own reading time, after
which it is killed) is read here. A ledger the child could not read, or
whose summary msgpack cannot carry, is read here too, so its error is
raised (and worded) where the listing reports it.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
from typing import Final, NoReturn

import msgspec

from ledger_reader.errors import LedgerError
from ledger_reader.events import MAX_LINE_BYTES
from ledger_reader.head_tail import LedgerRead, read_ledger

FORK_FROM: Final = 1000
"""Fewer ledgers than this are all read here: the fork and the answer cost more than half
of their reading saves."""
PATIENCE: Final = 10.0
"""Seconds the child is given after this process has read its half (at the least: also
four times as long as that half took)."""

_MAGIC: Final = b"runtop split read 1\n"
_LENGTH_BYTES: Final = 8
_encoder: Final = msgspec.msgpack.Encoder()
_decoder: Final = msgspec.msgpack.Decoder(list[LedgerRead | None])
_ANSWER_ERRORS: Final = (msgspec.MsgspecError, ValueError, TypeError, OverflowError)

Outcome = LedgerRead | LedgerError
"""What reading one ledger gave: what it found, or why it could not be read."""


def read_ledgers(
    files: list[str],
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
    processes: int = 1,
    patience: float = PATIENCE,
    fork_from: int | None = None,
) -> list[Outcome]:
    """Read every ledger of ``files``; the outcomes in the same order.

    Args:
        files: ledger paths.
        max_line_bytes: longer lines are damage.
        processes: 2 to share the reading with a forked process (see the module).
        patience: see :data:`PATIENCE`.
        fork_from: see :data:`FORK_FROM` (its default).
    """
    fork_from = FORK_FROM if fork_from is None else fork_from
    if processes < 2 or len(files) < max(2, fork_from) or not fork_is_safe():
        return read_here(files, max_line_bytes)
    half = len(files) // 2
    theirs, ours = files[:half], files[half:]
    worker = _Worker.start(theirs, max_line_bytes)
    if worker is None:
        return read_here(files, max_line_bytes)
    try:
        started = time.monotonic()
        mine = read_here(ours, max_line_bytes)
        answer = worker.answer(len(theirs), max(patience, 4 * (time.monotonic() - started)))
    finally:
        worker.close()
    if answer is None:
        return read_here(theirs, max_line_bytes) + mine
    outcomes: list[Outcome] = []
    for file, read in zip(theirs, answer, strict=True):
        outcomes.append(read if read is not None else read_one(file, max_line_bytes))
    return outcomes + mine


def read_here(files: list[str], max_line_bytes: int) -> list[Outcome]:
    """Read ``files`` in this process."""
    return [read_one(file, max_line_bytes) for file in files]


def read_one(file: str, max_line_bytes: int) -> Outcome:
    try:
        return read_ledger(file, max_line_bytes=max_line_bytes)
    except LedgerError as error:
        return error


def fork_is_safe() -> bool:
    """Whether this process may fork a reader: it has ``fork`` and no other thread."""
    if not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


class _Worker:
    """The forked reader: its process id (until reaped) and the read end of its pipe."""

    def __init__(self, pid: int, answer_fd: int) -> None:
        self.pid: int | None = pid
        self.answer_fd = answer_fd

    @classmethod
    def start(cls, files: list[str], max_line_bytes: int) -> _Worker | None:
        """Fork a child reading ``files``; ``None`` if no process could be made."""
        try:
            read_end, write_end = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return None
        if pid == 0:
            _work(read_end, write_end, files, max_line_bytes)
        os.close(write_end)
        return cls(pid, read_end)

    def answer(self, expected: int, timeout: float) -> list[LedgerRead | None] | None:
        """The child's reads, if it delivers all ``expected`` of them whole within ``timeout``."""
        chunks: list[bytes] = []
        deadline = time.monotonic() + timeout
        poller = _poller(self.answer_fd)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(left * 1000):
                return None  # no answer in time: close() kills it
            chunk = os.read(self.answer_fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        assert self.pid is not None
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        if os.waitstatus_to_exitcode(status) != 0:
            return None
        return _decoded(b"".join(chunks), expected)

    def close(self) -> None:
        """Kill the child if it is still there (it is ours and not reaped: its pid is not reused),
        reap it, and close the pipe."""
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.pid = None
        os.close(self.answer_fd)


def _poller(fd: int) -> select.poll:
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    return poller


def _decoded(data: bytes, expected: int) -> list[LedgerRead | None] | None:
    """The reads an answer holds, if it is whole and holds ``expected`` of them."""
    start = len(_MAGIC) + _LENGTH_BYTES
    if not data.startswith(_MAGIC) or len(data) < start:
        return None
    if int.from_bytes(data[len(_MAGIC) : start], "big") != len(data) - start:
        return None
    try:
        reads = _decoder.decode(memoryview(data)[start:])
    except _ANSWER_ERRORS:
        return None
    return reads if len(reads) == expected else None


def _work(read_end: int, write_end: int, files: list[str], max_line_bytes: int) -> NoReturn:
    """The child: read ``files``, write the answer, and exit, whatever happens."""
    status = 1
    try:
        os.close(read_end)
        body = answer_for(files, max_line_bytes)
        _write_all(write_end, [_MAGIC, len(body).to_bytes(_LENGTH_BYTES, "big"), body])
        status = 0
    finally:
        os._exit(status)


def answer_for(files: list[str], max_line_bytes: int) -> bytes:
    """What the child sends: each ledger's read, or ``None`` where this process must read it."""
    reads: list[LedgerRead | None] = []
    for file in files:
        try:
            reads.append(read_ledger(file, max_line_bytes=max_line_bytes))
        except LedgerError:
            reads.append(None)  # read again by the listing, which reports why
    try:
        return _encoder.encode(reads)
    except (TypeError, ValueError, OverflowError):  # a summary msgpack cannot carry
        return _encoder.encode([_carried(read) for read in reads])


def _carried(read: LedgerRead | None) -> LedgerRead | None:
    try:
        _encoder.encode(read)
    except (TypeError, ValueError, OverflowError):
        return None
    return read


def _write_all(fd: int, chunks: list[bytes]) -> None:
    for chunk in chunks:
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view) :]


__all__ = ["FORK_FROM", "PATIENCE", "fork_is_safe", "read_ledgers"]
