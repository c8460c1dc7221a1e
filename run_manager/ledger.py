"""Writing a run's ledger exactly as LEDGER.md says.

One writer per run: the file is opened ``O_APPEND`` with mode ``0600`` in
a ``0700`` directory, every line goes out in one ``write()``, and an
exclusive ``flock`` is held for as long as the run lives, so a reader can
tell a live run from one whose process died (the kernel drops the lock
with the process, however it dies). A writer that reopens a ledger after
a crash continues ``seq`` and starts on a fresh line.

A ledger removed while its run writes it (its file deleted, or the whole
ledger directory) would take the run's every later line into a file nobody
can open. The writer notices (the file has no name left: ``st_nlink`` 0),
logs it, and refuses the write with :class:`LedgerRemoved`, an ``OSError``:
the run stops and ends ``failed`` saying so, as for any ledger that cannot be
written. It does not make the file again: a ledger without the run's start
would be a record nobody could trust (LEDGER.md). The check costs an
``fstat``, so it is made on the run's last line and every
:data:`CHECK_EVERY` lines.

Writes are synchronous: an append of a few hundred bytes to a local file
lands in the page cache in microseconds, far less than a hop to a thread
would cost (bench/run_manager.py writes well over 100,000 events/s).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Final

import msgspec

from ledger_reader import LedgerFile, is_valid_run_id
from ledger_reader.events import PAYLOAD_CAP_BYTES
from ledger_reader.locations import make_private_dir

_LOCK_ATTEMPTS: Final = 50
CHECK_EVERY: Final = 64
"""Lines written between two checks that the ledger still has its name."""
log = logging.getLogger(__name__)
_encoder = msgspec.json.Encoder()


class LedgerBusy(RuntimeError):
    """Another live writer holds this run's ledger."""


class LedgerRemoved(OSError):
    """The ledger's file was removed (or its directory) while the run was writing it."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            errno.ENOENT, "the ledger was removed (or its directory) while the run wrote it"
        )
        self.filename = str(path)


def cap_payload_value(value: Any) -> tuple[Any, bool]:
    """Apply the 64 KiB cap to user data; return the value to store and whether it was cut.

    Over the cap the writer stores a JSON string of the first 64 KiB of the
    value's JSON text (cut on a character boundary), as LEDGER.md says.
    """
    if value is None or isinstance(value, bool | int | float):
        return value, False
    if isinstance(value, str) and len(value) <= PAYLOAD_CAP_BYTES // 4:
        return value, False
    try:
        text = value if isinstance(value, str) else _encoder.encode(value).decode()
    except (TypeError, ValueError, msgspec.EncodeError):
        text = repr(value)
        value = text
    raw = text.encode()
    if len(raw) <= PAYLOAD_CAP_BYTES:
        return value, False
    return raw[:PAYLOAD_CAP_BYTES].decode("utf-8", "ignore"), True


def cap_messages(messages: list[Any]) -> tuple[list[Any], bool]:
    """Keep the newest messages that fit the 64 KiB cap; return them and whether any were cut.

    A conversation is read from its end (the model's last question and what
    led to it), so the oldest go first; a newest message over the cap alone
    is itself cut as any user data is (:func:`cap_payload_value`).
    """
    kept: list[Any] = []
    room = PAYLOAD_CAP_BYTES
    for message in reversed(messages):
        try:
            size = len(_encoder.encode(message))
        except (TypeError, ValueError, msgspec.EncodeError):
            message, size = repr(message), PAYLOAD_CAP_BYTES + 1
        if size <= room:
            kept.append(message)
            room -= size
            continue
        if not kept:
            kept.append(cap_payload_value(message)[0])
        break
    kept.reverse()
    return kept, len(kept) < len(messages) or kept[:1] != messages[-len(kept) :][:1]


class LedgerWriter:
    """The one writer of one run's ledger.

    Args:
        directory: the ledger directory (made ``0700`` if missing).
        run_id: the run; its ledger is ``<directory>/<run_id>.jsonl``.

    Raises:
        ValueError: ``run_id`` is not a valid id.
        LedgerBusy: another process is writing this ledger.
    """

    def __init__(self, directory: str | os.PathLike[str], run_id: str) -> None:
        if not is_valid_run_id(run_id):
            raise ValueError(f"invalid run id: {run_id!r}")
        self.directory = Path(directory)
        make_private_dir(self.directory)
        self.path = self.directory / f"{run_id}.jsonl"
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        self._lock = threading.Lock()
        try:
            self._take_lock()
            self.last_seq = self._recover()
            self._end = os.fstat(self._fd).st_size
            """Where the last whole line ends: a line that fails half-way is cut back to it."""
        except BaseException:
            os.close(self._fd)
            raise
        self.closed = False
        self._since_check = 0

    def _take_lock(self) -> None:
        # Readers probe with a momentary shared lock; retry briefly past them.
        for _ in range(_LOCK_ATTEMPTS):
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                time.sleep(0.002)
        raise LedgerBusy(f"{self.path}: another process is writing this ledger")

    def _recover(self) -> int:
        """After a crash: find the last ``seq`` and make sure the next line starts fresh."""
        size = os.fstat(self._fd).st_size
        if size == 0:
            return 0
        with LedgerFile(self.path) as ledger:
            last = ledger.last_event()
        with open(self.path, "rb") as handle:
            handle.seek(size - 1)
            if handle.read(1) != b"\n":
                os.write(self._fd, b"\n")  # a torn line stays damaged; ours starts clean
        return last.seq if last is not None else 0

    def write(self, line: bytes, *, last: bool = False) -> None:
        """Append one encoded line (``\\n`` included) in a single ``write()``.

        ``last``: the run's last line (``run_completed``); the ledger's name is checked first.

        Raises:
            LedgerRemoved: the ledger's file has no name any more; nothing is written.
            OSError: the write failed; what it wrote of the line is taken back, so the
                ledger ends on a whole line (and a ledger whose first line failed is
                removed: an empty file is no run).
        """
        with self._lock:
            if self.closed:
                return
            self._since_check += 1
            if last or self._since_check >= CHECK_EVERY:
                self._since_check = 0
                self._check_named()
            try:
                written = self._write_some(line)
                while written < len(line):  # a short write (disk full, signal): finish the line
                    written += self._write_some(line[written:])
            except OSError:
                self._take_back()
                raise
            self._end += len(line)

    def _take_back(self) -> None:
        """Cut what a failed write left of its line (truncating frees the disk it took)."""
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, self._end)
        if self._end == 0:
            with contextlib.suppress(OSError):
                self.path.unlink()

    def _check_named(self) -> None:
        if os.fstat(self._fd).st_nlink == 0:
            log.error("%s: %s; the run stops", self.path, LedgerRemoved(self.path).strerror)
            raise LedgerRemoved(self.path)

    def _write_some(self, data: bytes) -> int:
        """One ``write()``; the tests' fault injection replaces it."""
        return os.write(self._fd, data)

    def close(self) -> None:
        """Release the lock and the file: the run is over."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
