"""Two runs side by side: their summaries with the differences marked, live as they grow.

Opened from the runs table with two runs marked (space, then ``C``), or
from a run that was resumed or resumes another (``C`` there). The run
resumed, or else the one started first, is A, on the left: the baseline
the other is measured against.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import ClassVar, Final

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static

from inspector import RunKey, RunStore, RunView, SourceError
from inspector.comparison import RunFacts, RunTally, compare, facts_of, tally_run
from tui.runtop_screen import RuntopScreen
from tui.store_news import StoreChanged
from tui.text import inert, shorten, skill_and_agent
from tui.text.runs import now_or, short_id, status_mark
from tui.widgets.comparison_table import ComparisonTable
from tui.widgets.key_bar import KeyBar
from tui.widgets.timeline_pane import TimelinePane
from tui.widgets.timeline_view import TimelineView

WIDE: Final = 120
"""From this width the header shows whole run ids (below it, their distinctive end)."""


class CompareScreen(RuntopScreen):
    """Run A and run B: what each did, and how B did against A."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", tooltip="The screen before this one"),
        Binding("x", "swap", "Swap A and B", tooltip="The compared runs the other way round"),
        Binding("tab", "other_timeline", "Other timeline", show=False),
        *RuntopScreen.RUN_SCREEN_BINDINGS,
    ]

    COPIES_ITS_TEXT: ClassVar[bool] = True

    CSS_PATH: ClassVar[list[str | PurePath]] = ["../widgets/timeline_view.tcss", "compare.tcss"]
    """The timelines' styles (read when first shown, not at launch), then its own."""

    def __init__(
        self, store: RunStore, left: RunKey, right: RunKey, *, clock: float | None = None
    ) -> None:
        super().__init__()
        self.store = store
        self.left = left
        """Run A: the baseline."""
        self.right = right
        """Run B: measured against A."""
        self.clock = clock
        self.tallies: dict[RunKey, RunTally] = {left: RunTally(), right: RunTally()}
        self.totals: dict[RunKey, int | None] = {left: None, right: None}
        """How many events each run has, as last counted (``None`` until counted, or when
        counted while the run was live and it has ended since: its last events are not read
        yet, so its figures are not whole)."""
        self.counted_live: set[RunKey] = set()
        """The runs whose events were last counted while they were live."""
        self.failures: dict[RunKey, str] = {}
        """Why a run's events could not be read, when they could not."""
        self._header_text = Text()
        self._stale = False
        """Something changed while the runs were being read: read again when done."""

    def compose(self) -> ComposeResult:
        yield Static(id="compare-header")
        with VerticalScroll(id="compare-summary"):
            yield ComparisonTable(id="comparison")
        with Vertical(id="timelines"):
            for name, key in (("A", self.left), ("B", self.right)):
                with Horizontal(classes="timeline-row"):
                    yield Static(name, classes="timeline-label")
                    yield TimelinePane(self.store, key, clock=self.clock)
        yield KeyBar()

    def panes(self) -> dict[RunKey, TimelinePane]:
        """Each run's timeline pane."""
        return {pane.key: pane for pane in self.query(TimelinePane)}

    def on_mount(self) -> None:
        for key in (self.left, self.right):
            self.store.focus(key)
        self.call_after_refresh(self._focus_a)
        self.redraw()
        self.call_after_refresh(self.read_runs)  # the first frame first, then the reading
        if not self.clock:
            self.set_interval(1.0, self._tick)

    def _focus_a(self) -> None:
        """A's timeline has the keys: + and - zoom both; tab goes to B, and back."""
        pane = self.panes().get(self.left)
        if pane is not None:
            pane.view.focus()

    def action_other_timeline(self) -> None:
        """tab: the keys to the other run's timeline (a binding, so ``?`` lists it)."""
        views = [pane.view for pane in self.panes().values()]
        if not views:
            return
        at = next((n for n, view in enumerate(views) if view.has_focus), -1)
        views[(at + 1) % len(views)].focus()

    def on_screen_resume(self) -> None:
        if self.is_mounted:
            self.read_runs()

    def _tick(self) -> None:
        """A live run's duration goes on while nothing is written."""
        if any(run is not None and run.live for run in self._runs()):
            self.redraw()

    def _runs(self) -> tuple[RunView | None, RunView | None]:
        return self.store.get(self.left), self.store.get(self.right)

    # -- reading ---------------------------------------------------------------------

    def on_store_changed(self, message: StoreChanged) -> None:
        change = message.change
        keys = {self.left, self.right}
        if change.reset or keys & change.removed:
            self.tallies = {key: RunTally() for key in keys}
            self.totals = dict.fromkeys(keys)
        for key, pane in self.panes().items():
            if change.reset or key in change.removed:
                pane.reset()
            elif key in change.events or key in change.runs:
                pane.reload()  # what is new, or the run stopped (stale) or wrote again
        if change.reset or keys & (change.events | change.runs | change.removed):
            self.read_runs()

    def read_runs(self) -> None:
        if any(w.group == "compare-read" and not w.is_finished for w in self.workers):
            self._stale = True  # the read under way goes on; one more after it
            return
        self._read()

    @work(group="compare-read", exit_on_error=False)
    async def _read(self) -> None:
        while True:
            self._stale = False
            for key in (self.left, self.right):
                run = self.store.get(key)
                tally = self.tallies[key]
                if run is not None and run.event_count is not None and run.event_count < tally.read:
                    tally = self.tallies[key] = RunTally()  # rewritten shorter: read it again
                if run is not None and run.live:
                    self.counted_live.add(key)
                else:
                    self.counted_live.discard(key)
                try:
                    self.totals[key] = await tally_run(self.store, key, tally)
                    self.failures.pop(key, None)
                except SourceError as error:
                    self.failures[key] = str(error)
                if not self.is_attached:
                    return
                self.redraw()
            if not self._stale:
                return

    # -- drawing ---------------------------------------------------------------------

    def redraw(self) -> None:
        left, right = self._runs()
        self._header(left, right)
        self._share_axis(left, right)
        table = self.query_one(ComparisonTable)
        if left is None or right is None:
            gone = self.left if left is None else self.right
            table.show(None, inert(f"{gone.run_id} is no longer in {gone.source}"))
            return
        now = now_or(self.clock)
        down = self.store.snapshot().sources_down()

        def facts(run: RunView) -> RunFacts:
            return facts_of(
                run,
                self.tallies[run.key],
                now=now,
                # Counted while live, ended since: not whole until read again.
                events_total=None
                if run.key in self.counted_live and not run.live
                else self.totals[run.key],
                source_down=run.source in down,
            )

        comparison = compare(facts(left), facts(right))
        table.show(comparison, self._reading())

    def _share_axis(self, left: RunView | None, right: RunView | None) -> None:
        """Both timelines on one axis: each from its run's start, as long as the longer run.

        So a bar at the same place on both happened as long after each run
        began, and the shorter run ends short of the right edge.
        """
        now = now_or(self.clock)
        down = self.store.snapshot().sources_down()
        lengths = []
        for run in (left, right):
            if run is not None and run.started_at is not None:
                until = (run.last_event_at or now) if run.source in down and run.live else now
                lengths.append(run.duration(until) or 0.0)
        length = max(lengths, default=0.0)
        for run in (left, right):
            pane = self.panes().get(run.key) if run is not None else None
            if pane is None or run is None or run.started_at is None:
                continue
            pane.set_axis((run.started_at, run.started_at + max(length, 0.001)))

    def on_timeline_view_window_changed(self, message: TimelineView.WindowChanged) -> None:
        """Zoom or pan on one timeline moves the other the same way: one axis for both."""
        panes = self.panes()
        moved = next((pane for pane in panes.values() if pane.view is message.view), None)
        if moved is None:
            return
        origin = moved.view.full_axis()[0]
        for pane in panes.values():
            if pane is moved:
                continue
            if message.window is None:
                pane.view.set_window(None)
                continue
            start = pane.view.full_axis()[0]
            low, high = message.window
            pane.view.set_window((start + low - origin, start + high - origin))

    def on_timeline_view_chosen(self, message: TimelineView.Chosen) -> None:
        """Enter on a bar: its run's events, at the node's event."""
        message.stop()
        pane = next((p for p in self.panes().values() if p.view is message.view), None)
        if pane is None:
            return
        node = message.node
        key = pane.key
        if node.run_id:  # a child run: the run itself
            key = RunKey(pane.key.source, node.run_id)
        select = None if node.run_id else node.detail_position
        if (keys := self.run_keys) is not None:
            keys.open_run(self.store, key, self.clock, select=select)

    def _reading(self) -> str:
        said = []
        for name, key in (("A", self.left), ("B", self.right)):
            if key in self.failures:
                said.append(f"{name}: events not read: {self.failures[key]}")
                continue
            total, read = self.totals[key], self.tallies[key].read
            if total is None or read < total:
                of = "" if total is None else f" of {total:,}"
                said.append(f"{name}: reading events, {read:,}{of}")
        return inert("; ".join(said), single_line=True)

    def _header(self, left: RunView | None, right: RunView | None) -> None:
        width = max(self.size.width, 80) - 2
        down = self.store.snapshot().sources_down()
        lines = []
        for name, key, run in (("A", self.left, left), ("B", self.right, right)):
            text = Text(no_wrap=True, overflow="ellipsis")
            text.append(f"{name} ", "bold")
            if run is None:
                text.append(inert(f"{key.run_id}: gone", single_line=True))
                lines.append(text)
                continue
            glyph, word, _ = status_mark(run, source_down=run.source in down)
            text.append(f"{glyph} {word}  ")
            shown = run.run_id if width >= WIDE else short_id(run.run_id)
            text.append(inert(shown, single_line=True), "bold")
            who = skill_and_agent(run.skill, run.agent)  # as the runs table says it
            if who:
                text.append("  " + shorten(inert(who, single_line=True), 30))
            text.append("  " + shorten(inert(run.source, single_line=True), 30))
            if run.resumed_from and run.resumed_from == self.left.run_id and name == "B":
                text.append("  resumed from A")
            elif run.resumed_from:
                text.append("  resumed from " + short_id(run.resumed_from))
            text.truncate(width, overflow="ellipsis")
            lines.append(text)
        self._header_text = Text("\n").join(lines)
        self.query_one("#compare-header", Static).update(self._header_text)

    def key_tooltip(self, action: str, tooltip: str) -> str:
        return "Copy what this screen shows, as plain text" if action == "copy" else tooltip

    def copy_text(self) -> str:
        """What ``y`` copies here: both runs' ids and the comparison, as plain text."""
        table = self.query_one(ComparisonTable)
        lines = [self._header_text.plain, *(line.plain.rstrip() for line in table.lines(120))]
        return "\n".join(lines)

    # -- actions ---------------------------------------------------------------------

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_swap(self) -> None:
        self.left, self.right = self.right, self.left
        rows = self.query_one("#timelines", Vertical)
        second = rows.query(".timeline-row").last()
        rows.move_child(second, before=0)  # B's timeline goes on top, as it is A now
        for name, label in zip("AB", self.query(".timeline-label").results(Static), strict=True):
            label.update(name)
        self.redraw()
