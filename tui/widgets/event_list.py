"""One run's events as a stream of entries, read by range as the view scrolls.

An entry is one line: an event, or events that belong together (a
paragraph of streamed text or reasoning, a tool call with its result; see
:mod:`tui.text.entries`). The list asks the store for the events on screen (and
a page around them) and nothing else, so a run of a million events scrolls
like one of ten. Scrolling is by entry; the scroll bar measures events
(and shows only when the entries do not all fit).
Follow mode keeps the newest entry in view and pauses when the user
scrolls up.

A run whose nodes may be written before the node they are inside (an OTLP
run: spans arrive as they end) is listed in :class:`inspector.span_order.SpanOrder`:
its events are read once as they come, in batches of the new ones, and a node's
``node_enter`` is listed before the nodes inside it. The list's *indexes* are
then not the ledger's *positions*: :meth:`EventList.index_of` and
:meth:`EventList.position_of` map them, and only the list's own drawing and
moving use indexes.
"""

from __future__ import annotations

from typing import ClassVar, Final

from rich.segment import Segment
from rich.style import Style
from textual import events, work
from textual.binding import BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from inspector import RunKey, RunStore, SourceError
from inspector.events import (
    ApprovalResponse,
    DamagedLine,
    LedgerItem,
    LlmChunk,
    ReasoningChunk,
    ToolCall,
    ToolResult,
    event_of,
)
from inspector.ledger import CancelRequested, NodeExit
from inspector.span_order import SpanOrder, ordered_by_spans
from tui.event_pages import PAGE, EventPages
from tui.text import inert, offset
from tui.text.entries import Entry, EntryIndex, folded_steps, is_step
from tui.text.events import describe, describe_entry, glyph
from tui.textual_compat import grow_scroll_range, refresh_scrollbars
from tui.widgets.lines import CURSOR_BINDINGS, highlighted

RECOUNT_AFTER: Final = 1.5
DETAIL_EVENTS: Final = 4 * PAGE
"""Events of one entry handed to the detail pane at most (it says how many more there are)."""
PARAGRAPH_TEXT_ROOM: Final = 12
"""Characters of a paragraph's text its line keeps before its count gives way."""
FIT_CHECK_EVENTS: Final = 4 * PAGE
"""Runs up to this many events are checked for entries that all fit on screen."""
CANCEL_LOOKED_BACK: Final = PAGE
"""Events before a failed node looked at for the run's cancel request (its word)."""
ORDER_READ: Final = 16 * PAGE
"""Events read at a time to place a run's nodes (:class:`SpanOrder`)."""


class EventList(ScrollView, can_focus=True):
    """The events of one run."""

    BINDINGS: ClassVar[list[BindingType]] = CURSOR_BINDINGS

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "eventlist--cursor",
        "eventlist--time",
        "eventlist--match",
        "eventlist--error",
        "eventlist--denied",
    }

    cursor: reactive[int] = reactive(0, always_update=True)
    """The index of the selected entry's first event."""
    follow: reactive[bool] = reactive(True)
    """Keep the newest event in view."""
    search: reactive[str] = reactive("")
    """Text searched for in the run: marked where it shows."""
    steps_shown: reactive[bool] = reactive(False)
    """List each step's enter and exit (graph nodes, chains); folded, each entry says how
    many steps it holds."""
    steps_seen: reactive[bool] = reactive(False)
    """A step is among the events read: the run has steps to show or fold."""
    run_live: reactive[bool] = reactive(True)
    """The run may still write (its owner says so from the store): a tool call with no
    result yet is ``running`` in a live run, ``unfinished`` in one that is not."""

    class Selected(Message):
        """The selection moved to another entry, or the selected entry grew: its first
        event, its events as far as read (``DETAIL_EVENTS`` at most), and where it is."""

        def __init__(
            self,
            index: int,
            item: LedgerItem | None,
            items: list[LedgerItem] | None = None,
            entry: Entry | None = None,
            *,
            newest: bool = False,
        ) -> None:
            self.index = index
            self.item = item
            self.items = items if items is not None else ([item] if item is not None else [])
            self.entry = entry if entry is not None else Entry(index, index + len(self.items))
            self.newest = newest
            """The list follows this entry, the run's newest: ``items`` are its *last*
            events, and the detail keeps its newest text in view."""
            super().__init__()

    def __init__(self, store: RunStore, key: RunKey, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.store = store
        self.key = key
        self.count = 0
        self.started_at: float | None = None
        self.pages = EventPages(store, key)
        """The run's events as read so far: entries on screen are found again when its
        version changes."""
        self._recounted = False
        self._behind = False
        """The run changed while the list was hidden: read again once shown."""
        self._index = EntryIndex(self.item, fold_steps=True)
        """Where entries start and end, long paragraphs remembered once walked."""
        self._window: list[Entry] = []
        self._announced: tuple[Entry, int, bool] | None = None
        self._pending: int | None = None
        """The position of an event to select once read (:meth:`select`)."""
        self._order: SpanOrder | None = None
        """Where each event is listed, for a run whose nodes may come before the node they
        are inside; ``None``: in the ledger's order."""
        self._selected_at = 0
        """The position of the event the cursor is on: kept there when nodes move."""
        self._window_key: tuple[int, int, int, int] = (-1, -1, -1, -1)

    # -- data -------------------------------------------------------------------------

    def on_mount(self) -> None:
        run = self.store.get(self.key)
        if run is not None and ordered_by_spans(run.writer):
            self._order = SpanOrder()
        self.reload()

    def reload(self) -> None:
        """The run changed: count its events again and redraw what is on screen.

        Hidden (the timeline in its place), the list reads nothing until shown again: a
        live run changes many times a second, and each count laid the screen out anew.
        """
        if not self.display:
            self._behind = True
            return
        self._count_events()

    def on_show(self) -> None:
        if self._behind:
            self._behind = False
            self.reload()

    @work(exclusive=True, group="event-count", exit_on_error=False)
    async def _count_events(self) -> None:
        moved = False
        try:
            count = await self.store.event_count(self.key)
            if self._order is not None:
                version = self._order.version
                count = await self._place(count)
                moved = self._order.version != version
        except SourceError as error:
            self.notify(str(error), severity="error", markup=False)
            return
        self._set_count(count)
        if moved and not self.follow:
            self._keep_in_view(self.cursor)  # its event was listed elsewhere
        if not self._recounted:
            # A huge ledger is first counted by its last seq, while its index builds:
            # count once more a moment later, exactly.
            self._recounted = True
            self.set_timer(RECOUNT_AFTER, self.reload)

    async def _place(self, count: int) -> int:
        """Fold the events not folded yet, up to ``count``, into the run's order (read the
        new ones only, in batches); how many are folded: the events listed. A run opened
        with more than a batch to read is listed as far as folded after each batch.

        Raises:
            SourceError: the run's source could not be read.
        """
        order = self._order
        assert order is not None
        while order.folded < count:
            version = order.version
            stop = min(count, order.folded + ORDER_READ)
            items = await self.store.events(self.key, order.folded, stop)
            if not items:
                break
            for item in items:
                order.add(item)
            if order.version != version:
                # Heads moved: entries are found anew, the cursor kept on its event.
                self._index.clear()
                self._window_key = (-1, -1, -1, -1)
                if self.count:
                    index = order.index(min(self._selected_at, self.count - 1))
                    self.set_reactive(EventList.cursor, self._index.start(index))
            if order.folded < count:
                self._set_count(order.folded)
        return order.folded

    def index_of(self, position: int) -> int:
        """The index the event at ledger ``position`` is listed at."""
        return self._order.index(position) if self._order is not None else position

    def position_of(self, index: int) -> int:
        """The ledger position of the event listed at ``index``."""
        return self._order.position(index) if self._order is not None else index

    def _set_count(self, count: int) -> None:
        grew = count != self.count
        last_page = self.count // PAGE
        self.count = count
        self._fit()
        if grew:
            # The last page may have been read before the run wrote more.
            self.pages.forget(last_page)
        self._select_pending()
        if self.follow and count:
            self.show_last()
        else:
            self._announce()  # the selected entry may be the newest, grown
        self.refresh()

    def select(self, position: int) -> None:
        """Select the entry holding the event at ledger ``position`` once it is read, and
        stop following."""
        self.follow = False
        self._pending = position
        self._select_pending()

    def _select_pending(self) -> None:
        position = self._pending
        if position is None or position >= self.count:
            return
        index = self.index_of(position)
        if self.item(index) is None:
            return  # asked for: done again when its page is read
        self._pending = None
        self.cursor = self._index.start(index)
        self._keep_in_view(self.cursor)

    def show_last(self) -> None:
        """Select the newest entry and show the last screenful.

        Until the newest event is read the selection stays where it is (with the detail
        it shows): the read's arrival selects it (:meth:`_read_page`).
        """
        if self.item(self.count - 1) is None:
            return
        last = self._index.start(self.count - 1)
        self.cursor = last
        top = self._index.before(last, max(0, self._height() - 1))
        self.scroll_to(y=top, animate=False, immediate=True)

    def _height(self) -> int:
        return max(1, self.scrollable_content_region.height)

    def entries(self) -> list[Entry]:
        """The entries on screen, from the top of the view."""
        key = (self.scroll_offset.y, self.count, self.pages.version, self._height())
        if key != self._window_key:
            self._window_key = key
            height = self._height()
            window = self._index.entries_from(self.scroll_offset.y, height, self.count)
            if window and len(window) < height and window[0].start > 0:
                # The end is in view with room to spare: fill the screen from further up, as
                # a pager does (the scroll offset counts events, and entries hold several).
                top = self._index.before(window[-1].start, height - 1)
                window = self._index.entries_from(top, height, self.count)
            self._window = window
        return self._window

    def entry_of(self, position: int) -> Entry:
        """The entry holding ``position``."""
        start = self._index.start(position)
        return Entry(start, self._index.end(start, self.count))

    def entry_items(self, entry: Entry, *, newest: bool = False) -> list[LedgerItem]:
        """The entry's events as far as read, the first ``DETAIL_EVENTS`` at most (the
        last, for the ``newest`` entry followed as it grows)."""
        if newest:
            start, stop = max(entry.start, entry.end - DETAIL_EVENTS), entry.end
        else:
            start, stop = entry.start, min(entry.end, entry.start + DETAIL_EVENTS)
        items = [self.item(n) for n in range(start, stop)]
        return [item for item in items if item is not None]

    def item(self, index: int) -> LedgerItem | None:
        """The event listed at ``index``; ``None`` (and its page asked for) until it is read."""
        position = self.position_of(index) if self._order is not None else index
        item = self.pages.item(position)
        if item is None:
            page = self.pages.wanted(position)
            if page is not None:
                self.run_worker(self._read_page(page), group=f"page-{page}", exit_on_error=False)
        return item

    async def _read_page(self, page: int) -> None:
        try:
            items = await self.pages.read(page)
        except SourceError as error:
            self.notify(str(error), severity="error", markup=False)
            return
        self._fit()
        if not self.steps_seen and any(is_step(item) for item in items):
            self.steps_seen = True
        if page == 0 and items and self.started_at is None:
            first = event_of(items[0])
            moment = first.timestamp if first is not None else None
            self.started_at = moment.timestamp() if moment is not None else None
        self._select_pending()
        self._announce()  # the selected entry may reach into this page
        if self.follow and self.count and page == self.position_of(self.count - 1) // PAGE:
            self.show_last()  # the newest paragraph may reach back further than thought
        self.refresh()

    def _announce(self) -> None:
        entry = self.entry_of(self.cursor) if self.count else Entry(0, 0)
        newest = self.follow and self.count > 0 and entry.end >= self.count
        items = self.entry_items(entry, newest=newest)
        if (entry, len(items), newest) == self._announced:
            return  # the detail shows this entry, as read, already
        self._announced = (entry, len(items), newest)
        first = self.item(entry.start)
        self.post_message(self.Selected(entry.start, first, items, entry, newest=newest))

    def watch_follow(self, following: bool) -> None:
        """Following or not, the detail of the newest entry shows its start or its end."""
        if self.is_mounted and self.count:
            self._announce()

    def watch_steps_shown(self, shown: bool) -> None:
        """Entries are found anew, the selected event kept in view in its new entry."""
        self._index.fold_steps = not shown
        self._index.clear()
        self._window_key = (-1, -1, -1, -1)
        if not self.is_mounted or not self.count:
            return
        self._fit()
        self.cursor = self._index.start(min(self.cursor, self.count - 1))
        if self.follow:
            self.show_last()

    def reset(self) -> None:
        """The run's events were replaced: forget what was read and where entries are."""
        self.pages.clear()
        self._index.clear()
        if self._order is not None:
            self._order = SpanOrder()
        self._announced = None
        self.reload()

    # -- drawing --------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width  # not under its scroll bar
        base = self.rich_style
        window = self.entries()
        if y >= len(window):
            return Strip.blank(width, base)
        entry = window[y]
        item = self.item(entry.start)
        if item is None:
            # Not read yet; or not to be read while the run's source cannot be reached (it
            # is read once the source is back): "reading…" there would say it is coming.
            down = self.key.source in self.store.snapshot().sources_down()
            waiting = "not read: its source cannot be reached" if down else "reading…"
            strip = Strip([Segment(f"{'':>10}  · {waiting}", base)])
        else:
            strip = Strip(self._segments(entry, item, base, width))
            if strip.cell_length > width > 1:  # cut, and marked as cut: never mid-word silently
                strip = Strip([*strip.crop(0, width - 1), Segment("…", base)])
        strip = strip.crop_extend(0, width, base)
        if entry.start <= self.cursor < entry.end:
            strip = highlighted(strip, self.get_component_rich_style("eventlist--cursor"))
        return strip

    def _segments(self, entry: Entry, item: LedgerItem, base: Style, width: int) -> list[Segment]:
        muted = self.get_component_rich_style("eventlist--time", partial=True)
        since = ""
        event = item if not isinstance(item, DamagedLine) else None
        moment = event.timestamp if event is not None else None
        if moment is not None and self.started_at is not None:
            since = offset(moment.timestamp() - self.started_at)
        folded = 0 if self.steps_shown else folded_steps(entry, self.item)
        said = f"  +{folded} step{'s' if folded > 1 else ''}" if folded else ""
        if folded:
            # What the entry says is its events before the steps folded into it.
            entry = Entry(entry.start, entry.end - folded)
            if entry.end == entry.start:  # steps alone (the run's first events)
                words = f"{folded} step{'s' if folded > 1 else ''} folded (s shows them)"
                return [Segment(f"{since:>10}  ", muted), Segment(f"· {words}", muted)]
        style = base
        words = describe(item, after_cancel=self._after_cancel(entry))
        mark = glyph(item)
        if isinstance(item, DamagedLine) or item.type == "error":
            style = base + self.get_component_rich_style("eventlist--error", partial=True)
        elif isinstance(item, LlmChunk | ReasoningChunk):
            words = self._paragraph(entry, item, width - len(said))
            if isinstance(item, ReasoningChunk):
                style = base + Style(italic=True, dim=True)
        elif entry.end - entry.start > 1 or isinstance(item, ToolCall):
            mark, words, failed = self._call(entry)
            style = base + Style(bold=True)
            if failed:
                style += self.get_component_rich_style("eventlist--error", partial=True)
        elif isinstance(item, ApprovalResponse) and not item.payload.approved:
            # A denial reads as one (⊗, in the warning colour), whatever the run did next.
            style = base + self.get_component_rich_style("eventlist--denied", partial=True)
        elif item.type in ("tool_result", "run_completed"):
            style = base + Style(bold=True)
        if said:
            # The count of steps folded stays in view: the words give way to it.
            room = max(4, width - 12 - 2 - len(said))
            if len(words) > room:
                words = words[: room - 1] + "…"
        segments = [
            Segment(f"{since:>10}  ", muted),
            Segment(f"{mark} ", style),
            *self._marked(words, style),
        ]
        if said:
            segments.append(Segment(said, muted))
        return segments

    def _marked(self, words: str, style: Style) -> list[Segment]:
        """``words``, with what is searched for marked wherever it shows."""
        needle = self.search.lower()
        if not needle:
            return [Segment(words, style)]
        mark = style + self.get_component_rich_style("eventlist--match", partial=True)
        segments: list[Segment] = []
        lowered = words.lower()
        at = 0
        while (found := lowered.find(needle, at)) >= 0:
            segments.append(Segment(words[at:found], style))
            segments.append(Segment(words[found : found + len(needle)], mark))
            at = found + len(needle)
        segments.append(Segment(words[at:], style))
        return segments

    def _paragraph(self, entry: Entry, first: LlmChunk | ReasoningChunk, width: int) -> str:
        """The entry's chunks as one line of text, as much as fits."""
        label = "thinking" if isinstance(first, ReasoningChunk) else "text"
        count = entry.end - entry.start
        # The time (12), the mark (2), the label and the count stay whole: the text gives
        # way, then (a narrow list: 80 columns with ? open) the count's word, then the count.
        badges = (f"  [{count:,} chunks]", f" [{count:,}]", "") if count > 1 else ("",)
        for more in badges:
            room = width - 14 - len(label) - 1 - len(more) - 1
            if room >= PARAGRAPH_TEXT_ROOM:
                break
        room = max(4, room)
        parts: list[str] = []
        size = 0
        for position in range(entry.start, entry.end):
            chunk = self.item(position)
            if isinstance(chunk, LlmChunk | ReasoningChunk):
                delta = chunk.payload.delta or ""
                parts.append(delta)
                size += len(delta)
                if size > room:
                    break
        text = inert("".join(parts), single_line=True)
        return f"{label} {text[:room]}{more}" if size <= room else f"{label} {text[:room]}…{more}"

    def _after_cancel(self, entry: Entry) -> bool:
        """Whether the run was asked to cancel before ``entry``, if it holds a node that
        failed (then canceled, as the timeline says it): the events read up to a page
        before it are looked at (a canceled call's exit follows the request closely)."""
        failed = False
        for index in range(entry.start, entry.end):
            item = self.pages.item(self._position(index))
            failed = failed or (isinstance(item, NodeExit) and item.payload.success is False)
        if not failed:
            return False
        for index in range(entry.start - 1, max(-1, entry.start - 1 - CANCEL_LOOKED_BACK), -1):
            if isinstance(self.pages.item(self._position(index)), CancelRequested):
                return True
        return False

    def _position(self, index: int) -> int:
        return self.position_of(index) if self._order is not None else index

    def _call(self, entry: Entry) -> tuple[str, str, bool]:
        """A tool call entry in one line (mark, words, whether it failed): name, outcome,
        time taken, arguments and output, as the runs screen's preview says it."""
        items = [self.item(position) for position in range(entry.start, entry.end)]
        read = [item for item in items if item is not None]
        if not read:
            return "·", "…", False
        mark, words = describe_entry(
            read, live=self.run_live, after_cancel=self._after_cancel(entry)
        )
        failed = any(isinstance(item, ToolResult) and item.payload.is_error for item in read)
        return mark, words, failed

    # -- input ------------------------------------------------------------------------------

    def watch_cursor(self, index: int) -> None:
        self._selected_at = self.position_of(index)
        self._keep_in_view(index)
        self._announce()
        self.refresh()

    def _keep_in_view(self, index: int) -> None:
        window = self.entries()
        if not window:
            return
        if index < window[0].start:
            self.scroll_to(y=self._index.start(index), animate=False, immediate=True)
        elif index >= window[-1].end or (
            len(window) >= self._height() and index >= window[-1].start
        ):
            top = self._index.before(index, max(0, self._height() - 1))
            self.scroll_to(y=top, animate=False, immediate=True)

    def move(self, entries: int) -> None:
        """Move the selection by ``entries`` entries (negative: up)."""
        if not self.count:
            return
        position = self._index.start(min(self.cursor, self.count - 1))
        for _ in range(abs(entries)):
            if entries > 0:
                following = self._index.end(position, self.count)
                if following >= self.count:
                    break
                position = following
            else:
                if position == 0:
                    break
                position = self._index.start(position - 1)
        self.cursor = position
        if entries < 0:
            self.follow = False
        elif self._index.end(position, self.count) >= self.count:
            self.follow = True

    def action_cursor(self, delta: int) -> None:
        self.move(delta)

    def action_page(self, direction: int) -> None:
        self.move(direction * max(1, self._height() - 1))

    def action_jump(self, where: int) -> None:
        if self.count:
            self.follow = where < 0
            if where < 0:
                self.show_last()
            else:
                self.cursor = 0
                self.scroll_to(y=0, animate=False, immediate=True)

    def on_click(self, event: events.Click) -> None:
        window = self.entries()
        if 0 <= event.y < len(window):
            entry = window[event.y]
            self.cursor = entry.start
            self.follow = entry.end >= self.count

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.prevent_default()
        window = self.entries()
        if len(window) > 3 and window[-1].end < self.count:
            self.scroll_to(y=window[3].start, animate=False, immediate=True)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.prevent_default()
        self.follow = False
        window = self.entries()
        if window and window[0].start > 0:
            top = self._index.before(window[0].start, 3)
            self.scroll_to(y=top, animate=False, immediate=True)

    def on_resize(self) -> None:
        self._fit()
        # A smaller terminal keeps the selected entry in view (the detail beside it shows it).
        self.call_after_refresh(self._keep_in_view, self.cursor)

    def _fit(self) -> None:
        """The scroll range counts events (entries are found only near the view).

        A run whose entries all fit on screen gets no scroll range: it has more
        events than lines, and a scroll bar would offer a scroll to nowhere.
        """
        lines = self.count
        if self._all_fit():
            lines = self._height()
            if self.scroll_offset.y:
                self.scroll_to(y=0, animate=False, immediate=True)
        grow_scroll_range(self, Size(self.scrollable_content_region.width, lines))
        # A new virtual size alone may leave the scroll bar as the last layout found it
        # (shown for 22 lines, kept for 20); Textual's TextArea asks for this the same way.
        refresh_scrollbars(self)

    def _all_fit(self) -> bool:
        height = self._height()
        if self.count <= height or self.count > FIT_CHECK_EVENTS:
            return False
        if not all(self.pages.is_read(page) for page in range((self.count - 1) // PAGE + 1)):
            return False  # not read yet: decided when the pages arrive
        window = self._index.entries_from(0, height + 1, self.count)
        return len(window) <= height and bool(window) and window[-1].end >= self.count
