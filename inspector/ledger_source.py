"""Runs from ledger directories, followed as files grow, and from ledger files replayed."""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import ClassVar, Final, NamedTuple

import msgspec

from inspector.model import TrackedRun
from inspector.source import (
    ACTED_BY,
    ActionRefused,
    RunSource,
    RunUpdate,
    SourceError,
    SourceUpdate,
)
from ledger_reader import (
    DamagedLine,
    LedgerDirectory,
    LedgerError,
    LedgerFile,
    LedgerItem,
    RunSummary,
    event_of,
    is_valid_run_id,
)
from ledger_reader.control import request_approve, request_cancel, request_resume
from ledger_reader.events import LlmCall
from ledger_reader.head_tail import writer_gone
from ledger_reader.lines import read_ledger_lines
from ledger_reader.liveness import judge_liveness, ledger_lock_held, writer_exited
from ledger_reader.sessions import agent_of, read_session
from ledger_reader.summary import run_id_from_path
from ledger_reader.totals import RunTotals

_OPEN_FILES: Final = 8
"""Ledger files kept open (with their index) for range reads: the runs being looked at."""
SEQ_SEARCH_LIMIT: Final = 10_000
"""Ranges up to this many events are found by seq before the index is built."""
QUICK_COUNT_BYTES: Final = 16 * 1024 * 1024
"""Ledgers past this size are counted by their last seq until their index is built."""
GATHER: Final = 0.05
"""While ledgers keep growing, they are read at most this often: the store shows
changes at most every 50 ms (its flush interval), so reading more often only
splits the same lines into more, smaller updates."""
NOTICE: Final = 0.01
"""How soon a write to a quiet ledger is noticed: well within a frame, and the watcher
looks ten times less often while nothing is written than at the library's default."""


class LedgerFiles:
    """Opened ledgers for range reads, the most recently used kept open."""

    def __init__(self, limit: int = _OPEN_FILES) -> None:
        self.limit = limit
        self._open: dict[str, LedgerFile] = {}

    def get(self, path: str) -> LedgerFile:
        """The open ledger (opened now if need be; its index is started by the caller)."""
        ledger = self._open.pop(path, None)
        if ledger is None:
            ledger = LedgerFile(path)
        self._open[path] = ledger
        while len(self._open) > self.limit:
            oldest = next(iter(self._open))
            self._open.pop(oldest).close()
        return ledger

    def forget(self, path: str) -> None:
        """Close the ledger at ``path``, if it is open (its file is gone or replaced)."""
        ledger = self._open.pop(path, None)
        if ledger is not None:
            ledger.close()

    def close(self) -> None:
        """Close every open ledger."""
        for ledger in self._open.values():
            ledger.close()
        self._open.clear()


def read_range(
    files: LedgerFiles, path: str, start: int, stop: int, *, torn_tail: bool = False
) -> list[LedgerItem]:
    """Items ``start``..``stop`` of a ledger, by line, blank lines left out (blocking).

    With ``torn_tail`` (the writer is gone) a torn last line is one more line, damaged.
    """
    ledger = files.get(path)
    ledger.poll()
    if not ledger.index_complete and stop - start <= SEQ_SEARCH_LIMIT:
        # Before the index is done, find the lines by seq (position n holds seq n + 1 in an
        # undamaged ledger): a first screen of a huge run does not wait for the whole index.
        found = ledger.events_from_seq(start + 1, stop - start)
        ledger.start_indexing()  # after the search: the index's threads would slow it down
        if len(found) == stop - start and found[0].seq == start + 1:
            return list(found)
        ledger.wait_indexed()
    ledger.start_indexing()
    ledger.wait_indexed()
    items = [item for item in ledger.lines(start, stop) if item is not None]
    torn = ledger.torn_line() if torn_tail else None
    if torn is not None and torn.item is not None and start <= ledger.line_count < stop:
        items.append(torn.item)
    return items


def count_lines(files: LedgerFiles, path: str, *, torn_tail: bool = False) -> int:
    """How many lines a ledger has now (blocking, but never waiting for a big index).

    Once the index is built the count is exact. Before, it is the last event's
    ``seq`` (``seq`` has no gaps), and the index is started: a huge run's first
    screen does not wait for it; asked again later, the answer is exact.
    """
    ledger = files.get(path)
    ledger.poll()
    torn = 1 if torn_tail and ledger.torn_line() is not None else 0
    if ledger.index_complete:
        return ledger.line_count + torn
    last = ledger.last_event()
    ledger.start_indexing()
    if last is None or last.seq <= 0 or ledger.size < QUICK_COUNT_BYTES:
        ledger.wait_indexed()
        return ledger.line_count + torn
    return last.seq


class LedgerDirectorySource(RunSource):
    """Every ledger under a directory tree, followed live.

    Cancel, resume and answers to approvals work through control files (LEDGER.md),
    and only for runs whose ``run_started`` names runtop's writer, which honours them.
    """

    live: ClassVar[bool] = True
    can_cancel: ClassVar[bool] = True
    can_resume: ClassVar[bool] = True
    can_approve: ClassVar[bool] = True

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        name: str | None = None,
        stale_after: float = 300.0,
        liveness_interval: float = 1.0,
        only: list[str | os.PathLike[str]] | None = None,
        gather: float = GATHER,
        clock: float | None = None,
    ) -> None:
        self.root = Path(root)
        super().__init__(name or self.root.name or str(self.root))
        self._directory = LedgerDirectory(
            self.root,
            stale_after=stale_after,
            liveness_interval=liveness_interval,
            only=only,
            gather=gather,
            notice=NOTICE,
            clock=clock,
        )
        self._paths: dict[str, str] = {}
        self._gone: set[str] = set()
        """Runs whose writer is known gone: a torn last line of theirs is damage."""
        self._files = LedgerFiles()
        self._stop = asyncio.Event()

    def describe(self) -> str:
        return f"the ledger directory {self.root}"

    async def updates(self) -> AsyncIterator[SourceUpdate]:
        reading = False
        async for change in self._directory.watch(self._stop):
            update = SourceUpdate(
                initial=change.initial, available=change.available, pending=change.pending
            )
            if change.pending:
                reading = True
                update.status = f"reading {change.pending:,} more ledgers"
            elif reading:
                reading = False
                update.status = ""  # read them all: back to saying "live"
            if change.errors:
                update.error = SourceError("; ".join(str(error) for error in change.errors))
            for run in change.changes:
                run_id = run.summary.run_id or run_id_from_path(run.path)
                path = str(run.path)
                if run.reset:
                    self._files.forget(path)
                history = None
                if run_id not in self._paths:  # new here: its earlier lines came as a summary
                    history = self._directory.history_end(run.path)
                self._paths[run_id] = path
                if writer_gone(run.summary):
                    self._gone.add(run_id)
                else:
                    self._gone.discard(run_id)
                update.runs.append(
                    RunUpdate(
                        run_id,
                        run.summary,
                        run.items,
                        run.reset,
                        history_end=history,
                        items_end=run.lines if run.items else None,
                    )
                )
            for removed in change.removed:
                run_id = run_id_from_path(removed)
                self._paths.pop(run_id, None)
                self._files.forget(str(removed))
                update.removed.append(run_id)
            yield update

    def path_of(self, run_id: str) -> str:
        """The ledger file of ``run_id``, as found under the directory.

        Raises:
            SourceError: no ledger of that run has been seen here.
        """
        path = self._paths.get(run_id)
        if path is None:
            raise SourceError(f"no ledger for run {run_id} in {self.root}")
        return path

    def run_file(self, run_id: str) -> str | None:
        return self._paths.get(run_id)

    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        path = self.path_of(run_id)
        try:
            return await asyncio.to_thread(
                functools.partial(read_range, torn_tail=run_id in self._gone),
                self._files,
                path,
                start,
                stop,
            )
        except LedgerError as error:
            raise SourceError(str(error)) from error

    async def event_count(self, run_id: str) -> int:
        path = self.path_of(run_id)
        try:
            return await asyncio.to_thread(
                functools.partial(count_lines, torn_tail=run_id in self._gone), self._files, path
            )
        except LedgerError as error:
            raise SourceError(str(error)) from error

    async def wait_indexed(self, run_id: str) -> bool:
        """Wait until the run's ledger has its full line index (for benchmarks and tests)."""
        ledger = self._files.get(self.path_of(run_id))
        ledger.start_indexing()
        return await asyncio.to_thread(ledger.wait_indexed)

    def refusal(self, action: str, summary: RunSummary) -> str | None:
        if summary.writer != "runtop":
            return "its writer does not take control files (only runtop's does)"
        if action == "resume" and writer_exited(summary):
            return f"its writer (pid {summary.pid}) is gone: nothing would take the request"
        return None

    async def cancel(self, run_id: str, reason: str | None, *, by: str | None = None) -> None:
        """Write a cancel request in ``.control/``: the manager writing the run stops it."""
        if not is_valid_run_id(run_id):
            raise ActionRefused(f"invalid run id {run_id!r}")
        await asyncio.to_thread(
            request_cancel,
            self._control_root(run_id),
            run_id,
            reason=reason,
            source=ACTED_BY,
            requested_by=by,
        )

    async def approve(
        self,
        run_id: str,
        approval_id: str | None,
        approved: bool,
        reason: str | None,
        *,
        by: str | None = None,
    ) -> None:
        """Write an approve request in ``.control/``: the manager writing the run answers."""
        if not is_valid_run_id(run_id):
            raise ActionRefused(f"invalid run id {run_id!r}")
        await asyncio.to_thread(
            functools.partial(
                request_approve,
                self._control_root(run_id),
                run_id,
                approved=approved,
                approval_id=approval_id,
                reason=reason,
                source=ACTED_BY,
                answered_by=by,
            )
        )

    async def resume(self, run_id: str) -> str:
        if not is_valid_run_id(run_id):
            raise ActionRefused(f"invalid run id {run_id!r}")
        await asyncio.to_thread(request_resume, self._control_root(run_id), run_id, source=ACTED_BY)
        return ""  # the new run appears in the directory when a manager takes the request

    def _control_root(self, run_id: str) -> Path:
        """The directory the run's writer watches: the one its ledger is in."""
        return Path(self.path_of(run_id)).parent

    async def close(self) -> None:
        self._stop.set()
        self._files.close()


def _recorded_items(path: Path) -> Iterator[LedgerItem]:
    """What a replay plays of ``path``: a ledger's lines, or a coding agent's session
    folded into the same events, as every reader reads it.

    Raises:
        LedgerError: the file cannot be read.
    """
    if agent_of(path) is not None:
        yield from read_session(str(path)).items
        return
    for line in read_ledger_lines(path):
        if line.item is not None:
            yield line.item


SPEEDS: Final = {"1": 1.0, "2": 2.0, "10": 10.0, "max": 0.0}
"""Replay speeds by name: recorded speed, faster, or at once."""

MAX_PAUSE: Final = 5.0
"""Longest wait between two replayed events at recorded speed (a night's gap is not replayed)."""


class Recording(NamedTuple):
    """What a replay's whole recording holds, known before its first event is played: what
    its runs will come to show (a screen keeps room for it from the start, rather than
    making room as it is played)."""

    damage: bool = False
    """Some ledger line of it could not be read."""
    spending: bool = False
    """Some model call of it said its tokens or cost."""


class ReplaySource(RunSource):
    """Ledger files played back as they happened: at recorded speed, faster, at once, or by step.

    Args:
        paths: ledger files.
        speed: 1.0 is recorded speed, 10.0 ten times faster, 0 all at once.
        step: start paused; :meth:`step` plays one event at a time.
    """

    can_replay: ClassVar[bool] = True

    def __init__(
        self,
        paths: list[str | os.PathLike[str]],
        *,
        speed: float = 1.0,
        step: bool = False,
        name: str = "replay",
        fetched: Iterable[str | os.PathLike[str]] = (),
    ) -> None:
        super().__init__(name)
        self.paths = [Path(path) for path in paths]
        self.fetched = frozenset(Path(path) for path in fetched)
        """Ledgers copied from an attach server: a copy's lock and writer say nothing of the
        run's, so a run they leave unfinished stays as the server said it (running)."""
        self.speed = speed
        self._played: dict[str, TrackedRun] = {}
        """Every replayed event is kept: a replay is of files given by hand, not of a fleet."""
        self._recorded: dict[str, tuple[Path, float]] = {}
        """Each run's ledger and the time of its last event, to judge it once played."""
        self._budget: int | None = 0 if step else None
        """Events still allowed before pausing; ``None`` while playing freely."""
        self._changed = asyncio.Event()
        self._stop = asyncio.Event()
        self.finished = asyncio.Event()
        """Set once every event has been played (cleared by a restart)."""
        self.holding = asyncio.Event()
        """Set while a paused replay waits for play or a step, every event before handed on."""
        self._restart = False
        self.recording = Recording()
        """What the recording holds, once it is read (before its first event is played)."""

    def describe(self) -> str:
        return "a replay"

    @property
    def paused(self) -> bool:
        """Stopped until :meth:`play` or :meth:`step` (a step pauses again after it)."""
        return self._budget is not None

    def pause(self) -> None:
        """Stop playing where the replay is, until :meth:`play` or :meth:`step`."""
        self._budget = 0
        self._changed.set()

    def play(self, speed: float | None = None) -> None:
        """Play freely from here, at ``speed`` (0: at once)."""
        if speed is not None:
            self.speed = speed
        self._budget = None
        self._changed.set()

    def set_speed(self, speed: float) -> None:
        """Play at ``speed`` from the next event (0: at once); paused, it stays paused."""
        self.speed = speed
        self._changed.set()  # the source line says the new speed at once

    def step(self, count: int = 1) -> None:
        """Play the next ``count`` events, then pause."""
        self._budget = (self._budget or 0) + count
        self._changed.set()

    def _load(self) -> tuple[list[tuple[float, int, str, LedgerItem]], list[SourceError]]:
        timeline: list[tuple[float, int, str, LedgerItem]] = []
        errors: list[SourceError] = []
        order = 0
        for path in self.paths:
            # A session's file is named by its session, not its run (a sub-agent's run is
            # <session>.agent-<id>): its events say which run they are.
            run_id = "" if agent_of(path) is not None else run_id_from_path(path)
            last = 0.0
            try:
                for item in _recorded_items(path):
                    event = event_of(item)
                    if not run_id and event is not None:
                        run_id = event.run_id
                    moment = event.timestamp if event is not None else None
                    when = moment.timestamp() if moment is not None else last
                    last = when
                    timeline.append((when, order, run_id or str(path), item))
                    self._recorded[run_id or str(path)] = (path, when)
                    order += 1
            except LedgerError as error:
                errors.append(SourceError(str(error)))
        timeline.sort(key=lambda entry: (entry[0], entry[1]))
        spent = RunTotals()
        for _, _, _, item in timeline:
            event = event_of(item)
            if isinstance(event, LlmCall):
                spent.add_call(event.payload)
        damage = any(isinstance(item, DamagedLine) for _, _, _, item in timeline)
        self.recording = Recording(damage=damage, spending=spent.said)
        return timeline, errors

    def restart(self) -> None:
        """Play again from the first event (a replay played to the end, or not)."""
        self._restart = True
        self._changed.set()

    async def updates(self) -> AsyncIterator[SourceUpdate]:
        timeline, errors = await asyncio.to_thread(self._load)
        reported = self._state()
        first = SourceUpdate(initial=True, status=reported)
        if errors:
            first.error = SourceError("; ".join(str(error) for error in errors))
        yield first
        while not self._stop.is_set():
            async for update in self._play(timeline):
                yield update
            while not self._restart and not self._stop.is_set():
                self._changed.clear()
                await self._changed.wait()
                if not self._restart:  # a new speed, say: said at once
                    yield SourceUpdate(status=self._state())
            if self._stop.is_set():
                return
            yield SourceUpdate(status=self._state())

    async def _play(
        self, timeline: list[tuple[float, int, str, LedgerItem]]
    ) -> AsyncIterator[SourceUpdate]:
        """The timeline once, from its start: each run's first event voids what it had shown."""
        self._restart = False
        self.finished.clear()
        shown = list(self._played)
        self._played.clear()
        reported = self._state()
        if shown:  # played again: nothing is played yet, so nothing is shown (even paused)
            yield SourceUpdate(removed=shown, status=reported)
        previous: float | None = None
        for when, _, run_id, item in timeline:
            while not self._stop.is_set() and not self._restart:
                state = self._state()
                if state != reported:  # paused, played, sped up: the source line says so
                    reported = state
                    yield SourceUpdate(status=state)
                if await self._turn(when, previous):
                    break
            if self._stop.is_set() or self._restart:
                return
            previous = when
            played = self._played.get(run_id)
            fresh = played is None
            if played is None:
                played = self._played[run_id] = TrackedRun(run_id, None, None)
            played.add(item)
            summary = played.builder.summary()
            yield SourceUpdate(runs=[RunUpdate(run_id, summary, [item], reset=fresh)])
        ended = await asyncio.to_thread(self._judged)
        self.finished.set()
        yield SourceUpdate(runs=ended, status=self._state())

    def _judged(self) -> list[RunUpdate]:
        """Runs played to their last recorded event unfinished, with the status the
        directory gives their ledgers now (``stale``, ``abandoned``; ``running`` only while
        a writer still holds or writes it), not the ``running`` of the moment replayed."""
        judged: list[RunUpdate] = []
        for run_id, played in self._played.items():
            summary = played.builder.summary()
            if not summary.status.is_live or run_id not in self._recorded:
                continue
            path, last = self._recorded[run_id]
            if path in self.fetched:
                continue
            try:
                mtime = path.stat().st_mtime
            except OSError:
                mtime = last  # the ledger is gone: the recording's own end is all there is
            status = judge_liveness(summary, mtime=mtime, lock_held=ledger_lock_held(path))
            if status is not summary.status:
                summary = msgspec.structs.replace(summary, status=status)
                judged.append(RunUpdate(run_id, summary))
        return judged

    def _state(self) -> str:
        """How it stands, and at what speed: ``paused, at 2x``, ``played to the end, at once``."""
        speed = "at once" if self.speed <= 0 else f"at {self.speed:g}x"
        if self.finished.is_set() and not self._restart:
            return f"played to the end, {speed}"
        return f"{'paused' if self.paused else 'playing'}, {speed}"

    async def _turn(self, when: float, previous: float | None) -> bool:
        """Wait for the next event's turn; ``False`` if the replay was paused, played or
        sped up meanwhile (the caller reports it and asks again)."""
        budget = self._budget
        if budget is not None:
            if budget > 0:
                self._budget = budget - 1
                return True
            self._changed.clear()
            self.holding.set()
            try:
                await self._changed.wait()
            finally:
                self.holding.clear()
            return False
        if self.speed > 0 and previous is not None:
            pause = min(max(0.0, when - previous), MAX_PAUSE) / self.speed
            if pause > 0:
                self._changed.clear()
                try:
                    await asyncio.wait_for(self._changed.wait(), pause)
                except TimeoutError:
                    return True
                return False
        return True

    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        played = self._played.get(run_id)
        return played.window(start, stop) if played is not None else []

    async def close(self) -> None:
        self._stop.set()
        self._changed.set()
