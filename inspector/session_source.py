"""Coding agents' sessions (Claude Code, Codex CLI, Gemini CLI) as a live source of runs.

Each session file is a run (its sub-agents' files, child runs), read through
:mod:`ledger_reader.sessions` as every reader reads it. The first screen
comes from each file's head and tail (a home of thousands of sessions opens
in well under a second); every file is then read whole, the newest first, a
batch at a time, for its counts and tokens. Files written lately are followed
as they grow (their events kept, to be served by position); the others keep
only their summary and are read again when a run of theirs is opened.

One watcher covers each folder's tree. A model response is folded when the
next begins or the file goes quiet for :data:`SETTLE` seconds, and how live a
session is (:mod:`ledger_reader.sessions.status`) is judged again every
:data:`TICK` seconds. runtop only reads these files: the agents run in their
own terminals, so cancel, resume and approve say where to do them instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import ClassVar, Final

from inspector.source import RunSource, RunUpdate, SourceError, SourceUpdate
from ledger_reader import LedgerError, LedgerItem, RunSummary
from ledger_reader.sessions import SessionFile, agent_of, find_sessions, quick_summary

SETTLE: Final = 2.0
"""Seconds of quiet after which a response still held open is folded as it stands."""
TICK: Final = 1.0
"""How often followed sessions are looked at without a write (to settle, and to judge)."""
FOLLOW_WINDOW: Final = 600.0
"""Sessions written in the last this many seconds are followed from the start..."""
FOLLOW_LIMIT: Final = 32
"""... the newest this many of them: a followed session keeps its events."""
DETAILED: Final = 200
"""The newest sessions (and every followed one) whose events the store folds again for
their tool counts; the others show the totals their whole read gave."""
FIRST_STEP: Final = 64
"""Sessions looked at (head and tail) before the first of them are reported: more than a
screenful, as few as that (each costs a couple of milliseconds)."""
BATCH: Final = 64
"""Sessions read whole between two updates of the first load."""
OPENED: Final = 4
"""Sessions not followed whose events are kept after a run of theirs was opened."""
NOTICE_MS: Final = 10
"""How soon the watcher hands over what it saw (ms): a write is on screen within a frame."""


class SessionSource(RunSource):
    """The coding agents' sessions under some folders (or just some files of them), live.

    Args:
        roots: folders of sessions (``~/.claude/projects``, ``~/.codex/sessions``,
            ``~/.gemini/tmp``, or folders inside them).
        only: follow just these session files (``runtop FILE``).
        name: the source's name in the table.
    """

    live: ClassVar[bool] = True

    def __init__(
        self,
        roots: Sequence[str | os.PathLike[str]],
        *,
        only: Sequence[str | os.PathLike[str]] | None = None,
        name: str = "sessions",
        settle: float = SETTLE,
        tick: float = TICK,
    ) -> None:
        super().__init__(name)
        self.roots = [os.path.abspath(root) for root in roots]
        self.only = {os.path.abspath(path) for path in only} if only is not None else None
        self.settle = settle
        self.tick = tick
        self._stop = asyncio.Event()
        self._paths: dict[str, str] = {}
        """Run id → its session file."""
        self._runs: dict[str, str] = {}
        """Session file → its run id."""
        self._followed: dict[str, SessionFile] = {}
        self._opened: OrderedDict[str, SessionFile] = OrderedDict()
        self._reported: dict[str, RunSummary] = {}
        self._read_whole = 0
        """Sessions read whole so far (the newest first)."""

    def describe(self) -> str:
        return "the coding agents' sessions in " + ", ".join(self.roots)

    # -- reading --------------------------------------------------------------------

    def _files(self) -> list[str]:
        if self.only is not None:
            return sorted(path for path in self.only if os.path.isfile(path))
        found: list[str] = []
        for root in self.roots:
            found.extend(find_sessions(root))
        return found

    def _newest_first(self) -> list[str]:
        """The session files, the most recently written first (blocking)."""
        stamped: list[tuple[float, str]] = []
        for path in self._files():
            with contextlib.suppress(OSError):
                stamped.append((os.stat(path).st_mtime, path))
        stamped.sort(reverse=True)
        return [path for _, path in stamped]

    def _quick(self, files: list[str]) -> tuple[list[RunUpdate], list[LedgerError]]:
        """The head-and-tail summaries of ``files`` (blocking)."""
        runs: list[RunUpdate] = []
        errors: list[LedgerError] = []
        now = time.time()
        for path in files:
            try:
                summary = quick_summary(path, now)
            except LedgerError as error:
                errors.append(error)
                continue
            runs.append(self._note(path, summary))
        return runs, errors

    def _note(self, path: str, summary: RunSummary, **fields: object) -> RunUpdate:
        run_id = summary.run_id or os.path.basename(path)
        summary.run_id = run_id
        self._paths[run_id] = path
        self._runs[path] = run_id
        self._reported[run_id] = summary
        return RunUpdate(run_id, summary, **fields)  # type: ignore[arg-type]

    def _whole(self, paths: list[str]) -> tuple[list[RunUpdate], list[LedgerError]]:
        """Read ``paths`` whole (blocking): recent ones are followed from here on."""
        runs: list[RunUpdate] = []
        errors: list[LedgerError] = []
        now = time.time()
        for path in paths:
            try:
                recent = (
                    now - os.stat(path).st_mtime < FOLLOW_WINDOW
                    and len(self._followed) < FOLLOW_LIMIT
                )
                session = SessionFile(path, keep=recent)
                items, _ = session.poll(final=not recent)
            except (LedgerError, OSError) as error:
                if isinstance(error, LedgerError):
                    errors.append(error)
                continue
            if recent:
                self._followed[path] = session
            self._read_whole += 1
            detailed = recent or self._read_whole <= DETAILED
            runs.append(
                self._note(
                    path,
                    session.summary(now),
                    reset=True,
                    history_count=len(items) if detailed else None,
                )
            )
        return runs, errors

    def _changed(self, paths: set[str], quiet: bool) -> list[RunUpdate]:
        """What the writes to ``paths`` (and, when ``quiet``, the passing time) changed."""
        runs: list[RunUpdate] = []
        now = time.time()
        for path in paths:
            session = self._followed.get(path)
            if session is None:
                runs.extend(self._whole([path])[0])
                self._opened.pop(self._runs.get(path, ""), None)
                continue
            try:
                items, reset = session.poll()
            except LedgerError:
                self._gone(path)
                continue
            update = self._note(path, session.summary(now), items=items)
            if reset:
                update = self._note(
                    path, session.summary(now), reset=True, history_count=len(session.items)
                )
            runs.append(update)
        if quiet:
            runs.extend(self._settle(now, exclude=paths))
        return runs

    def _settle(self, now: float, exclude: set[str]) -> list[RunUpdate]:
        """Fold what quiet followed sessions hold open; say a change of liveness."""
        runs: list[RunUpdate] = []
        for path, session in self._followed.items():
            if path in exclude:
                continue
            before = self._reported.get(self._runs.get(path, ""))
            if before is not None and not before.status.is_live and session.fold.settled():
                continue  # idle, and nothing held: only a write changes it
            items: list[LedgerItem] = []
            if not session.fold.settled() and now - session.mtime >= self.settle:
                items = session.rest()
            summary = session.summary(now)
            if items or before is None or before.status is not summary.status:
                runs.append(self._note(path, summary, items=items))
        return runs

    def _gone(self, path: str) -> None:
        self._followed.pop(path, None)

    # -- the source ---------------------------------------------------------------

    async def updates(self) -> AsyncIterator[SourceUpdate]:
        files = await asyncio.to_thread(self._newest_first)
        runs, errors = await asyncio.to_thread(self._quick, files[:FIRST_STEP])
        yield SourceUpdate(
            runs=runs,
            initial=True,
            pending=len(files),
            status=f"reading {len(files):,} sessions" if files else None,
            error=_error(errors),
        )
        if len(files) > FIRST_STEP:
            more, errors = await asyncio.to_thread(self._quick, files[FIRST_STEP:])
            runs.extend(more)
            yield SourceUpdate(runs=more, pending=len(files), error=_error(errors))
        order = [self._paths[run.run_id] for run in runs]
        changes: asyncio.Queue[set[str]] = asyncio.Queue()
        watcher = asyncio.create_task(self._watch(changes))
        try:
            for start in range(0, len(order), BATCH):
                batch = order[start : start + BATCH]
                runs, errors = await asyncio.to_thread(self._whole, batch)
                left = len(order) - start - len(batch)
                yield SourceUpdate(
                    runs=runs,
                    pending=left,
                    status=f"reading {left:,} sessions" if left else "",
                    error=_error(errors),
                )
            while not self._stop.is_set():
                try:
                    paths = await asyncio.wait_for(changes.get(), self.tick)
                except TimeoutError:
                    paths = set()
                while not changes.empty():
                    paths |= changes.get_nowait()
                runs = await asyncio.to_thread(self._changed, paths, True)
                if runs:
                    yield SourceUpdate(runs=runs)
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    def _watched(self) -> list[str]:
        """The folders the watcher looks at: the roots there are, or the files' folders."""
        if self.only is not None:
            return sorted({os.path.dirname(path) for path in self.only})
        return [root for root in self.roots if os.path.isdir(root)]

    async def _watch(self, changes: asyncio.Queue[set[str]]) -> None:
        from watchfiles import awatch

        roots = await asyncio.to_thread(self._watched)
        if not roots:
            return
        only = self.only

        def wanted(_change: object, path: str) -> bool:
            return (only is None or path in only) and agent_of(path) is not None

        async for batch in awatch(
            *roots,
            stop_event=self._stop,
            debounce=1,
            step=NOTICE_MS,
            recursive=only is None,
            ignore_permission_denied=True,
            watch_filter=wanted,
        ):
            changes.put_nowait({path for _, path in batch})

    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        path = self._paths.get(run_id)
        if path is None:
            raise SourceError(f"no session {run_id} here")
        session = self._followed.get(path) or self._opened.get(run_id)
        if session is None:
            try:
                session = await asyncio.to_thread(_read_whole, path)
            except LedgerError as error:
                raise SourceError(str(error)) from error
            self._opened[run_id] = session
            while len(self._opened) > OPENED:
                self._opened.popitem(last=False)
        else:
            self._opened.move_to_end(run_id) if run_id in self._opened else None
        return session.items[start:stop]

    async def event_count(self, run_id: str) -> int:
        return len(await self.events(run_id, 0, 1 << 62))

    async def close(self) -> None:
        self._stop.set()
        self._followed.clear()
        self._opened.clear()


def _read_whole(path: str) -> SessionFile:
    session = SessionFile(path)
    session.poll(final=True)
    return session


def _error(errors: list[LedgerError]) -> SourceError | None:
    return SourceError("; ".join(str(error) for error in errors[:5])) if errors else None


def session_roots(paths: Sequence[Path]) -> list[Path]:
    """Those of ``paths`` that are coding agents' session folders."""
    from ledger_reader.sessions import agent_of_folder

    return [path for path in paths if path.is_dir() and agent_of_folder(path) is not None]


__all__ = ["SETTLE", "TICK", "SessionSource", "session_roots"]
