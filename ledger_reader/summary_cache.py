"""What each ledger's bytes say, kept between listings, the way ``git status`` keeps an index.

A listing of 10,000 ledgers spends most of its time reading and folding
lines that have not changed since the last listing. The cache keeps, per
ledger, only what the file's bytes determine: the summary before liveness
(counts, the status as written, a pending approval), whether the run
finished and how many torn bytes follow its last line. An entry is keyed by
the file's identity and change stamps ``(st_dev, st_ino, st_size,
st_mtime_ns, st_ctime_ns)``, looked at through an open descriptor (opening
revalidates a network file system's cached attributes); the whole cache by
a fingerprint of this package's own source (any change to the reader
invalidates every entry), of msgspec's and Python's versions, and by the
line limit. Liveness (quiet time
from the write time and now, the writer's lock, approval deadlines) is judged
afresh on every listing, exactly as without the cache.

It never lies and never crashes:

- an entry is used only when every stamp matches: an append changes the
  size and the times, a file replaced in place (same size) has a new inode
  and ctime;
- a ledger changed less than :data:`RACY_SECONDS` before the listing began
  is not stored (git's "racily clean" entries): file system clocks tick
  coarsely (a jiffy on ext4, 2 s for FAT's write time), so two writes within
  one tick can leave every stamp alike;
- the file carries a checksum of what follows its header; a missing,
  corrupt, truncated, foreign or unreadable cache (a symlink or a directory
  where the file should be included) is ignored, and the listing made as
  without it;
- it is written to a temporary file and renamed over the old one, so a
  concurrent listing reads one whole file or the other; a failed write
  (read-only home, full disk, a directory or a symlink in the way) is
  ignored and leaves nothing behind;
- it is bounded: one file per set of listed paths, holding only the ledgers
  that listing found (ones since deleted are dropped when it is written
  again), at most :data:`MAX_ENTRY_BYTES` for a summary (larger ones, a huge
  input, are read each time), and at most :data:`MAX_CACHE_FILES` files, the
  least recently written removed first.
"""

from __future__ import annotations

import contextlib
import os
import stat as stat_module
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Final

import msgspec

from ledger_reader.events import MAX_LINE_BYTES
from ledger_reader.head_tail import LedgerRead, file_key, judge_summary
from ledger_reader.liveness import writer_holds_lock
from ledger_reader.locations import cache_dir, make_private_dir
from ledger_reader.summary import RunSummary

CACHE_FORMAT: Final = 2
"""Bumped when what is stored changes (2: a summary has its tokens and cost)."""
RACY_SECONDS: Final = 5.0
"""Ledgers changed this recently before a listing are read, not stored (see the module)."""
MAX_ENTRY_BYTES: Final = 64 * 1024
MAX_CACHE_BYTES: Final = 512 * 1024 * 1024
"""A larger file is not read (10,000 typical runs take about 8 MB)."""
MAX_CACHE_FILES: Final = 16
STALE_TEMP_SECONDS: Final = 3600.0
"""A temporary file this old was left by a listing that died mid-write: removed."""

_MAGIC: Final = b"runtop summary cache\n"
_PREFIX: Final = "ls-"
_SUFFIX: Final = ".cache"
_TEMP_SUFFIX: Final = ".tmp"
_READ_ERRORS: Final = (
    OSError,
    msgspec.MsgspecError,
    ValueError,
    TypeError,
    OverflowError,
    RecursionError,
    MemoryError,
)

FileKey = tuple[int, int, int, int, int]


class _Entry(msgspec.Struct, array_like=True, gc=False):
    """One ledger as its bytes were: the summary before liveness, still encoded."""

    key: FileKey
    terminal: bool
    torn_bytes: int
    summary: msgspec.Raw


_entries_decoder: Final = msgspec.msgpack.Decoder(dict[str, _Entry])
_summary_decoder: Final = msgspec.msgpack.Decoder(RunSummary)
_encoder: Final = msgspec.msgpack.Encoder()


def _digest(chunks: Iterable[bytes]) -> str:
    """64 bits of two checksums (zlib is loaded already; hashlib would add its import to
    every ``ls``)."""
    crc, adler = 0, 1
    for chunk in chunks:
        crc = zlib.crc32(chunk, crc)
        adler = zlib.adler32(chunk, adler)
    return f"{crc:08x}{adler:08x}"


def _checksum(body: bytes) -> bytes:
    """The body's CRC-32, which catches damage (not forgery: the home is private) in one
    pass, where both checksums would take two."""
    return f"{zlib.crc32(body):08x}\n".encode()


def reader_fingerprint(package: Path | None = None) -> str | None:
    """What the cached summaries depend on: the reader's source, msgspec and Python.

    ``None`` (no cache) when the source cannot be read: an installation
    without ``.py`` files cannot say whether its reader changed.
    """
    package = Path(__file__).parent if package is None else package
    try:
        names = sorted(
            os.path.relpath(os.path.join(folder, name), package)
            for folder, _, files in os.walk(package)
            for name in files
            if name.endswith(".py")
        )  # its sub-packages too (the coding agents' sessions)
        if not names:
            return None
        chunks = [f"{CACHE_FORMAT} {msgspec.__version__} {sys.version}".encode()]
        for name in names:
            chunks.append(name.encode())
            chunks.append((package / name).read_bytes())
    except OSError:
        return None
    return _digest(chunks)


def cache_file(paths: Iterable[str | os.PathLike[str]], environ: Mapping[str, str] | None) -> Path:
    """The cache of a listing of ``paths``: one file per set of absolute paths."""
    listed = "\0".join(sorted(os.path.abspath(path) for path in paths)).encode()
    return cache_dir(environ) / f"{_PREFIX}{_digest([listed])}{_SUFFIX}"


class SummaryCache:
    """The cached summaries of one listing: loaded whole, used once each, written whole.

    Args:
        path: the cache file.
        fingerprint: see :func:`reader_fingerprint`; ``None`` turns the cache off.
        max_line_bytes: the line limit of the listing's reads (longer lines are damage):
            a cache written with another limit is not used.
        racy_seconds: see :data:`RACY_SECONDS` (tests shorten it).
    """

    def __init__(
        self,
        path: Path,
        fingerprint: str | None,
        *,
        max_line_bytes: int = MAX_LINE_BYTES,
        racy_seconds: float = RACY_SECONDS,
    ) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.max_line_bytes = max_line_bytes
        self._header = (
            b"%s%s %d\n" % (_MAGIC, fingerprint.encode(), max_line_bytes)
            if fingerprint is not None
            else b""
        )
        self._stored_before = time.time_ns() - int(racy_seconds * 1e9)
        self._old: dict[str, _Entry] = {}
        self._new: dict[str, _Entry] = {}
        self._changed = False
        self.hits = 0
        self.misses = 0
        self.loaded_paths: frozenset[str] = frozenset()
        """The ledgers the cache file held entries for when it was read."""
        self._load()

    @classmethod
    def for_listing(
        cls,
        paths: Iterable[str | os.PathLike[str]],
        *,
        max_line_bytes: int,
        environ: Mapping[str, str] | None = None,
    ) -> SummaryCache:
        """The cache of ``runtop ls PATHS``, in :func:`~ledger_reader.locations.cache_dir`."""
        return cls(cache_file(paths, environ), reader_fingerprint(), max_line_bytes=max_line_bytes)

    def _load(self) -> None:
        if self.fingerprint is None:
            return
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            self._changed = True  # missing (or in the way): write one
            return
        try:
            info = os.fstat(fd)
            if not stat_module.S_ISREG(info.st_mode) or info.st_size > MAX_CACHE_BYTES:
                return
            data = os.pread(fd, info.st_size, 0)
            self._old = self._decode(data)
            self.loaded_paths = frozenset(self._old)
        except _READ_ERRORS:
            self._old = {}
            self.loaded_paths = frozenset()
        finally:
            os.close(fd)
        self._changed = not self._old

    def _decode(self, data: bytes) -> dict[str, _Entry]:
        """The entries of a whole cache file of this reader, else nothing."""
        header = self._header
        if not data.startswith(header):
            return {}
        checksum_end = len(header) + 9
        body = data[checksum_end:]
        if data[len(header) : checksum_end] != _checksum(body):
            return {}
        return _entries_decoder.decode(body)

    def summary(
        self,
        path: str,
        *,
        now: float,
        stale_after: float = 0.0,
        judge: Callable[..., RunSummary] | None = None,
    ) -> RunSummary | None:
        """The summary of the ledger at ``path`` if its entry still holds, liveness judged now.

        ``None`` when it must be read: no entry, a stamp changed, or the
        file changed between the look and the lock probe. ``judge`` judges another
        kind of file's liveness (a coding agent's session:
        :func:`~ledger_reader.sessions.judge_session`, from its last write).
        """
        entry = self._old.pop(path, None)
        if entry is None:
            self.misses += 1
            return None
        summary, info, lock_held = self._use(path, entry)
        if summary is None or info is None:
            self.misses += 1
            self._changed = True  # the entry no longer holds: dropped
            return None
        self.hits += 1
        self._new[path] = entry
        if judge is not None:
            return judge(summary, mtime=info.st_mtime, now=now)
        return judge_summary(
            summary,
            mtime=info.st_mtime,
            lock_held=lock_held,
            now=now,
            stale_after=stale_after,
            torn_bytes=entry.torn_bytes,
        )

    @staticmethod
    def _use(
        path: str, entry: _Entry
    ) -> tuple[RunSummary | None, os.stat_result | None, bool | None]:
        """The entry's summary, the file's stat and the lock probe, if the entry holds.

        The file is opened, not only stat'ed: opening revalidates what a network
        file system's client has cached of it (close-to-open consistency), where
        ``stat`` may answer from that cache for up to a minute. The lock is
        probed through the same descriptor, of the very file the entry describes.
        """
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return None, None, None  # the read says why
        try:
            info = os.fstat(fd)
            if file_key(info) != entry.key:
                return None, None, None
            summary = _summary_decoder.decode(entry.summary)
            if summary.writer != "runtop" or entry.terminal:
                return summary, info, None
            return summary, info, writer_holds_lock(fd)
        except _READ_ERRORS:
            return None, None, None
        finally:
            os.close(fd)

    def store(self, path: str, read: LedgerRead) -> None:
        """Keep what ``read`` found (its summary before liveness) unless the file changed too
        lately."""
        key = read.key
        if max(key[3], key[4]) >= self._stored_before:
            return
        try:
            encoded = _encoder.encode(read.summary)
        except (TypeError, ValueError, OverflowError):  # an input msgpack cannot hold
            return
        if len(encoded) <= MAX_ENTRY_BYTES:
            self._new[path] = _Entry(key, read.terminal, read.torn_bytes, msgspec.Raw(encoded))
            self._changed = True

    def store_summary(self, path: str, key: FileKey, summary: RunSummary) -> None:
        """Keep the summary (before liveness) of a file that is not a ledger (a coding
        agent's session), read when its stamps were ``key``."""
        self.store(path, LedgerRead(key, 0.0, None, 0, False, summary))

    def save(self) -> None:
        """Write the entries this listing used or made, if they differ from the file's."""
        if self.fingerprint is None or not (self._changed or self._old):
            return  # every entry read was used, none was added or dropped
        try:
            body = _encoder.encode(self._new)
            directory = self.path.parent
            make_private_dir(directory)
            try:
                in_the_way = not stat_module.S_ISREG(os.lstat(self.path).st_mode)
            except FileNotFoundError:
                in_the_way = False
            if in_the_way:
                return  # a directory or a symlink someone put there: theirs, left alone
            _write_atomically(self.path, [self._header, _checksum(body), body])
            _tidy(directory, keep=self.path.name)
        except _READ_ERRORS:
            return  # a cache that cannot be written is only slower


def _write_atomically(path: Path, chunks: list[bytes]) -> None:
    """Write a temporary file beside ``path`` and rename it over ``path``; never half a file."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{time.time_ns()}{_TEMP_SUFFIX}")
    fd = os.open(
        temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
    )
    try:
        try:
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _tidy(directory: Path, *, keep: str) -> None:
    """Remove the least recently written caches beyond :data:`MAX_CACHE_FILES`, and dead temps."""
    caches: list[tuple[int, str]] = []
    dead_before = time.time() - STALE_TEMP_SECONDS
    with os.scandir(directory) as entries:
        for entry in entries:
            name = entry.name
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                if name.startswith("." + _PREFIX) and name.endswith(_TEMP_SUFFIX):
                    if entry.stat(follow_symlinks=False).st_mtime < dead_before:
                        os.unlink(entry.path)
                elif name.startswith(_PREFIX) and name.endswith(_SUFFIX) and name != keep:
                    caches.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.path))
            except OSError:
                continue
    caches.sort()
    for _, path in caches[: max(0, len(caches) - (MAX_CACHE_FILES - 1))]:
        with contextlib.suppress(OSError):
            os.unlink(path)


__all__ = [
    "MAX_CACHE_FILES",
    "MAX_ENTRY_BYTES",
    "RACY_SECONDS",
    "SummaryCache",
    "cache_file",
    "reader_fingerprint",
]
