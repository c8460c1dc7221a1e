"""What a live run's screen does at each change of the run is proportional to what is
shown: a hidden event list reads nothing until shown, and a view whose scroll range
grows does not lay the screen out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Size
from textual.pilot import Pilot
from textual.scroll_view import ScrollView

from inspector import LedgerDirectorySource, RunKey
from inspector.ledger import LedgerItem
from tests.conftest import RUN_ID, line, started
from tests.tui_support import settle
from tui.app import make_app
from tui.screens.run import RunScreen
from tui.settings import Settings
from tui.textual_compat import grow_scroll_range
from tui.widgets.event_list import EventList
from tui.widgets.timeline_pane import TimelinePane

pytestmark = pytest.mark.timeout(60)


def append_chunks(ledger: Path, first: int, count: int) -> int:
    with ledger.open("ab") as handle:
        for seq in range(first, first + count):
            handle.write(line(seq, "llm_chunk", {"index": seq, "delta": "x", "node_id": "llm:m#1"}))
    return first + count


async def open_the_run(pilot: Pilot[Any]) -> EventList:
    """Enter on the one run listed, as a user opens it: its event list."""
    app = pilot.app
    await settle(pilot, lambda: bool(app.store.snapshot().runs), "the run")
    await pilot.press("enter")
    await settle(pilot, lambda: isinstance(app.screen, RunScreen), "its screen")
    return app.screen.query_one(EventList)


async def test_a_hidden_event_list_reads_the_run_once_shown(tmp_path: Path) -> None:
    ledger = tmp_path / f"{RUN_ID}.jsonl"
    ledger.write_bytes(started(1))
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path, name="live")])
    async with app.run_test(size=(120, 30)) as pilot:
        events = await open_the_run(pilot)
        seq = append_chunks(ledger, 2, 10)
        await settle(pilot, lambda: events.count == 11, "the events listed")
        await pilot.press("T")
        pane = app.screen.query_one(TimelinePane)
        await settle(pilot, lambda: not events.display and not pane.loading, "the timeline")
        for _ in range(5):  # the run changes five times while the list is hidden
            seq = append_chunks(ledger, seq, 20)
            await settle(pilot, lambda n=seq: pane.timeline.items_read == n - 1, "read")
        assert events.count == 11  # not read while hidden
        await pilot.press("T")
        await settle(pilot, lambda n=seq: events.count == n - 1, "read once shown")


class Lines(ScrollView):
    def __init__(self) -> None:
        super().__init__()
        self.layouts = 0

    def refresh(self, *regions: object, layout: bool = False, **rest: bool) -> Lines:
        self.layouts += layout
        super().refresh(layout=layout, **rest)
        return self


class OneView(App[None]):
    def compose(self) -> ComposeResult:
        yield Lines()


async def test_a_growing_scroll_range_lays_nothing_out() -> None:
    app = OneView()
    async with app.run_test(size=(40, 10)) as pilot:
        view = app.query_one(Lines)
        grow_scroll_range(view, Size(40, 50))  # the scroll bar comes: laid out
        await pilot.pause()
        laid_out = view.layouts
        assert laid_out >= 1
        assert view.vertical_scrollbar.window_virtual_size == 50
        for height in range(60, 200, 10):
            grow_scroll_range(view, Size(40, height))
        await pilot.pause()
        assert view.layouts == laid_out  # taller only: the bar's range, no layout
        assert view.virtual_size == Size(40, 190)
        assert view.vertical_scrollbar.window_virtual_size == 190
        view.scroll_end(animate=False, immediate=True)
        assert view.scroll_offset.y == view.max_scroll_y > 100
        grow_scroll_range(view, Size(40, 20))  # shorter: laid out as Textual does
        await pilot.pause()
        assert view.layouts > laid_out


def append_tool_calls(ledger: Path, first: int, count: int) -> int:
    with ledger.open("ab") as handle:
        for seq in range(first, first + count):
            payload = {"call_id": f"call_{seq}", "name": "search", "node_id": f"tool:s#{seq}"}
            handle.write(line(seq, "tool_call", payload))
    return first + count


def newest_selected(events: EventList, count: int) -> bool:
    return events.count == count and events.cursor == count - 1


async def test_a_followed_event_list_reads_each_change_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each change of a followed run reads its newest page once, not once per asking:
    the lines of a frame asked for it before its first read began, and each asking read
    it (14 reads for these five changes)."""
    ledger = tmp_path / f"{RUN_ID}.jsonl"
    ledger.write_bytes(started(1))
    seq = append_tool_calls(ledger, 2, 40)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path, name="live")])
    async with app.run_test(size=(160, 48)) as pilot:
        events = await open_the_run(pilot)
        listed = seq - 1
        await settle(pilot, lambda: events.count == listed, "the events listed")
        reads: list[int] = []
        read = app.store.events

        async def counted(key: RunKey, start: int, stop: int) -> list[LedgerItem]:
            reads.append(start)
            return await read(key, start, stop)

        monkeypatch.setattr(app.store, "events", counted)
        changes = 5
        for _ in range(changes):
            seq = append_tool_calls(ledger, seq, 10)
            await settle(pilot, lambda n=seq: newest_selected(events, n - 1), "the newest")
            await pilot.pause()
        assert events.follow
        assert 0 < len(reads) <= 2 * changes, reads
