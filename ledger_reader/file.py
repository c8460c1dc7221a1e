"""One ledger file, opened without reading it whole.

Opening reads a few kilobytes: the first and the last complete lines are
there at once, and any event is found by ``seq`` with a binary search over
byte offsets (``seq`` has no gaps, so it is a line number the file carries
with it). Meanwhile a background thread builds the full newline index,
after which any line is one ``pread`` away.

Growth is indexed the same way (:meth:`LedgerFile.poll`): appended bytes
are scanned for newlines in chunks and only the positions are kept, 8
bytes a line, so a file that grew by 1 GB while open costs what the same
1 GB costs when present at open. Lines are decoded only when asked for.

The index is built with ``pread`` into a reused buffer scanned by numpy,
not over an ``mmap``: a file truncated under a mapping kills the reader
with ``SIGBUS`` on the next access, and ledgers do get truncated while
read. The read costs little next to the scan (bench/ledger_file.py).
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from ledger_reader.decode import decode_line, over_long_line
from ledger_reader.errors import LedgerGone, LedgerUnreadable
from ledger_reader.events import MAX_LINE_BYTES, DamagedLine, LedgerItem, RunEvent, event_of
from ledger_reader.line_index import ChunkScanner, LineEnds
from ledger_reader.lines import BOM, TORN_REASON, Line, complete_end, open_ledger_fd
from ledger_reader.tail import Reset

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

INDEX_POLL: Final = 0.05
"""How often a wait for the index checks that something is still building it."""
INDEX_CHUNK: Final = 1024 * 1024
"""Bytes scanned per step of the index: big enough for numpy, small enough to stay in cache."""

INDEX_WORKERS: Final = min(2, os.cpu_count() or 1)
"""Threads scanning chunks at once (``bench/ledger_file.py`` measures the index's speed)."""


class FileGrowth(msgspec.Struct, frozen=True):
    """What one :meth:`LedgerFile.poll` found: lines indexed, and whether it started over."""

    lines: int = 0
    """Complete lines added to the index (read them with :meth:`LedgerFile.lines`)."""
    reset: Reset | None = None
    """Set when the file was truncated or replaced: its lines were indexed from the start."""


class LedgerFile:
    """A ledger file: first and last events at once, any line by number once indexed.

    Line numbers count every line, blank and damaged ones too, from 0, so a
    view can show damage where it is. Lines appended after opening are
    picked up by :meth:`poll`, which also notices truncation and replacement
    and starts the file over.

    Args:
        path: the ledger.
        max_line_bytes: longer lines are reported as damaged and never read whole.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, max_line_bytes: int = MAX_LINE_BYTES
    ) -> None:
        self.path = Path(path)
        self.max_line_bytes = max_line_bytes
        self._fd, stat = open_ledger_fd(self.path)
        self._lock = threading.Lock()
        self._poll_lock = threading.Lock()
        """One poll at a time: readers in several threads poll before they read."""
        self._scan_buffers: (
            tuple[bytearray, npt.NDArray[np.uint8], npt.NDArray[np.bool_]] | None
        ) = None
        """The buffer a poll reads appended bytes into, and its newline matches."""
        self._closed = False
        self._indexer: threading.Thread | None = None
        self._stop_indexing = threading.Event()
        self.generation = 0
        """Bumped each time the file is started over (truncated or replaced)."""
        self._reset_state(stat)

    def _reset_state(self, stat: os.stat_result) -> None:
        self._identity = (stat.st_dev, stat.st_ino)
        self.size = stat.st_size
        self._head_end = self._last_line_end(stat.st_size)
        self._head_chunks: list[npt.NDArray[np.int64]] = []
        self._head_counts: list[int] = []
        self._head_scanned = 0
        self._index_done = threading.Event()
        if self._head_end == 0:
            self._index_done.set()
        self._ends: npt.NDArray[np.int64] | None = None
        self._tail_ends = LineEnds()
        self._tail_read = self._head_end
        """Where the next poll reads from: every byte before it has been scanned."""
        self._tail_complete = self._head_end
        """Just past the last newline scanned: bytes from here to ``_tail_read`` are torn."""
        self._first_start = self._bom() if stat.st_size else 0
        """Where line 0 starts: past a byte-order mark, if the file begins with one."""

    # -- opening and closing -------------------------------------------------

    def close(self) -> None:
        """Stop indexing and release the file."""
        self._stop_indexing.set()
        with self._lock:
            indexer = self._indexer
        if indexer is not None:
            indexer.join()  # outside the lock: the indexer takes it to publish its work
        with self._lock:
            if not self._closed:
                self._closed = True
                os.close(self._fd)

    def __enter__(self) -> LedgerFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _pread(self, length: int, offset: int) -> bytes:
        try:
            return os.pread(self._fd, length, offset)
        except OSError as error:
            raise LedgerUnreadable(self.path, error) from error

    def _last_line_end(self, size: int) -> int:
        """The position just past the last ``\\n`` before ``size`` (0 if none)."""
        try:
            return complete_end(self._fd, size)
        except OSError as error:
            raise LedgerUnreadable(self.path, error) from error

    def _bom(self) -> int:
        """Bytes of a byte-order mark the first line starts with (0 or 3): not part of it."""
        return 3 if self._pread(3, 0) == BOM else 0

    # -- the first and last events, at once ----------------------------------

    def _line_at(self, start: int, limit: int) -> tuple[int, LedgerItem | None] | None:
        """Read the complete line starting at ``start``; return its end and item.

        The line's end is found first (never holding more than a block of it),
        so a line over the limit is reported without being read whole.
        """
        if start == 0:
            start = self._bom()
        end = self._skip_to_newline(start, limit)
        if end is None:
            return None
        length = end - start
        if length > self.max_line_bytes:
            return end, over_long_line(start, length, self.max_line_bytes)
        return end, decode_line(self._pread(length, start), start)

    def _skip_to_newline(self, position: int, limit: int) -> int | None:
        """The position of the next ``\\n`` at or after ``position``, reading small then larger."""
        step = 4096
        while position < limit:
            chunk = self._pread(min(step, limit - position), position)
            if not chunk:
                return None
            at = chunk.find(b"\n")
            if at != -1:
                return position + at
            position += len(chunk)
            step = min(step * 4, INDEX_CHUNK)
        return None

    def _event_from(self, start: int, limit: int) -> tuple[int, RunEvent] | None:
        """The first event in a complete line at or after ``start``, and that line's start."""
        position = start
        while position < limit:
            found = self._line_at(position, limit)
            if found is None:
                return None
            end, item = found
            event = event_of(item)
            if event is not None:
                return position, event
            position = end + 1
        return None

    def first_event(self) -> RunEvent | None:
        """The first event of the file (skipping blank and damaged lines)."""
        found = self._event_from(0, self._complete_end())
        return None if found is None else found[1]

    def last_event(self) -> RunEvent | None:
        """The last event of the file, from its last complete lines."""
        end = self._complete_end()
        while end > 0:
            start = self._last_line_end(end - 1)
            found = self._line_at(start, end)
            if found is not None:
                event = event_of(found[1])
                if event is not None:
                    return event
            end = start
        return None

    def _complete_end(self) -> int:
        return max(self._head_end, self._tail_complete)

    def find_seq(self, seq: int) -> RunEvent | None:
        """The event whose ``seq`` is ``seq``, found without the index.

        A binary search over byte offsets: each step decodes the first event
        after a midpoint. Damage that breaks the order of ``seq`` can make it
        miss; then it returns ``None`` and the caller falls back to the index.
        """
        start = self._line_start_of_seq(seq)
        if start is None:
            return None
        found = self._event_from(start, self._complete_end())
        if found is not None and found[1].seq == seq:
            return found[1]
        return None

    def _line_start_of_seq(self, seq: int) -> int | None:
        """The start of the line holding ``seq``, or of the first line after it."""
        end = self._complete_end()
        low, high = 0, end
        best: int | None = None
        while low < high:
            middle = (low + high) // 2
            start = 0 if middle == 0 else self._next_line_start(middle, end)
            if start is None or start >= high:
                high = middle
                continue
            found = self._event_from(start, end)
            if found is None:
                high = middle
                continue
            line_start, event = found
            if event.seq >= seq:
                best = line_start
                high = middle
            else:
                low = line_start + 1
        return best

    def _next_line_start(self, position: int, limit: int) -> int | None:
        at = self._skip_to_newline(position - 1, limit)
        return None if at is None else at + 1

    def events_from_seq(self, seq: int, count: int) -> list[RunEvent]:
        """Up to ``count`` events starting at ``seq``, without the index."""
        start = self._line_start_of_seq(seq)
        if start is None:
            return []
        events: list[RunEvent] = []
        limit = self._complete_end()
        position = start
        while len(events) < count and position < limit:
            found = self._line_at(position, limit)
            if found is None:
                break
            end, item = found
            event = event_of(item)
            if event is not None:
                events.append(event)
            position = end + 1
        return events

    # -- the index -----------------------------------------------------------

    @property
    def index_complete(self) -> bool:
        """Whether every line present at open (or at the last start-over) is indexed."""
        return self._index_done.is_set()

    @property
    def indexed_bytes(self) -> int:
        return self._head_scanned if not self.index_complete else self._complete_end()

    def start_indexing(self) -> None:
        """Build the index in a background thread; :meth:`wait_indexed` waits for it."""
        with self._lock:
            if self._indexer is not None or self.index_complete:
                return
            indexer = threading.Thread(
                target=self.build_index, name=f"index {self.path.name}", daemon=True
            )
            indexer.start()
            # Published only once started: a close in another thread joins what it finds here.
            self._indexer = indexer

    def wait_indexed(self, timeout: float | None = None) -> bool:
        """Wait for the index; return whether it is complete.

        Returns ``False`` as soon as nothing is building it any more: the
        file was closed (indexing stopped) or indexing never started. A
        reader in another thread must not wait forever on a closed file.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._index_done.is_set():
            indexer = self._indexer
            if self._closed or self._stop_indexing.is_set() or indexer is None:
                return False
            if not indexer.is_alive():
                return self._index_done.is_set()
            wait = INDEX_POLL if deadline is None else min(INDEX_POLL, deadline - time.monotonic())
            if wait <= 0:
                return False
            self._index_done.wait(wait)
        return True

    def build_index(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Index every line up to the end of the file at open, from this thread.

        Chunks of 1 MiB (they stay in cache) are read and scanned by two
        worker threads; numpy compares them against ``\\n`` with the GIL
        released, so a UI thread beside them stays responsive.
        """
        limit = self._head_end
        start = self._head_scanned
        generation = self.generation
        spans = [(at, min(INDEX_CHUNK, limit - at)) for at in range(start, limit, INDEX_CHUNK)]
        scanner = ChunkScanner(self._fd, self._stop_indexing, INDEX_CHUNK)
        with ThreadPoolExecutor(max_workers=INDEX_WORKERS, thread_name_prefix="index") as pool:
            for (at, length), ends in zip(spans, pool.map(scanner.scan, spans), strict=True):
                if ends is None:
                    pool.shutdown(wait=False, cancel_futures=True)
                    break  # stopped, or truncated under us: poll() starts over
                with self._lock:
                    if generation != self.generation:
                        return
                    self._head_chunks.append(ends)
                    total = (self._head_counts[-1] if self._head_counts else 0) + len(ends)
                    self._head_counts.append(total)
                    self._head_scanned = at + length
                if progress is not None:
                    progress(at + length, limit)
        self._finish_index(generation, limit)

    def _finish_index(self, generation: int, limit: int) -> None:
        import numpy as np

        with self._lock:
            if generation != self.generation or self._head_scanned < limit:
                return
            self._ends = (
                np.concatenate(self._head_chunks) if self._head_chunks else np.empty(0, np.int64)
            )
            self._head_chunks = [self._ends]
            self._head_counts = [len(self._ends)]
            self._index_done.set()

    @property
    def line_count(self) -> int:
        """Lines known so far: all of them once :attr:`index_complete`."""
        with self._lock:
            head = self._head_counts[-1] if self._head_counts else 0
            if not self._index_done.is_set():
                return head
            return head + len(self._tail_ends)

    def _line_span(self, number: int) -> tuple[int, int] | None:
        """Start and end (the ``\\n``) of line ``number``; called with the lock held."""
        head = self._head_counts[-1] if self._head_counts else 0
        if number < head:
            end = self._head_end_at(number)
            start = self._first_start if number == 0 else self._head_end_at(number - 1) + 1
            return start, end
        if not self._index_done.is_set():
            return None
        tail_number = number - head
        if tail_number >= len(self._tail_ends):
            return None
        end = self._tail_ends[tail_number]
        if tail_number == 0:
            start = self._head_end_at(head - 1) + 1 if head else self._first_start
        else:
            start = self._tail_ends[tail_number - 1] + 1
        return start, end

    def _head_end_at(self, number: int) -> int:
        if self._ends is not None:
            return int(self._ends[number])
        chunk = bisect.bisect_right(self._head_counts, number)
        before = self._head_counts[chunk - 1] if chunk else 0
        return int(self._head_chunks[chunk][number - before])

    def line(self, number: int) -> LedgerItem | None:
        """The item on line ``number`` (``None`` for a blank line or a line not indexed yet)."""
        with self._lock:
            span = self._line_span(number)
        if span is None:
            return None
        start, end = span
        if end - start > self.max_line_bytes:
            return over_long_line(start, end - start, self.max_line_bytes)
        return decode_line(self._pread(end - start, start), start)

    def lines(self, start: int, stop: int) -> list[LedgerItem | None]:
        """The items on lines ``start`` to ``stop`` (exclusive), read in one ``pread``."""
        stop = min(stop, self.line_count)
        with self._lock:
            first = self._line_span(start) if start < stop else None
            spans = [self._line_span(n) for n in range(start, stop)] if first else []
        spans_known = [span for span in spans if span is not None]
        if not spans_known:
            return []
        begin, finish = spans_known[0][0], spans_known[-1][1]
        if finish - begin > 4 * self.max_line_bytes:
            return [self.line(n) for n in range(start, start + len(spans_known))]
        block = self._pread(finish - begin, begin)
        items: list[LedgerItem | None] = []
        for line_start, line_end in spans_known:
            if line_end - line_start > self.max_line_bytes:
                items.append(over_long_line(line_start, line_end - line_start))
            else:
                raw = block[line_start - begin : line_end - begin]
                items.append(decode_line(raw, line_start))
        return items

    def raw_lines(self, start: int, stop: int) -> list[bytes]:
        """Lines ``start`` to ``stop`` (exclusive) as written, without their newlines.

        Only lines the index knows are returned (all of them once
        :attr:`index_complete`); a blank line is ``b""``.
        """
        stop = min(stop, self.line_count)
        with self._lock:
            spans = [self._line_span(n) for n in range(start, stop)]
        known = [span for span in spans if span is not None]
        if not known:
            return []
        begin, finish = known[0][0], known[-1][1]
        block = self._pread(finish - begin, begin)
        return [block[first - begin : end - begin] for first, end in known]

    def torn_line(self) -> Line | None:
        """The bytes after the last ``\\n`` (as of the last :meth:`poll`) as a damaged line.

        For a reader that knows the writer is gone: its torn last line will
        never be finished, so it is damage, shown where it is.
        """
        with self._lock:
            start, length = self._tail_complete, self._tail_read - self._tail_complete
        if length <= 0:
            return None
        item = DamagedLine(offset=start, length=length, reason=TORN_REASON)
        if length <= self.max_line_bytes:
            recovered = decode_line(self._pread(length, start), start)
            if isinstance(recovered, DamagedLine):
                item.recovered = recovered.recovered
        return Line(start, start + length, item)

    def offset_of_seq(self, seq: int) -> int | None:
        """Where the line holding ``seq`` starts (or the first line after it), by binary search.

        Needs no index: ``seq`` rises line by line in a ledger.
        """
        return self._line_start_of_seq(seq)

    def raw_line(self, number: int, limit: int = MAX_LINE_BYTES) -> bytes:
        """The bytes of line ``number`` as written, cut at ``limit``."""
        with self._lock:
            span = self._line_span(number)
        if span is None:
            return b""
        start, end = span
        return self._pread(min(end - start, limit), start)

    # -- following growth ----------------------------------------------------

    def poll(self) -> FileGrowth:
        """Index the lines appended since open or the last poll (none is decoded).

        Also notices a file truncated (its size shrank) or replaced (another
        inode under the same path): the state starts over, the new file's
        lines are indexed from the start, and the growth says so.

        Raises:
            LedgerGone: the path no longer exists.
        """
        with self._poll_lock:
            reset: Reset | None = None
            try:
                stat = os.stat(self.path)
            except FileNotFoundError as error:
                raise LedgerGone(self.path) from error
            except OSError as error:
                raise LedgerUnreadable(self.path, error) from error
            if (stat.st_dev, stat.st_ino) != self._identity:
                reset = "replaced"
                self._reopen()
            else:
                size = os.fstat(self._fd).st_size
                if size < self._tail_read or size < self._head_scanned:
                    reset = "truncated"
            if reset is not None:
                self._start_over()
            lines = self._index_appended()
            self.size = self._tail_read
            return FileGrowth(lines, reset)

    def _index_appended(self) -> int:
        """Scan the bytes past ``_tail_read`` for newlines, a chunk at a time; keep the ends.

        Each chunk is read into one buffer kept for the file's polls and compared in
        place: a fresh bytes and bool array per chunk would leave the heap full of
        holes between the index's blocks, and a follower of a growing ledger would
        hold far more than the same ledger opened whole (``bench/follow_memory.py``).
        """
        import numpy as np

        if self._scan_buffers is None:
            raw = bytearray(INDEX_CHUNK)
            self._scan_buffers = (
                raw,
                np.frombuffer(raw, dtype=np.uint8),
                np.empty(INDEX_CHUNK, dtype=bool),
            )
        raw, data, matches = self._scan_buffers
        added = 0
        while True:
            at = self._tail_read
            try:
                got = os.preadv(self._fd, [raw], at)
            except OSError as error:
                raise LedgerUnreadable(self.path, error) from error
            if not got:
                break
            np.equal(data[:got], 10, out=matches[:got])
            ends: npt.NDArray[np.int64] = np.flatnonzero(matches[:got]).astype(np.int64)
            ends += at
            with self._lock:
                if at == 0 and raw[:3] == BOM:
                    self._first_start = 3
                self._tail_ends.append(ends)
                if len(ends):
                    self._tail_complete = int(ends[-1]) + 1
                self._tail_read = at + got
            added += len(ends)
            if got < INDEX_CHUNK:
                break  # a short read of a regular file: its end
        return added

    def _reopen(self) -> None:
        fd, _ = open_ledger_fd(self.path)
        with self._lock:
            os.close(self._fd)
            self._fd = fd

    def _start_over(self) -> None:
        self._stop_indexing.set()
        if self._indexer is not None and self._indexer is not threading.current_thread():
            self._indexer.join()
        self._indexer = None
        self._stop_indexing = threading.Event()
        with self._lock:
            self.generation += 1
            self._reset_state(os.fstat(self._fd))
            # Everything in the file is new again: read it through the tail.
            self._head_end = 0
            self._index_done.set()
            self._tail_ends = LineEnds()
            self._tail_read = self._tail_complete = 0
