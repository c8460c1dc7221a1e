"""The one way to read a ledger's lines: forward from an offset, and back to the last one.

Every reader of ledger files (``runtop show``, the attach server's
histories, the store's detail pass, the replay, the summary's head and
tail, :class:`~ledger_reader.tail.LedgerTail`) splits lines here, so a
window, a torn line, an over-long line and a byte-order mark mean the
same thing everywhere:

- a line is the bytes before a ``\\n``; a blank line decodes to ``None``;
- the bytes after the last ``\\n`` are a *torn* line: held back while the
  writer may still finish it, reported as damage once it cannot
  (``torn_tail=True``);
- a line over the limit is reported damaged and never held whole;
- a UTF-8 byte-order mark at the very start of a file (Windows tools
  write one) is not part of the first line, whose start is then 3.
"""

from __future__ import annotations

import os
import stat as stat_module
from collections.abc import Iterator
from typing import Final

import msgspec

from ledger_reader.decode import decode_line, over_long_line
from ledger_reader.errors import LedgerGone, LedgerUnreadable
from ledger_reader.events import MAX_LINE_BYTES, DamagedLine, LedgerItem

READ_CHUNK: Final = 1024 * 1024
"""Bytes read per ``pread`` when reading forward."""
BACKWARD_STEP: Final = 64 * 1024
"""The first window of a backward search; it doubles until it holds a whole line."""
BOM: Final = b"\xef\xbb\xbf"
MARK_BYTES: Final = 64
"""The bytes just before where a follower stopped that it keeps (:func:`mark_before`)."""
TORN_REASON: Final = "torn last line: the writer is gone without finishing it"


def open_ledger_fd(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """Open a ledger for reading; raise a :class:`LedgerError` a user can read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError as error:
        raise LedgerGone(path) from error
    except OSError as error:
        raise LedgerUnreadable(path, error) from error
    stat = os.fstat(fd)
    if not stat_module.S_ISREG(stat.st_mode):
        os.close(fd)
        raise LedgerUnreadable(path, "not a regular file")
    return fd, stat


class Line(msgspec.Struct, frozen=True):
    """One complete line: where it starts, where its ``\\n`` is, what it holds.

    ``raw`` is the line as written (without its ``\\n``) when the reader was
    asked to keep it, else ``b""``; an over-long line never keeps it.
    """

    start: int
    end: int
    item: LedgerItem | None
    raw: bytes = b""


class LineAssembler:
    """Split appended bytes into complete lines and decode them.

    ``offset`` is the file position of the first byte not yet part of a
    complete line; everything before it has been delivered.

    Args:
        offset: the file position of the first byte fed.
        max_line_bytes: longer lines are reported damaged, never held whole.
        keep_raw: give each :class:`Line` its bytes as written.
        decode: decode each line; without it a line's item is ``None`` (only an
            over-long line has one, its damage) and its bytes are kept, for a
            reader that forwards lines as written (the attach server).
    """

    def __init__(
        self,
        offset: int = 0,
        *,
        max_line_bytes: int = MAX_LINE_BYTES,
        keep_raw: bool = False,
        decode: bool = True,
    ) -> None:
        self.offset = offset
        self.max_line_bytes = max_line_bytes
        self.keep_raw = keep_raw or not decode
        self.decode = decode
        self._pending = bytearray()
        self._skipped = 0
        """Bytes of an over-long line dropped so far (0 when not in one)."""

    @property
    def pending_bytes(self) -> int:
        """Bytes of the unfinished last line seen so far."""
        return len(self._pending) + self._skipped

    @property
    def read_to(self) -> int:
        """The file position up to which bytes have been fed."""
        return self.offset + self.pending_bytes

    def feed(self, data: bytes) -> list[Line]:
        """Take the bytes that follow :attr:`read_to`; return the lines they complete."""
        lines: list[Line] = []
        pos = 0
        size = len(data)
        keep = self.keep_raw
        while pos < size:
            newline = data.find(b"\n", pos)
            if newline == -1:
                self._hold(data, pos, size)
                break
            start = self.offset
            raw = b""
            if self._skipped:
                length = self._skipped + (newline - pos)
                item: LedgerItem | None = over_long_line(start, length, self.max_line_bytes)
                self._skipped = 0
            elif self._pending:
                length = len(self._pending) + (newline - pos)
                if length > self.max_line_bytes:
                    item = over_long_line(start, length, self.max_line_bytes)
                else:
                    self._pending += data[pos:newline]
                    raw = bytes(self._pending)
                    item = None
                self._pending.clear()
            else:
                length = newline - pos
                if length > self.max_line_bytes:
                    item = over_long_line(start, length, self.max_line_bytes)
                else:
                    raw = data[pos:newline]
                    item = None
            self.offset = start + length + 1
            pos = newline + 1
            if raw or item is None:
                first = start
                if start == 0 and raw[:3] == BOM:
                    raw, first = raw[3:], 3
                item = decode_line(raw, first) if self.decode else None
                lines.append(Line(first, start + length, item, raw if keep else b""))
            else:
                lines.append(Line(start, start + length, item))
        return lines

    def _hold(self, data: bytes, pos: int, size: int) -> None:
        """Keep an unfinished line, or only count it once it is over the limit."""
        if self._skipped:
            self._skipped += size - pos
        elif len(self._pending) + (size - pos) > self.max_line_bytes:
            self._skipped = len(self._pending) + (size - pos)
            self._pending.clear()
        else:
            self._pending += data[pos:size]

    def torn(self) -> Line | None:
        """The torn last line held back, as damage (for a ledger whose writer is gone)."""
        length = self.pending_bytes
        if not length:
            return None
        start = self.offset
        item = DamagedLine(offset=start, length=length, reason=TORN_REASON)
        if not self._skipped:
            recovered = decode_line(bytes(self._pending), start)
            if isinstance(recovered, DamagedLine):
                item.recovered = recovered.recovered
        return Line(start, start + length, item)


class LineBlocks:
    """A ledger read forward a block at a time, nothing decoded ahead: each :meth:`next`
    reads until a line is complete and gives the lines that block completed.

    For a reader that holds a ledger open while it waits its turn (the attach server's
    histories): between two calls it holds a torn line's bytes, never decoded lines.

    Args:
        fd: the ledger, open for reading (the caller closes it).
        start: the file position of a line's start.
        block: bytes read at a time.
        torn_tail: at the end, give a torn last line as damage (its writer is gone).
    """

    def __init__(self, fd: int, start: int, *, block: int, torn_tail: bool = False) -> None:
        self._fd = fd
        self._block = block
        self._torn_tail = torn_tail
        self._assembler: LineAssembler | None = LineAssembler(start, keep_raw=True)

    def next(self) -> list[Line]:
        """The next lines, with their bytes as written; ``[]`` once the ledger ends."""
        assembler = self._assembler
        if assembler is None:
            return []
        while data := os.pread(self._fd, self._block, assembler.read_to):
            lines = assembler.feed(data)
            if lines:  # else the block ended inside a line longer than itself
                return lines
        self._assembler = None
        torn = assembler.torn() if self._torn_tail else None
        return [torn] if torn is not None else []


def read_lines(
    fd: int,
    start: int = 0,
    end: int | None = None,
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
    keep_raw: bool = False,
    decode: bool = True,
    torn_tail: bool = False,
    chunk: int = READ_CHUNK,
) -> Iterator[Line]:
    """Every complete line of an open ledger from ``start`` (a line's start) to ``end``.

    Reads in blocks of ``chunk`` with ``pread``, so the caller's descriptor
    position is left alone. Bytes after the last ``\\n`` (before ``end``)
    are a torn line: left out, or with ``torn_tail`` given as a damaged line
    (the writer is known to be gone, so it will never be finished).

    Raises:
        OSError: the file cannot be read; callers name the path.
    """
    assembler = LineAssembler(
        start, max_line_bytes=max_line_bytes, keep_raw=keep_raw, decode=decode
    )
    position = start
    while end is None or position < end:
        want = chunk if end is None else min(chunk, end - position)
        data = os.pread(fd, want, position)
        if not data:
            break
        position += len(data)
        yield from assembler.feed(data)
    if torn_tail:
        torn = assembler.torn()
        if torn is not None:
            yield torn


def read_ledger_lines(
    path: str | os.PathLike[str],
    start: int = 0,
    end: int | None = None,
    *,
    keep_raw: bool = False,
    torn_tail: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[Line]:
    """:func:`read_lines` of a ledger by path, opened for the read and closed after.

    Raises:
        LedgerGone, LedgerUnreadable: the file vanished or cannot be read.
    """
    fd, _ = open_ledger_fd(path)
    try:
        yield from read_lines(
            fd,
            start,
            end,
            keep_raw=keep_raw,
            torn_tail=torn_tail,
            max_line_bytes=max_line_bytes,
        )
    except OSError as error:
        raise LedgerUnreadable(path, error) from error
    finally:
        os.close(fd)


def complete_end(fd: int, size: int) -> int:
    """The position just past the last ``\\n`` before ``size`` (0 if there is none).

    Searched backwards in windows that double, so a long torn tail costs
    few reads.
    """
    end = size
    step = BACKWARD_STEP
    while end > 0:
        start = max(0, end - step)
        at = os.pread(fd, end - start, start).rfind(b"\n")
        if at != -1:
            return start + at + 1
        end = start
        step = min(step * 2, READ_CHUNK * 4)
    return 0


def mark_before(fd: int, offset: int) -> bytes:
    """The bytes just before ``offset`` (up to :data:`MARK_BYTES`).

    A follower that stopped reading at ``offset`` keeps them: a file
    truncated and written again in place since, even with the same first
    bytes, differs there or is shorter, where one appended to does not.
    """
    start = max(0, offset - MARK_BYTES)
    return os.pread(fd, offset - start, start) if offset > 0 else b""


def last_line_start(fd: int, end: int, *, limit: int = MAX_LINE_BYTES) -> int | None:
    """Where the complete line ending at ``end - 1`` (its ``\\n``) starts.

    The window grows backwards until it holds the whole line; ``None`` when
    the line is longer than ``limit`` (it is not to be read whole). A BOM
    at the start of the file is not part of the line.
    """
    if end <= 0:
        return None
    stop = end - 1  # the line's own newline
    step = BACKWARD_STEP
    position = stop
    while True:
        start = max(0, position - step)
        at = os.pread(fd, position - start, start).rfind(b"\n")
        if at != -1:
            begin = start + at + 1
            break
        if start == 0:
            begin = 0
            break
        position = start
        if stop - position > limit:
            return None
        step = min(step * 2, READ_CHUNK * 4)
    if stop - begin > limit:
        return None
    if begin == 0 and os.pread(fd, 3, 0) == BOM:
        begin = 3
    return begin


__all__ = [
    "BOM",
    "Line",
    "LineAssembler",
    "complete_end",
    "last_line_start",
    "mark_before",
    "open_ledger_fd",
    "read_ledger_lines",
    "read_lines",
]
