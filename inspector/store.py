"""The store: every open source's runs in one model, kept current, handed out as snapshots.

Sources push batches; the store folds them into per-run state and, at once after a quiet
spell and then at most every ``flush_interval`` (50 ms by default), rebuilds the views of
the runs that changed and tells its subscribers once, with the set of what changed. So a UI
is woken at most twenty times a second however many events arrive, and a snapshot is a
tuple of immutable views that costs nothing to take.

Beside it: what it holds of each run and source (:mod:`inspector.store_state`), what
changed and how subscribers hear of it (:mod:`inspector.changes`), per-tool statistics
(:mod:`inspector.tool_stats`), what the background detail pass reads (:mod:`inspector.history`).

Memory stays bounded however long a run grows: the store keeps a short window of each
run's recent events and the paired tool calls of the runs being followed; anything else is
read by range from the source (a ledger's index, for ledger sources).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Final

import msgspec

from inspector.actions import Action, refusal
from inspector.call_stats import CallStats, CallTally, call_stats
from inspector.changes import ChangeSubscriber, StoreChange
from inspector.filters import FilterColumns
from inspector.history import history_from_source, read_history
from inspector.model import RunKey, RunView, ToolCallView, make_view
from inspector.run_order import RunOrder
from inspector.source import (
    ActionRefused,
    RunSource,
    RunUpdate,
    SourceError,
    SourceUpdate,
)
from inspector.store_state import (
    RunState,
    Snapshot,
    SourcesDown,
    SourceState,
    forget_tool_calls,
    pair_tool_event,
)
from inspector.tool_stats import ToolStats, ToolTally, tool_stats
from ledger_reader import (
    LedgerError,
    LedgerItem,
    ToolCall,
    ToolResult,
    event_of,
)
from ledger_reader.totals import descendants_added

log = logging.getLogger(__name__)

FLUSH_INTERVAL: Final = 0.05

COLUMNS_AHEAD: Final = 5_000
"""Runs from which the store makes its filter columns ahead, once it is idle, rather than
at the first filtering of each field (at 100,000 runs, 10 to 150 ms a field)."""
COLUMNS_AFTER: Final = 0.5
"""The quiet, in seconds, after a load or a change before the columns are made."""


class RunStore:
    """All runs of all open sources, with actions routed to the source of each run.

    Args:
        flush_interval: the longest a change waits before subscribers hear of it.
        detail: read the earlier events of ledger runs in the background, for
            tokens, cost and tool statistics a head-and-tail summary lacks.
        user: who the cancels and answers to approvals sent from here say asked.
    """

    def __init__(
        self,
        *,
        flush_interval: float = FLUSH_INTERVAL,
        detail: bool = True,
        user: str | None = None,
    ) -> None:
        self.flush_interval = flush_interval
        self.detail = detail
        self.user = user
        """Who the cancels and answers sent from here say asked (a user's name), if known."""
        self._sources: dict[str, RunSource] = {}
        self._source_states: dict[str, SourceState] = {}
        self._pumps: dict[str, asyncio.Task[None]] = {}
        self._runs: dict[RunKey, RunState] = {}
        self._views: dict[RunKey, RunView] = {}
        self._order = RunOrder()
        """The runs as the table shows them, newest first, kept as views change."""
        self._columns = FilterColumns(self._order.current)
        """Every run's fields as the filter reads them, kept as views change."""
        self._moments: dict[str, float] | None = {}
        """Each replay's moment (:attr:`Snapshot.replayed_at`), kept as views change; ``None``
        when a run that may have set it went back or went: worked out again from every run."""
        self._moments_shown: dict[str, float] = {}
        self._states_version = 0
        self._sources_seen: tuple[int, int, int] = (-1, -1, -1)
        self._sources_shown: tuple[SourceState, ...] = ()
        self._dirty: dict[RunKey, None] = {}
        """Runs whose view is to be rebuilt, in the order they changed (a dict: rebuilding
        10,000 in the order they were made, not a set's, reads memory in order: ~30 % faster)."""
        self._pending = StoreChange()
        self._wake = asyncio.Event()
        self._subscribers: list[ChangeSubscriber] = []
        self._flusher: asyncio.Task[None] | None = None
        self._columner: asyncio.Task[None] | None = None
        self._detailer: asyncio.Task[None] | None = None
        self._detail_queue: deque[RunKey] = deque()
        self._detail_wake = asyncio.Event()
        self._loading: set[str] = set()
        """Sources still delivering their first load: detail passes wait for them (a pass
        reads a ledger again, and beside a scan of 10,000 it made the scan 2.5x slower)."""
        self._tools: dict[str, ToolTally] = {}
        self._children: dict[RunKey, set[RunKey]] = {}
        """Each run's child runs in its source, by the ``parent_run_id`` their views say."""
        self._parent_of: dict[RunKey, RunKey] = {}
        self._version = 0
        self._closed = False
        self.applied = 0
        """Items folded so far (for benchmarks and tests)."""

    # -- sources -------------------------------------------------------------------

    def add_source(self, source: RunSource) -> None:
        """Open a source: its runs join the store as its updates arrive.

        It is listed at once, as opening until its first update (or its end):
        a first frame can name what is watched, and not say "no runs" before
        the runs are known.
        """
        if source.name in self._sources:
            raise ValueError(f"a source named {source.name!r} is open already")
        self._sources[source.name] = source
        self._source_states[source.name] = SourceState(
            name=source.name,
            description=source.describe(),
            live=source.live,
            can_cancel=source.can_cancel,
            can_resume=source.can_resume,
            can_approve=source.can_approve,
            can_replay=source.can_replay,
            opening=True,
        )
        self._states_version += 1
        self._ensure_tasks()
        self._pumps[source.name] = asyncio.get_running_loop().create_task(
            self._pump(source), name=f"source {source.name}"
        )

    async def remove_source(self, name: str) -> None:
        source = self._sources.pop(name, None)
        if source is None:
            return
        pump = self._pumps.pop(name, None)
        if pump is not None:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump
        await source.close()
        removed = {key for key in self._runs if key.source == name}
        for key in removed:
            self._drop(key)
        self._source_states.pop(name, None)
        if name in self._loading:
            self._loading.discard(name)
            self._detail_wake.set()
        self._states_version += 1
        self._note(StoreChange(removed=frozenset(removed), sources=frozenset({name})))

    def _ensure_tasks(self) -> None:
        loop = asyncio.get_running_loop()
        if self._flusher is None:
            self._flusher = loop.create_task(self._flush_loop(), name="store flush")
        if self._detailer is None and self.detail:
            self._detailer = loop.create_task(self._detail_loop(), name="store detail")

    async def _pump(self, source: RunSource) -> None:
        """Feed one source's updates into the store; its failure stays its own."""
        try:
            async for update in source.updates():
                self.apply(source.name, update)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.warning("source %s failed: %s", source.name, error, exc_info=True)
            message = str(error) or type(error).__name__
            self._set_source(source.name, available=False, error=f"stopped: {message}")
        self._opened(source.name)  # it ended before it said anything: nothing is coming
        if source.name in self._loading:
            # It stopped in the middle of its first load: the rest will not come.
            self._loading.discard(source.name)
            self._detail_wake.set()

    def _opened(self, name: str) -> None:
        """The source has spoken (or ended): it is no longer opening."""
        state = self._source_states.get(name)
        if state is not None and state.opening:
            self._source_states[name] = _replace_state(state, opening=False)
            self._states_version += 1
            self._note(StoreChange(sources=frozenset({name})))

    def _set_source(
        self, name: str, *, available: bool, error: str | None, status: str | None = None
    ) -> None:
        state = self._source_states.get(name)
        if state is None:
            return
        status = status or None
        if state.available == available and state.error == error and state.status == status:
            return
        # The first moment it was seen down: a new error while down ("reconnecting in 16 s")
        # keeps it; back up, it is forgotten.
        since = state.down_since if not state.available else time.time()
        since = None if available else since
        self._source_states[name] = _replace_state(
            state, available=available, error=error, status=status, down_since=since
        )
        self._states_version += 1
        self._note(StoreChange(sources=frozenset({name})))

    # -- folding updates -----------------------------------------------------------

    def apply(self, source: str, update: SourceUpdate) -> None:
        """Fold one batch from ``source`` (the pump calls this; tests may too)."""
        if self._flusher is None:
            self._ensure_tasks()
        self._opened(source)
        error = str(update.error) if update.error is not None else None
        if (
            update.error is not None
            or not update.available
            or update.initial
            or update.status is not None
        ):
            self._set_source(source, available=update.available, error=error, status=update.status)
        elif self._source_states.get(source, None) is not None:
            state = self._source_states[source]
            if not state.available or state.error:
                self._set_source(source, available=True, error=None)
        if update.pending:
            self._loading.add(source)
        elif source in self._loading:
            self._loading.discard(source)
            self._detail_wake.set()
        events: set[RunKey] = set()
        dirty = self._dirty
        for run in update.runs:
            key = RunKey(source, run.run_id)
            dirty[key] = None
            self._fold(key, run)
            if run.items:
                events.add(key)
        if update.runs:
            self._wake.set()
        removed = set()
        for run_id in update.removed:
            key = RunKey(source, run_id)
            if key in self._runs:
                self._drop(key)
                removed.add(key)
        if events or removed or update.initial:
            self._note(
                StoreChange(
                    events=frozenset(events), removed=frozenset(removed), reset=update.initial
                )
            )

    def _fold(self, key: RunKey, run: RunUpdate) -> None:
        state = self._runs.get(key)
        if state is None or run.reset:
            if state is not None:
                forget_tool_calls(self._tools, state)
            state = RunState(key, run.summary)
            self._runs[key] = state
            if run.history_end or run.history_count:
                state.detailed = False
                state.history_end = run.history_end
                state.history_count = run.history_count
                if self.detail and state.worth_detailing:
                    self._detail_queue.append(key)
                    self._detail_wake.set()
        state.summary = run.summary
        for item in run.items:
            self.applied += 1
            state.recent.append(item)
            event = event_of(item)
            if event is None:
                continue
            state.extras.add(event)
            if isinstance(event, ToolCall | ToolResult):
                pair_tool_event(self._tools, state, event)
        # Where its source says where the items just come sit, the store serves the
        # newest page from them (:meth:`events`).
        state.arrived(len(run.items), run.items_end)

    def _replayed_to(self, view: RunView, old: RunView | None) -> None:
        """A replayed run's view is new: its replay has played up to its last event, if later
        (a hundred replayed runs at a time, not 10,000 looked at for every snapshot)."""
        moments = self._moments
        if moments is None:
            return
        at = view.last_event_at
        before = old.last_event_at if old is not None else None
        if before is not None and (at is None or at < before):
            if moments.get(view.key.source) == before:
                self._moments = None  # it went back (a reset), and the moment was its
            return
        if at is not None and at > moments.get(view.key.source, 0.0):
            moments[view.key.source] = at

    def _drop(self, key: RunKey) -> None:
        state = self._runs.pop(key, None)
        if state is not None:
            forget_tool_calls(self._tools, state)
        parent = self._parent_of.pop(key, None)
        if parent is not None:
            self._children.get(parent, set()).discard(key)
            if parent in self._runs:
                self._dirty[parent] = None  # its total loses this run's
        self._children.pop(key, None)
        view = self._views.pop(key, None)
        if view is not None:
            self._columns.remove(key)  # by its row in the order laid out: first
            self._order.remove(key)
            if view.recorded:
                self._moments = None
        self._dirty.pop(key, None)

    # -- notifying -------------------------------------------------------------------

    def _note(self, change: StoreChange) -> None:
        self._pending = self._pending.merge(change)
        self._wake.set()

    async def _flush_loop(self) -> None:
        """Flush at once after a quiet spell, then at most every ``flush_interval``.

        The first batch after a pause (the runs of a source just opened, a
        click's outcome) is shown without waiting; a stream is batched.
        """
        loop = asyncio.get_running_loop()
        last = -self.flush_interval
        while True:
            await self._wake.wait()
            wait = last + self.flush_interval - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            self._wake.clear()
            last = loop.time()
            self.flush()
            if (
                len(self._views) >= COLUMNS_AHEAD
                and not self._loading
                and (self._columner is None or self._columner.done())
                and self._columns.unmade()
            ):
                self._columner = loop.create_task(self._make_columns(), name="store columns")

    async def _make_columns(self) -> None:
        """Make the filter's columns after a quiet spell, a field at a time (each a few
        tens of milliseconds at 100,000 runs), so that a first filtering finds them."""
        await asyncio.sleep(COLUMNS_AFTER)
        while not self._closed and not self._loading:
            unmade = self._columns.unmade()
            if not unmade:
                return
            self.snapshot()  # the order they are laid out in
            self._columns.make(unmade[:1])
            await asyncio.sleep(0)

    def make_filter_columns(self) -> None:
        """Make every filter column now (the store makes them itself when it holds
        :data:`COLUMNS_AHEAD` runs and is idle; a benchmark times them)."""
        self.snapshot()
        self._columns.make(self._columns.unmade())

    def flush(self) -> None:
        """Rebuild the views of changed runs and tell subscribers (the flush loop calls this)."""
        changed = self._dirty
        self._dirty = {}
        runs, views = self._runs, self._views
        recordings = {name for name, source in self._source_states.items() if not source.live}
        for key in changed:
            state = runs.get(key)
            if state is None:
                continue
            view = make_view(
                key,
                state.summary,
                state._extras,
                detailed=state.detailed,
                recorded=key.source in recordings,
            )
            if view.recorded:
                self._replayed_to(view, views.get(key))
            views[key] = view
        changed = self._families(changed)
        for key in changed:
            now = views.get(key)
            if now is not None:
                self._order.put(now)
        self._columns.update(views[key] for key in changed if key in views)
        change = self._pending.merge(StoreChange(runs=frozenset(changed)))
        self._pending = StoreChange()
        self._version += 1
        if change.runs or change.events or change.removed or change.sources or change.reset:
            for subscriber in self._subscribers:
                subscriber.offer(change)

    def _families(self, changed: dict[RunKey, None]) -> dict[RunKey, None]:
        """The runs whose totals with their child runs' changed with ``changed``'s views
        (each changed run's ancestors, and itself if it has child runs), their views
        given the new totals; ``changed`` and them."""
        views, children, parent_of = self._views, self._children, self._parent_of
        affected: dict[RunKey, None] = {}
        for key in changed:
            view = views.get(key)
            if view is None:
                continue
            parent = RunKey(key.source, view.parent_run_id) if view.parent_run_id else None
            before = parent_of.get(key)
            if parent != before:
                if before is not None:
                    children.get(before, set()).discard(key)
                    affected[before] = None
                if parent is None:
                    del parent_of[key]
                else:
                    parent_of[key] = parent
                    children.setdefault(parent, set()).add(key)
            climbed = {key}
            up: RunKey | None = key
            while up is not None and up in views:
                affected[up] = None
                up = parent_of.get(up)
                if up in climbed:
                    break  # ids that loop: each counted once
                if up is not None:
                    climbed.add(up)
        if not affected:
            return changed
        for key in affected:
            view = views.get(key)
            if view is None:
                continue
            kin = children.get(key)
            family = descendants_added(view.totals, children, views, key) if kin else None
            if family != view.with_children:
                views[key] = msgspec.structs.replace(view, with_children=family)
                changed[key] = None
        return changed

    def changes(self) -> AsyncIterator[StoreChange]:
        """Change notifications, batched in time; a slow reader gets them merged."""
        subscriber = ChangeSubscriber(self._subscribers.remove)
        self._subscribers.append(subscriber)
        return subscriber.read()

    # -- reading -----------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Every run, newest first, as immutable views (cheap: nothing is copied)."""
        ordered, _ = self._order.shown()
        if self._sources_seen != (self._version, len(self._source_states), self._states_version):
            self._sources_seen = (self._version, len(self._source_states), self._states_version)
            self._sources_shown = tuple(
                _replace_state(state, run_count=self._order.counts.get(name, 0))
                for name, state in self._source_states.items()
            )
        if self._moments is None:
            self._moments = {}
            for view in self._views.values():
                if view.recorded:
                    self._replayed_to(view, None)
        if self._moments != self._moments_shown:
            self._moments_shown = dict(self._moments)  # a snapshot's never changes
        return Snapshot(
            ordered, self._sources_shown, self._version, self._moments_shown, self._columns
        )

    @property
    def loading(self) -> bool:
        """Whether a source is still delivering its first load (a big directory, in steps)."""
        return bool(self._loading)

    def get(self, key: RunKey) -> RunView | None:
        return self._views.get(key)

    def find(self, run_id: str) -> RunView | None:
        """A run by id in any source (the first found)."""
        for key, view in self._views.items():
            if key.run_id == run_id:
                return view
        return None

    def recent(self, key: RunKey) -> list[LedgerItem]:
        """The run's latest events the store holds (a short window)."""
        state = self._runs.get(key)
        return list(state._recent) if state is not None and state._recent else []

    async def events(self, key: RunKey, start: int, stop: int) -> list[LedgerItem]:
        """Items ``start``..``stop`` of a run: the newest from those the store holds as they
        arrived, where it knows their positions (a live run's newest page is decoded once,
        on its way in); the rest read from its source (a ledger's index)."""
        source = self._sources.get(key.source)
        if source is None:
            raise SourceError(f"source {key.source} is not open")
        state = self._runs.get(key)
        held = state.held() if state is not None else None
        if held is None or stop <= held[0]:
            return await source.events(key.run_id, start, stop)
        first, items = held
        newest = items[max(0, start - first) : max(0, stop - first)]
        if start >= first:
            return newest
        return [*await source.events(key.run_id, start, first), *newest]

    def run_file(self, key: RunKey) -> str | None:
        """The file whose lines are the run's items, by number, if its source reads one."""
        source = self._sources.get(key.source)
        return source.run_file(key.run_id) if source is not None else None

    async def event_count(self, key: RunKey) -> int:
        """How many items the run has: as far as the store holds them in order, where it
        serves its newest from them (:meth:`events`); else as its source counts them."""
        source = self._sources.get(key.source)
        if source is None:
            raise SourceError(f"source {key.source} is not open")
        state = self._runs.get(key)
        if state is not None and state.held_end is not None:
            return state.held_end
        return await source.event_count(key.run_id)

    def tool_calls(self, key: RunKey) -> list[ToolCallView]:
        """The run's paired tool calls the store has seen, oldest first."""
        state = self._runs.get(key)
        return list(state._calls.values()) if state is not None and state._calls else []

    def tool_stats(self) -> list[ToolStats]:
        """Per tool across all runs, busiest first."""
        return tool_stats(self._tools, self._live)

    def _live(self, key: RunKey) -> bool:
        state = self._runs.get(key)
        return state is not None and state.summary.status.is_live

    def model_stats(self) -> list[CallStats]:
        """Model calls per model across all runs, busiest first (:mod:`inspector.call_stats`:
        the fold ``runtop stats --by model`` reads too)."""
        tallies: dict[str, CallTally] = {}
        for key, state in self._runs.items():
            extras = state._extras
            if extras is None:
                continue
            calls = extras.models
            for name, tally in calls.tallies.items():
                tallies.setdefault(name, CallTally()).merge(tally, key)
            if state.summary.status.is_live:
                for name in calls.running():
                    running = tallies.setdefault(name, CallTally())
                    running.add(key, seconds=None, running=True)
        return call_stats(tallies)

    def children(self, key: RunKey) -> list[RunView]:
        """Runs whose parent is this run (in the same source)."""
        return [
            view
            for view in self._views.values()
            if view.key.source == key.source and view.parent_run_id == key.run_id
        ]

    def sources(self) -> list[SourceState]:
        return list(self.snapshot().sources)

    # -- actions -----------------------------------------------------------------------

    def refusal(self, key: RunKey, action: Action) -> str | None:
        """Why ``action`` cannot be done to this run now, or ``None`` if it can
        (:func:`inspector.actions.refusal`)."""
        state = self._runs.get(key)
        source = self._sources.get(key.source)
        if state is None or source is None:
            return "the run is no longer here"
        standing = self._source_states.get(key.source)
        reachable = standing is None or standing.available
        return refusal(action, state.summary, source, reachable=reachable)

    async def cancel(self, key: RunKey, reason: str | None = None) -> None:
        """Ask the run's source to cancel it; the outcome arrives as events.

        Raises:
            ActionRefused: with the reason to show.
        """
        source = self._checked(key, "cancel")
        await source.cancel(key.run_id, reason, by=self.user)

    async def resume(self, key: RunKey) -> str:
        """Re-issue the run; the new run's id (``""`` when it will appear later)."""
        source = self._checked(key, "resume")
        return await source.resume(key.run_id)

    async def approve(
        self, key: RunKey, approved: bool, reason: str | None = None, approval_id: str | None = None
    ) -> None:
        """Approve or deny the run's pending approval."""
        source = self._checked(key, "approve", "approve" if approved else "deny")
        state = self._runs[key]
        pending = state.summary.pending_approval
        chosen = approval_id or (pending.approval_id if pending is not None else None)
        await source.approve(key.run_id, chosen, approved, reason, by=self.user)

    def _checked(self, key: RunKey, action: Action, verb: str | None = None) -> RunSource:
        reason = self.refusal(key, action)
        if reason is not None:  # as the greyed key says it: its own verb (deny, too)
            raise ActionRefused(f"cannot {verb or action}: {reason}")
        return self._sources[key.source]

    # -- detail: earlier events of ledger runs, in the background ------------------

    def focus(self, key: RunKey) -> None:
        """Detail this run next (the user is looking at it)."""
        state = self._runs.get(key)
        if state is not None and not state.detailed and state.worth_detailing:
            with contextlib.suppress(ValueError):
                self._detail_queue.remove(key)
            self._detail_queue.appendleft(key)
            self._detail_wake.set()

    async def _detail_loop(self) -> None:
        while True:
            while not self._detail_queue or self._loading:
                self._detail_wake.clear()
                await self._detail_wake.wait()
            key = self._detail_queue.popleft()
            state = self._runs.get(key)
            if state is None or state.detailed:
                continue
            path, end = state.summary.path, state.history_end or 0
            try:
                if state.history_count and key.source in self._sources:
                    # Its source serves its events (a server's run, a coding agent's
                    # session), whether or not it names a file.
                    source = self._sources[key.source]
                    history = await history_from_source(source, key.run_id, state.history_count)
                elif path is not None:
                    history = await asyncio.to_thread(read_history, path, end)
                else:
                    continue
            except (OSError, LedgerError, SourceError):
                continue
            state = self._runs.get(key)
            if state is None or state.detailed or state.summary.path != path:
                continue  # reset or removed meanwhile
            for event in history:
                state.extras.add(event)
                if isinstance(event, ToolCall | ToolResult):
                    pair_tool_event(self._tools, state, event)
            state.detailed = True
            self._dirty[key] = None
            self._wake.set()

    # -- closing ------------------------------------------------------------------------

    async def close(self) -> None:
        self._closed = True
        # Read no more once closed: its runs go at once, not one by one as each source is
        # removed (with 10,000 runs, one by one would slow every quit).
        self._runs.clear()
        self._views.clear()
        self._dirty.clear()
        self._order.clear()
        self._columns.clear()
        self._children.clear()
        self._parent_of.clear()
        self._moments = {}
        for tally in self._tools.values():
            tally.in_flight.clear()  # nothing more will end (the counts stay, to be read)
        for name in list(self._sources):
            await self.remove_source(name)
        for task in (self._flusher, self._detailer, self._columner):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._flusher = self._detailer = self._columner = None
        for subscriber in self._subscribers:
            subscriber.close()

    async def __aenter__(self) -> RunStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _replace_state(state: SourceState, **changes: object) -> SourceState:
    return msgspec.structs.replace(state, **changes)


__all__ = [
    "ActionRefused",
    "RunStore",
    "Snapshot",
    "SourceState",
    "SourcesDown",
    "StoreChange",
    "ToolStats",
]
