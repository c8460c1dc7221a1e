"""A search's match is shown in the detail pane, however deep in a long entry it lies.

The detail pane shows the first 4,000 characters of a paragraph or an output
(``o`` shows all). A search that matched past them counted the match, selected
its entry, and showed a pane without it: the user was told of a match that
was nowhere on screen.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inspector import LedgerDirectorySource
from tests.conftest import line
from tests.tui.test_interaction import screen_lines
from tests.tui_support import loaded, open_run, settle
from tui.app import make_app
from tui.screens.run import RunScreen
from tui.settings import Settings
from tui.widgets.detail import EventDetail
from tui.widgets.event_list import EventList

pytestmark = pytest.mark.timeout(60)

RUN_ID = "run_20261129T064500001_0000000000000001"


def long_run(directory: Path) -> None:
    """A run that streams 600 chunks of text, then calls a tool whose output is 20 KB."""
    parts = [f"part {number} of the summary. " for number in range(600)]
    lines = [
        line(1, "run_started", {"skill": "summarize"}, run_id=RUN_ID),
        line(2, "node_enter", {"node_id": "llm:haiku#1"}, run_id=RUN_ID),
    ]
    seq = 3
    for part in parts:
        lines.append(
            line(seq, "llm_chunk", {"delta": part, "node_id": "llm:haiku#1"}, run_id=RUN_ID)
        )
        seq += 1
    filler = "x" * 15_000 + " the needle " + "y" * 5_000
    lines += [
        line(seq, "node_exit", {"node_id": "llm:haiku#1", "status": "ok"}, run_id=RUN_ID),
        line(
            seq + 1, "tool_call", {"call_id": "c1", "name": "fetch", "arguments": {}}, run_id=RUN_ID
        ),
        line(
            seq + 2,
            "tool_result",
            {"call_id": "c1", "output": filler, "is_error": False},
            run_id=RUN_ID,
        ),
        line(seq + 3, "run_completed", {"status": "ok"}, run_id=RUN_ID),
    ]
    directory.mkdir()
    (directory / f"{RUN_ID}.jsonl").write_bytes(b"".join(lines))


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
@pytest.mark.parametrize("searched", ["part 590 of", "the needle"])
async def test_a_match_deep_in_a_long_entry_is_on_screen(
    tmp_path: Path, searched: str, size: tuple[int, int]
) -> None:
    long_run(tmp_path / "runs")
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path / "runs")])
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, 1)
        await open_run(pilot, RUN_ID)
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await pilot.press("slash", *searched, "enter")
        detail = screen.query_one(EventDetail)
        await settle(pilot, lambda: searched in detail.text, "the match in the detail")
        await pilot.pause()
        lines = screen_lines(app)
        assert any(searched in text for text in lines), "\n".join(lines)
        assert "earlier characters" in detail.text  # and the pane says what is before it


def paragraph_run(directory: Path, parts: int, *, finished: bool = True) -> None:
    """A run that streamed one paragraph of ``parts`` chunks, a second apart (and ended,
    if ``finished``; else it is live, written just now, streaming still)."""
    lines = [line(1, "run_started", {"skill": "summarize"}, run_id=RUN_ID)]
    for number in range(parts):
        delta = {"delta": f"part {number} of the summary. ", "node_id": "llm:haiku#1"}
        lines.append(line(number + 2, "llm_chunk", delta, run_id=RUN_ID))
    if finished:
        lines.append(line(parts + 2, "run_completed", {"status": "ok"}, run_id=RUN_ID))
    directory.mkdir()
    (directory / f"{RUN_ID}.jsonl").write_bytes(b"".join(lines))


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_the_detail_scrolls_to_a_match_below_its_fold(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """A walk searched ``part 60`` in the demo's summary (3,000 characters, under the
    preview's 4,000): the counter said 1 match, the pane showed parts 0 to 13."""
    paragraph_run(tmp_path / "runs", 150)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path / "runs")])
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, 1)
        await open_run(pilot, RUN_ID)
        await pilot.press("slash", *"part 140 ", "enter")
        detail = app.screen.query_one(EventDetail)
        await settle(pilot, lambda: "part 140 " in detail.text, "the paragraph")

        def on_screen() -> bool:  # in the pane (the search box says it too)
            region = detail.content_region
            rows = screen_lines(app)[region.y : region.bottom]
            return any("part 140 " in row[region.x : region.right] for row in rows)

        await settle(pilot, on_screen, "the match in view")
        assert "earlier characters" not in detail.text  # all of it there, scrolled


async def test_a_paragraph_says_one_time_however_it_was_selected(tmp_path: Path) -> None:
    """Followed, a paragraph's detail gave its last chunk's time; selected again (up, then
    down), its first chunk's: one entry, two times. A one-chunk paragraph said ``seq 2-2``."""
    paragraph_run(tmp_path / "runs", 30, finished=False)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path / "runs")])
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 1)
        await open_run(pilot, RUN_ID)
        detail = app.screen.query_one(EventDetail)
        await settle(pilot, lambda: "part 29 " in detail.text, "the paragraph, followed")
        followed = detail.text.splitlines()[1]
        await pilot.press("up", "down")
        await settle(pilot, lambda: "part 29 " in detail.text, "the paragraph, selected")
        assert detail.text.splitlines()[1] == followed
        assert followed.startswith("seq 2-31  ·  2026-11-29T06:45:02.000002Z")  # the first's


async def test_a_one_chunk_paragraph_names_its_one_seq(tmp_path: Path) -> None:
    paragraph_run(tmp_path / "runs", 1)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path / "runs")])
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 1)
        await open_run(pilot, RUN_ID)
        await pilot.press("home", "down")
        detail = app.screen.query_one(EventDetail)
        await settle(pilot, lambda: "part 0 " in detail.text, "the paragraph")
        assert detail.text.splitlines()[1].startswith("seq 2  ·  ")


async def test_a_narrow_paragraph_row_keeps_its_count_whole_or_leaves_it(tmp_path: Path) -> None:
    """At 80x24 with ``?`` open a walk saw ``¶ text Let …  [3 …``: the count cut mid-badge.
    The text gives way first, then the word ``chunks``, then the count; never half of it."""
    paragraph_run(tmp_path / "runs", 3)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path / "runs")])
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 1)
        await open_run(pilot, RUN_ID)
        events = app.screen.query_one(EventList)

        def row() -> str:
            region = events.content_region
            rows = screen_lines(app)[region.y : region.bottom]
            return next((r[region.x : region.right] for r in rows if "¶" in r), "").rstrip()

        await settle(pilot, lambda: "[3 chunks]" in row(), "the paragraph and its count")
        await pilot.press("question_mark")
        await settle(pilot, lambda: app.screen.query("HelpPanel"), "the keys")
        await pilot.pause(0.1)
        narrow = row()
        assert "¶ text part" in narrow, narrow
        assert re.search(r"\[3( chunks)?\]$", narrow) or "[" not in narrow, narrow
