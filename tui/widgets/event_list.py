"""One run's events, one line each, read by range as the view scrolls.

The list asks the store for the lines on screen (and a page around them)
and nothing else, so a run of a million events scrolls like one of ten.
Follow mode keeps the newest event in view and pauses when the user
scrolls up.
"""

from __future__ import annotations

from collections import OrderedDict
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
from ledger_reader import DamagedLine, LedgerItem, RunEvent
from tui.describe import describe, glyph
from tui.widgets.lines import CURSOR_BINDINGS, highlighted, scroll_row_into_view

PAGE: Final = 256
PAGES_KEPT: Final = 64
RECOUNT_AFTER: Final = 1.5


class EventList(ScrollView, can_focus=True):
    """The events of one run."""

    BINDINGS: ClassVar[list[BindingType]] = CURSOR_BINDINGS

    COMPONENT_CLASSES: ClassVar[set[str]] = {"eventlist--cursor", "eventlist--time"}

    DEFAULT_CSS = """
    EventList {
        height: 1fr;
        background: $surface;
    }
    EventList > .eventlist--cursor {
        background: $accent 30%;
    }
    EventList > .eventlist--time {
        color: $text-muted;
    }
    """

    cursor: reactive[int] = reactive(0, always_update=True)
    """The selected event."""
    follow: reactive[bool] = reactive(True)
    """Keep the newest event in view."""

    class Selected(Message):
        """The selection moved to another event."""

        def __init__(self, index: int, item: LedgerItem | None) -> None:
            self.index = index
            self.item = item
            super().__init__()

    def __init__(self, store: RunStore, key: RunKey, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.store = store
        self.key = key
        self.count = 0
        self.started_at: float | None = None
        self._pages: OrderedDict[int, list[LedgerItem]] = OrderedDict()
        self._recounted = False
        self._loading: set[int] = set()

    # -- data -------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.reload()

    def reload(self) -> None:
        """The run changed: count its events again and redraw what is on screen."""
        self._count_events()

    @work(exclusive=True, group="event-count", exit_on_error=False)
    async def _count_events(self) -> None:
        try:
            count = await self.store.event_count(self.key)
        except SourceError as error:
            self.notify(str(error), severity="error")
            return
        self._set_count(count)
        if not self._recounted:
            # A huge ledger is first counted by its last seq, while its index builds:
            # count once more a moment later, exactly.
            self._recounted = True
            self.set_timer(RECOUNT_AFTER, self.reload)

    def _set_count(self, count: int) -> None:
        grew = count != self.count
        last_page = self.count // PAGE
        self.count = count
        self.virtual_size = Size(self.size.width, count)
        if grew:
            # The last page may have been read before the run wrote more.
            self._pages.pop(last_page, None)
        if self.follow and count:
            self.cursor = count - 1
            self.scroll_end(animate=False, immediate=True)
        self.refresh()

    def item(self, index: int) -> LedgerItem | None:
        page = self._pages.get(index // PAGE)
        if page is None:
            self._load(index // PAGE)
            return None
        offset = index % PAGE
        return page[offset] if offset < len(page) else None

    def _load(self, page: int) -> None:
        if page in self._loading:
            return
        self._loading.add(page)
        self.run_worker(self._read_page(page), group=f"page-{page}", exit_on_error=False)

    async def _read_page(self, page: int) -> None:
        try:
            items = await self.store.events(self.key, page * PAGE, (page + 1) * PAGE)
        except SourceError as error:
            self.notify(str(error), severity="error")
            return
        finally:
            self._loading.discard(page)
        self._pages[page] = items
        while len(self._pages) > PAGES_KEPT:
            self._pages.popitem(last=False)
        if page == 0 and items and self.started_at is None:
            first = _event_of(items[0])
            moment = first.timestamp if first is not None else None
            self.started_at = moment.timestamp() if moment is not None else None
        if page * PAGE <= self.cursor < (page + 1) * PAGE:
            self.post_message(self.Selected(self.cursor, self.item(self.cursor)))
        self.refresh()

    # -- drawing --------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        index = self.scroll_offset.y + y
        base = self.rich_style
        if index >= self.count:
            return Strip.blank(width, base)
        item = self.item(index)
        if item is None:
            strip = Strip([Segment(f"{'':>10}  · reading…", base)])
        else:
            strip = Strip(self._segments(item, base))
        strip = strip.crop_extend(0, width, base)
        if index == self.cursor:
            strip = highlighted(strip, self.get_component_rich_style("eventlist--cursor"))
        return strip

    def _segments(self, item: LedgerItem, base: Style) -> list[Segment]:
        muted = self.get_component_rich_style("eventlist--time", partial=True)
        since = ""
        event = item if not isinstance(item, DamagedLine) else None
        moment = event.timestamp if event is not None else None
        if moment is not None and self.started_at is not None:
            since = f"+{moment.timestamp() - self.started_at:.3f}s"
        style = base
        if isinstance(item, DamagedLine) or item.type == "error":
            style = base + Style(color="red")
        elif item.type in {"tool_call", "tool_result"}:
            style = base + Style(bold=True)
        elif item.type == "reasoning_chunk":
            style = base + Style(italic=True, dim=True)
        return [
            Segment(f"{since:>10}  ", muted),
            Segment(f"{glyph(item)} ", style),
            Segment(describe(item), style),
        ]

    # -- input ------------------------------------------------------------------------------

    def watch_cursor(self, index: int) -> None:
        scroll_row_into_view(self, index, immediate=True)
        self.post_message(self.Selected(index, self.item(index)))
        self.refresh()

    def action_cursor(self, delta: int) -> None:
        if self.count:
            self.cursor = max(0, min(self.count - 1, self.cursor + delta))
            if delta < 0:
                self.follow = False
            elif self.cursor == self.count - 1:
                self.follow = True

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.scrollable_content_region.height - 1))

    def action_jump(self, where: int) -> None:
        if self.count:
            self.cursor = self.count - 1 if where < 0 else 0
            self.follow = where < 0

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < self.count:
            self.cursor = index
            self.follow = index == self.count - 1

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.follow = False

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, self.count)


def _event_of(item: LedgerItem) -> RunEvent | None:
    if isinstance(item, DamagedLine):
        return item.recovered
    return item
