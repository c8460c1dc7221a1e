"""A ledger's summary from as little of it as can tell the truth.

A ledger up to :data:`WHOLE_FILE_BYTES` is folded whole. A larger one is
read at its head (the ``run_started``, with the run's input) and its tail
(``seq`` has no gaps, so the last one counts the events), and the summary
says it is ``partial``: the damaged lines of the middle are not counted
(``None``, never 0). Two things are never guessed:

- the tail window grows backwards until it holds the whole last line (up
  to the line limit): a ``run_completed`` with a 64 KiB output is longer
  than any fixed window, and it decides the status;
- where the tail does not settle the run (no ``ok``/``error``/``cancelled``
  end), the middle is searched for the lines that can change the status or
  a pending approval (``approval_request``, ``approval_response``,
  ``run_completed``, ``cancel_requested``): a byte search, not a decode of
  every line.
"""

from __future__ import annotations

import os
from typing import Final

import msgspec

from ledger_reader.block_fold import fold_block
from ledger_reader.decode import decode_line
from ledger_reader.errors import LedgerUnreadable
from ledger_reader.events import MAX_LINE_BYTES, DamagedLine, LedgerItem, RunCompleted, event_of
from ledger_reader.lines import (
    BOM,
    READ_CHUNK,
    Line,
    complete_end,
    last_line_start,
    mark_before,
    open_ledger_fd,
    read_lines,
)
from ledger_reader.liveness import (
    DEFAULT_STALE_AFTER,
    judge_liveness,
    ledger_lock_held,
    writer_holds_lock,
)
from ledger_reader.summary import RunStatus, RunSummary, SummaryBuilder, run_id_from_path

WHOLE_FILE_BYTES: Final = 256 * 1024
"""Ledgers up to this size are summarised from every line, larger ones from head and tail."""
HEAD_BYTES: Final = 64 * 1024
TAIL_BYTES: Final = 64 * 1024

_SETTLING: Final = frozenset({"ok", "error", "cancelled", "canceled"})
"""``run_completed`` statuses after which nothing earlier changes the status."""
_MIDDLE_NEEDLES: Final = (b"approval_re", b"run_completed", b"cancel_requested")
"""What a line that may change the status or a pending approval contains."""


class LedgerState:
    """A ledger's summary in the making, and where a follower picks up from."""

    def __init__(
        self,
        builder: SummaryBuilder,
        *,
        complete_end: int,
        mtime: float,
        stale_after: float = DEFAULT_STALE_AFTER,
        torn_bytes: int = 0,
        key: FileKey | None = None,
        mark: bytes = b"",
    ) -> None:
        self.builder = builder
        self.key = key
        """The file's identity and change stamps when it was read (see :func:`file_key`)."""
        self.complete_end = complete_end
        """Just past the last ``\\n``: a follower starts here, so a torn tail is read once whole."""
        self.mark = mark
        """The bytes just before :attr:`complete_end` as read: a follower starting there
        tells by them (and :attr:`key`'s identity) a file written again since."""
        self.mtime = mtime
        self.lock_held: bool | None = None
        self.stale_after = stale_after
        self.torn_bytes = torn_bytes
        """Bytes after the last ``\\n``: a line being written, or, once the writer is gone,
        a line that never will be (counted as damage)."""
        self.clock: float | None = None
        """A fixed "now" liveness is judged at when none is given (snapshots, tests)."""

    def summary(self, now: float | None = None) -> RunSummary:
        """The summary, with liveness judged from the last probe and write time."""
        return self.judged(self.builder.summary(), now)

    def judged(self, summary: RunSummary, now: float | None = None) -> RunSummary:
        """``summary`` (this state's builder's, before liveness) with liveness judged."""
        return judge_summary(
            summary,
            mtime=self.mtime,
            lock_held=self.lock_held,
            now=self.clock if now is None else now,
            stale_after=self.stale_after,
            torn_bytes=self.torn_bytes,
        )

    def probe(self, fd: int | None = None) -> None:
        """Probe the writer's lock again (only runtop writers hold one)."""
        if self.builder.writer != "runtop" or self.builder.terminal:
            self.lock_held = None
        elif fd is not None:
            self.lock_held = writer_holds_lock(fd)
        else:
            self.lock_held = ledger_lock_held(self.builder.path or "")


FileKey = tuple[int, int, int, int, int]
"""A file's ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)``: an append or a rewrite
changes one of them (within a clock tick, see :mod:`ledger_reader.summary_cache`)."""


def file_key(stat: os.stat_result) -> FileKey:
    """The identity and change stamps of the file ``stat`` describes."""
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def judge_summary(
    summary: RunSummary,
    *,
    mtime: float,
    lock_held: bool | None,
    now: float | None,
    stale_after: float,
    torn_bytes: int,
) -> RunSummary:
    """Judge an unfinished run's liveness in ``summary`` (changed in place, and returned).

    ``summary`` is what the ledger's bytes say (:meth:`SummaryBuilder.summary`);
    liveness comes from outside them: the write time, the lock probe and now.
    A torn last line of a run whose writer is gone is damage.
    """
    if summary.status.is_live or summary.status is RunStatus.UNKNOWN:
        summary.status = judge_liveness(
            summary, mtime=mtime, lock_held=lock_held, now=now, stale_after=stale_after
        )
    if torn_bytes and writer_gone(summary) and summary.damaged_lines is not None:
        summary.damaged_lines += 1
    return summary


def writer_gone(summary: RunSummary) -> bool:
    """Whether the run's writer is known to be gone, so a torn last line is damage."""
    return summary.status is RunStatus.ABANDONED


def summarize_ledger(
    path: str | os.PathLike[str],
    *,
    now: float | None = None,
    stale_after: float = DEFAULT_STALE_AFTER,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> RunSummary:
    """Summarise one ledger from its head and tail (small files: from every line).

    Raises:
        LedgerGone, LedgerUnreadable: the file vanished or cannot be read.
    """
    state = read_ledger_state(path, stale_after=stale_after, max_line_bytes=max_line_bytes)
    return state.summary(now)


def read_ledger_state(
    path: str | os.PathLike[str],
    *,
    stale_after: float = DEFAULT_STALE_AFTER,
    max_line_bytes: int = MAX_LINE_BYTES,
    whole_file_bytes: int = WHOLE_FILE_BYTES,
    head_bytes: int = HEAD_BYTES,
    tail_bytes: int = TAIL_BYTES,
) -> LedgerState:
    """Read a ledger's head and tail (or all of a small one) into a :class:`LedgerState`.

    Raises:
        LedgerGone, LedgerUnreadable: the file vanished or cannot be read.
    """
    path = os.fspath(path)  # plain strings: pathlib costs more than the read here
    fd, stat = open_ledger_fd(path)
    try:
        builder = SummaryBuilder(run_id_from_path(path), path)
        size = stat.st_size
        end = _fold(fd, size, builder, max_line_bytes, whole_file_bytes, head_bytes, tail_bytes)
        state = LedgerState(
            builder,
            complete_end=end,
            mtime=stat.st_mtime,
            stale_after=stale_after,
            torn_bytes=size - end,
            key=file_key(stat),
            mark=mark_before(fd, end),
        )
        state.probe(fd)
        return state
    except OSError as error:
        raise LedgerUnreadable(path, error) from error
    finally:
        os.close(fd)


class LedgerRead(msgspec.Struct, array_like=True, gc=False):
    """What one read of a ledger found: its summary before liveness, and what liveness needs.

    A listing that reads a ledger once and follows nothing keeps only this
    (:func:`read_ledger`); it is also what the summary cache stores.
    """

    key: FileKey
    """The file's identity and change stamps when it was read (see :func:`file_key`)."""
    mtime: float
    lock_held: bool | None
    """The writer's lock, probed through the descriptor read (only unfinished runtop runs)."""
    torn_bytes: int
    terminal: bool
    """Whether the run has ended (its ``run_completed`` was read)."""
    summary: RunSummary
    """What the bytes say (:meth:`SummaryBuilder.summary`), liveness not yet judged."""

    def judged(self, now: float | None, stale_after: float) -> RunSummary:
        """The summary with liveness judged (changed in place: judge it once)."""
        return judge_summary(
            self.summary,
            mtime=self.mtime,
            lock_held=self.lock_held,
            now=now,
            stale_after=stale_after,
            torn_bytes=self.torn_bytes,
        )


def read_ledger(path: str, *, max_line_bytes: int = MAX_LINE_BYTES) -> LedgerRead:
    """Read one ledger, as :func:`read_ledger_state` does, keeping only what a listing needs.

    Raises:
        LedgerGone, LedgerUnreadable: the file vanished or cannot be read.
    """
    fd, stat = open_ledger_fd(path)
    try:
        builder = SummaryBuilder(run_id_from_path(path), path)
        size = stat.st_size
        if size <= WHOLE_FILE_BYTES:
            end = _fold_whole(fd, size, builder, final=True)  # nothing is folded in after it
        else:
            end = _fold_head_and_tail(fd, size, builder, max_line_bytes, HEAD_BYTES, TAIL_BYTES)
        summary = builder.summary()
        terminal = builder.terminal
        lock_held = writer_holds_lock(fd) if summary.writer == "runtop" and not terminal else None
        return LedgerRead(file_key(stat), stat.st_mtime, lock_held, size - end, terminal, summary)
    except OSError as error:
        raise LedgerUnreadable(path, error) from error
    finally:
        os.close(fd)


def _fold(
    fd: int,
    size: int,
    builder: SummaryBuilder,
    max_line_bytes: int,
    whole_file_bytes: int,
    head_bytes: int,
    tail_bytes: int,
) -> int:
    """Fold a ledger of ``size`` bytes open at ``fd``; return where its complete lines end."""
    if size <= whole_file_bytes:
        return _fold_whole(fd, size, builder)
    return _fold_head_and_tail(fd, size, builder, max_line_bytes, head_bytes, tail_bytes)


def _fold_whole(fd: int, size: int, builder: SummaryBuilder, *, final: bool = False) -> int:
    """Fold every complete line of a small ledger; return where they end."""
    data = os.pread(fd, size, 0)
    end = data.rfind(b"\n") + 1
    start = 3 if data[:3] == BOM else 0
    if end > start:
        fold_block(
            data[start:end] if start or end < len(data) else data, start, builder, final=final
        )
    return end


def _fold_head_and_tail(
    fd: int,
    size: int,
    builder: SummaryBuilder,
    max_line_bytes: int,
    head_bytes: int,
    tail_bytes: int,
) -> int:
    """Fold a large ledger's head, what of its middle can change the status, and its tail."""
    end = complete_end(fd, size)
    head_end = 0
    for line in read_lines(fd, 0, end, max_line_bytes=max_line_bytes, chunk=head_bytes):
        builder.add_item(line.item)
        head_end = line.end + 1
        if head_end >= head_bytes:
            break  # the first line (the run's input) may run past the head: it is read whole
    if head_end >= end:
        return end
    window = _tail_start(fd, max(head_end, end - tail_bytes), end, max_line_bytes)
    tail = list(read_lines(fd, window, end, max_line_bytes=max_line_bytes))
    builder.skip_gap()
    if not _settles(tail):
        for event_line in _lines_mentioning(fd, head_end, window, max_line_bytes):
            event = event_of(event_line.item)
            if event is not None:
                builder.apply(event)
    for line in tail:
        builder.add_item(line.item)
    return end


def _tail_start(fd: int, wanted: int, end: int, max_line_bytes: int) -> int:
    """A line start at or before ``wanted`` that leaves the whole last line in the window."""
    last = last_line_start(fd, end, limit=max_line_bytes)
    if last is not None and last <= wanted:
        return last
    if wanted == 0:
        return 0
    # The first line that starts at or after ``wanted``.
    position = wanted - 1
    while position < end:
        block = os.pread(fd, min(READ_CHUNK, end - position), position)
        at = block.find(b"\n")
        if at != -1:
            return position + at + 1
        position += len(block)
    return end


def _settles(tail: list[Line]) -> bool:
    """Whether the tail ends the run in a way nothing earlier in the file can change."""
    for line in reversed(tail):
        event = event_of(line.item)
        if isinstance(event, RunCompleted):
            return (event.payload.status or "") in _SETTLING
    return False


def _lines_mentioning(fd: int, start: int, stop: int, max_line_bytes: int) -> list[Line]:
    """The lines between ``start`` and ``stop`` (line boundaries) holding any needle, decoded.

    Lines are found by a byte search (GB/s) and only they are decoded; a
    needle in a line's text costs that line's decode, nothing more.
    """
    found: list[Line] = []
    position = start
    while position < stop:
        block = os.pread(fd, min(READ_CHUNK, stop - position), position)
        if not block:
            break
        last_newline = block.rfind(b"\n")
        if last_newline == -1:
            # A line longer than a block: read it by itself, if it holds a needle at all.
            line_end = _next_newline(fd, position + len(block), stop)
            line = _read_line(fd, position, line_end, max_line_bytes)
            if line is not None:
                found.append(line)
            position = line_end + 1
            continue
        body = block[: last_newline + 1]
        hits = sorted(at for needle in _MIDDLE_NEEDLES for at in _find_all(body, needle))
        done_to = -1
        for at in hits:
            if at <= done_to:
                continue  # another needle in a line already taken
            line_start = body.rfind(b"\n", 0, at) + 1
            line_end = body.find(b"\n", at)
            done_to = line_end
            item = _decode(body[line_start:line_end], position + line_start)
            if item is not None:
                found.append(Line(position + line_start, position + line_end, item))
        position += last_newline + 1
    return found


def _find_all(data: bytes, needle: bytes) -> list[int]:
    positions: list[int] = []
    at = data.find(needle)
    while at != -1:
        positions.append(at)
        at = data.find(needle, at + len(needle))
    return positions


def _next_newline(fd: int, position: int, stop: int) -> int:
    while position < stop:
        block = os.pread(fd, min(READ_CHUNK, stop - position), position)
        at = block.find(b"\n")
        if at != -1:
            return position + at
        if not block:
            break
        position += len(block)
    return stop


def _read_line(fd: int, start: int, end: int, max_line_bytes: int) -> Line | None:
    """A long line of the middle, decoded if it is within the limit and holds a needle."""
    if end - start > max_line_bytes:
        return None  # damage a partial read does not count
    raw = os.pread(fd, end - start, start)
    if not any(needle in raw for needle in _MIDDLE_NEEDLES):
        return None
    item = _decode(raw, start)
    return Line(start, end, item) if item is not None else None


def _decode(raw: bytes, offset: int) -> LedgerItem | None:
    """A middle line's event (or the event a damaged one ends in), else ``None``."""
    if offset == 0 and raw[:3] == BOM:
        raw, offset = raw[3:], 3
    item = decode_line(raw, offset)
    if isinstance(item, DamagedLine):
        return item.recovered
    return item


__all__ = [
    "HEAD_BYTES",
    "TAIL_BYTES",
    "WHOLE_FILE_BYTES",
    "FileKey",
    "LedgerRead",
    "LedgerState",
    "file_key",
    "judge_summary",
    "read_ledger",
    "read_ledger_state",
    "summarize_ledger",
    "writer_gone",
]
