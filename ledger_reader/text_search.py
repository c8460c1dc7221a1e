"""Finding words in the files runs are read from: bytes first, JSON only where they may be.

A run's files (ledgers, and coding agents' session files) are JSON, and a
word is written escaped in them: ``say "hi"`` as ``say \\"hi\\"``, ``é`` as
itself or as ``\\u00e9``, a newline as ``\\n``. So a :class:`Phrase` looks
for *anchors*: the longest stretch of the words every JSON writer writes as
it is (ASCII letters, digits, spaces and most punctuation), or, where there
is no such stretch long enough, each escaped form the words can take. Only a
line an anchor is in is decoded, and the phrase is looked for in the strings
it holds (values, not keys): a phrase is found inside one string, never
across two.

Case: a phrase without a capital letter ignores the case of the letters A to
Z (``timeout`` finds ``Timeout``); one with a capital is matched as written
(smart case, as ripgrep's ``--smart-case``). The bytes are folded for that
with one numpy pass (``| 0x20``, which folds more than letters: the decoded
check then decides).

A file is read in blocks that end at a line end (:class:`FileSearch`): a JSON
string never holds a raw newline, so no phrase is ever cut by a block. A torn
last line is not read (it is no event yet); a line over ``max_line_bytes`` is
skipped without being held, as the readers skip it. Files are read with
``pread``, never mapped: a file truncated under a mapping kills the reader
with ``SIGBUS`` (:mod:`ledger_reader.file`).
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

import msgspec

from ledger_reader.events import MAX_LINE_BYTES
from ledger_reader.lines import open_ledger_fd

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

BLOCK: Final = 1024 * 1024
"""Bytes read and searched at a time: a search in one block holds the GIL about 0.5 ms."""

PLAIN: Final = frozenset(chr(code) for code in range(0x20, 0x7F)) - set('"\\/<>&')
"""Characters every JSON writer writes as they are (``/`` may be ``\\/``; Go escapes ``<>&``)."""

SHORTEST_ANCHOR: Final = 3
"""A plain stretch shorter than this is no anchor: the escaped forms are looked for instead."""

_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

_LITERAL: Final = re.compile(rb'"((?:[^"\\\n]|\\.)*)"(\s*:)?')
"""A JSON string in a line that does not decode whole, and the colon after it if a key."""

_RECOVERY_ATTEMPTS: Final = 64
"""``{"`` positions tried as the start of a whole value in a line that does not decode."""


_PLAIN_STRETCH: Final = re.compile("[" + re.escape("".join(sorted(PLAIN))) + "]+")


def _fold(data: bytes) -> bytes:
    """``data`` with every byte's ``0x20`` bit set: ``A`` is ``a``, as the blocks are folded."""
    import numpy as np

    folded: bytes = np.bitwise_or(np.frombuffer(data, np.uint8), 0x20).tobytes()
    return folded


def _escaped_forms(text: str) -> list[bytes]:
    """``text`` as JSON writers write it inside a string: non-ASCII raw, or ``\\u`` escaped
    with lower or upper case hex."""
    raw = json.dumps(text, ensure_ascii=False)[1:-1].encode()
    ascii_lower = json.dumps(text)[1:-1]
    ascii_upper = re.sub(r"\\u([0-9a-f]{4})", lambda hexes: "\\u" + hexes[1].upper(), ascii_lower)
    return list(dict.fromkeys([raw, ascii_lower.encode(), ascii_upper.encode()]))


def _anchors(text: str) -> list[bytes]:
    longest = max(_PLAIN_STRETCH.findall(text), key=len, default="")
    if longest == text or len(longest) >= SHORTEST_ANCHOR:
        return [longest.encode()]
    return _escaped_forms(text)


class Phrase:
    """Words to find, as typed: their anchors and the check of a candidate line.

    Args:
        text: the words, matched as one exact phrase.

    Raises:
        ValueError: ``text`` is empty.
    """

    __slots__ = ("anchors", "case_sensitive", "needle", "text")

    def __init__(self, text: str) -> None:
        if not text:
            raise ValueError("an empty phrase")
        self.text = text
        self.case_sensitive = text.translate(_ASCII_LOWER) != text
        """A capital letter in the words: matched as written."""
        self.needle = text if self.case_sensitive else text.translate(_ASCII_LOWER)
        """What a string is searched for (folded, if case is ignored)."""
        anchors = _anchors(text)
        self.anchors: tuple[bytes, ...] = tuple(
            anchors if self.case_sensitive else dict.fromkeys(_fold(a) for a in anchors)
        )
        """Bytes one of which a line must hold to be decoded (folded, if case is ignored)."""

    def __repr__(self) -> str:
        return f"Phrase({self.text!r})"

    def in_text(self, text: str) -> bool:
        """Whether ``text`` (decoded) holds the phrase."""
        return self.needle in (text if self.case_sensitive else text.translate(_ASCII_LOWER))

    def in_line(self, line: bytes) -> bool:
        """Whether one of the strings of a JSON line holds the phrase.

        A line that does not decode (damaged, or one line of a JSON document
        written over many) is searched in the strings it holds, and in a whole
        value it may end in (a writer that reopens a file after a crash appends
        straight after a torn line).
        """
        try:
            return self._in_value(msgspec.json.decode(line))
        except (msgspec.DecodeError, RecursionError, ValueError, OverflowError):
            pass
        for literal in _LITERAL.finditer(line):
            if literal[2] is not None:
                continue  # a key
            try:
                if self.in_text(msgspec.json.decode(b'"' + literal[1] + b'"', type=str)):
                    return True
            except msgspec.DecodeError:
                continue
        start = 1
        for _ in range(_RECOVERY_ATTEMPTS):
            at = line.find(b'{"', start)
            if at == -1:
                break
            try:
                return self._in_value(msgspec.json.decode(line[at:]))
            except (msgspec.DecodeError, RecursionError, ValueError, OverflowError):
                start = at + 1
        return False

    def _in_value(self, value: Any) -> bool:
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                if self.in_text(item):
                    return True
            elif isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        return False


Folded = tuple["npt.NDArray[np.uint8]", bytearray, "npt.NDArray[np.uint8]"]
"""A block's bytes as numpy sees them, and the buffer its folded copy is made in, twice."""

_FREE: dict[int, list[tuple[bytearray, Folded]]] = {}
"""Blocks no search is using, by size: a new 1 MiB buffer for each of 2,000 files cost
more in page faults than the search of its bytes (``bench/search.py``)."""
_FREE_LOCK: Final = threading.Lock()
_FREE_KEPT: Final = 4
"""Pairs of blocks kept per size: one per search running at once, a few at most."""


def _take(size: int) -> tuple[bytearray, Folded]:
    """A block of ``size`` bytes, and its folded twin, for one search to use until it ends."""
    with _FREE_LOCK:
        free = _FREE.get(size)
        if free:
            return free.pop()
    import numpy as np

    raw, scratch = bytearray(size), bytearray(size)
    return raw, (np.frombuffer(raw, np.uint8), scratch, np.frombuffer(scratch, np.uint8))


def _give_back(size: int, blocks: tuple[bytearray, Folded]) -> None:
    with _FREE_LOCK:
        free = _FREE.setdefault(size, [])
        if len(free) < _FREE_KEPT:
            free.append(blocks)


class LineTest(Protocol):
    """What :class:`FileSearch` looks for: a :class:`Phrase`, or any such test of lines."""

    @property
    def anchors(self) -> tuple[bytes, ...]:
        """Bytes one of which a line must hold to be checked (folded, if case is ignored)."""
        ...

    @property
    def case_sensitive(self) -> bool:
        """The anchors are as written (else folded, and looked for in folded bytes)."""
        ...

    def in_line(self, line: bytes) -> bool:
        """Whether a line that holds an anchor passes."""
        ...


class Hit(NamedTuple):
    """A line that holds what was searched for."""

    start: int
    """Where it starts in the file."""
    end: int
    """Where its ``\\n`` is."""
    number: int
    """Its line number from 0 (blank and damaged lines count), if the search numbers them;
    else -1."""
    line: bytes
    """The line, without its ``\\n``."""


class FileSearch:
    """The lines of one file that pass a test, in file order, read block by block.

    Iterate it for the :class:`Hit` of each such line. :attr:`searched` says how
    far it got: every complete line before it was searched, so a file that grew
    is searched again from there.

    Args:
        path: the file.
        test: what to find: a :class:`Phrase`.
        start: where to start (a line start: 0, or a :attr:`searched` of before).
        numbered: count lines, to give each hit its number (``start`` must be 0, or
            ``first_line`` the number of the line at ``start``).
        first_line: the number of the line at ``start``.
        stop: set to end the search early (another thread may set it).
        last_line: a last line without its ``\\n`` is searched too (a JSON document
            written whole, not a file appended to, whose last line is never torn).
        block: bytes read at a time.
        max_line_bytes: longer lines are skipped unread, as the readers skip them.

    Raises:
        LedgerError: the file cannot be opened (when iteration starts).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        test: LineTest,
        *,
        start: int = 0,
        numbered: bool = False,
        first_line: int = 0,
        stop: threading.Event | None = None,
        last_line: bool = False,
        block: int = BLOCK,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        self.path = path
        self._last_line = last_line
        self.test = test
        self.searched = start
        self.lines = first_line
        """Lines before :attr:`searched` (counted only if ``numbered``)."""
        self.stopped = False
        """The search was stopped before the end of the file."""
        self._numbered = numbered
        self._stop = stop
        self._block = block
        self._max_line_bytes = max_line_bytes

    def __iter__(self) -> Iterator[Hit]:
        fd, _ = open_ledger_fd(self.path)
        blocks = _take(self._block)
        try:
            yield from self._search(fd, *blocks)
        finally:
            os.close(fd)
            _give_back(self._block, blocks)

    def _search(self, fd: int, raw: bytearray, twin: Folded) -> Iterator[Hit]:
        folded = None if self.test.case_sensitive else twin
        view = memoryview(raw)
        numbered = self._numbered
        while not (self._stop is not None and self._stop.is_set()):
            at = self.searched
            got = os.preadv(fd, [view], at)
            cut = raw.rfind(b"\n", 0, got)
            if cut == -1:  # EOF, a torn last line, or a line longer than a block
                if got < self._block and not (self._last_line and got):
                    return
                end = self._line_end(fd, at + got) if got == self._block else at + got
                if end is None and self._last_line:
                    end = os.fstat(fd).st_size
                if end is None:
                    return
                if end - at <= self._max_line_bytes:
                    line = os.pread(fd, end - at, at)
                    if self._passes(line):
                        yield Hit(at, end, self.lines if numbered else -1, line)
                self.searched = end + 1
                self.lines += 1
                continue
            if folded is None:
                haystack: bytes | bytearray = raw
            else:
                import numpy as np

                np.bitwise_or(folded[0][:cut], 0x20, out=folded[2][:cut])
                haystack = folded[1]
            counted = 0
            for start, end in self._candidates(haystack, raw, cut):
                line = bytes(view[start:end])
                if self.test.in_line(line):
                    if numbered:
                        self.lines += raw.count(b"\n", counted, start)
                        counted = start
                    yield Hit(at + start, at + end, self.lines if numbered else -1, line)
            if numbered:
                self.lines += raw.count(b"\n", counted, cut + 1)
            self.searched = at + cut + 1
        self.stopped = True

    def _passes(self, line: bytes) -> bool:
        haystack = line if self.test.case_sensitive else _fold(line)
        if not any(anchor in haystack for anchor in self.test.anchors):
            return False
        return self.test.in_line(line)

    def _candidates(
        self, haystack: bytes | bytearray, raw: bytearray, size: int
    ) -> Iterator[tuple[int, int]]:
        """The spans of the lines in ``raw[:size]`` an anchor is in, each once, in order."""
        anchors = self.test.anchors
        position = 0
        found = [haystack.find(anchor, 0, size) for anchor in anchors]
        while True:
            hits = [hit for hit in found if hit != -1]
            if not hits:
                return
            hit = min(hits)
            start = raw.rfind(b"\n", 0, hit) + 1
            end = raw.find(b"\n", hit, size)
            end = size if end == -1 else end
            if end - start <= self._max_line_bytes:
                yield start, end
            position = end + 1
            found = [
                haystack.find(anchor, position, size) if 0 <= hit_at < position else hit_at
                for anchor, hit_at in zip(anchors, found, strict=True)
            ]

    def _line_end(self, fd: int, at: int) -> int | None:
        """Where the line running on at ``at`` ends; ``None`` if torn (no ``\\n`` yet)."""
        while True:
            chunk = os.pread(fd, self._block, at)
            if not chunk:
                return None
            newline = chunk.find(b"\n")
            if newline != -1:
                return at + newline
            at += len(chunk)


def file_holds(
    path: str | os.PathLike[str],
    phrase: Phrase,
    *,
    start: int = 0,
    stop: threading.Event | None = None,
    last_line: bool = False,
) -> tuple[bool, int]:
    """Whether ``path`` holds ``phrase`` from ``start`` on, and how far it was searched
    (to the found line's end, or to the last complete line).

    Raises:
        LedgerError: the file cannot be opened.
    """
    search = FileSearch(path, phrase, start=start, stop=stop, last_line=last_line)
    for hit in search:
        return True, hit.end + 1
    return False, search.searched
