"""The home screen: every run, live, with a preview of the selected one."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Final

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.widgets import Input

from inspector import (
    FilterError,
    RunFilter,
    RunKey,
    RunStore,
    RunView,
)
from inspector.actions import asked
from inspector.content_search import ContentSearch, files_of
from inspector.filters import FIELDS as FILTER_FIELDS
from inspector.replay import ReplayControls
from tui.columns import COLUMN_KEYS
from tui.screens.runs_preview import PreviewingScreen
from tui.store_news import StoreChanged
from tui.text import HOW_TO_START, inert
from tui.text.runs import now_or, short_id
from tui.text.spending import spending_said
from tui.typed_ahead import type_into
from tui.views import View, ViewBook, ViewNotSaved, load_views, save_view
from tui.widgets.filter_box import FilterBox
from tui.widgets.key_bar import KeyBar
from tui.widgets.run_preview import RunPreview
from tui.widgets.run_table import (
    SORT_KEYS,
    RowTally,
    RunTable,
    column_at,
    header_text,
    sort_runs,
    tree_branches,
    tree_order,
)
from tui.widgets.run_tally import recorded_columns
from tui.widgets.source_line import SourceLine

BOX_KEYS: Final = frozenset(FilterBox.EDITING) | FilterBox.RECALLING
"""The keys the filter box edits with as they come (``FilterBox.edits_with``)."""


DESCENDING: Final = frozenset({"started", "duration", "events", "tokens"})
"""The columns sorted largest (newest) first when first sorted by."""

MARK_SAYS: Final = "Mark the selected run to compare, or unmark it"

SEARCH_NEWS: Final = 0.05
"""Seconds between two batches of what the search of the runs' files found (``has:``)."""

OFFERED_NOT_APPLIED: Final = "the last filter, not applied: Enter applies it"
"""What the filter box says under a filter it offers (the last one) that the table does
not show yet: typing replaces it, Enter applies it."""


class RunsScreen(PreviewingScreen):
    """The live table of runs."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # A priority binding: run as the app takes the key from the terminal, before it hands
        # on the keys that came after it, so those reach the box (see action_filter).
        Binding(
            "/",
            "filter",
            "Filter",
            priority=True,
            tooltip="The runs by "
            + ", ".join(f"{field}:" for field in FILTER_FIELDS)
            + ", text, /regex/",
        ),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("s", "sort", "Sort", tooltip="Cycle the column the runs are sorted by"),
        Binding(
            "S",
            "reverse",
            "Reverse",
            show=False,
            tooltip="The sort the other way round, by the same column",
        ),
        Binding("T", "tree", "Tree", tooltip="Child runs under their parent"),
        Binding("space", "mark", "Mark", tooltip=MARK_SAYS),
        Binding("m", "toggle_mark", "Mark", tooltip=MARK_SAYS),
        Binding("C", "compare", "Compare", tooltip="The two marked runs side by side"),
        # Priority bindings, as / is: the views' list and the save box open as the app
        # takes v or V, so a name typed in the same burst follows to their boxes, not to
        # the table under them, where its letters were lost or taken for the table's keys.
        Binding(
            "v",
            "views",
            "Views",
            show=False,
            priority=True,
            tooltip="Show the runs through a view: a filter, sort and columns kept",
        ),
        Binding(
            "V",
            "save_view",
            "Save view",
            show=False,
            priority=True,
            tooltip="Keep the table's filter, sort and columns as a view (v chooses it)",
        ),
        *PreviewingScreen.RUN_SCREEN_BINDINGS,
    ]

    class ContentsJudged(Message):
        """A batch of runs the search for the filter's ``has:`` has judged (in a thread)."""

        def __init__(
            self,
            search: ContentSearch,
            verdicts: list[tuple[RunView, bool]],
            searched: int,
            total: int,
        ) -> None:
            self.search = search
            self.verdicts = verdicts
            self.searched = searched
            self.total = total
            super().__init__()

    class FilterApplied(Message):
        """A filter was applied on Enter (or at launch): the app offers it again."""

        def __init__(self, text: str) -> None:
            self.text = text
            super().__init__()

    CSS_PATH = "runs.tcss"
    RUN_KEYS_WITHOUT_A_RUN = True

    sort: reactive[str] = reactive("started", init=False)
    """The column the runs are sorted by (``s``, or a click on its title)."""
    reverse: reactive[bool] = reactive(True, init=False)
    """The sort the other way round (``S``, or a second click)."""
    as_tree: reactive[bool] = reactive(False, init=False, bindings=True)
    """Each run's child runs right under it, indented (``T``: the bar says ``List`` then)."""
    filter_text: reactive[str] = reactive("", init=False)
    """The filter applied, as typed."""
    invalid_filter: reactive[str] = reactive("", init=False)
    """What the box holds when it does not parse: said beside the filter applied."""
    searching: reactive[str] = reactive("", init=False)
    """How far the search of the runs' files for ``has:`` has got, while it runs."""
    view_name: reactive[str] = reactive("", init=False)
    """The view the table was last shown through, if one was (the line above says it)."""

    def __init__(
        self,
        store: RunStore,
        *,
        clock: float | None = None,
        filter_text: str = "",
        remembered: str = "",
        starting: str = "",
        views_file: Path | None = None,
        replay: ReplayControls | None = None,
    ) -> None:
        super().__init__()
        self.replay = replay
        """The replays open, if any: what their recordings hold has its columns from the
        start (a DAMAGED column came once a replay played its damaged line)."""
        self.views_file = views_file
        """Where views are kept (``$RUNTOP_HOME/views.toml``); ``None``: no views."""
        self.starting = starting
        """What the table says until the first run comes, if more than "No runs yet" (the
        demo: its agents are starting)."""
        self.store = store
        self.clock = clock
        self.run_filter: RunFilter | None = None
        self.set_reactive(RunsScreen.filter_text, filter_text)
        self.remembered = remembered
        """The last session's filter: in the box when ``/`` opens it, not applied until Enter."""
        self._offered: str | None = filter_text or remembered
        """What the filter box held when opened: applied on Enter, not as it appears."""
        self._keys_to_box = False
        """``/`` reached the screen by way of the table, not as the app took it from the
        terminal (where its binding has it first): the keys after it that reach the table
        are typed into the box, in order, never run as the table's (``c`` would open a
        cancel). Until the box closes, or focus moves from it (a click)."""
        self._box_was_focused = False
        self._history = [text for text in dict.fromkeys((remembered, filter_text)) if text]
        """The filters applied this session (the last session's first), oldest first: ``up``
        in the box recalls them."""
        self._settled: tuple[RunFilter | None, str] = (None, "")
        """The last filter applied on Enter (or at start): what the table goes back to while
        the box holds one that does not parse, not a prefix of it typed on the way
        (``status`` of ``status:bogus``)."""
        self.marked: list[RunKey] = []
        """The runs marked to compare (two at most), in the order marked."""
        self._header_said = ""
        """What the column titles say now: unchanged, they are not updated (nor laid out)."""
        self._shown_version = -1
        """The store's version the table was last filled from."""
        self._keys_said: tuple[object, ...] = ()
        """What the keys' states last read of the store (:meth:`_keys_read`)."""
        self._contents: ContentSearch | None = None
        """The search of the runs' files for the filter's ``has:`` phrases, if it has any."""
        self._judged: dict[RunKey, tuple[RunView, bool]] = {}
        """Each run the search judged: the view it judged, and whether the run passed. A
        run whose view changed since (it grew) is judged again."""
        self._stop_search = threading.Event()
        """Set to stop the search running (the filter changed, the screen went)."""
        self._judging = False
        """A pass of the search is judging runs: the next waits for its end."""

    def compose(self) -> ComposeResult:
        yield SourceLine(id="sources").data_bind(
            RunsScreen.filter_text,
            RunsScreen.as_tree,
            RunsScreen.searching,
            RunsScreen.view_name,
            filter_invalid=RunsScreen.invalid_filter,
        )
        # Hidden until ``/``, not mounted by it: keys typed while it was being mounted would
        # go on to the table and reach the box by way of the screen, after keys that went to
        # the box once it had focus (Enter could overtake the filter's letters).
        yield FilterBox(
            self._offered or "",
            history=self._history,
            placeholder="filter: text, status:running, skill:deploy, since:1h, -status:ok",
            id="filter",
        )
        yield Static(id="filter-more")  # what the box says that its bottom line has no room for
        with Vertical():
            yield Static(id="header")
            yield Static(id="empty")
            yield RunTable(clock=self.clock, id="runs").data_bind(sort_key=RunsScreen.sort)
        yield RunPreview(id="preview")
        yield KeyBar()

    def on_mount(self) -> None:
        if self.filter_text:
            self._apply_filter(self.filter_text)
        self.refresh_runs()
        # At once, not later: later, it took focus from the box a ``/`` typed at launch opened.
        self.set_focus(self.query_one(RunTable))
        if not self.clock:
            self.set_interval(1.0, self._tick)

    def on_screen_resume(self) -> None:
        """Back on top: catch up with what changed while another screen had the changes."""
        if self.is_mounted and self._behind():
            self.refresh_runs()

    def _behind(self) -> bool:
        """Whether the store changed since the table was last filled.

        At launch the screen is mounted, resumed and told of the first load
        in turn, all with the same 10,000 runs: each refresh after the first
        was wasted work before the first frame.
        """
        return self.store.snapshot().version != self._shown_version

    def on_resize(self) -> None:
        """The column titles are laid out for the width, as the table's columns are."""
        if self.is_mounted:
            self.refresh_runs()

    def _tick(self) -> None:
        table = self.query_one(RunTable)
        table.tick()
        self.query_one(SourceLine).burn = spending_said(table.rows, now_or(self.clock))

    # -- data ----------------------------------------------------------------------------

    def on_store_changed(self, message: StoreChanged) -> None:
        if not self._behind():
            return  # shown already (the screen was filled after the change was posted)
        self.refresh_runs()
        self._search_contents()
        keys_read = self._keys_read()
        if keys_read != self._keys_said:
            self._keys_said = keys_read
            self.app.refresh_bindings()  # what c, r, a and d can do follows the selected run

    def _keys_read(self) -> tuple[object, ...]:
        """What the keys' states read of the store: asked again only when it changed (the
        key bar asked every binding ten times a second while a hundred runs streamed)."""
        run = self.current_run()
        refusals = (
            [self.store.refusal(run.key, kind) for kind in asked()] if run is not None else []
        )
        marked = [key for key in self.marked if self.store.get(key) is not None]
        return (run.key if run else None, *refusals, *marked, self.store.snapshot().sources)

    def current_run(self) -> RunView | None:
        """The run the keys act on: the selected one."""
        return self.query_one(RunTable).selected

    def on_run_table_opened(self, message: RunTable.Opened) -> None:
        # Not at launch: the first frame does not need the run screen and its widgets. The
        # app imports them just after that frame; here if a run is opened sooner.
        from tui.screens.run import RunScreen

        self.app.push_screen(RunScreen(self.store, message.run.key, clock=self.clock))

    def refresh_runs(self) -> None:
        snapshot = self.store.snapshot()
        self._shown_version = snapshot.version
        runs = snapshot.filtered(self.run_filter, now=self.clock)
        if self._contents is not None:
            runs = [run for run in runs if self._passed(run)]
        if self.sort != "started" or not self.reverse:
            runs = sort_runs(runs, self.sort, self.reverse, now_or(self.clock))
        table = self.query_one(RunTable)
        branches: dict[RunKey, str] = {}
        if self.as_tree:
            runs, depths = tree_order(runs)
            branches = tree_branches(runs, depths)
        if branches != table.branches:
            # A child come after the last: its elder sibling's └ is a ├ now, its run unchanged.
            table.branches = branches
            table.refresh()
        down = snapshot.sources_down()
        had_runs = bool(table.rows)
        if self.replay:
            table.kept_columns = recorded_columns(self.replay.recording)
        table.set_rows(runs, down)
        if bool(runs) != had_runs:
            self.refresh_bindings()  # Enter and the marks are greyed on an empty table, or not
        if self.marked:
            self.marked = [key for key in self.marked if self.store.get(key) is not None]
        table.set_marked(frozenset(self.marked))
        width = table.lines_width(max(self.size.width, 80))
        header = header_text(width, self.sort, self.reverse, tree=self.as_tree)
        if header.markup != self._header_said:
            self._header_said = header.markup
            self.query_one("#header", Static).update(header, layout=False)  # a fixed height
        replaying = any(not source.live for source in snapshot.sources)
        replayed_at = snapshot.replayed_at if replaying else {}
        if replayed_at != table.replayed_at:
            table.replayed_at = replayed_at
            table.refresh()
        line = self.query_one(SourceLine)
        line.sources = snapshot.sources
        line.replayed_at = replayed_at
        line.total, line.shown = len(snapshot.runs), len(runs)
        line.by_status, line.spent = table.tally.totals()
        line.burn = spending_said(runs, now_or(self.clock))
        empty = self.query_one("#empty", Static)
        if not runs:
            if snapshot.runs and self.searching:
                message = f"Searching the runs' files for {self.filter_text!r}…"
            elif snapshot.runs:
                message = f"No run matches the filter {self.filter_text!r}. Escape clears it."
                unsearched = self._unsearched(snapshot.runs)
                if unsearched:  # has: found nothing where it could not look
                    message += (
                        f" has: searches the runs' files, and the runs of {inert(unsearched)}"
                        " have none here."
                    )
            else:
                where = inert(", ".join(source.description for source in snapshot.sources))
                message = self.starting or (
                    f"No runs yet in {where or 'any source'}. New runs appear here live. "
                    f"{HOW_TO_START}"
                )
                if any(source.opening for source in snapshot.sources):
                    message = f"Opening {where}…"  # not "no runs": they are not known yet
                if any(not source.available for source in snapshot.sources):
                    message = (
                        f"Nothing to show: {where} cannot be read (see above). New runs "
                        f"there appear here once it can be. {HOW_TO_START}"
                    )
            empty.update(Text(message))
            empty.add_class("shown")
        else:
            empty.remove_class("shown")
        self._preview(table.selected)

    # -- events -------------------------------------------------------------------------------

    def on_run_table_selected(self, message: RunTable.Selected) -> None:
        self._preview(message.run)
        self.app.refresh_bindings()  # what c, r, a and d can do depends on the run

    def action_filter(self) -> None:
        """Open the filter box, with the last filter in it to edit (typing replaces it).

        The box takes focus at once, in the app's turn with ``/`` (the binding
        has priority): each key after ``/`` goes to the box, in order. Focus
        moved later, and keys of one burst reached the box by two ways, one
        slower: Enter could come before the filter's letters.
        """
        box = self.query_one(FilterBox)
        self._offered = box.value
        box.open()
        box.add_class("open")
        self.set_focus(box)
        box.action_select_all()
        if box.value and box.value.strip() != self.filter_text:
            # Shown in the box but not applied (the table still shows every run): said so.
            box.say(OFFERED_NOT_APPLIED)

    def on_key(self, event: events.Key) -> None:
        """``/`` come by way of the table opens the box; the keys after it on their way to
        the table (handed to it with ``/``) are typed into the box."""
        if event.key == "slash" and not self._keys_to_box:
            if self.check_action("filter", ()):
                event.stop()
                event.prevent_default()
                self.action_filter()
                self._keys_to_box = True
            return
        if not self._keys_to_box:
            self._say_why_greyed(event.key)
            return
        if not (event.is_printable or event.key in FilterBox.SUBMITTING or event.key in BOX_KEYS):
            return
        event.stop()
        event.prevent_default()
        self._type_into(self.query_one(FilterBox), event.key, event.character)

    def _say_why_greyed(self, key: str) -> None:
        """A mark key pressed on an empty table, its binding greyed: said why, as a greyed
        ``c`` says why, rather than nothing at all."""
        action = {"space": "mark", "m": "toggle_mark", "C": "compare"}.get(key)
        if action is None or self.check_action(action, ()) is not None:
            return
        if action == "compare":
            self.action_compare()  # says what is missing
        else:
            self.notify("no run is selected to mark", severity="warning", timeout=2)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Focus moved from the open box to the table (a click): keys are the table's again."""
        box = self.query_one(FilterBox)
        if event.widget is not box and self._box_was_focused:
            self._keys_to_box = False
        self._box_was_focused = event.widget is box

    def _type_into(self, box: FilterBox, key: str, character: str | None) -> None:
        """``key`` as the box would have taken it, had it had focus."""
        if box.held is not None:
            box.held.append((key, character))  # after Enter: whose is known once it applies
            return
        if not box.takes(key):
            return
        if key in box.SUBMITTING:
            box.submit_now()
        elif box.edits_with(key):
            box.edit(key)
        elif character:
            type_into(box, character)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "filter":
            return not isinstance(self.focused, FilterBox)  # there, / is typed in it
        if action in {"views", "save_view"} and isinstance(self.focused, FilterBox):
            return False  # there, v and V are typed in it (priority bindings: asked first)
        if action in {"mark", "toggle_mark"}:
            # While a replay is open, space is its pause and play (the app's): m marks. One
            # key marks at a time, and the bar and ? name that one.
            if (action == "toggle_mark") != self.replaying():
                return False
            # Greyed (and not offered by the palette) while the table shows no run.
            return True if self._shows_runs() else None
        if action in {"views", "save_view"}:  # not offered where no views are kept
            return True if self.views_file is not None else None
        if action == "compare":  # greyed, and not offered, until two runs are marked
            return True if len(self._marked_here()) >= 2 else None
        return super().check_action(action, parameters)

    def _marked_here(self) -> list[RunKey]:
        """The runs marked that the store still has."""
        return [key for key in self.marked if self.store.get(key) is not None]

    def _shows_runs(self) -> bool:
        """Whether the table shows a run (none: the keys that act on one are greyed)."""
        tables = self.query(RunTable)
        return bool(tables) and bool(tables.first().rows)

    def on_filter_box_said_more(self, message: FilterBox.SaidMore) -> None:
        more = self.query_one("#filter-more", Static)
        more.update(Text(message.rest))
        more.set_class(bool(message.rest), "shown")

    def action_clear_filter(self) -> None:
        self._keys_to_box = False
        box = self.query_one(FilterBox)
        box.value = ""
        box.remove_class("open")
        self._apply_filter("")
        self.set_focus(self.query_one(RunTable))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        box = self.query_one(FilterBox)
        if event.input is not box:
            return
        held = box.release()
        if self._apply_filter(event.value):
            self._keys_to_box = False
            box.remove_class("open")
            self.set_focus(self.query_one(RunTable))  # now: the keys the app takes next are its
        # The keys typed after Enter, in one burst: the table's once the filter applies (?
        # opens the keys, j moves down), the box's again if it is refused. Sent round the
        # app as the terminal's are, after the focus has moved; sent by the app, as a key
        # sent by the screen would not come back to the app's bindings from the table.
        for key, character in held:
            self.app.post_message(events.Key(key, character).set_sender(self.app))

    def on_input_changed(self, event: Input.Changed) -> None:
        """The filter applies as it is typed; one that does not parse says why in the box."""
        if event.input.id != "filter" or event.value == self._offered:
            return  # the last session's filter, offered: applied only on Enter
        self._offered = None
        box = self.query_one(FilterBox)
        if box.said == OFFERED_NOT_APPLIED:
            box.say("")  # typed over: what is typed applies
        self._apply_filter(event.value, remember=False)

    def _apply_filter(self, text: str, *, remember: bool = True) -> bool:
        box = self.query_one(FilterBox)
        try:
            self.run_filter = RunFilter.parse(text, now=self.clock) if text.strip() else None
        except FilterError as error:
            if not box.has_class("open"):  # given at launch (--filter): the box is not open
                self.notify(str(error), title="Filter", severity="error", markup=False)
            else:
                said = f"not applied: {error}"
                box.say(said)
                box.add_class("invalid")
                self.invalid_filter = text.strip()
            self.run_filter, self.filter_text = self._settled
            self._start_search()
            self.refresh_runs()  # the line says the filter applied, and that this one is not
            return False
        box.say("")
        box.remove_class("invalid")
        self.invalid_filter = ""
        self.filter_text = text.strip()
        if remember:
            self._settled = (self.run_filter, self.filter_text)
            if self.filter_text:  # offered again by up in the box, as a shell's history does
                if self.filter_text in self._history:
                    self._history.remove(self.filter_text)
                self._history.append(self.filter_text)
            self.post_message(self.FilterApplied(self.filter_text))
        self._start_search()
        self.refresh_runs()
        return True

    # -- has: the runs' files searched -----------------------------------------------------

    def _passed(self, run: RunView) -> bool:
        """Whether the search found that ``run`` passes the filter's ``has:`` (a run not
        judged yet is not shown: the table fills in as the search goes)."""
        judged = self._judged.get(run.key)
        return judged is not None and judged[1]

    def _start_search(self) -> None:
        """Search the runs' files for the filter's ``has:`` phrases, if they changed: the
        search before is stopped, and a filter with the same phrases keeps what it found."""
        phrases = self.run_filter.phrases if self.run_filter is not None else ()
        said = [(phrase.text, negated) for phrase, negated in phrases]
        if self._contents is not None and said == [
            (phrase.text, negated) for phrase, negated in self._contents.phrases
        ]:
            self._search_contents()  # more runs may pass the other terms now
            return
        self._stop_search.set()
        self._stop_search = threading.Event()
        self._judged = {}
        self._judging = False  # the pass of the search stopped is no longer waited for
        self._contents = ContentSearch(phrases) if phrases else None
        self.searching = ""
        self._search_contents()

    def _search_contents(self) -> None:
        """Judge the runs the other terms pass that were not judged as they are now (new,
        or grown since); one search at a time: a change while one runs waits for its end."""
        search = self._contents
        if search is None or self._judging:
            return
        runs = [
            run
            for run in self.store.snapshot().filtered(self.run_filter, now=self.clock)
            if (judged := self._judged.get(run.key)) is None or judged[0] is not run
        ]
        if runs:
            if not self._judged:
                self.searching = f"searched 0 of {len(runs):,} runs"
            self._judging = True
            self._judge(search, runs, self._stop_search)

    def _unsearched(self, runs: tuple[RunView, ...]) -> str:
        """The sources whose runs a ``has:`` of the filter could not search (an attach
        server's, a manager's without a ledger folder: no files here), named."""
        if self.run_filter is None or not self.run_filter.phrases:
            return ""
        return ", ".join(sorted({run.source for run in runs if not files_of(run.summary)}))

    @work(thread=True, group="has", exit_on_error=False)
    def _judge(self, search: ContentSearch, runs: list[RunView], stop: threading.Event) -> None:
        """In a thread: whether each run passes, posted in batches as they are judged."""
        verdicts: list[tuple[RunView, bool]] = []
        sent = time.monotonic()
        for number, run in enumerate(runs, 1):
            passed = search.passes(run.summary, stop=stop)
            if stop.is_set():
                return  # what a stopped search said is not known to be true
            verdicts.append((run, passed))
            if number == len(runs) or time.monotonic() - sent >= SEARCH_NEWS:
                self.post_message(self.ContentsJudged(search, verdicts, number, len(runs)))
                verdicts, sent = [], time.monotonic()

    def on_runs_screen_contents_judged(self, message: RunsScreen.ContentsJudged) -> None:
        if message.search is not self._contents:
            return  # a search stopped since
        for run, passed in message.verdicts:
            self._judged[run.key] = (run, passed)
        done = message.searched == message.total
        if done:
            self._judging = False
            self.searching = ""
        elif self.searching:
            self.searching = f"searched {message.searched:,} of {message.total:,} runs"
        self.refresh_runs()
        if done:
            self.call_later(self._search_contents)  # runs that changed while it ran

    def on_unmount(self) -> None:
        self._stop_search.set()

    def key_description(self, action: str, description: str) -> str:
        """What a key does now: with the runs shown as a tree, ``T`` lists them again
        (as htop's tree key says ``List``)."""
        if action == "tree" and self.as_tree:
            return "List"
        return description

    def key_tooltip(self, action: str, tooltip: str) -> str:
        if action == "tree" and self.as_tree:
            return "The runs as a list again, not a tree"
        return tooltip

    def action_mark(self) -> None:
        self.toggle_mark()

    def action_toggle_mark(self) -> None:
        self.toggle_mark()

    def toggle_mark(self) -> None:
        """Mark the selected run to compare, or unmark it; two runs at most."""
        run = self.current_run()
        if run is None:
            self.notify("no run is selected to mark", severity="warning", timeout=2)
            return
        if run.key in self.marked:
            self.marked.remove(run.key)
        elif len(self.marked) >= 2:
            self.notify(
                "two runs are marked already: C compares them; "
                "unmark one first (space on a marked run)",
                severity="warning",
                timeout=3,
            )
            return
        else:
            self.marked.append(run.key)
            said = "marked: C compares the two" if len(self.marked) == 2 else "marked: mark another"
            self.notify(said, timeout=1.5)
        self.query_one(RunTable).set_marked(frozenset(self.marked))
        self.refresh_bindings()  # a second mark makes C compare, an unmark greys it

    def action_compare(self) -> None:
        """Compare the two marked runs, the one resumed (or started first) as A."""
        runs = [run for key in self.marked if (run := self.store.get(key)) is not None]
        if len(runs) < 2:
            have = "no run is marked" if not runs else "one run is marked"
            self.notify(
                f"{have}: mark two runs with space (m in a replay), then C compares them",
                severity="warning",
                timeout=3,
            )
            return
        from inspector.comparison import baseline_first
        from tui.screens.compare import CompareScreen

        left, right = baseline_first(runs[0], runs[1])
        self.app.push_screen(CompareScreen(self.store, left.key, right.key, clock=self.clock))
        shown = {run.key for run in self.query_one(RunTable).rows}
        hidden = [run for run in (left, right) if run.key not in shown]
        if hidden:
            # Marks outlive a filter (mark one, filter for the other, mark it): said, as
            # the comparison is of a run the table does not show now.
            which = " and ".join(short_id(run.run_id) for run in hidden)
            self.notify(
                f"comparing with {which}, which the filter hides",
                timeout=4,
                markup=False,
            )

    # -- views ------------------------------------------------------------------------------

    def view_book(self) -> ViewBook:
        """The views kept now (read afresh: the file may have been edited meanwhile)."""
        return load_views(self.views_file)

    def current_view(self) -> View:
        """The table as it is, as a view (named as the view it was chosen as, if it was)."""
        hidden = self.query_one(RunTable).hidden_columns
        columns = tuple(key for key in COLUMN_KEYS if key not in hidden) if hidden else ()
        return View(self.view_name, self.filter_text, self.sort, self.reverse, columns)

    def action_views(self) -> None:
        """A palette of the views kept (and the table as it opens): Enter shows one."""
        from tui.palette import Palette
        from tui.screens.runs_views import ViewChoices

        book = self.view_book()
        if book.damaged is not None:  # nothing to choose: said, and the file left as it is
            self.notify(book.damaged, title="Views", severity="error", markup=False, timeout=8)
            return
        for problem in book.problems:
            self.notify(problem, title="Views", severity="warning", markup=False)
        self.app.push_screen(Palette(providers=[ViewChoices], placeholder="Choose a view…"))

    def choose_view(self, view: View) -> None:
        """Show the runs through ``view``: its filter, its sort, its columns."""
        from tui.screens.runs_views import EVERY_RUN, view_words

        self.view_name = "" if view is EVERY_RUN else view.name
        table = self.query_one(RunTable)
        table.hidden_columns = view.hidden
        box = self.query_one(FilterBox)
        self._offered = view.filter  # set in the box, applied here: not as it is typed
        box.value = view.filter
        self._apply_filter(view.filter)
        self.set_reactive(RunsScreen.reverse, view.reverse)
        self.sort = view.sort  # the table's sort_key follows (bound)
        self.refresh_runs()
        self.notify_here(f"{view.name}: {view_words(view)}", title="View", timeout=3)

    def notify_here(
        self,
        message: str,
        *,
        title: str,
        severity: SeverityLevel = "information",
        timeout: float = 5,
    ) -> None:
        """Say ``message`` once this screen is on top again: said while the palette or the
        save box closes over it, it would go with them (:mod:`tui.notices`)."""
        if self.is_current or not self.is_attached:
            self.notify(message, title=title, severity=severity, markup=False, timeout=timeout)
        else:
            self.call_after_refresh(
                self.notify_here, message, title=title, severity=severity, timeout=timeout
            )

    def action_save_view(self) -> None:
        """Ask the name to keep the table as (and its columns), then keep it."""
        from tui.screens.save_view import SaveViewScreen

        if self.views_file is None:
            return
        where = str(self.views_file).replace(str(Path.home()), "~", 1)
        self.app.push_screen(SaveViewScreen(self.current_view(), where=where), self._save_view)

    def _save_view(self, view: View | None) -> None:
        if view is None or self.views_file is None:
            return
        try:
            save_view(self.views_file, view)
        except ViewNotSaved as error:
            self.notify_here(str(error), title="Views", severity="error", timeout=8)
            return
        self.view_name = view.name
        if view.hidden != self.query_one(RunTable).hidden_columns:
            self.query_one(RunTable).hidden_columns = view.hidden
            self.refresh_runs()
        self.notify_here(f"view {view.name!r} saved: v chooses it", title="Views")

    def watch_sort(self) -> None:
        self._reorder()  # the header marks the column: no notification to stack up

    def watch_reverse(self) -> None:
        self._reorder()

    def watch_as_tree(self) -> None:
        if self.is_mounted:
            self.query_one(RunTable).refresh()
        self._reorder()

    def _reorder(self) -> None:
        if self.is_mounted:
            self.refresh_runs()

    def sort_by(self, key: str) -> None:
        """Sort by ``key``, in the order its column reads best first (newest, longest)."""
        self.set_reactive(RunsScreen.reverse, key in DESCENDING)  # one refill, by the sort
        self.sort = key

    def action_sort(self) -> None:
        index = SORT_KEYS.index(self.sort) if self.sort in SORT_KEYS else 0
        self.sort_by(SORT_KEYS[(index + 1) % len(SORT_KEYS)])

    def action_tree(self) -> None:
        self.as_tree = not self.as_tree

    def action_reverse(self) -> None:
        self.reverse = not self.reverse

    def on_click(self, event: events.Click) -> None:
        """A click on a column's title sorts by it; a second click reverses the order."""
        header = self.query_one("#header", Static)
        if event.widget is not header:
            return
        width = self.query_one(RunTable).lines_width(max(self.size.width, 80))
        key = column_at(width, event.screen_x - header.region.x, self.sort)
        if key is None:
            return
        if key not in SORT_KEYS:
            self.notify(f"the {key} column does not sort", timeout=1.5)
            return
        if key == self.sort:
            self.reverse = not self.reverse
        else:
            self.sort_by(key)


def _totals(runs: list[RunView], sources_down: frozenset[str]) -> tuple[str, str]:
    """The runs shown, by status (glyph and count); and their tokens and cost together
    (the table keeps them as its rows change: :class:`RowTally`)."""
    return RowTally(runs, sources_down).totals()
