"""A run's history for the attach API: read from its ledger as written, or from the hub.

A stream reads the ledger forward (``ledger_reader.lines``) in a thread (:class:`LedgerFrames`),
so following a run costs the run nothing it does not read. Requests for
lines by position share a small cache of open, indexed ledgers.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, TypeVar

from ledger_reader import DamagedLine, LedgerError, LedgerFile, encode_event
from ledger_reader.errors import LedgerGone
from ledger_reader.lines import LineBlocks
from run_manager.hub import Hub
from run_manager.server.sse import LineHead, damaged_frame, head_of, sse_frame

T = TypeVar("T")


def _find_malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    return trim


_malloc_trim: Final = _find_malloc_trim()

OPEN_LEDGERS: Final = 64
"""Ledgers kept open (and indexed) for reads by position, least recently used closed first."""


TRIM_AFTER: Final = 0.5
"""Seconds without a history being sent before the heaps' free pages are handed back."""
READERS: Final = 2
"""Threads reading ledgers for histories, for all requests together."""
LINES_PER_READ: Final = 256
"""Lines read from a ledger at a time for a request by position."""


class LedgerUnreadable(Exception):
    """The run's ledger cannot be opened or read; the message names no path (it is for clients)."""

    @classmethod
    def of(cls, error: LedgerError | OSError) -> LedgerUnreadable:
        if isinstance(error, LedgerGone | FileNotFoundError):
            return cls("the run's ledger is gone: it was removed from the ledger directory")
        if isinstance(error, OSError):
            return cls(f"the run's ledger cannot be read: {(error.strerror or 'error').lower()}")
        return cls("the run's ledger cannot be read")


class RunHistory:
    """The recorded events of runs: from their ledgers, or from the hub for runs without one.

    Args:
        hub: where the events of a run that writes no ledger are kept.
    """

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._ledgers: OrderedDict[str, LedgerFile] = OrderedDict()
        self._ledgers_lock = threading.Lock()
        # Ledger reads of every request share two threads of their own: a storm of history
        # requests queues here instead of taking every thread of the loop's default pool, and
        # fewer threads keep fewer malloc arenas (memory comes back after the storm).
        self._readers = ThreadPoolExecutor(max_workers=READERS, thread_name_prefix="history")
        self._reading = 0
        self._trim_due = False

    async def _in_thread(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._readers, function, *args)

    async def frames_after(
        self, run_id: str, path: str | None, after: int, *, torn_tail: bool = False
    ) -> AsyncIterator[tuple[bytes, int, bool]]:
        """The run's events after seq ``after`` as frames, in batches: (frames, last seq, ended).

        With ``torn_tail`` (the writer is gone) a torn last line ends the history as damage.
        """
        if path is None:
            _, events = self.hub.history(run_id)
            chosen = [event for event in events if event.seq > after]
            if chosen:
                frames = b"".join(sse_frame(e.seq, encode_event(e)[:-1]) for e in chosen)
                ended = chosen[-1].type == "run_completed"
                yield frames, chosen[-1].seq, ended
            return
        reader = LedgerFrames(path, torn_tail=torn_tail)
        self._reading += 1
        try:
            if not await self._in_thread(reader.seek_after, after):
                return  # no event after ``after``
            while True:
                batch = await self._in_thread(reader.read)
                if batch is None:
                    return
                yield batch
        finally:
            reader.close()
            self._reading -= 1
            if not self._reading:
                self.give_back_soon()

    def give_back_soon(self) -> None:
        """Hand the heaps' free pages back in a moment, unless a history is being read then.

        Called when the last history read ends, and by the streams when the last one
        closes: a storm of streams served from the feed leaves the heaps as high.
        """
        if _malloc_trim is not None and not self._trim_due:
            self._trim_due = True
            asyncio.get_running_loop().call_later(TRIM_AFTER, self._give_back)

    def _give_back(self) -> None:
        """Once no history has been sent for a moment, hand the heaps' free pages back.

        A storm of history reads leaves glibc's heaps at their high-water mark (the
        buffers are freed, the pages kept), many times a run's size above where the
        server started. ``malloc_trim`` returns them, where glibc is the
        allocator; the moment's wait lets the last answers leave the sockets' buffers.
        """
        self._trim_due = False
        if not self._reading and _malloc_trim is not None:
            _malloc_trim(0)

    async def lines(
        self, run_id: str, path: str | None, start: int, stop: int
    ) -> AsyncIterator[tuple[bytes, LineHead | None]]:
        """Lines ``start``..``stop`` of the run, each with its head (``None``: damaged).

        Raises:
            LedgerUnreadable: the run's ledger cannot be opened.
        """
        if path is None:
            dropped, events = self.hub.history(run_id)
            for event in events[max(0, start - dropped) : max(0, stop - dropped)]:
                yield encode_event(event)[:-1], LineHead(event.seq, event.type)
            return
        for low in range(start, stop, LINES_PER_READ):  # a piece at a time, not the whole range
            lines = await self._in_thread(
                self._read_lines, path, low, min(stop, low + LINES_PER_READ)
            )
            for line in lines:
                if line.strip():
                    yield line, head_of(line)
            if len(lines) < LINES_PER_READ:
                return

    def _read_lines(self, path: str, start: int, stop: int) -> list[bytes]:
        with self._ledgers_lock:  # requests read in threads; the open ledgers are shared
            return self._read_lines_locked(path, start, stop)

    def _read_lines_locked(self, path: str, start: int, stop: int) -> list[bytes]:
        ledger = self._ledgers.get(path)
        if ledger is None:
            try:
                ledger = LedgerFile(path)
            except LedgerError as error:
                raise LedgerUnreadable.of(error) from error
            self._ledgers[path] = ledger
            while len(self._ledgers) > OPEN_LEDGERS:
                self._ledgers.popitem(last=False)[1].close()
        self._ledgers.move_to_end(path)
        try:
            ledger.poll()
            ledger.start_indexing()
            ledger.wait_indexed()
            return ledger.raw_lines(start, stop)
        except (LedgerError, OSError) as error:  # removed or replaced since it was opened
            self._ledgers.pop(path, None)
            ledger.close()
            raise LedgerUnreadable.of(error) from error

    def close(self) -> None:
        """Release every open ledger."""
        self._readers.shutdown(wait=False, cancel_futures=True)
        with self._ledgers_lock:
            for ledger in self._ledgers.values():
                ledger.close()
            self._ledgers.clear()


class LedgerFrames:
    """A ledger read forward (split and decoded by ``ledger_reader``'s one line assembler)
    as SSE frames; for a thread.

    Each :meth:`read` reads a block and turns every line it completes into frames:
    between two reads a client holds the block's frames and a torn line's bytes, never
    lines decoded ahead. Held by a hundred clients waiting their turn to send, decoded
    lines would be thousands of small objects each, scattered over the heap's arenas,
    where any one left alive keeps its arena after a storm.
    """

    BLOCK: Final = 64 * 1024
    """Bytes of lines read and sent per batch: what one client's history holds at a time
    (a hundred clients reading a history at once hold a few MB, whatever its size)."""

    def __init__(self, path: str, *, torn_tail: bool = False) -> None:
        self.path = path
        self.torn_tail = torn_tail
        self._fd: int | None = None
        self._lines: LineBlocks | None = None
        self._offset = 0

    def seek_after(self, seq: int) -> bool:
        """Start at the first line after ``seq``; ``False`` if there is none.

        Raises:
            LedgerUnreadable: the ledger cannot be opened (removed, say).
        """
        try:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as error:
            raise LedgerUnreadable.of(error) from error
        if seq > 0:
            try:
                with LedgerFile(self.path) as ledger:
                    found = ledger.offset_of_seq(seq + 1)
            except LedgerError as error:
                raise LedgerUnreadable.of(error) from error
            if found is None:
                return False
            self._offset = found
        self._lines = LineBlocks(self._fd, self._offset, block=self.BLOCK, torn_tail=self.torn_tail)
        return True

    def read(self) -> tuple[bytes, int, bool] | None:
        """The next batch of complete lines as frames, the last seq, and whether the run ended."""
        reader = self._lines
        if reader is None:
            return None
        frames: list[bytes] = []
        last_seq = 0
        ended = False
        lines = reader.next()
        for line in lines:
            item = line.item
            if isinstance(item, DamagedLine):
                frames.append(damaged_frame(line.start, item.reason, line.raw, item.length))
            elif item is not None:
                frames.append(sse_frame(item.seq, line.raw))
                last_seq = item.seq
                ended = item.type == "run_completed"
        if not lines:
            return None
        return b"".join(frames), last_seq, ended

    def close(self) -> None:
        self._lines = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


__all__ = ["OPEN_LEDGERS", "LedgerFrames", "LedgerUnreadable", "RunHistory"]
