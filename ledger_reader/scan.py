"""Finding the ledgers under some paths and summarising each (``runtop ls``).

A tree is walked with ``os.scandir`` (plain strings: pathlib costs more
than reading 10,000 heads), following links but never round a loop, and
skipping the control directory.
"""

from __future__ import annotations

import os
import stat as stat_module
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Final

import msgspec

from ledger_reader.errors import LedgerError, LedgerGone, LedgerUnreadable, NoLedgers
from ledger_reader.events import MAX_LINE_BYTES
from ledger_reader.head_tail import LedgerState, read_ledger_state
from ledger_reader.liveness import DEFAULT_STALE_AFTER
from ledger_reader.summary import RunSummary

LEDGER_SUFFIX: Final = ".jsonl"
CONTROL_DIR: Final = ".control"


class ScanResult(msgspec.Struct):
    """The ledgers found under some paths, and what could not be read."""

    states: dict[str, LedgerState] = msgspec.field(default_factory=dict)
    """By path, as a string."""
    errors: list[LedgerError] = msgspec.field(default_factory=list)

    def summaries(self, now: float | None = None) -> list[RunSummary]:
        """Every run found, newest first."""
        found = [state.summary(now) for state in self.states.values()]
        found.sort(key=lambda summary: (summary.started, summary.run_id), reverse=True)
        return found


def find_ledgers(root: Path, errors: list[LedgerError]) -> list[Path]:
    """Every ``*.jsonl`` under ``root``, following links but never round a loop.

    Unreadable subdirectories are reported in ``errors`` and skipped.
    """
    return [Path(name) for name in ledger_names(os.fspath(root), errors)]


def ledger_names(root: str, errors: list[LedgerError]) -> list[str]:
    """:func:`find_ledgers` as plain strings (a scan of 10,000 files feels pathlib's cost)."""
    found: list[str] = []
    seen: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            info = os.stat(directory)
        except OSError as error:
            errors.append(error_for(Path(directory), error))
            continue
        key = (info.st_dev, info.st_ino)
        if key in seen:
            continue
        seen.add(key)
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir():
                            if entry.name != CONTROL_DIR:
                                stack.append(entry.path)
                        elif entry.name.endswith(LEDGER_SUFFIX) and entry.is_file():
                            found.append(entry.path)
                    except OSError as error:
                        errors.append(error_for(Path(entry.path), error))
        except OSError as error:
            errors.append(error_for(Path(directory), error))
    return found


def error_for(path: Path, error: OSError) -> LedgerError:
    if isinstance(error, FileNotFoundError):
        return LedgerGone(path)
    return LedgerUnreadable(path, error)


def _ledger_files(paths: list[Path], errors: list[LedgerError]) -> list[str]:
    """The ledger files ``paths`` name (files, or directories walked), errors noted."""
    files: list[str] = []
    for path in paths:
        try:
            info = path.stat()
        except OSError as error:
            errors.append(error_for(path, error))
            continue
        if stat_module.S_ISDIR(info.st_mode):
            before = len(errors)
            found = ledger_names(os.fspath(path), errors)
            if not found and len(errors) == before:
                errors.append(NoLedgers(path))
            files.extend(found)
        else:
            files.append(os.fspath(path))
    return files


def scan_paths(
    paths: list[Path],
    *,
    stale_after: float = DEFAULT_STALE_AFTER,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> ScanResult:
    """Summarise every ledger under ``paths`` (files or directories).

    A path that does not exist, cannot be read, or holds no ledger is
    reported in the result's errors; the others are still read.
    """
    result = ScanResult()
    for file in _ledger_files(paths, result.errors):
        try:
            result.states[file] = read_ledger_state(
                file, stale_after=stale_after, max_line_bytes=max_line_bytes
            )
        except LedgerError as error:
            result.errors.append(error)
    return result


FORK_AT: Final = 2000
"""Ledgers from which :func:`scan_summaries` shares the reading among processes."""


class _Share(msgspec.Struct, array_like=True):
    """What a forked process sends back: its summaries and its errors."""

    summaries: list[RunSummary]
    errors: list[tuple[str, str, str]]
    """(kind, path, reason) of each error."""


def _summarise(
    files: list[str], now: float, stale_after: float, max_line_bytes: int
) -> tuple[list[RunSummary], list[LedgerError]]:
    summaries: list[RunSummary] = []
    errors: list[LedgerError] = []
    for file in files:
        try:
            state = read_ledger_state(file, stale_after=stale_after, max_line_bytes=max_line_bytes)
        except LedgerError as error:
            errors.append(error)
        else:
            summaries.append(state.summary(now))
    return summaries, errors


def _error_record(error: LedgerError) -> tuple[str, str, str]:
    reason = error.reason if isinstance(error, LedgerUnreadable) else str(error)
    return type(error).__name__, str(error.path), reason


def _error_from(kind: str, path: str, reason: str) -> LedgerError:
    if kind == "LedgerGone":
        return LedgerGone(path)
    return LedgerUnreadable(path, reason)


def scan_summaries(
    paths: list[Path],
    *,
    now: float | None = None,
    stale_after: float = DEFAULT_STALE_AFTER,
    max_line_bytes: int = MAX_LINE_BYTES,
    workers: int | None = None,
    fork_at: int = FORK_AT,
) -> tuple[list[RunSummary], list[LedgerError]]:
    """Every run under ``paths``, newest first, and what could not be read.

    What ``scan_paths(paths).summaries(now)`` gives, for a command that
    lists many ledgers once and exits (``runtop ls``): from ``fork_at``
    ledgers on, they are shared among ``workers`` processes (default: one
    per CPU). Each forked process summarises its share and writes the
    summaries, msgspec-encoded, to a temporary file it inherited; reading
    10,000 small ledgers is CPU work (decoding), so two cores take half the
    time. Only a process without threads forks (a fork copies no threads,
    and a lock one held stays held forever in the child); a share whose
    process fails is read here instead, so the answer is the same either
    way.
    """
    errors: list[LedgerError] = []
    files = _ledger_files(paths, errors)
    now = time.time() if now is None else now
    count = workers if workers is not None else (os.cpu_count() or 1)
    if count < 2 or len(files) < fork_at or threading.active_count() > 1:
        summaries, failed = _summarise(files, now, stale_after, max_line_bytes)
    else:
        summaries, failed = _summarise_in_processes(files, count, now, stale_after, max_line_bytes)
    errors.extend(failed)
    summaries.sort(key=lambda summary: (summary.started, summary.run_id), reverse=True)
    return summaries, errors


def _summarise_in_processes(
    files: list[str], count: int, now: float, stale_after: float, max_line_bytes: int
) -> tuple[list[RunSummary], list[LedgerError]]:
    shares = [files[number::count] for number in range(count)]
    children: list[tuple[int, IO[bytes], list[str]]] = []
    for share in shares[1:]:
        output = tempfile.TemporaryFile()  # noqa: SIM115 (closed once its process is done)
        try:
            pid = os.fork()
        except OSError:
            children.append((-1, output, share))  # no process: read here, below
            continue
        if pid == 0:  # the child: its share, to the file, and out without cleanup
            status = 1
            try:
                summaries, failed = _summarise(share, now, stale_after, max_line_bytes)
                records = [_error_record(error) for error in failed]
                output.write(msgspec.msgpack.encode(_Share(summaries, records)))
                output.flush()
                status = 0
            finally:
                os._exit(status)
        children.append((pid, output, share))
    summaries, errors = _summarise(shares[0], now, stale_after, max_line_bytes)
    for pid, written, share in children:
        with written:
            received = _collect(pid, written)
        if received is None:  # the process failed: read its share here
            more, failed = _summarise(share, now, stale_after, max_line_bytes)
        else:
            more = received.summaries
            failed = [_error_from(*record) for record in received.errors]
        summaries.extend(more)
        errors.extend(failed)
    return summaries, errors


def _collect(pid: int, output: IO[bytes]) -> _Share | None:
    """What a forked process wrote, once it exited cleanly; ``None`` if it did not."""
    if pid < 0:
        return None
    _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    output.seek(0)
    try:
        return msgspec.msgpack.decode(output.read(), type=_Share)
    except msgspec.DecodeError:
        return None
