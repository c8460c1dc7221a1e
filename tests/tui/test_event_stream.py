"""Watching a stream: paragraphs that end where the text does, follow that follows, and a
detail pane that shows exactly the selected entry."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from inspector import LedgerDirectorySource, ManagerSource
from run_manager import AgentEvent, Content, Manager, ToolCallEvent
from tests.conftest import RUN_ID, line, started
from tests.tui_support import loaded, sample_app, settle
from tui.app import make_app
from tui.screens.run import RunScreen
from tui.settings import Settings
from tui.text.entries import EntryIndex
from tui.widgets.detail import EventDetail
from tui.widgets.event_list import EventList
from tui.widgets.run_preview import RunPreview

pytestmark = pytest.mark.timeout(60)


def chunk(seq: int, delta: str, kind: str = "llm_chunk") -> bytes:
    return line(seq, kind, {"index": seq, "delta": delta})


def shown_lines(events: EventList) -> list[str]:
    return [
        "".join(segment.text for segment in events.render_line(y))
        for y in range(len(events.entries()))
    ]


def test_a_paragraph_is_as_long_as_its_text_and_walked_once() -> None:
    from ledger_reader.decode import decode_line

    raw = [started(1)] + [chunk(seq, "word ") for seq in range(2, 5002)]
    raw += [chunk(5002, "end.\n\n"), chunk(5003, "Next paragraph.")]
    raw += [line(5004, "llm_call", {"model": "m"})]
    items = [decode_line(data.rstrip(b"\n")) for data in raw]
    reads = 0

    def item_at(position: int) -> object:
        nonlocal reads
        reads += 1
        return items[position] if 0 <= position < len(items) else None

    index = EntryIndex(item_at)  # type: ignore[arg-type]
    entries = index.entries_from(0, 10, len(items))
    assert [(e.start, e.end) for e in entries] == [(0, 1), (1, 5002), (5002, 5003), (5003, 5004)]
    reads = 0
    assert index.start(4000) == 1  # from the middle: a jump over the span walked before
    assert reads < 10


async def test_a_long_paragraph_is_one_line_and_its_detail_is_all_of_it(
    tmp_path: Path, write_ledger: object
) -> None:
    directory = tmp_path / "runs"
    lines = [started(1)] + [chunk(seq, f"w{seq} ") for seq in range(2, 302)]
    lines += [line(302, "run_completed", {"status": "ok"})]
    directory.mkdir()
    (directory / f"{RUN_ID}.jsonl").write_bytes(b"".join(lines))
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(directory, name="d")])
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 1)
        preview = str(app.screen.query_one(RunPreview).render())
        await settle(
            pilot,
            lambda: "[" in str(app.screen.query_one(RunPreview).render()),
            "the preview",
        )
        preview = str(app.screen.query_one(RunPreview).render())
        assert "¶ text w" in preview  # chunks merged, as on the run screen
        await pilot.press("enter")
        events = app.screen.query_one(EventList)
        await settle(pilot, lambda: events.item(301) is not None, "the events")
        await pilot.press("home", "down")
        lines_shown = shown_lines(events)
        assert len(lines_shown) == 3  # started, one paragraph of 300 chunks, completed
        assert "[300 chunks]" in lines_shown[1]
        detail = app.screen.query_one(EventDetail)
        assert "text  ·  300 chunks" in detail.text
        assert "seq 2-301" in detail.text
        assert "w301" in detail.text


class Streamer:
    """Streams text in paragraphs around a tool call, one chunk each time it is let go."""

    name = "streamer"

    def __init__(self) -> None:
        self.go = asyncio.Semaphore(0)

    async def run(self, input: str) -> str:
        return ""

    async def run_stream(self, input: str) -> AsyncIterator[AgentEvent]:
        for number in range(40):
            await self.go.acquire()
            yield Content(f"w{number} ")
            if number == 20:
                yield ToolCallEvent(id="call_1", name="lookup", arguments={"q": 1})
                yield ToolCallEvent(id="call_1", name="lookup", status="completed", result="ok")


async def test_follow_keeps_the_newest_entry_selected_and_the_detail_on_it(
    fixtures: Path,
) -> None:
    async with Manager() as manager:
        agent = Streamer()
        app = sample_app(fixtures, ManagerSource(manager, name="local"), clock=None)
        async with app.run_test(size=(160, 48)) as pilot:
            handle = manager.stream(agent, "go")
            rows = await loaded(pilot, 7)
            rows.select_key(next(r.key for r in rows.rows if r.run_id == handle.run_id))
            await pilot.press("enter")
            assert isinstance(app.screen, RunScreen)
            events = app.screen.query_one(EventList)
            detail = app.screen.query_one(EventDetail)
            for number in range(30):
                agent.go.release()
                await settle(
                    pilot,
                    lambda n=number: (
                        (
                            "tool lookup" if n == 20 else f"w{n} "  # a tool call after chunk 20
                        )
                        in detail.text
                    ),
                    f"event {number} in the detail",
                )
                window = events.entries()
                selected = events.entry_of(events.cursor)
                assert selected == window[-1], number  # the newest entry, in view
                assert selected.end == events.count
                if number != 20:
                    chunks = selected.end - selected.start
                    assert f"{chunks} chunk" in detail.text  # exactly the selected entry
            # moving up pauses follow; the selection stays put as events arrive
            await pilot.press("up")
            assert not events.follow
            held = events.entry_of(events.cursor)
            agent.go.release()
            await settle(pilot, lambda: events.entry_of(events.count - 1).end > held.end, "more")
            assert events.entry_of(events.cursor) == held
            await pilot.press("f")  # follow again: back to the newest
            assert events.follow
            assert events.entry_of(events.cursor).end == events.count
            for _ in range(10):
                agent.go.release()
            await asyncio.wait_for(handle.wait(), 10)
            await settle(pilot, lambda: "run_completed" in detail.text, "the run's end")
            assert events.entry_of(events.cursor) == events.entries()[-1]
            assert events.entries()[-1].end == events.count


async def test_search_inside_a_run_steps_through_matches(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("end", "enter")  # the research run: text, thinking, two tool calls
        events = app.screen.query_one(EventList)
        await settle(pilot, lambda: events.item(21) is not None, "the events")
        await pilot.press("home", "slash", *"mouse", "enter")
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await settle(
            pilot, lambda: "of" in str(screen.query_one("#search").border_title), "a match"
        )
        first = events.entry_of(events.cursor)
        assert screen.matches  # in the arguments of web_search and in a paragraph at least
        shown = shown_lines(events)
        assert any("mouse" in line.lower() for line in shown)
        # as in less, from the line after the selected one (the input at the top matched)
        assert "entry 2 of" in str(screen.query_one("#search").border_title)
        await pilot.press("n")
        second = events.entry_of(events.cursor)
        assert second.start > first.start
        said = str(screen.query_one("#search").border_title)
        assert said.startswith("entry 3 of"), said
        await pilot.press("N")
        assert events.entry_of(events.cursor) == first
        detail = app.screen.query_one(EventDetail)
        assert "mouse" in detail.text.lower()  # the detail is the matching entry


async def test_at_80x24_a_paragraph_line_keeps_its_chunk_count_whole(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("end")
        preview = app.screen.query_one(RunPreview)
        await settle(pilot, lambda: "chunks]" in str(preview.render()), "the preview")
        await pilot.press("enter")
        events = app.screen.query_one(EventList)
        await settle(pilot, lambda: events.item(21) is not None, "the events")
        await pilot.press("home")
        paragraphs = [line for line in shown_lines(events) if "¶" in line or "… thinking" in line]
        counted = [line for line in paragraphs if "[" in line]
        assert counted
        for line in counted:
            assert line.rstrip().endswith("chunks]"), line  # the text gives way, not the count


async def open_research_and_search(pilot: Pilot[Any], text: str) -> tuple[RunScreen, EventList]:
    """The succeeded research run open, ``text`` searched for and the search done."""
    await loaded(pilot)
    await pilot.press("end", "enter")
    events = pilot.app.screen.query_one(EventList)
    await settle(pilot, lambda: events.item(21) is not None, "the events")
    await pilot.press("home", "slash", *text, "enter")
    screen = pilot.app.screen
    assert isinstance(screen, RunScreen)
    await settle(pilot, lambda: not screen.is_searching(), "the search done")
    return screen, events


def counter(screen: RunScreen) -> str:
    return str(screen.query_one("#search").border_title)


async def test_the_search_counter_counts_what_n_steps_through(fixtures: Path) -> None:
    """``mouse`` is in six events of five entries (the web_search call and its result are
    one): n steps 2, 3, 4, 5, 1 of 5, not 2, 4, 5, 6 of 6 as events counted."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        screen, events = await open_research_and_search(pilot, "mouse")
        said = [counter(screen)]
        starts = [events.entry_of(events.cursor).start]
        for _ in range(5):
            await pilot.press("n")
            said.append(counter(screen))
            starts.append(events.entry_of(events.cursor).start)
        assert [line.split(",")[0] for line in said] == [
            f"entry {n} of 5" for n in (2, 3, 4, 5, 1, 2)
        ]
        assert all(", 6 matches" in line for line in said), said
        assert len(set(starts[:5])) == 5  # five different entries, then round again
        assert starts[5] == starts[0]
        await pilot.press("N")
        assert counter(screen).startswith("entry 1 of 5")


async def test_matches_all_in_one_entry_are_one_step(fixtures: Path) -> None:
    """``web_search`` is in four events, all of the one tool call's entry."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        screen, events = await open_research_and_search(pilot, "web_search")
        assert counter(screen).startswith("entry 1 of 1, 4 matches"), counter(screen)
        held = events.entry_of(events.cursor)
        await pilot.press("n")
        assert events.entry_of(events.cursor) == held
        assert counter(screen).startswith("entry 1 of 1, 4 matches"), counter(screen)


class HeldReads(LedgerDirectorySource):
    """A ledger directory whose event reads, once held, wait after reading the file: the
    ledger can grow while a read of its last page is on its way to the screen."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, name="d")
        self.gate: asyncio.Event | None = None
        self.waiting = asyncio.Event()

    async def events(self, run_id: str, start: int, stop: int) -> list[Any]:
        items = await super().events(run_id, start, stop)
        gate = self.gate
        if gate is not None:
            self.waiting.set()
            await gate.wait()
        return items


async def test_follow_reaches_a_tool_call_and_the_end_written_after_a_paragraph(
    tmp_path: Path,
) -> None:
    """A paragraph is selected; the run writes one more chunk, then (while that chunk's page
    is being read) a tool call and its end: the end is selected and shown, not the
    paragraph, nor an empty detail."""
    directory = tmp_path / "runs"
    directory.mkdir()
    ledger = directory / f"{RUN_ID}.jsonl"
    ledger.write_bytes(b"".join([started(1)] + [chunk(seq, f"w{seq} ") for seq in range(2, 10)]))
    source = HeldReads(directory)
    app = make_app(Settings(flush_interval=0.01), [source])
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 1)
        await pilot.press("enter")
        events = app.screen.query_one(EventList)
        detail = app.screen.query_one(EventDetail)
        await settle(pilot, lambda: "8 chunks" in detail.text, "the paragraph, followed")
        source.gate = asyncio.Event()
        with ledger.open("ab") as out:
            out.write(chunk(10, "w10 "))
        await asyncio.wait_for(source.waiting.wait(), 5)  # its page is being read
        with ledger.open("ab") as out:
            out.write(line(11, "tool_call", {"call_id": "c1", "name": "lookup", "arguments": {}}))
            out.write(line(12, "tool_result", {"call_id": "c1", "output": "found"}))
            out.write(line(13, "run_completed", {"status": "ok", "output": "done"}))
        await settle(pilot, lambda: events.count == 13, "the run's end counted")
        source.gate.set()
        source.gate = None
        shown = []
        for _ in range(250):
            shown.append(detail.text)
            if "run_completed" in detail.text:
                break
            await pilot.pause(0.02)
        assert "run_completed" in detail.text, shown[-1]
        assert all(text.strip() for text in shown)  # never an empty detail on the way
        assert not any("Select an event" in text for text in shown)
        window = events.entries()
        assert events.entry_of(events.cursor) == window[-1]  # the newest entry, in view
        assert window[-1].end == 13
        lines = shown_lines(events)
        assert "lookup ✔" in lines[-2]
        assert "succeeded" in lines[-1]
        assert "[9 chunks]" in lines[-3]
        await pilot.press("up", "up")  # the user moves: follow stops, the detail follows them
        assert not events.follow
        assert "9 chunks" in detail.text
        assert "seq 2-10" in detail.text
