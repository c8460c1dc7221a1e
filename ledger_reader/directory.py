"""A directory of ledgers, watched as files come and go (the scan is in :mod:`ledger_reader.scan`).

One watchfiles watcher covers the whole tree (the kernel allows only 128
inotify instances per user, so one per directory would not scale), with
its debounce at 1 ms and its step at ``notice`` (1 ms unless asked): with
watchfiles' defaults an append is seen most of a tick late
(``bench/tail_latency.py`` measures how late, MEASURED.md keeps the
figures). Files are opened only to read
them, so thousands of ledgers cost no descriptors between changes.
"""

from __future__ import annotations

import contextlib
import os
import stat as stat_module
import time
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from ledger_reader.errors import LedgerError, LedgerGone, LedgerUnreadable
from ledger_reader.events import MAX_LINE_BYTES, LedgerItem
from ledger_reader.head_tail import WHOLE_FILE_BYTES, LedgerState, read_ledger_state
from ledger_reader.liveness import DEFAULT_STALE_AFTER
from ledger_reader.scan import (
    CONTROL_DIR,
    LEDGER_SUFFIX,
    ScanResult,
    error_for,
    find_ledgers,
    ledger_names,
    scan_paths,
)
from ledger_reader.summary import RunStatus, RunSummary, SummaryBuilder, run_id_from_path
from ledger_reader.tail import FOLLOW_BYTES, LedgerTail, TailBatch

if TYPE_CHECKING:
    import asyncio

    from watchfiles import Change

MAX_HELD_OPEN: Final = 256
"""Unfinished ledgers kept open between polls; opening costs more than reading here."""
FIRST_STEP: Final = 500
"""Ledgers a scan reads before it reports the first of them (then four times as many)."""
QUIET_TICK: Final = 0.2
"""Seconds of quiet after which unfinished ledgers are read again, watched or not."""


def _newest_first(names: Iterable[str]) -> list[str]:
    """File names, the most recently modified first (vanished ones last)."""

    def modified(name: str) -> float:
        try:
            return os.stat(name).st_mtime
        except OSError:
            return 0.0

    return sorted(names, key=lambda name: (modified(name), name), reverse=True)


def _worth_a_look(change: Change, name: str) -> bool:
    """Ledgers, and anything added (it may be a directory of ledgers moved in whole)."""
    from watchfiles import Change

    return name.endswith(LEDGER_SUFFIX) or change == Change.added


def _ledgers_in_new_dir(path: Path) -> list[Path]:
    """Ledgers under a path that was just added, if it is a directory."""
    return find_ledgers(path, []) if path.is_dir() else []


class RunChange(msgspec.Struct):
    """A run whose ledger changed: its summary now and the lines that landed."""

    path: Path
    summary: RunSummary
    items: list[LedgerItem] = msgspec.field(default_factory=list)
    reset: bool = False
    """The file was truncated or replaced: forget earlier events of this path."""
    lines: int | None = None
    """The ledger's lines up to the last of ``items`` (the position after it, as its line
    index numbers them), when every line was folded; ``None`` when not known."""


class DirectoryUpdate(msgspec.Struct):
    """One batch of changes under a ledger directory."""

    changes: list[RunChange] = msgspec.field(default_factory=list)
    removed: list[Path] = msgspec.field(default_factory=list)
    errors: list[LedgerError] = msgspec.field(default_factory=list)
    initial: bool = False
    """The first update: the first runs found by the initial scan (the newest; the rest
    follow in the next updates while ``pending``)."""
    pending: int = 0
    """Ledgers found by a scan and not read yet: they come in the next updates."""
    available: bool = True
    """False while the directory itself is gone or unreadable."""


def lines_before(path: Path, offset: int) -> int | None:
    """How many lines of the ledger at ``path`` end before byte ``offset`` (blocking);
    ``None`` when it cannot be read that far."""
    count = 0
    try:
        with open(path, "rb") as ledger:
            while offset > 0:
                chunk = ledger.read(min(offset, 1 << 20))
                if not chunk:
                    return None
                count += chunk.count(b"\n")
                offset -= len(chunk)
    except OSError:
        return None
    return count


class _Followed:
    """A ledger being followed: its state and its tail."""

    __slots__ = ("lines", "reported", "state", "tail")

    def __init__(
        self, state: LedgerState, tail: LedgerTail, reported: RunStatus | None = None
    ) -> None:
        self.state = state
        self.tail = tail
        self.lines: int | None = None
        """Its lines read so far, counted once a head and tail read left them unknown."""
        self.reported = reported if reported is not None else state.summary().status
        """The status last reported, so a change of liveness is reported once."""


class LedgerDirectory:
    """Watch a directory tree of ledgers and report runs as they change.

    Args:
        root: the directory.
        stale_after: seconds without a write before another writer's
            unfinished run is shown ``stale``.
        liveness_interval: how often unfinished runs have their writer's lock
            probed; a dying writer changes no file, so only a probe sees it.
        gather: while writes keep coming, read at most this often (seconds). The
            first write after a quiet tick is read at once; after that, one read of
            a ledger takes every line written since its last, where reading at each
            write would cost a read, a summary and an update per line.
        notice: how soon a write is noticed (seconds): the watcher looks at what it
            collected this often, waking a thread that takes the GIL each time, so a
            follower that can wait longer costs less while nothing is written.
        clock: a fixed "now" (POSIX seconds) the runs' liveness is judged at, as the
            app's ``clock`` setting fixes the times it shows: snapshots and tests.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        stale_after: float = DEFAULT_STALE_AFTER,
        liveness_interval: float = 1.0,
        max_line_bytes: int = MAX_LINE_BYTES,
        only: Iterable[str | os.PathLike[str]] | None = None,
        gather: float = 0.0,
        notice: float = 0.001,
        clock: float | None = None,
    ) -> None:
        self.root = Path(root)
        self.clock = clock
        self.gather = gather
        self.notice = notice
        self.only = {os.path.abspath(path) for path in only} if only is not None else None
        """Follow just these files of the directory (``runtop FILE``), not all of it."""
        self.stale_after = stale_after
        self.liveness_interval = liveness_interval
        self.max_line_bytes = max_line_bytes
        self._followed: dict[Path, _Followed] = {}
        self._names: dict[str, Path] = {}
        self._held = 0
        """Ledgers held open between polls (unfinished runs, up to MAX_HELD_OPEN)."""
        self._behind: dict[Path, None] = {}
        """Ledgers whose last poll stopped at its limit: read on at once, a batch an update."""

    def history_end(self, path: Path) -> int | None:
        """Where the lines of a followed ledger that came only as a summary end.

        Lines before it were summarised, not delivered as items; a reader
        wanting every event reads them from the file.
        """
        followed = self._followed.get(path)
        return followed.state.complete_end if followed is not None else None

    def scan(self) -> ScanResult:
        """Summarise every ledger under the directory now (blocking)."""
        result = scan_paths([self.root], stale_after=self.stale_after)
        for state in result.states.values():
            state.clock = self.clock
        return result

    async def watch(self, stop: asyncio.Event | None = None) -> AsyncIterator[DirectoryUpdate]:
        """Yield the initial runs, then every change, until ``stop`` is set.

        A directory that vanishes or becomes unreadable yields one update with
        ``available=False`` and its error; the runs already seen are kept, and
        watching resumes (with a rescan) once the directory is back.
        """
        import asyncio  # here, not at the top: a scan (runtop ls) needs no event loop

        stop = stop or asyncio.Event()
        try:
            async for update in self._watch(stop):
                yield update
        finally:
            self.close()

    async def _watch(self, stop: asyncio.Event) -> AsyncIterator[DirectoryUpdate]:
        import asyncio

        first = True
        while not stop.is_set():
            available = True
            async for update in self._scan():
                update.initial = first
                first = False
                available = update.available
                yield update
            if not available:
                while not stop.is_set() and not await asyncio.to_thread(self._usable):
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), self.liveness_interval)
                continue
            async for update in self._follow(stop):
                yield update

    def _usable(self) -> bool:
        return self.root.is_dir() and os.access(self.root, os.R_OK | os.X_OK)

    async def _scan(self) -> AsyncIterator[DirectoryUpdate]:
        """Scan the tree: new files are read, known ones polled, missing ones removed.

        New ledgers are read the most recently written first, in growing
        steps (500, then 2,000, then 8,000 at a time), each step reported as
        it is read: the newest runs of a directory of 10,000 show in a tenth
        of the time all of them take. ``pending`` says how many are left.
        Ledgers that appeared or went while the scan ran are read or dropped
        at its end.
        """
        import asyncio

        update, new = await asyncio.to_thread(self._scan_start)
        step = FIRST_STEP
        reported = False
        while new:
            batch, new = new[:step], new[step:]
            await asyncio.to_thread(self._read_new, batch, update)
            if not new:
                new = await asyncio.to_thread(self._changed_meanwhile, update)
            update.pending = len(new)
            yield update
            reported = True
            update = DirectoryUpdate()
            step *= 4
        if not reported:
            yield update

    def _scan_start(self) -> tuple[DirectoryUpdate, list[str]]:
        """Poll the known ledgers, drop the missing; the new ones, newest first (blocking)."""
        update = DirectoryUpdate()
        if not self._usable():
            update.available = False
            update.errors.append(
                LedgerGone(self.root)
                if not self.root.exists()
                else LedgerUnreadable(self.root, "permission denied")
            )
            return update, []
        # Names as strings until a file is new here: sorting and hashing 10,000 Paths
        # cost more than reading the ledgers' heads.
        names = self._names_now(update.errors)
        known = self._drop_gone(names, update, only_if_missing=False)
        for name in sorted(names & known.keys()):
            self._poll_into(known[name], update)
        return update, _newest_first(names - known.keys())

    def _names_now(self, errors: list[LedgerError]) -> set[str]:
        if self.only is not None:
            return self._named_now(errors)
        return set(ledger_names(os.fspath(self.root), errors))

    def _named_now(self, errors: list[LedgerError]) -> set[str]:
        """The files named (``runtop FILE``) that are ledgers here now, as a walk of the
        tree would name them, without the walk: a file among 10,000 ledgers would
        otherwise cost a walk of all of them on every scan."""
        root = os.fspath(self.root)
        absolute_root = os.path.abspath(root)
        names: set[str] = set()
        for path in self.only or ():
            inside = os.path.relpath(path, absolute_root)
            parts = inside.split(os.sep)
            if parts[0] == os.pardir or CONTROL_DIR in parts[:-1]:
                continue  # not under the directory, or a control file: a walk skips it
            if not path.endswith(LEDGER_SUFFIX):
                continue
            name = os.path.join(root, inside)
            try:
                if stat_module.S_ISREG(os.stat(name).st_mode):
                    names.add(name)
            except FileNotFoundError:
                continue
            except OSError as error:
                errors.append(error_for(Path(name), error))
        return names

    def _watches_subdirectories(self) -> bool:
        """Whether the watcher must see below the directory (not for files named in it)."""
        if self.only is None:
            return True
        absolute_root = os.path.abspath(self.root)
        return any(os.path.dirname(path) != absolute_root for path in self.only)

    def _read_new(self, names: list[str], update: DirectoryUpdate) -> None:
        for name in names:
            change = self._start_following(self._path(name), update)
            if change is not None:
                update.changes.append(change)

    def _changed_meanwhile(self, update: DirectoryUpdate) -> list[str]:
        """Ledgers that appeared while a scan read the others, newest first; those that
        went are dropped into ``update`` (blocking)."""
        names = self._names_now([])
        # Only what is really gone: a directory the listing could not read is not a removal.
        known = self._drop_gone(names, update, only_if_missing=True)
        return _newest_first(names - known.keys())

    def _drop_gone(
        self, names: set[str], update: DirectoryUpdate, *, only_if_missing: bool
    ) -> dict[str, Path]:
        """Stop following the ledgers not among ``names``; every one followed, by name."""
        known = {os.fspath(path): path for path in self._followed}
        for name in sorted(known.keys() - names):
            if only_if_missing and os.path.exists(name):
                continue
            self._unfollow(known[name])
            update.removed.append(known[name])
        return known

    def _start_following(self, path: Path, update: DirectoryUpdate) -> RunChange | None:
        try:
            state = read_ledger_state(
                path, stale_after=self.stale_after, max_line_bytes=self.max_line_bytes
            )
        except LedgerGone:
            return None
        except LedgerError as error:
            update.errors.append(error)
            return None
        state.clock = self.clock
        tail = LedgerTail(
            path,
            start=state.complete_end,
            mark=state.mark,
            identity=state.key[:2] if state.key is not None else None,
            max_line_bytes=self.max_line_bytes,
        )
        summary = state.summary()
        self._followed[path] = _Followed(state, tail, summary.status)
        return RunChange(path, summary)

    def _unfollow(self, path: Path) -> None:
        self._behind.pop(path, None)
        followed = self._followed.pop(path, None)
        if followed is not None and followed.tail.holding:
            followed.tail.release()
            self._held -= 1

    def close(self) -> None:
        """Release the ledgers held open (watch() does this when it stops)."""
        for followed in self._followed.values():
            if followed.tail.holding:
                followed.tail.release()
        self._held = 0

    def _poll_into(
        self,
        path: Path,
        update: DirectoryUpdate,
        *,
        keep_if_root_gone: bool = False,
        verify_head: bool = True,
    ) -> None:
        followed = self._followed[path]
        tail = followed.tail
        hold = not followed.state.builder.terminal and (tail.holding or self._held < MAX_HELD_OPEN)
        was_holding = tail.holding
        try:
            batch = tail.poll(hold_open=hold, verify_head=verify_head)
        except LedgerGone:
            tail.release()
            self._held -= was_holding
            if keep_if_root_gone and not self._usable():
                return  # the whole directory went: keep its runs until it is back
            self._unfollow(path)
            update.removed.append(path)
            return
        except LedgerError as error:
            self._held += tail.holding - was_holding
            update.errors.append(error)
            return
        self._held += tail.holding - was_holding
        followed.state.torn_bytes = tail.pending_bytes
        if batch.more:
            self._behind[path] = None
        self._apply(path, followed, batch.reset is not None, batch, update)

    def _apply(
        self,
        path: Path,
        followed: _Followed,
        reset: bool,
        batch: TailBatch,
        update: DirectoryUpdate,
    ) -> None:
        items = batch.items
        state = followed.state
        if reset:
            state.builder = SummaryBuilder(run_id_from_path(path), str(path))
            followed.lines = None
        for line in batch.lines:
            state.builder.add_item(line.item)  # a blank line too: it is one of the lines
        lines = state.builder.lines
        if lines is None and batch.lines:
            # Read by its head and tail: its lines are counted once, as they first grow.
            before = followed.lines
            if before is None:
                before = lines_before(path, batch.lines[0].start)
            followed.lines = lines = None if before is None else before + len(batch.lines)
        if not reset and not items:
            return
        if state.builder.terminal and followed.tail.holding:
            followed.tail.release()  # a finished run rarely changes again: free the descriptor
            self._held -= 1
        state.mtime = time.time()
        state.probe()
        summary = state.summary()
        followed.reported = summary.status
        # Where the items end among the ledger's lines, unless a blank line fell among them
        # (a line of its index with no item: their places are not one after another).
        ends = lines if len(items) == len(batch.lines) else None
        update.changes.append(RunChange(path, summary, items, reset, ends))

    async def _follow(self, stop: asyncio.Event) -> AsyncIterator[DirectoryUpdate]:
        """Follow changes until the directory goes away or ``stop`` is set."""
        import asyncio

        from watchfiles import Change, awatch

        tick_ms = max(1, int(min(self.liveness_interval, QUIET_TICK) * 1000))
        try:
            watcher = awatch(
                self.root,
                stop_event=stop,
                # Files named in a directory of 10,000 ledgers: one directory watched, not
                # the tree (setting that up holds the loop before the first screen).
                recursive=self._watches_subdirectories(),
                debounce=1,
                step=max(1, round(self.notice * 1000)),
                rust_timeout=tick_ms,
                yield_on_timeout=True,
                ignore_permission_denied=True,
                watch_filter=_worth_a_look,
            )
            last_probe = last_read = time.monotonic()
            caught_up = streaming = False
            async for changes in watcher:
                if changes and streaming and self.gather:
                    wait = last_read + self.gather - time.monotonic()
                    if wait > 0:
                        # The watcher keeps collecting meanwhile: the ledgers it names
                        # next are read once for all they were written in the wait.
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(stop.wait(), wait)
                # A tick without changes ends a stream: the next write is read at once.
                streaming = bool(changes)
                last_read = time.monotonic()
                update = await self._handle(changes)
                if not caught_up:
                    # The watcher runs now (it has yielded): read every unfinished ledger once
                    # more, for what was written between the scan and its start.
                    caught_up = True
                    await asyncio.to_thread(self._catch_up, update)
                if time.monotonic() - last_probe >= self.liveness_interval:
                    last_probe = time.monotonic()
                    await asyncio.to_thread(self._tend_live, update)
                if update.changes or update.removed or update.errors:
                    yield update
                while self._behind and not stop.is_set():
                    # Each update is handled before the next batch is read: a writer far
                    # ahead costs one batch of memory, not all it wrote meanwhile.
                    update = DirectoryUpdate()
                    await asyncio.to_thread(self._read_behind, update)
                    if update.changes or update.removed or update.errors:
                        yield update
                gone = not changes or any(change == Change.deleted for change, _ in changes)
                if gone and not await asyncio.to_thread(self._usable):
                    return
        except (FileNotFoundError, PermissionError, RuntimeError, OSError):
            # The watcher could not start or lost its root: the caller rescans.
            return

    def _read_behind(self, update: DirectoryUpdate) -> None:
        """Read on in the ledgers a poll left behind, about one poll's worth in all."""
        budget = FOLLOW_BYTES
        while self._behind and budget > 0:
            path = next(iter(self._behind))
            del self._behind[path]
            followed = self._followed.get(path)
            if followed is None:
                continue
            before = followed.tail.offset
            self._poll_into(path, update, keep_if_root_gone=True, verify_head=False)
            budget -= max(1, followed.tail.offset - before)

    def _catch_up(self, update: DirectoryUpdate) -> None:
        changed = {change.path for change in update.changes}
        for path, followed in list(self._followed.items()):
            if not followed.state.builder.terminal and path not in changed:
                self._poll_into(path, update, keep_if_root_gone=True)

    async def _handle(self, changes: set[tuple[Change, str]]) -> DirectoryUpdate:
        import asyncio

        from watchfiles import Change

        update = DirectoryUpdate()
        touched: set[str] = set()
        new_dirs: list[str] = []
        control = os.sep + CONTROL_DIR + os.sep
        for change, name in changes:
            if control in name:
                continue
            if name.endswith(LEDGER_SUFFIX):
                if self.only is None or name in self.only:  # the watcher names absolute paths
                    touched.add(name)
            elif change == Change.added:
                new_dirs.append(name)
        paths = [self._path(name) for name in sorted(touched)]
        for directory in new_dirs if self.only is None else ():
            # A directory moved in whole brings ledgers no event named.
            paths.extend(await asyncio.to_thread(_ledgers_in_new_dir, Path(directory)))
        if paths:
            # One hop to a thread for the whole batch: under load a batch names many files,
            # and a hop per read would cost more than the reads.
            await asyncio.to_thread(self._poll_many, paths, update)
        return update

    def _path(self, name: str) -> Path:
        """The Path of a file name the watcher reported (parsed once: pathlib is slow)."""
        path = self._names.get(name)
        if path is None:
            path = Path(name)
            if len(self._names) > 4 * len(self._followed) + 1024:
                self._names.clear()
            self._names[name] = path
        return path

    def _poll_many(self, paths: list[Path], update: DirectoryUpdate) -> None:
        for path in paths:
            if path in self._followed:
                # Under load, skip re-reading the head on every change: a live run's is
                # read again each liveness interval (_tend_live).
                self._poll_into(path, update, keep_if_root_gone=True, verify_head=False)
            else:
                self._start_new(path, update)

    def _start_new(self, path: Path, update: DirectoryUpdate) -> None:
        """A ledger that appeared while watching: its lines are all new, deliver them."""
        try:
            info = path.stat()
        except OSError:
            return
        if not stat_module.S_ISREG(info.st_mode):
            return
        size = info.st_size
        if size > WHOLE_FILE_BYTES:
            change = self._start_following(path, update)
            if change is not None:
                update.changes.append(change)
            return
        builder = SummaryBuilder(run_id_from_path(path), str(path))
        state = LedgerState(
            builder, complete_end=0, mtime=time.time(), stale_after=self.stale_after
        )
        state.clock = self.clock
        tail = LedgerTail(path, max_line_bytes=self.max_line_bytes)
        followed = _Followed(state, tail)
        try:
            batch = tail.poll()
        except LedgerGone:
            return
        except LedgerError as error:
            update.errors.append(error)
            return
        self._followed[path] = followed
        state.torn_bytes = tail.pending_bytes
        if batch.more:
            self._behind[path] = None
        self._apply(path, followed, True, batch, update)
        if not batch.items:
            update.changes.append(RunChange(path, state.summary(), [], True))

    def _tend_live(self, update: DirectoryUpdate) -> None:
        """Read the live runs' ledgers again and re-judge their writers (every interval).

        A writer that died or went quiet changes no file, so only a probe sees
        it; and a watcher's queue can overflow, so a live run's ledger is read
        again too. Finished, abandoned and stale runs are left alone: nothing
        but a write changes them, and the watcher reports writes. (Read on
        every quiet tick, 3,300 abandoned ledgers kept an idle runtop at half
        a core.)
        """
        changed = {change.path for change in update.changes}
        now = time.time() if self.clock is None else self.clock
        running, awaiting = RunStatus.RUNNING, RunStatus.AWAITING_APPROVAL
        unknown = RunStatus.UNKNOWN  # an empty ledger turns stale with time alone
        live = [
            (path, followed)
            for path, followed in self._followed.items()
            if followed.reported is running
            or followed.reported is awaiting
            or followed.reported is unknown
        ]  # a pass over 10,000 runs a second: kept to identity checks
        for path, followed in live:
            if path in changed or followed.state.builder.terminal:
                continue
            before = len(update.changes)
            self._poll_into(path, update, keep_if_root_gone=True)
            if len(update.changes) != before or path not in self._followed:
                continue  # read something (and judged it) or went away
            state = followed.state
            state.probe()
            after = state.summary(now)
            if after.status != followed.reported:
                followed.reported = after.status
                update.changes.append(RunChange(path, after))
