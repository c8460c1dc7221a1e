"""A run's timeline read from the store: the summary line above, the waterfall below.

The pane owns the run's :class:`~inspector.timeline.Timeline` and fills it
from the store a page at a time (drawing between pages, so a run of
100,000 nodes shows its first screen at once and the rest as it is read),
then keeps it growing while the run is live. The waterfall itself is a
:class:`~tui.widgets.timeline_view.TimelineView`, whose messages
(``Highlighted``, ``Chosen``, ``WindowChanged``) bubble up through here.
"""

from __future__ import annotations

import asyncio
import time
from typing import Final

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from inspector import RunKey, RunStore, SourceError
from inspector.timeline import Timeline, TimelineSummary
from inspector.timeline_fill import TIMELINE_PAGE, add_child_runs
from tui.text import inert
from tui.text.timeline import damage_text, summary_text
from tui.widgets.static_text import update_static
from tui.widgets.timeline_view import TimelineView

SUMMARY_EVERY: Final = 1.0
"""Seconds between summaries of a growing timeline (each one sorts every node's ends)."""
FIRST_PAGE: Final = 1_000
"""Items read first: enough for a screen of rows, drawn before the rest is read."""
DRAW_EVERY: Final = 0.25
"""Seconds between redraws while a long run's events are read."""
TICK: Final = 1.0
"""Seconds between redraws of a live run (its in-flight bars grow to now)."""


class TimelinePane(Vertical):
    """The summary and the waterfall of one run, filled from the store."""

    def __init__(
        self,
        store: RunStore,
        key: RunKey,
        *,
        clock: float | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.store = store
        self.key = key
        self.clock = clock
        self.timeline = Timeline(key.run_id)
        self.view = TimelineView(self.timeline, clock=clock, id="timeline-view")
        self._summary = Static(id="timeline-summary")
        self._summarised: tuple[int, float] | None = None
        """The timeline's version and the time of the last summary drawn."""
        self._latest: TimelineSummary | None = None
        self._filling = False
        """A fill is under way (:meth:`reload` then only asks it to look again)."""
        self._again = False
        self._summary_due = False
        """A summary put off by ``SUMMARY_EVERY`` is waiting for its timer."""
        # Still reading the run's events the first time. Set without its watcher: the
        # watcher of a widget not yet mounted covers it later (call_later), after a quick
        # first read (a replay's, in memory) has already uncovered it, and the loading
        # dots would then stay over a timeline that was read. on_mount covers it at once.
        self.set_reactive(TimelinePane.loading, True)
        self.shared_axis: tuple[float, float] | None = None
        """An axis set from outside (:meth:`set_axis`), kept instead of the run's own."""

    def compose(self) -> ComposeResult:
        yield self._summary
        yield self.view

    def on_mount(self) -> None:
        """Read the run's events now if shown; a pane built hidden reads them when shown
        (its owner calls :meth:`reload`)."""
        update_static(self._summary, Text("reading the run's events…", style="dim"))
        if self.loading:
            self.set_loading(True)
        self._follow_run()
        if self.display:
            self.reload()
        if self.clock is None:
            self.set_interval(TICK, self._tick)

    def reload(self) -> None:
        """The run wrote more (or changed): fold what is new.

        A fill under way is not cancelled (the page it is reading would be read
        again): it is told to look once more when it is done.
        """
        if self._filling:
            self._again = True
            return
        run = self.store.get(self.key)
        if self.timeline.stopped_at is not None and run is not None and run.live:
            self._start_over()  # it writes again after all: its open nodes are open again
        self._filling = True
        self._fill()

    def reset(self) -> None:
        """The run's events were replaced: start the timeline again (a fill under way
        sees the new timeline after its next await, drops its page, and starts over)."""
        self._start_over()
        self.reload()

    def _start_over(self) -> None:
        self.timeline = Timeline(self.key.run_id)
        self.view.timeline = self.timeline
        self.view.cursor = 0
        self.loading = True
        self._summarised = None

    @work(group="timeline-fill", exit_on_error=False)
    async def _fill(self) -> None:
        """Fold what the run wrote since last time, a page at a time, then summarise;
        again while :meth:`reload` asked meanwhile. One runs at a time (``_filling``)."""
        try:
            while True:
                self._again = False
                await self._fill_once()
                if not self._again:
                    break
        finally:
            self._filling = False

    async def _fill_once(self) -> None:
        timeline = self.timeline
        drawn = 0.0
        try:
            if timeline.items_read:
                count = await self.store.event_count(self.key)
                if timeline is not self.timeline:
                    return
                if count < timeline.items_read:  # truncated or replaced: read it again
                    self._start_over()
                    timeline = self.timeline
            while True:
                start = timeline.items_read
                page = FIRST_PAGE if start == 0 else TIMELINE_PAGE
                items = await self.store.events(self.key, start, start + page)
                if timeline is not self.timeline:
                    return  # reset meanwhile
                timeline.extend(items)
                if len(items) < page:
                    break
                if time.monotonic() - drawn >= DRAW_EVERY:
                    # a frame per page would cost as much as the reading: a few a second
                    drawn = time.monotonic()
                    self._follow_run()
                    self.view.model_changed()
                    if self.loading:
                        self._show_progress()
        except SourceError as error:
            update_static(self._summary, Text(inert(str(error), single_line=True), style="bold"))
            return
        add_child_runs(self.store, self.key, timeline)
        self._stop_if_stopped(timeline)
        first = self.loading
        self.loading = False
        self._follow_run()
        self.view.model_changed()
        await self._summarise(force=first)

    def _stop_if_stopped(self, timeline: Timeline) -> None:
        """A run that stopped writing without ending (stale, abandoned) stopped at its last
        event: its axis ends there, and its open nodes are unfinished, not running."""
        run = self.store.get(self.key)
        if run is None or run.live or timeline.run_end is not None:
            return
        if run.last_event_at is not None and timeline.stopped_at != run.last_event_at:
            timeline.stop(run.last_event_at)

    def _show_progress(self) -> None:
        run = self.store.get(self.key)
        total = run.event_count if run is not None else None
        of = f" of {total:,}" if total else ""
        update_static(
            self._summary,
            Text(
                f"reading the run's events… {self.timeline.items_read:,}{of} read, "
                f"{len(self.timeline):,} nodes so far",
                style="dim",
            ),
        )

    async def _summarise(self, *, force: bool = False) -> None:
        """The summary line, worked out in a thread (it sorts every node's ends) from a
        copy of the nodes taken here, at most every ``SUMMARY_EVERY`` seconds."""
        timeline = self.timeline
        wall = time.monotonic()
        if not force and self._summarised is not None:
            version, when = self._summarised
            if version == timeline.version and not self.view.live:
                return
            if wall - when < SUMMARY_EVERY:
                if not self._summary_due:  # not now: once the interval has passed
                    self._summary_due = True
                    self.set_timer(SUMMARY_EVERY - (wall - when), self._summary_time)
                return
        self._summarised = (timeline.version, wall)
        nodes = list(timeline.nodes())
        summary = await asyncio.to_thread(timeline.summary, self.view.now(), nodes=nodes)
        if timeline is not self.timeline:
            return
        self._latest = summary
        text = Text(summary_text(summary))
        damage = damage_text(timeline)
        if damage:
            text.append("  ·  " + damage, style="bold")
        update_static(self._summary, text)

    def set_axis(self, axis: tuple[float, float] | None) -> None:
        """Draw on ``axis`` (two runs on one axis), or on the run's own again (``None``)."""
        self.shared_axis = axis
        self._follow_run()
        self.view.refresh()

    def _follow_run(self) -> None:
        """Take what the store says of the run: live or not, and its times for the axis."""
        run = self.store.get(self.key)
        if run is not None:
            self.view.live = run.live and not run.recorded
        if self.shared_axis is not None:
            self.view.axis = self.shared_axis
        elif run is not None and self.loading and run.started_at is not None and not run.live:
            # Until the last events are read, the run's known times fix the axis, so
            # bars do not shift as pages arrive.
            end = run.ended_at or run.last_event_at
            if end is not None and end >= run.started_at:
                self.view.axis = (run.started_at, end)
        else:
            self.view.axis = None

    def _summary_time(self) -> None:
        self._summary_due = False
        self.reload()

    def _tick(self) -> None:
        """A live run's in-flight bars grow to now, and its summary with them."""
        if self.view.live and self.display:
            self.view.refresh()
            self.reload()

    @property
    def summary(self) -> TimelineSummary | None:
        """The last summary shown (``None`` while the events are first read)."""
        return self._latest


__all__ = ["TimelinePane"]
