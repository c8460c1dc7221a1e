"""One run: its header, its event stream and the detail of the selected event."""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from pathlib import PurePath
from typing import TYPE_CHECKING, ClassVar, Final

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal

from inspector import RunKey, RunStore, RunView, SourceError
from inspector.comparison import baseline_first, resume_partner
from inspector.events import (
    LedgerItem,
    LlmChunk,
    ReasoningChunk,
    ToolCall,
    call_of,
    raw_line,
)
from inspector.timeline import TimelineNode
from tui.model_call import model_call_near, shows_model_call
from tui.run_search import matches
from tui.runtop_screen import RuntopScreen
from tui.screens.compare import CompareScreen
from tui.screens.run_header import run_header
from tui.store_news import StoreChanged
from tui.text import inert
from tui.text.conversation import CallTiming
from tui.text.timeline import node_facts
from tui.typed_ahead import type_into
from tui.widgets.detail import EventDetail
from tui.widgets.event_list import EventList
from tui.widgets.key_bar import KeyBar
from tui.widgets.static_text import FittedStatic
from tui.widgets.timeline_pane import TimelinePane
from tui.widgets.timeline_view import TimelineView

if TYPE_CHECKING:
    from textual.widgets import Input

PREPARE_TIMELINE_AFTER: Final = 1.0
"""Seconds after the run's screen opens that its timeline's pane is built, hidden: after
the run's first screen (a huge run's takes a while: ``bench/tui.py``), before most T
presses."""


class RunScreen(RuntopScreen):
    """The event stream of one run."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "back",
            "Back",
            tooltip="Close the search or the timeline, else back to the runs",
        ),
        Binding("f", "follow", "Follow", tooltip="Keep the newest event selected and in view"),
        Binding("o", "show_all", "All output", tooltip="Show all of a long output"),
        Binding("w", "raw", "Raw line", tooltip="The selected event's ledger line"),
        Binding(
            "p",
            "parent",
            "Parent",
            tooltip="Open the run that started this one, or the one it was resumed from",
        ),
        Binding(
            "C",
            "compare",
            "Compare",
            tooltip="This run beside the run it resumed, or that resumed it",
        ),
        Binding("slash", "search", "Search", tooltip="Find text in the run's events; n / N step"),
        Binding("n", "next_match", "Next match", tooltip="The next match of the search"),
        # Shown with a search (check_action).
        Binding("N", "previous_match", "Previous match", tooltip="The match before"),
        Binding("T", "timeline", "Timeline", tooltip="Where the run's time went, node by node"),
        Binding(
            "s",
            "steps",
            "Steps",
            tooltip="List each step (graph nodes, chains), or fold them under the events "
            "before them again",
        ),
        *RuntopScreen.RUN_SCREEN_BINDINGS,
    ]

    MOST_NOTICES: ClassVar[int] = 1
    """One notice at a time, the newest, in the line under the run's counts, as a status
    line says a message (a second one would go over the detail pane)."""

    COPIES_ITS_TEXT: ClassVar[bool] = True

    CSS_PATH: ClassVar[list[str | PurePath]] = [
        "../widgets/event_list.tcss",
        "../widgets/detail.tcss",
        "../widgets/timeline_view.tcss",
        "run.tcss",
    ]
    """Its widgets' styles (read when a run is first opened, not at launch), then its own."""

    def __init__(
        self,
        store: RunStore,
        key: RunKey,
        *,
        clock: float | None = None,
        select: int | None = None,
    ) -> None:
        super().__init__()
        self.store = store
        self.key = key
        self.clock = clock
        self.select = select
        """The event to select on opening (a tool call chosen on the tool calls screen)."""
        self.show_raw = False
        """Show the selected event's ledger line under its detail (``w``)."""
        self._selected: list[LedgerItem] = []
        self._entry_size = 0
        """Events in the selected entry (more than handed over, for a very long paragraph)."""
        self._newest = False
        """The selected entry is the newest, followed: the detail shows its newest text."""
        self.search_text = ""
        """What ``/`` searched for last (``n`` and ``N`` step through its matches)."""
        self.matches: list[int] = []
        """Where the entries holding it start, in order, as far as the search has read."""
        self.matching_events = 0
        """The events that hold it (an entry, a paragraph say, may hold several)."""
        self._partner: tuple[int, RunView | None] | None = None
        """The run to compare with (``C``), and the store version it was found at."""
        self._search_box: Input | None = None
        self._timeline: TimelinePane | None = None
        """The timeline (T), once built: hidden until shown."""
        self._event_selection: EventList.Selected | None = None
        """The event stream's last selection, shown again when the timeline closes."""
        self._waiting: tuple[LedgerItem, int] | None = None
        """The model call shown waiting for its answer (its node's enter, and where it is):
        looked for again as the run writes more, so its answer shows once it comes."""

    def compose(self) -> ComposeResult:
        from textual.widgets import Input

        yield FittedStatic(id="run-header")
        with Horizontal():
            yield EventList(self.store, self.key, id="events")
            yield EventDetail(id="detail")
        # Hidden until ``/``: there, ready, to take keys typed right after it. Its text is
        # selected by ``/`` itself, not on focus (the focus arrives after what was typed).
        self._search_box = Input(
            placeholder="search this run (Enter; n / N step)", id="search", select_on_focus=False
        )
        yield self._search_box
        yield KeyBar()

    def on_mount(self) -> None:
        self.store.focus(self.key)
        self._header()
        events = self.query_one(EventList)
        events.run_live = self._live()
        events.focus()
        self.watch(events, "follow", lambda _: self._header(), init=False)
        self.watch(events, "steps_seen", lambda _: self.app.refresh_bindings(), init=False)
        if self.select is not None:
            events.select(self.select)
        self.set_timer(PREPARE_TIMELINE_AFTER, self._prepare_timeline)
        if not self.clock:
            self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        """A live run's clock runs in its header between its events, as the table's does."""
        run = self.store.get(self.key)
        if run is not None and run.live:
            self._header()

    def on_resize(self, event: events.Resize) -> None:
        self._header()  # its source gets the room the screen has now

    def on_screen_resume(self) -> None:
        """Back from the cancel dialog or the tool calls: show what changed meanwhile."""
        if self.is_mounted:
            self._header()
            self.query_one(EventList).reload()

    def current_run(self) -> RunView | None:
        """The run the keys act on: this one (``None`` once its source dropped it)."""
        return self.store.get(self.key)

    def _live(self) -> bool:
        """Whether the run may still write: its open calls are ``running``, else
        ``unfinished`` (:func:`~inspector.status_words.open_call_word`)."""
        run = self.store.get(self.key)
        return run is not None and run.live

    def copy_text(self) -> str:
        """What ``y`` copies here: the selected event's detail, else the run id."""
        return self.query_one(EventDetail).text or self.key.run_id

    def on_store_changed(self, message: StoreChanged) -> None:
        change = message.change
        pane = self._timeline
        if change.reset:
            self.query_one(EventList).reset()
            if pane is not None:
                pane.reset()
        elif self.key in change.events:
            self.query_one(EventList).reload()
            if self._waiting is not None and not self.timeline_shown():
                self._show_model_call(*self._waiting)
            if pane is not None and pane.display:
                pane.reload()  # a hidden one reads what is new when shown
        elif self.key in change.runs and pane is not None and pane.display:
            pane.reload()  # it went stale, or writes again: its open nodes are not as they were
        if self.key in change.runs:
            self._follow_liveness()
        if self.key in change.runs or self.key in change.removed or change.sources:
            self._header()  # a source's state too: a replay paused, sped up
            self.app.refresh_bindings()

    def _header(self) -> None:
        """The run's status, ids, counts, input and error (:mod:`tui.screens.run_header`)."""
        following = self.query_one(EventList).follow
        self.query_one("#run-header", FittedStatic).show(
            lambda cells: run_header(
                self.store, self.key, self.clock, following=following, width=cells
            )
        )

    def _follow_liveness(self) -> None:
        """The run went quiet (idle, stale) or writes again: its open calls' word changes
        in the event stream and in the detail showing one."""
        events = self.query_one(EventList)
        live = self._live()
        if events.run_live == live:
            return
        events.run_live = live
        if self._selected and not self.timeline_shown():
            self._show(self._selected)

    def on_event_list_selected(self, message: EventList.Selected) -> None:
        self._event_selection = message
        if self.timeline_shown():
            return  # the detail shows the timeline's node; this entry once it is left
        self._selected = message.items
        self._entry_size = message.entry.end - message.entry.start
        self._newest = message.newest
        self._show(message.items)

    def _show(self, items: list[LedgerItem]) -> None:
        detail = self.query_one(EventDetail)
        if items and all(isinstance(i, LlmChunk | ReasoningChunk) for i in items):
            raw = (
                raw_line(self.store, self.key, items[-1 if self._newest else 0])
                if self.show_raw
                else None
            )
            total = max(self._entry_size, len(items))
            detail.show_paragraph(items, raw, total=total, newest=self._newest)
            return
        shown = next((i for i in items if isinstance(i, ToolCall)), items[0] if items else None)
        raw = raw_line(self.store, self.key, shown) if self.show_raw and shown is not None else None
        self.workers.cancel_group(self, "model-call")
        self._waiting = None
        selected = self._event_selection
        call = call_of(self.store, self.key, shown)
        detail.show(shown, call, raw, live=self._live())  # at once, as selected
        if shows_model_call(shown) and selected is not None and not self.timeline_shown():
            self._show_model_call(items[0], selected.entry.start)  # then with its node's time

    @work(exclusive=True, group="model-call", exit_on_error=False)
    async def _show_model_call(self, item: LedgerItem, position: int) -> None:
        """A model call, or its model node, as its conversation (found near it in the run)."""
        try:
            found = await model_call_near(self.store, self.key, item, position)
        except SourceError:
            found = None
        shown = found.call if found is not None else item
        timing = found.timing if found is not None else None
        waiting = timing is not None and timing.waiting
        self._waiting = (item, position) if waiting else None
        # A call waiting is read from its node's enter: that is its line in the ledger.
        raw = raw_line(self.store, self.key, item if waiting else shown) if self.show_raw else None
        self.query_one(EventDetail).show(shown, None, raw, timing=timing, live=self._live())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "compare":
            return self._resume_partner() is not None  # hidden without one
        if action == "parent":
            return self._link() is not None  # hidden without a parent or a run resumed
        if action == "next_match":  # the next match, or in a replay the next event
            return bool(self.search_text) or self.replaying()
        if action == "steps":  # hidden in a run with no steps (as far as it is read)
            if not self.is_mounted or self.timeline_shown():  # it folds the event stream's
                return False
            events = self.query_one(EventList)
            return events.steps_seen or events.steps_shown
        if action == "previous_match":  # N: only through a search's matches (a replay has no
            return bool(self.search_text)  # step back), so ? lists it only then
        return super().check_action(action, parameters)

    def key_description(self, action: str, description: str) -> str:
        """What the key bar calls a key here: ``n`` steps a replay until something is
        searched; ``s`` says what it will do to the steps."""
        if action == "next_match" and not self.search_text:
            return "Step"
        if action == "steps" and self.is_mounted:
            return "Fold steps" if self.query_one(EventList).steps_shown else "Show steps"
        return description

    def key_tooltip(self, action: str, tooltip: str) -> str:
        if action == "next_match" and not self.search_text:
            return "One more event of the replay"
        if action == "copy":
            return "Copy the selected event's detail, else the run id"
        return tooltip

    def _link(self) -> tuple[str, str] | None:
        """Where ``p`` goes: the parent run, else the run this one was resumed from."""
        run = self.store.get(self.key)
        if run is None:
            return None
        if run.parent_run_id:
            return "parent run", run.parent_run_id
        if run.resumed_from:
            return "run it was resumed from", run.resumed_from
        return None

    def on_key(self, event: events.Key) -> None:
        """``p`` with nowhere to go says so (its key is hidden then, not pressed in vain).

        Keys typed in one burst ("/web", a paste, tmux's send-keys) all reach the event
        list before ``/`` has opened the search box: ``/`` opens it here, as it arrives,
        and the characters after it are typed into the box, not pressed as keys (``w``
        showed the raw line and the search box stayed empty).
        """
        box = self._search_box
        if box is not None and self.focused is box and event.is_printable:
            event.stop()
            event.prevent_default()
            assert event.character is not None
            type_into(box, event.character)
            return
        if event.key == "slash" and self.check_action("search", ()):
            event.stop()
            event.prevent_default()
            self.action_search()
            return
        if event.key == "p" and self._link() is None and self.store.get(self.key) is not None:
            self.notify("this run has no parent and was not resumed from another", timeout=2)

    def action_search(self) -> None:
        """Open the search box (``/``), focused at once, what it held selected."""
        box = self._search_box
        if box is None:
            return
        if box.has_class("open") and self.focused is box:
            return  # open already: what was typed since stays as typed
        box.add_class("open")
        # Focused now, not once the keys already typed are handled (``focus()`` waits its
        # turn).
        self.set_focus(box)
        box.action_select_all()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "search":
            return
        event.stop()
        self.search_text = event.value.strip()
        self.matches = []
        self.matching_events = 0
        events = self.query_one(EventList)
        events.search = self.search_text
        self._mark_in_detail(self.search_text)
        events.focus()
        self.app.refresh_bindings()  # n: the next match now, not a replay's step
        if self.search_text:
            event.input.border_title = "searching…"
            self._find(self.search_text)
        else:
            event.input.remove_class("open")

    @work(exclusive=True, group="search", exit_on_error=False)
    async def _find(self, text: str) -> None:
        box = self._search_box
        first = True
        try:
            async for found in matches(self.store, self.key, text):
                if self.matches and found.entries and found.entries[0] < self.matches[-1]:
                    for entry in found.entries:  # a phrase across two chunks, found later
                        insort(self.matches, entry)
                else:
                    self.matches.extend(found.entries)
                self.matching_events += found.events
                if first and self.matches and self.matches[-1] > self._cursor_entry():
                    first = False  # as in less: the first match after the line selected
                    self.action_next_match()
        except SourceError as error:
            self.notify(str(error), severity="error", markup=False)
            return
        if first and self.matches:
            self.action_next_match()  # none after it: round to the first
        if box is not None:
            self._say_where()
        if not self.matches:
            self.notify(f"{text!r} is not in this run", timeout=2, markup=False)

    def _cursor_entry(self) -> int:
        """The ledger position where the entry selected starts (-1: none is)."""
        events = self.query_one(EventList)
        return events.position_of(events.entry_of(events.cursor).start) if events.count else -1

    def is_searching(self) -> bool:
        """Whether a search is still reading the run."""
        return any(worker.group == "search" and not worker.is_finished for worker in self.workers)

    def _say_where(self) -> None:
        box = self._search_box
        if box is None:
            return
        if not self.matches:
            box.border_title = Text(inert(f"no match for {self.search_text}", single_line=True))
            return
        start = self._cursor_entry()
        at = bisect_left(self.matches, start) if start >= 0 else 0
        here = at < len(self.matches) and start >= 0 and self.matches[at] == start
        entries, hits = len(self.matches), self.matching_events
        told = f"{hits:,} match{'' if hits == 1 else 'es'}"
        where = (
            f"entry {at + 1} of {entries:,}, {told}"
            if here
            else f"{entries:,} entr{'y' if entries == 1 else 'ies'}, {told}"
        )
        box.border_title = Text(f"{where}  (n next, N previous)")

    def action_next_match(self) -> None:
        if not self.search_text:
            self.post_message(self.ReplayStep())  # n steps a replay
            return
        self._jump(forward=True)

    def action_previous_match(self) -> None:
        if self.search_text:
            self._jump(forward=False)

    def _jump(self, *, forward: bool) -> None:
        """To the next (or previous) entry holding a match, wrapping around as less does."""
        if not self.matches:
            return
        events = self.query_one(EventList)
        start = self._cursor_entry()  # matches are ledger positions
        if forward:
            at = bisect_right(self.matches, start)
            target = self.matches[at] if at < len(self.matches) else self.matches[0]
        else:
            at = bisect_left(self.matches, start) - 1
            target = self.matches[at] if at >= 0 else self.matches[-1]
        events.follow = False
        events.cursor = events.index_of(target)
        self._say_where()

    async def action_back(self) -> None:
        """Escape: closes the search box if it is open (one thing at a time), else the
        timeline if it is shown, else goes back."""
        box = self._search_box
        if box is not None and box.has_class("open"):
            self.close_search()
            return
        if self.timeline_shown():
            await self.action_timeline()
            return
        self.app.pop_screen()

    def close_search(self) -> None:
        """Close the search box and forget the search: its marks go, ``n`` steps a replay."""
        box = self._search_box
        if box is not None:
            box.remove_class("open")
            box.border_title = None
        self.workers.cancel_group(self, "search")
        self.search_text = ""
        self.matches = []
        self.matching_events = 0
        events = self.query_one(EventList)
        events.search = ""
        self._mark_in_detail("")
        events.focus()
        self.app.refresh_bindings()

    def _mark_in_detail(self, text: str) -> None:
        """The detail marks what is searched for, as the event list does: shown again."""
        detail = self.query_one(EventDetail)
        if detail.search != text:
            detail.search = text
            if self._selected and not self.timeline_shown():
                self._show(self._selected)

    # -- the timeline (T) -------------------------------------------------------------

    def timeline_shown(self) -> bool:
        return self._timeline is not None and self._timeline.display

    async def _prepare_timeline(self) -> None:
        """Build the timeline's pane, hidden and unread, once the run is on screen: ``T``
        then only shows it (and reads the run's events)."""
        if self._timeline is None:
            await self._mount_timeline(shown=False)

    async def _mount_timeline(self, *, shown: bool) -> TimelinePane:
        pane = TimelinePane(self.store, self.key, clock=self.clock, id="timeline")
        pane.display = shown
        self._timeline = pane  # before the await: T meanwhile finds it and shows it
        await self.query_one(Horizontal).mount(pane, before=self.query_one(EventDetail))
        return pane

    async def action_timeline(self) -> None:
        """Show the timeline in place of the event stream, or the event stream again."""
        events = self.query_one(EventList)
        if self._timeline is None:
            pane = await self._mount_timeline(shown=True)
        else:
            pane = self._timeline
            pane.display = not pane.display
        events.display = not pane.display
        if pane.display:
            pane.view.focus()
            pane.reload()
            node = pane.view.node_at(pane.view.cursor)
            if node is not None:
                self._show_node(node, pane.view.full_axis()[0])
        else:
            events.focus()
            if self._event_selection is not None:
                self.on_event_list_selected(self._event_selection)

    def on_timeline_view_highlighted(self, message: TimelineView.Highlighted) -> None:
        self._show_node(message.node, message.view.full_axis()[0])

    @work(exclusive=True, group="timeline-detail", exit_on_error=False)
    async def _show_node(self, node: TimelineNode, origin: float) -> None:
        """The node's facts, above its most telling event (a tool call with its result)."""
        item: LedgerItem | None = None
        where = node.detail_position
        if where is not None:
            try:
                found = await self.store.events(self.key, where, where + 1)
            except SourceError:
                found = []
            item = found[0] if found else None
        facts = node_facts(node, origin)
        call = call_of(self.store, self.key, item)
        if call is not None:
            facts = facts[1:]  # the call's own heading says its name, outcome and time
        heading = [
            Text(line, style="bold" if n == 0 and call is None else "dim")
            for n, line in enumerate(facts)
        ]
        self._selected = [item] if item is not None else []
        self._entry_size = len(self._selected)
        self._newest = False
        raw = raw_line(self.store, self.key, item) if self.show_raw and item is not None else None
        timing = CallTiming(node.duration)  # a model call's rate, from its bar's length
        detail = self.query_one(EventDetail)
        detail.show(item, call, raw, heading=heading, timing=timing, live=self._live())

    def on_timeline_view_chosen(self, message: TimelineView.Chosen) -> None:
        """Enter on a node: the event stream, at the node's event."""
        node = message.node
        if node.run_id is not None:  # a child run: its own screen
            child = RunKey(self.key.source, node.run_id)
            if self.store.get(child) is not None:
                self.app.push_screen(RunScreen(self.store, child, clock=self.clock))
                return
        where = node.detail_position if node.detail_position is not None else node.position
        if where is None:
            self.notify("this node has no event in this run's ledger", timeout=2)
            return
        if self._timeline is not None:
            self._timeline.display = False
        events = self.query_one(EventList)
        events.display = True
        events.focus()
        events.select(where)

    def action_follow(self) -> None:
        events = self.query_one(EventList)
        events.follow = not events.follow
        if events.follow and events.count:
            events.show_last()
        run = self.store.get(self.key)
        if run is not None and not run.live:  # no new events will come: say what f did
            said = "the newest event selected: the run has ended" if events.follow else "paused"
        else:
            said = "following new events" if events.follow else "follow paused"
        self.notify(said, timeout=1.5)

    def action_steps(self) -> None:
        """``s``: list the run's steps, or fold them again (folded when the screen opens)."""
        events = self.query_one(EventList)
        events.steps_shown = not events.steps_shown
        self.app.refresh_bindings()
        self.notify("steps listed" if events.steps_shown else "steps folded", timeout=1.5)

    def action_show_all(self) -> None:
        """``o``: the selected output whole, or cut again; says so when nothing was cut."""
        detail = self.query_one(EventDetail)
        if not detail.show_all and not detail.cut:
            self.notify("the output is shown whole: nothing is cut", timeout=2)
            return
        detail.show_all = not detail.show_all
        self._show_again()
        self.notify(
            "shown whole (o cuts long outputs again)"
            if detail.show_all
            else "long outputs cut again (o shows them whole)",
            timeout=1.5,
        )

    def action_raw(self) -> None:
        self.show_raw = not self.show_raw
        self._show_again()

    def _show_again(self) -> None:
        """The detail drawn again (``o``, ``w``): the timeline's node under its facts."""
        pane = self._timeline
        node = pane.view.node_at(pane.view.cursor) if pane is not None else None
        if pane is not None and node is not None and self.timeline_shown():
            self._show_node(node, pane.view.full_axis()[0])
        else:
            self._show(self._selected)

    def _resume_partner(self) -> RunView | None:
        """The run to compare this one with (looked for once per store version: the key
        bar asks on every change, and finding who resumed a run reads every run)."""
        version = self.store.snapshot().version
        if self._partner is None or self._partner[0] != version:
            self._partner = (version, resume_partner(self.store, self.key))
        return self._partner[1]

    def action_compare(self) -> None:
        """Compare this run with the run it resumed, or the run that resumed it."""
        partner = self._resume_partner()
        run = self.store.get(self.key)
        if partner is None or run is None:
            self.notify(
                "this run resumes no run and was not resumed: mark two runs on the runs "
                "list (space), then C compares them",
                severity="warning",
                timeout=3,
            )
            return
        left, right = baseline_first(run, partner)
        self.app.push_screen(CompareScreen(self.store, left.key, right.key, clock=self.clock))

    def action_parent(self) -> None:
        """To the parent run, or the run this one was resumed from (``p``)."""
        link = self._link()
        if link is None:
            self.notify("this run has no parent and was not resumed from another", timeout=2)
            return
        what, run_id = link
        target = RunKey(self.key.source, run_id)
        if self.store.get(target) is None:
            self.notify(
                inert(f"the {what}, {run_id}, is not in {self.key.source}"),
                severity="warning",
                markup=False,
            )
            return
        # Stacked, not swapped: Escape comes back to this run, as from any drill-down.
        self.app.push_screen(RunScreen(self.store, target, clock=self.clock))
