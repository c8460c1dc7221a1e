"""A run's history for the attach API: read from its ledger as written, or from the hub.

A stream reads the ledger forward in blocks in a thread (:class:`LedgerFrames`),
so following a run costs the run nothing it does not read. Requests for
lines by position share a small cache of open, indexed ledgers.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Final

from ledger_reader import LedgerError, LedgerFile, encode_event
from run_manager.hub import Hub
from run_manager.sse import LineHead, damaged_frame, head_of, line_frame, sse_frame

OPEN_LEDGERS: Final = 64
"""Ledgers kept open (and indexed) for reads by position, least recently used closed first."""


class LedgerUnreadable(Exception):
    """The run's ledger cannot be opened or read."""


class RunHistory:
    """The recorded events of runs: from their ledgers, or from the hub for runs without one.

    Args:
        hub: where the events of a run that writes no ledger are kept.
    """

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._ledgers: OrderedDict[str, LedgerFile] = OrderedDict()
        self._ledgers_lock = threading.Lock()

    async def frames_after(
        self, run_id: str, path: str | None, after: int
    ) -> AsyncIterator[tuple[bytes, int, bool]]:
        """The run's events after seq ``after`` as frames, in batches: (frames, last seq, ended)."""
        if path is None:
            _, events = self.hub.history(run_id)
            chosen = [event for event in events if event.seq > after]
            if chosen:
                frames = b"".join(sse_frame(e.seq, encode_event(e)[:-1]) for e in chosen)
                ended = chosen[-1].type == "run_completed"
                yield frames, chosen[-1].seq, ended
            return
        reader = LedgerFrames(path)
        try:
            if not await asyncio.to_thread(reader.seek_after, after):
                return
            while True:
                batch = await asyncio.to_thread(reader.read)
                if batch is None:
                    return
                yield batch
        finally:
            reader.close()

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
        lines = await asyncio.to_thread(self._read_lines, path, start, stop)
        for line in lines:
            if line.strip():
                yield line, head_of(line)

    def _read_lines(self, path: str, start: int, stop: int) -> list[bytes]:
        with self._ledgers_lock:  # requests read in threads; the open ledgers are shared
            return self._read_lines_locked(path, start, stop)

    def _read_lines_locked(self, path: str, start: int, stop: int) -> list[bytes]:
        ledger = self._ledgers.get(path)
        if ledger is None:
            try:
                ledger = LedgerFile(path)
            except LedgerError as error:
                raise LedgerUnreadable(f"the run's ledger cannot be read: {error}") from error
            self._ledgers[path] = ledger
            while len(self._ledgers) > OPEN_LEDGERS:
                self._ledgers.popitem(last=False)[1].close()
        self._ledgers.move_to_end(path)
        ledger.poll()
        ledger.start_indexing()
        ledger.wait_indexed()
        return ledger.raw_lines(start, stop)

    def close(self) -> None:
        """Release every open ledger."""
        with self._ledgers_lock:
            for ledger in self._ledgers.values():
                ledger.close()
            self._ledgers.clear()


class LedgerFrames:
    """A ledger read forward in blocks, as SSE frames; for a thread."""

    BLOCK: Final = 1024 * 1024

    def __init__(self, path: str) -> None:
        self.path = path
        self._ledger: LedgerFile | None = None
        self._fd: int | None = None
        self._offset = 0

    def seek_after(self, seq: int) -> bool:
        """Start at the first line after ``seq``; ``False`` if the ledger cannot be read."""
        try:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        if seq > 0:
            try:
                with LedgerFile(self.path) as ledger:
                    found = ledger.offset_of_seq(seq + 1)
            except LedgerError:
                return False
            if found is None:
                return False
            self._offset = found
        return True

    def read(self) -> tuple[bytes, int, bool] | None:
        """The next block's complete lines as frames, the last seq, and whether the run ended."""
        assert self._fd is not None
        data = os.pread(self._fd, self.BLOCK, self._offset)
        end = data.rfind(b"\n")
        if end < 0:
            if len(data) < self.BLOCK:
                return None
            # A line longer than a block: say it is damaged and move past it.
            more = _skip_line(self._fd, self._offset + len(data))
            if more is None:
                return None
            frame = damaged_frame(self._offset, "line is over the limit", data)
            self._offset = more
            return frame, 0, False
        frames: list[bytes] = []
        last_seq = 0
        ended = False
        position = self._offset
        for line in data[:end].split(b"\n"):
            if line.strip():
                frame, head = line_frame(line, position)
                frames.append(frame)
                if head is not None:
                    last_seq = head.seq
                    ended = head.type == "run_completed"
            position += len(line) + 1
        self._offset += end + 1
        return b"".join(frames), last_seq, ended

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _skip_line(fd: int, offset: int) -> int | None:
    while True:
        data = os.pread(fd, 1024 * 1024, offset)
        if not data:
            return None
        newline = data.find(b"\n")
        if newline >= 0:
            return offset + newline + 1
        offset += len(data)


__all__ = ["OPEN_LEDGERS", "LedgerFrames", "LedgerUnreadable", "RunHistory"]
