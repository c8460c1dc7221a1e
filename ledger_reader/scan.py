"""Finding the ledgers under some paths and summarising each (``runtop ls``).

A tree is walked with ``os.scandir`` (plain strings: pathlib costs more
than reading 10,000 heads), following links but never round a loop, and
skipping the control directory.
"""

from __future__ import annotations

import os
import stat as stat_module
import time
from pathlib import Path
from typing import Final

import msgspec

from ledger_reader.errors import (
    LedgerError,
    LedgerGone,
    LedgerUnreadable,
    NoLedgers,
    NotALedgerFile,
    file_kind,
)
from ledger_reader.events import MAX_LINE_BYTES
from ledger_reader.head_tail import LedgerState, read_ledger, read_ledger_state
from ledger_reader.liveness import DEFAULT_STALE_AFTER
from ledger_reader.summary import RunSummary
from ledger_reader.summary_cache import SummaryCache

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


GEMINI_DOCUMENT: Final = ".json"
"""Gemini CLI's session files before its ``.jsonl`` ones: one JSON document, rewritten."""


def find_ledgers(root: Path, errors: list[LedgerError], *, say_skipped: bool = False) -> list[Path]:
    """Every ``*.jsonl`` under ``root``, following links but never round a loop.

    Unreadable subdirectories are reported in ``errors`` and skipped; so,
    with ``say_skipped``, are ``*.jsonl`` entries that are no regular file
    (a FIFO, a socket, a link to nothing). A watcher, which walks the tree
    again every few seconds, leaves them out silently.
    """
    return [Path(name) for name in ledger_names(os.fspath(root), errors, say_skipped=say_skipped)]


def ledger_names(
    root: str,
    errors: list[LedgerError],
    *,
    say_skipped: bool = False,
    sessions: list[str] | None = None,
) -> list[str]:
    """:func:`find_ledgers` as plain strings (a scan of 10,000 files feels pathlib's cost).

    A coding agent's session file (``~/.claude/projects/…/<uuid>.jsonl``, a Codex
    ``rollout-*.jsonl``, Gemini CLI's ``session-*.json`` under ``.gemini``:
    :func:`~ledger_reader.sessions.agent_of`) is no ledger: it is put in ``sessions`` when
    given (to be read as a session), else left out.
    """
    from ledger_reader.sessions import agent_of

    def is_session(path: str, name: str) -> bool:
        # Only in an agent's own folders (or a Codex rollout's name): another writer's
        # ledger may be named by a UUID, as a Claude Code session is. Cheap first: a walk
        # of 10,000 ledgers passes here.
        return (
            name.startswith("rollout-")
            or "/.claude/" in path
            or "/.codex/" in path
            or "/.gemini/" in path
        ) and agent_of(path) is not None

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
                        elif entry.name.endswith(LEDGER_SUFFIX):
                            if is_session(entry.path, entry.name):
                                if sessions is not None and entry.is_file():
                                    sessions.append(entry.path)
                            elif entry.is_file():
                                found.append(entry.path)
                            elif say_skipped:
                                errors.append(_not_a_ledger(entry))
                        elif (
                            sessions is not None
                            and entry.name.endswith(GEMINI_DOCUMENT)
                            and is_session(entry.path, entry.name)
                            and entry.is_file()
                        ):
                            sessions.append(entry.path)  # Gemini CLI's one JSON document
                    except OSError as error:
                        errors.append(error_for(Path(entry.path), error))
        except OSError as error:
            errors.append(error_for(Path(directory), error))
    return found


def _not_a_ledger(entry: os.DirEntry[str]) -> LedgerError:
    """Why a ``*.jsonl`` entry that is no regular file was skipped."""
    try:
        return NotALedgerFile(entry.path, file_kind(os.stat(entry.path).st_mode))
    except FileNotFoundError:
        pass  # a link to nothing
    except OSError as error:
        return error_for(Path(entry.path), error)
    try:
        target = os.readlink(entry.path)
    except OSError:
        return LedgerGone(entry.path)
    return NotALedgerFile(entry.path, f"a link to {target}, which is not there")


def error_for(path: Path, error: OSError) -> LedgerError:
    if isinstance(error, FileNotFoundError):
        return LedgerGone(path)
    return LedgerUnreadable(path, error)


def _ledger_files(
    paths: list[Path], errors: list[LedgerError], sessions: list[str] | None = None
) -> list[str]:
    """The ledger files ``paths`` name (files, or directories walked), errors noted; the
    coding agents' session files found on the way go to ``sessions``."""
    files: list[str] = []
    for path in paths:
        try:
            info = path.stat()
        except OSError as error:
            errors.append(error_for(path, error))
            continue
        if stat_module.S_ISDIR(info.st_mode):
            before = len(errors)
            held = len(sessions) if sessions is not None else 0
            found = ledger_names(os.fspath(path), errors, say_skipped=True, sessions=sessions)
            some = found or (sessions is not None and len(sessions) > held)
            if not some and len(errors) == before:
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


def scan_summaries(
    paths: list[Path],
    *,
    now: float | None = None,
    stale_after: float = DEFAULT_STALE_AFTER,
    max_line_bytes: int = MAX_LINE_BYTES,
    cache: SummaryCache | None = None,
) -> tuple[list[RunSummary], list[LedgerError]]:
    """Every run under ``paths``, newest first, and what could not be read.

    What ``scan_paths(paths).summaries(now)`` gives, for a command that
    lists many ledgers once and exits (``runtop ls``): each ledger is read
    once (:func:`~ledger_reader.head_tail.read_ledger`), and no state is kept
    for following them.

    With a ``cache`` (unless made for another ``max_line_bytes``), a ledger whose
    entry still holds is not read: its summary is the cached one with
    liveness judged now; the others are read and stored, and the cache is
    written at the end (:mod:`ledger_reader.summary_cache`).
    """
    from ledger_reader.sessions import is_session_place, session_summaries

    now = time.time() if now is None else now
    if cache is not None and cache.max_line_bytes != max_line_bytes:
        cache = None  # its summaries were read with another idea of a damaged line
    sessions = [os.fspath(path) for path in paths if is_session_place(path)]
    paths = [path for path in paths if os.fspath(path) not in sessions]
    found: list[str] = []
    errors: list[LedgerError] = []
    files = _ledger_files(paths, errors, found)
    summaries, unread = session_summaries([*sessions, *found], now, cache=cache)
    errors.extend(unread)
    if cache is not None:
        unread_files: list[str] = []
        for file in files:
            cached = cache.summary(file, now=now, stale_after=stale_after)
            if cached is not None:
                summaries.append(cached)
            else:
                unread_files.append(file)
        files = unread_files
    for file in files:
        try:
            read = read_ledger(file, max_line_bytes=max_line_bytes)
        except LedgerError as error:
            errors.append(error)
            continue
        if cache is not None:
            cache.store(file, read)
        summaries.append(read.judged(now, stale_after))
    if cache is not None:
        cache.save()
    summaries.sort(key=lambda summary: (summary.started, summary.run_id), reverse=True)
    return summaries, errors
