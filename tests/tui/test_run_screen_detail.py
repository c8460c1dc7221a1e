"""The run screen's detail pane, checked on what the screen shows.

A run opened on one short paragraph shows its detail at the top of the pane; the first
``f`` says following was on and is now off; a paragraph streamed inside a model call names
its node; a search's matches are marked in the detail as in the event list; ``N`` is in
the key bar with a search.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from tests.tui.test_interaction import bar, screen_lines
from tests.tui_support import loaded, open_run, sample_app, settle, write_waiting_run
from tui import textual_compat as compat
from tui.widgets.detail import EventDetail
from tui.widgets.event_list import EventList

pytestmark = pytest.mark.timeout(60)

TORN = "run_20261128T143000058_5e6f708192a3b4c5"
"""A sample run (stale) whose last entry is one short paragraph: "A torn write is"."""
RESEARCH = "run_20261128T143000012_4f1a9c2e7b3d8a60"
"""A sample run that succeeded: tool calls, paragraphs, a model call."""


def detail_rows(app: Any) -> list[str]:
    """The detail pane's rows as drawn: the screen's lines, cut to the pane."""
    detail = app.screen.query_one(EventDetail)
    region = detail.content_region
    lines = screen_lines(app)
    return [lines[y][region.x : region.right] for y in range(region.y, region.bottom)]


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_a_short_followed_paragraph_is_drawn_at_the_top_of_its_pane(
    fixtures: Path, size: tuple[int, int]
) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        screen = await open_run(pilot, TORN)
        detail = screen.query_one(EventDetail)
        await settle(pilot, lambda: "A torn write is" in detail.text, "the paragraph")
        assert screen.query_one(EventList).follow  # its newest entry, followed
        await pilot.pause(0.1)
        rows = detail_rows(app)
        assert rows[0].startswith("text  ·  1 chunk"), rows[:4]
        assert "node" not in rows[0]  # not "node -": the chunks name none
        assert any("A torn write is" in row for row in rows[2:4]), rows[:4]
        assert detail.scroll_y == 0


async def test_the_header_says_whether_the_stream_is_followed(
    fixtures: Path, tmp_path: Path
) -> None:
    """A live run's header says ``following`` while the newest entry is kept in view; a
    finished run's never does (nothing more is on its way), though ``f`` still selects its
    newest entry."""
    waiting = write_waiting_run(fixtures)  # asked a minute ago: live
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 7)
        screen = await open_run(pilot, waiting)
        events = screen.query_one(EventList)
        await settle(pilot, lambda: events.count > 0, "the run's events")

        def counts() -> str:
            return screen_lines(app)[1]

        assert events.follow
        await settle(pilot, lambda: counts().startswith(" following  2 events"), "following")
        await pilot.press("f")
        await settle(pilot, lambda: counts().startswith(" 2 events"), "follow paused")
        assert not events.follow
        await pilot.press("f")
        await settle(pilot, lambda: "following" in counts(), "following again")
        await pilot.press("up")  # moving up pauses it, and the header says so
        await settle(pilot, lambda: "following" not in counts(), "paused by moving up")
        await pilot.press("end")
        await settle(pilot, lambda: "following" in counts(), "following from the end")
        await pilot.press("escape")
        finished = await open_run(pilot, RESEARCH)
        events = finished.query_one(EventList)
        await settle(pilot, lambda: counts().startswith(" 22 events"), "the finished run")
        assert events.follow  # its newest entry selected, as f would
        await pilot.press("f", "f")
        await pilot.pause(0.1)
        assert "following" not in counts()


def marked_in_detail(app: Any) -> list[str]:
    """The words the detail pane draws in the search's mark (its background)."""
    detail = app.screen.query_one(EventDetail)
    mark = detail.get_component_rich_style("event-detail--match", partial=True).bgcolor
    assert mark is not None
    region = detail.content_region
    strips = compat.screen_strips(app.screen)
    return [
        segment.text
        for strip in strips[region.y : region.bottom]
        for segment in strip.crop(region.x, region.right)
        if segment.style is not None and segment.style.bgcolor == mark
    ]


async def test_what_is_searched_for_is_marked_in_the_detail_too(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        screen = await open_run(pilot, RESEARCH)
        detail = screen.query_one(EventDetail)
        await settle(pilot, lambda: detail.text, "the detail")
        assert not marked_in_detail(app)
        await pilot.press("slash", *"web_search", "enter")
        await settle(pilot, lambda: "tool web_search" in detail.text, "the first match")
        await pilot.pause(0.1)
        marked = marked_in_detail(app)
        assert marked, "nothing marked"
        assert {word.lower() for word in marked} == {"web_search"}
        await pilot.press("N")  # N steps back through the matches, and the bar says so
        assert "N Previous match" in bar(app)
        await pilot.press("escape")  # the search closed: its marks go
        await settle(pilot, lambda: not marked_in_detail(app), "the marks gone")
        assert "N Previous match" not in bar(app)


async def test_a_search_typed_in_one_burst_is_typed_into_the_box(fixtures: Path) -> None:
    """tmux's send-keys, a paste, a fast typist: "/web" reaches the event list whole before
    ``/`` has opened the box; its characters go into the box, not to the run as keys."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        screen = await open_run(pilot, RESEARCH)
        events = screen.query_one(EventList)
        await settle(pilot, lambda: events.count > 0, "the run's events")
        for character in "/web_search":  # queued all at once, as a terminal delivers them
            # As the app hands each key to the focused widget.
            key = compat.forwarded_key("slash" if character == "/" else character, character)
            events.post_message(key)
        await pilot.pause(0.2)
        box = screen.query_one("#search", Input)
        assert box.value == "web_search"
        assert not screen.show_raw  # w was typed, not pressed
        await pilot.press("enter")
        await settle(pilot, lambda: "tool web_search" in screen.query_one(EventDetail).text, "it")


ASKED = "run_20261201T000000003_c3c3c3c3c3c3c3c3"


@pytest.mark.parametrize(("quiet", "word"), [(0.0, "running"), (3600.0, "unfinished")])
async def test_a_model_call_with_no_answer_waits_only_in_a_live_run(
    fixtures: Path, quiet: float, word: str
) -> None:
    """Its request written, its answer never: ``running: waiting for its answer`` while
    the run may write; once its writer went quiet (stale), ``unfinished``, as the timeline
    says of its node, not waiting for an answer nobody will write."""
    import json
    import os
    import time

    app = sample_app(fixtures, clock=None)  # the samples an hour old
    at = time.time() - quiet

    def line(seq: int, kind: str, payload: dict[str, Any]) -> str:
        when = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(at - 3 + seq))
        return json.dumps(
            {"run_id": ASKED, "seq": seq, "time": when, "type": kind, "payload": payload}
        )

    asked = {
        "node_id": "llm:m#1",
        "node_name": "m",
        "model": "m",
        "messages": [{"role": "user", "content": "Which way did the heron fly?"}],
    }
    ledger = fixtures / f"{ASKED}.jsonl"
    ledger.write_text(
        line(1, "run_started", {"skill": "ask"}) + "\n" + line(2, "node_enter", asked) + "\n"
    )
    os.utime(ledger, (at, at))
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 7)
        screen = await open_run(pilot, ASKED)
        await pilot.press("end")
        detail = screen.query_one(EventDetail)
        await settle(pilot, lambda: "heron" in detail.text, "the call as it was sent")
        await settle(pilot, lambda: f"{word}: " in detail.text, f"the call {word}")
        assert ("waiting for its answer" in detail.text) == (word == "running")
