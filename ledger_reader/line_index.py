"""A ledger file's line index: where its lines end, found by numpy, kept in blocks.

:class:`~ledger_reader.file.LedgerFile` reads a file in chunks with
``pread`` and keeps only the positions of its newlines, 8 bytes a line;
this module holds the two parts that know nothing of ledgers: the scan of
one chunk (:class:`ChunkScanner`, run by worker threads with the GIL
released while numpy compares) and the growing store of line ends
(:class:`LineEnds`).
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

ENDS_BLOCK: Final = 1 << 16
"""Line ends per block of a growing index (512 KiB)."""


class LineEnds:
    """The newline positions of appended lines, in blocks of :data:`ENDS_BLOCK` int64s.

    Blocks are filled in place and never merged or copied once full, so the
    index of a file that grew by 1 GB costs its 8 bytes a line and no more:
    no array twice its size for a moment, nothing the allocator keeps after.
    The first block starts small and doubles until full size (a ledger of a
    few lines costs a few hundred bytes).
    """

    __slots__ = ("_blocks", "_count")

    def __init__(self) -> None:
        self._blocks: list[npt.NDArray[np.int64]] = []
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def append(self, ends: npt.NDArray[np.int64]) -> None:
        import numpy as np

        position, total = 0, len(ends)
        while position < total:
            fill = self._count % ENDS_BLOCK
            if fill == 0:
                self._blocks.append(np.empty(min(ENDS_BLOCK, max(256, total)), np.int64))
            block = self._blocks[-1]
            if fill + (total - position) > len(block) and len(block) < ENDS_BLOCK:
                size = min(ENDS_BLOCK, max(2 * len(block), fill + total - position))
                grown = np.empty(size, np.int64)
                grown[:fill] = block[:fill]
                block = self._blocks[-1] = grown
            take = min(len(block) - fill, total - position)
            block[fill : fill + take] = ends[position : position + take]
            position += take
            self._count += take

    def __getitem__(self, number: int) -> int:
        return int(self._blocks[number // ENDS_BLOCK][number % ENDS_BLOCK])


class ChunkScanner:
    """Finds the newlines of one chunk; one reusable buffer per worker thread."""

    def __init__(self, fd: int, stop: threading.Event, chunk: int) -> None:
        self._fd = fd
        self._chunk = chunk
        self._stop = stop
        self._local = threading.local()

    def scan(self, span: tuple[int, int]) -> npt.NDArray[np.int64] | None:
        """Newline positions in ``span`` (offset, length); ``None`` if stopped or cut short."""
        import numpy as np

        if self._stop.is_set():
            return None
        at, length = span
        buffers = getattr(self._local, "buffers", None)
        if buffers is None or len(buffers[0]) < length:
            raw = bytearray(max(length, self._chunk))
            buffers = (raw, np.frombuffer(raw, dtype=np.uint8), np.empty(len(raw), dtype=bool))
            self._local.buffers = buffers
        raw, data, matches = buffers
        try:
            got = os.preadv(self._fd, [memoryview(raw)[:length]], at)
        except OSError:
            return None
        if got < length:
            return None
        found = matches[:length]
        np.equal(data[:length], 10, out=found)
        ends: npt.NDArray[np.int64] = np.flatnonzero(found).astype(np.int64, copy=False)
        ends += at
        return ends
