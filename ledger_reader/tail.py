"""Following a ledger as it grows.

:class:`LedgerTail` feeds appended bytes to a
:class:`~ledger_reader.lines.LineAssembler` (the one line splitter), which
holds at most one partial line (the torn tail a live writer leaves between
two ``write()`` calls); it reads a file's new bytes into an assembler and notices
when the file is truncated or replaced, so the reader starts over cleanly.

A poll reads at most :data:`FOLLOW_BYTES` and says whether more is there
(:attr:`TailBatch.more`): a follower handles one bounded batch and polls
again, so however fast the writer goes, what a follower holds at once is
one batch's lines, never the whole of what was appended meanwhile.
"""

from __future__ import annotations

import functools
import os
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

import msgspec

from ledger_reader.errors import LedgerGone, LedgerUnreadable
from ledger_reader.events import MAX_LINE_BYTES, LedgerItem
from ledger_reader.lines import READ_CHUNK, Line, LineAssembler, mark_before

if TYPE_CHECKING:
    import asyncio

_SIGNATURE_BYTES: Final = 64

FOLLOW_BYTES: Final = READ_CHUNK
"""Most bytes one poll reads: about 3,500 typical events, a few MB once decoded (4 MiB
batches left the app 1.7x the size of the same ledger opened whole: the allocator keeps
the high-water mark of a batch decoded in a thread)."""

Reset = Literal["truncated", "replaced"]


class TailBatch(msgspec.Struct):
    """What one poll of a ledger found."""

    lines: list[Line] = msgspec.field(default_factory=list)
    reset: Reset | None = None
    """Set when the file was truncated or replaced: drop what you had, these lines start over."""
    more: bool = False
    """The poll stopped at its limit with more bytes there: poll again without waiting."""

    @property
    def items(self) -> list[LedgerItem]:
        return [line.item for line in self.lines if line.item is not None]


class LedgerTail:
    """Follow one ledger file by path, opening it only while reading.

    Holding no descriptor between polls lets a directory of thousands of
    ledgers be followed without running out of them, and lets a replaced
    file (a new inode under the same name) be noticed by its identity.

    Args:
        path: the ledger.
        start: where to start reading; a line boundary (0, or just past a ``\\n``).
        mark: the bytes just before ``start`` (:func:`~ledger_reader.lines.mark_before`)
            as the reader that read up to it saw them, and
        identity: the file's ``(st_dev, st_ino)`` as that reader saw it: a file
            replaced or written again in place since is then read from its start,
            not on from ``start``.
        max_line_bytes: longer lines are reported as damaged and skipped.
        keep_raw: give each line its bytes as written (``runtop show --json``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        start: int = 0,
        mark: bytes = b"",
        identity: tuple[int, int] | None = None,
        max_line_bytes: int = MAX_LINE_BYTES,
        keep_raw: bool = False,
    ) -> None:
        self.path = path if isinstance(path, Path) else Path(path)
        self._assembler = LineAssembler(start, max_line_bytes=max_line_bytes, keep_raw=keep_raw)
        self._identity = identity
        self._signature = b""
        self._mark = mark
        """The bytes just before :attr:`offset` as last read: a file truncated and written
        again in place, with the same first bytes, differs here (or is shorter)."""
        self._held: int | None = None

    @property
    def offset(self) -> int:
        """Where the next complete line will start."""
        return self._assembler.offset

    @property
    def pending_bytes(self) -> int:
        """Bytes of a torn last line waiting for its ``\\n``."""
        return self._assembler.pending_bytes

    def _start_over(self) -> None:
        old = self._assembler
        self._assembler = LineAssembler(0, max_line_bytes=old.max_line_bytes, keep_raw=old.keep_raw)
        self._signature = b""
        self._mark = b""

    def _check(
        self, identity: tuple[int, int], size: int, head: bytes, mark: bytes
    ) -> Reset | None:
        """Decide whether the file is still the one read so far."""
        reset: Reset | None = None
        if self._identity is not None and identity != self._identity:
            reset = "replaced"
        elif size < self._assembler.read_to:
            reset = "truncated"
        elif self._signature and not head.startswith(self._signature):
            reset = "replaced"
        elif self._mark and mark != self._mark:
            reset = "replaced"  # rewritten in place: the same first bytes, others since
        self._identity = identity
        if reset is not None:
            self._start_over()
        return reset

    def _remember_head(self, head: bytes) -> None:
        if len(self._signature) < _SIGNATURE_BYTES and self._assembler.read_to > 0:
            self._signature = head[: min(_SIGNATURE_BYTES, self._assembler.read_to)]

    def poll(
        self,
        *,
        hold_open: bool = False,
        verify_head: bool = True,
        max_bytes: int = FOLLOW_BYTES,
    ) -> TailBatch:
        """Read what was appended since the last poll, up to ``max_bytes`` (blocking).

        Args:
            hold_open: keep the file open until :meth:`release`, for a ledger
                polled often: opening a file costs more than reading it. A
                held file that was replaced or deleted has no links left,
                which the next poll notices and reopens by name.
            verify_head: compare the file's first bytes, and the last ones read even when
                nothing was added, with those read before, to notice a file rewritten in
                place (one or two more reads). Without it the last bytes read are compared
                only when the file has more to read, which is when reading on would go wrong.
            max_bytes: read no more than this (whole chunks of 1 MiB, at least one);
                the batch says ``more`` when it stopped there.

        Raises:
            LedgerGone: the file no longer exists.
            LedgerUnreadable: it exists but cannot be read.
        """
        fd = self._held
        stat: os.stat_result | None = None
        if fd is not None:
            stat = os.fstat(fd)
            if stat.st_nlink == 0:
                self.release()  # replaced or deleted under us: look at what the name holds now
                fd = stat = None
        if fd is None:
            try:
                fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
            except FileNotFoundError as error:
                raise LedgerGone(self.path) from error
            except OSError as error:
                raise LedgerUnreadable(self.path, error) from error
        try:
            if stat is None:
                stat = os.fstat(fd)
            # A file held open is the same file (a replaced one has no links left); only a
            # rewrite in place could change its head, and verify_head catches that.
            head = os.pread(fd, _SIGNATURE_BYTES, 0) if verify_head or not self._signature else b""
            if not head and self._signature:
                head = self._signature
            read_to = self._assembler.read_to
            # The bytes before read_to are looked at whenever there is more to read, not only
            # when verifying: a file truncated and written again past read_to between two
            # polls would be read on from the middle of a line of the new one, and never
            # again, since a later poll's bytes before read_to would be the new file's.
            mark = (
                os.pread(fd, len(self._mark), read_to - len(self._mark))
                if self._mark and (verify_head or stat.st_size > read_to)
                else self._mark
            )
            batch = TailBatch(
                reset=self._check((stat.st_dev, stat.st_ino), stat.st_size, head, mark)
            )
            budget = max(max_bytes, READ_CHUNK)
            while True:
                data = os.pread(fd, READ_CHUNK, self._assembler.read_to)
                batch.lines.extend(self._assembler.feed(data))
                if len(data) < READ_CHUNK:
                    break  # a short read of a regular file: its end
                budget -= len(data)
                if budget <= 0:
                    batch.more = True
                    break
            if len(head) < _SIGNATURE_BYTES:
                head = os.pread(fd, _SIGNATURE_BYTES, 0)
            self._remember_head(head)
            if self._assembler.read_to != read_to or batch.reset is not None or not self._mark:
                self._mark = mark_before(fd, self._assembler.read_to)
            return batch
        except OSError as error:
            hold_open = False
            raise LedgerUnreadable(self.path, error) from error
        finally:
            if hold_open:
                self._held = fd
            else:
                self._held = None
                os.close(fd)

    def release(self) -> None:
        """Close a file held open by ``poll(hold_open=True)``."""
        if self._held is not None:
            os.close(self._held)
            self._held = None

    @property
    def holding(self) -> bool:
        return self._held is not None

    async def apoll(self, *, max_bytes: int = FOLLOW_BYTES) -> TailBatch:
        """Like :meth:`poll`, read in a thread: the event loop never waits on the disk."""
        import asyncio  # here: `runtop ls --json` loads no asyncio

        return await asyncio.to_thread(functools.partial(self.poll, max_bytes=max_bytes))

    async def follow(
        self, stop: asyncio.Event | None = None, *, tick: float = 1.0
    ) -> AsyncGenerator[TailBatch, None]:
        """Every batch appended from here on, as it lands, until ``stop`` is set.

        Woken by the file's changes (inotify, within milliseconds) and every
        ``tick`` seconds besides; a batch that stopped at its limit is
        followed by the next at once. The caller handles each batch before
        the next is read, so a writer far ahead costs it one batch of memory.

        Raises:
            LedgerGone: the file was removed.
            LedgerUnreadable: it can no longer be read.
        """
        import asyncio

        from watchfiles import awatch  # here: `runtop ls` never follows a file

        stop = stop or asyncio.Event()
        batch = await self.apoll()
        yield batch
        while batch.more and not stop.is_set():
            batch = await self.apoll()
            yield batch
        async for _ in awatch(
            self.path,
            debounce=1,
            step=1,
            stop_event=stop,
            rust_timeout=max(1, int(tick * 1000)),
            yield_on_timeout=True,
        ):
            batch = await self.apoll()
            yield batch
            while batch.more and not stop.is_set():
                batch = await self.apoll()
                yield batch
