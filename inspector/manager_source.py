"""Runs of a run manager in this process: its hub for live events, its methods for actions."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import ClassVar

from inspector.ledger_source import LedgerFiles, count_lines, read_range
from inspector.model import TrackedRun
from inspector.source import (
    ACTED_BY,
    ActionRefused,
    RunSource,
    RunUpdate,
    SourceError,
    SourceUpdate,
)
from ledger_reader import LedgerError, LedgerItem, RunSummary, SummaryBuilder, read_ledger_state
from run_manager import (
    ApprovalNotFound,
    Lagged,
    Manager,
    RunNotFound,
    RunNotResumable,
)


class ManagerSource(RunSource):
    """Attach to a :class:`run_manager.Manager` in this process.

    Events come from the manager's hub as they are recorded; a run's
    history comes from its ledger where it writes one, else from the hub's
    bounded replay. Cancel, resume and approve act on the manager directly.
    """

    live: ClassVar[bool] = True
    can_cancel: ClassVar[bool] = True
    can_resume: ClassVar[bool] = True
    can_approve: ClassVar[bool] = True

    def __init__(self, manager: Manager, *, name: str = "local", keep_events: int = 1000) -> None:
        super().__init__(name)
        self.manager = manager
        self.keep_events = keep_events
        self._runs: dict[str, TrackedRun] = {}
        self._paths: dict[str, str] = {}
        self._files = LedgerFiles()
        self._subscription = manager.hub.subscribe(replay=False)

    def describe(self) -> str:
        return "this process's run manager"

    def _snapshot(self) -> SourceUpdate:
        """Every run the manager retains, from the hub's replay (or the ledger's head and tail)."""
        where = self.manager.ledger_dir
        # Where its ledgers go, on screen while it runs (not only said on exit).
        update = SourceUpdate(initial=True, status=f"live, ledgers in {where}" if where else None)
        infos = self.manager.list()
        current = {info.run_id for info in infos}
        for run_id in list(self._runs):
            if run_id not in current:
                self._forget(run_id)
                update.removed.append(run_id)
        for info in infos:
            path = str(info.ledger_path) if info.ledger_path is not None else None
            tracked = self._runs[info.run_id] = TrackedRun(info.run_id, path, self.keep_events)
            if path is not None:
                self._paths[info.run_id] = path
                summary = read_ledger_state(path).summary()
                tracked.builder = _builder_from(summary, path)
                update.runs.append(RunUpdate(info.run_id, summary, history_end=_size(path)))
                continue
            items: list[LedgerItem] = list(self.manager.hub.replay(info.run_id))
            for item in items:
                tracked.add(item)
            end = tracked.dropped + len(tracked.recent)  # kept here, by these positions
            update.runs.append(
                RunUpdate(info.run_id, tracked.builder.summary(), items, items_end=end)
            )
        return update

    def _forget(self, run_id: str) -> None:
        self._runs.pop(run_id, None)
        path = self._paths.pop(run_id, None)
        if path is not None:
            self._files.forget(path)

    def _prune(self, update: SourceUpdate) -> None:
        """Forget finished runs the manager no longer retains, so a long session stays small."""
        limit = self.manager.retained_runs + len(self.manager.active()) + 16
        if len(self._runs) <= limit:
            return
        retained = {info.run_id for info in self.manager.list()}
        for run_id in list(self._runs):
            if run_id not in retained and self._runs[run_id].builder.terminal:
                self._forget(run_id)
                update.removed.append(run_id)

    async def updates(self) -> AsyncIterator[SourceUpdate]:
        yield self._snapshot()
        async for item in self._subscription:
            if isinstance(item, Lagged):
                # Fell behind the hub: start over from what the manager holds now.
                refreshed = self._snapshot()
                for run in refreshed.runs:
                    run.reset = True
                refreshed.initial = False
                yield refreshed
                continue
            run_id = item.run_id
            tracked = self._runs.get(run_id)
            if tracked is None:
                path = self._ledger_path(run_id)
                tracked = self._runs[run_id] = TrackedRun(run_id, path, self.keep_events)
                if path is not None:
                    self._paths[run_id] = path
            if item.seq and item.seq <= tracked.builder.last_seq:
                continue  # already read from the ledger when this source started
            tracked.add(item)
            summary = tracked.builder.summary()
            end = self._items_end(run_id, tracked, item)
            update = SourceUpdate(runs=[RunUpdate(run_id, summary, [item], items_end=end)])
            if item.type == "run_completed":
                self._prune(update)
            yield update

    def _items_end(self, run_id: str, tracked: TrackedRun, item: LedgerItem) -> int | None:
        """Where ``item``, just come from the hub, ends among the run's items as
        :meth:`events` numbers them: its ledger's lines, where this source saw every one of
        them come (runtop's writer writes line n with ``seq`` n); else its kept window."""
        if run_id not in self._paths:
            return tracked.dropped + len(tracked.recent)
        lines = tracked.builder.lines
        return lines if lines is not None and getattr(item, "seq", None) == lines else None

    def _ledger_path(self, run_id: str) -> str | None:
        try:
            path = self.manager.get(run_id).info().ledger_path
        except RunNotFound:
            return None
        return str(path) if path is not None else None

    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        path = self._paths.get(run_id)
        if path is not None:
            try:
                return await asyncio.to_thread(read_range, self._files, path, start, stop)
            except LedgerError as error:
                raise SourceError(str(error)) from error
        tracked = self._runs.get(run_id)
        return tracked.window(start, stop) if tracked is not None else []

    async def event_count(self, run_id: str) -> int:
        path = self._paths.get(run_id)
        if path is not None:
            try:
                return await asyncio.to_thread(count_lines, self._files, path)
            except LedgerError as error:
                raise SourceError(str(error)) from error
        tracked = self._runs.get(run_id)
        return tracked.dropped + len(tracked.recent) if tracked is not None else 0

    async def cancel(self, run_id: str, reason: str | None, *, by: str | None = None) -> None:
        """Cancel through the manager, as :meth:`Manager.cancel` does."""
        try:
            self.manager.cancel(run_id, reason, source=ACTED_BY, requested_by=by)
        except RunNotFound as error:
            raise ActionRefused(str(error)) from error

    async def resume(self, run_id: str) -> str:
        try:
            return self.manager.resume(run_id).run_id
        except (RunNotFound, RunNotResumable) as error:
            raise ActionRefused(str(error)) from error

    async def approve(
        self,
        run_id: str,
        approval_id: str | None,
        approved: bool,
        reason: str | None,
        *,
        by: str | None = None,
    ) -> None:
        """Decide through the manager, as :meth:`Manager.approve` does."""
        try:
            self.manager.approve(
                run_id, approval_id, approved, reason, source=ACTED_BY, answered_by=by
            )
        except (RunNotFound, ApprovalNotFound) as error:
            raise ActionRefused(str(error)) from error

    async def close(self) -> None:
        self._subscription.close()
        self._files.close()


def _builder_from(summary: RunSummary, path: str) -> SummaryBuilder:
    """A builder that continues from a ledger's summary as live events arrive."""
    builder = SummaryBuilder(summary.run_id, path)
    builder.resume_from(summary)
    return builder


def _size(path: str) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None
