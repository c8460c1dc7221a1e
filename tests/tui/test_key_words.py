"""What the keys say and where the notices go.

The palette calls each action by the key bar's word for it (``c Cancel run``, ``C
Compare``); it offers Compare only with two runs marked, and the bar greys ``C`` until
then. Each test reads what the screen shows: the bar's line, the palette's entries, the
notices over the screen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.style import Style

from inspector import ManagerSource, ReplaySource
from run_manager import Manager
from tests.resumed_pair import FIRST
from tests.tui.test_compare import pair_app
from tests.tui.test_palette_keybar import key_of, open_palette
from tests.tui_support import (
    awaiting_approval,
    loaded,
    noticed,
    notices,
    open_run,
    sample_app,
    settle,
)
from tui import textual_compat as compat
from tui.app import make_app
from tui.settings import Settings
from tui.widgets.run_table import RunTable

pytestmark = pytest.mark.timeout(60)


def screen_lines(app: Any) -> list[str]:
    """The screen's lines as the terminal shows them (notices over it too)."""
    return compat.screen_lines(app.screen)


def bar_line(app: Any) -> list[tuple[str, Style | None]]:
    """The key bar as the terminal shows it (the last line, under the palette too): its
    pieces of text, each with its style."""
    strip = compat.screen_strips(app.screen)[-1]
    return [(segment.text, segment.style) for segment in strip]


def bar_words(app: Any) -> dict[str, str]:
    """Each key the bar shows, to the word beside it (``c``: ``Cancel run``)."""
    drawn = "".join(text for text, _ in bar_line(app)).rstrip()
    words: dict[str, str] = {}
    for entry in drawn.split("  "):
        key, _, word = entry.strip().partition(" ")
        if key:
            words[key] = word
    return words


def greyed(app: Any, key: str) -> bool:
    """Whether the bar shows ``key`` greyed (it cannot be pressed now): in another colour
    than ``?``, which is never greyed (Textual draws dim text as a dimmer colour)."""
    colours = {text: style.color if style else None for text, style in bar_line(app)}
    assert f" {key} " in colours, f"{key} is not in the bar"
    return colours[f" {key} "] != colours[" ? "]


async def palette(pilot: Any) -> dict[str, str]:
    """Open the palette; its entries as listed (title -> the line under it), then close it."""
    screen = pilot.app.screen
    entries = await open_palette(pilot)
    await pilot.press("escape")
    await settle(pilot, lambda: pilot.app.screen is screen, "the palette closed")
    return entries


async def assert_one_word_per_action(pilot: Any) -> int:
    """Every palette entry whose key the bar shows has the bar's word as its title; how
    many entries were compared."""
    bar = bar_words(pilot.app)
    entries = await palette(pilot)
    compared = 0
    for title, said in entries.items():
        key = key_of(said)
        if key in bar:
            assert title == bar[key], (f"palette {title!r}", f"bar {key} {bar[key]!r}")
            compared += 1
    return compared


async def test_the_palette_calls_each_action_what_the_bar_calls_it(fixtures: Path) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48)) as pilot:
            rows, waiting = await awaiting_approval(pilot, manager)
            rows.select_key(next(r.key for r in rows.rows if r.run_id == waiting.run_id))
            await pilot.press("space", "down", "space", "up")  # two marked: C compares
            await settle(pilot, lambda: "c" in bar_words(app), "c in the bar")
            assert bar_words(app)["c"] == "Cancel run"
            assert await assert_one_word_per_action(pilot) >= 10  # the runs

            await pilot.press("enter")
            await settle(pilot, lambda: type(app.screen).__name__ == "RunScreen", "the run")
            await pilot.pause(0.2)
            assert await assert_one_word_per_action(pilot) >= 8  # the run

            await pilot.press("t")
            await settle(pilot, lambda: type(app.screen).__name__ == "ToolsScreen", "the tools")
            await pilot.pause(0.2)
            assert await assert_one_word_per_action(pilot) >= 2  # the tool calls
            manager.cancel_all()


async def test_a_resumed_runs_keys_and_the_comparison_say_one_word(tmp_path: Path) -> None:
    app = pair_app(tmp_path / "runs")
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 2)
        rows.select_key(next(r.key for r in rows.rows if r.run_id == FIRST))
        await pilot.press("enter")  # a run resumed: C compares it with its resume
        await settle(pilot, lambda: "C" in bar_words(app), "C on the run")
        assert await assert_one_word_per_action(pilot) >= 6
        await pilot.press("C")
        await settle(pilot, lambda: type(app.screen).__name__ == "CompareScreen", "compared")
        await settle(pilot, lambda: "x" in bar_words(app), "x in the bar")
        assert await assert_one_word_per_action(pilot) >= 2


async def test_compare_is_greyed_and_not_offered_until_two_runs_are_marked(
    fixtures: Path,
) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await loaded(pilot)
        assert bar_words(app)["C"] == "Compare"  # shown, so it can be learnt
        assert greyed(app, "C")
        assert "Compare" not in await palette(pilot)

        await pilot.press("space")  # one marked: still nothing to compare
        await noticed(pilot, "marked: mark another")
        assert greyed(app, "C")
        assert "Compare" not in await palette(pilot)
        await pilot.press("C")  # pressed anyway: it says why
        await noticed(pilot, "one run is marked")

        await pilot.press("down", "space")  # two marked: C compares them
        await settle(pilot, lambda: not greyed(app, "C"), "C no longer greyed")
        assert (await palette(pilot))["Compare"].endswith("(C)")

        await pilot.press("space")  # one unmarked again
        await settle(pilot, lambda: greyed(app, "C"), "C greyed again")
        assert "Compare" not in await palette(pilot)


async def test_restart_at_once_waits_at_the_start(fixtures: Path) -> None:
    """A replay played at once, restarted with ``R``: it was at its end again before a
    frame was drawn, and the screen showed no change. It waits at its start, and says so;
    space plays it on, at once."""
    replay = ReplaySource([str(path) for path in sorted(fixtures.glob("*.jsonl"))], speed=0)
    app = make_app(Settings(flush_interval=0.01), [replay])
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        rows = app.screen.query_one(RunTable)

        def source_line() -> str:
            return screen_lines(app)[0]

        await settle(pilot, lambda: "played to the end, at once" in source_line(), "the end")
        await settle(pilot, lambda: len(rows.rows) == 6, "every run")
        await pilot.press("R")
        await noticed(pilot, "replay from the start, paused")
        await settle(pilot, lambda: "replay (paused, at once)" in source_line(), "the start")
        await pilot.pause(0.3)
        assert "replay (paused, at once)" in source_line()  # it stays there
        assert "No runs" in "\n".join(screen_lines(app))
        await pilot.press("n")
        await settle(pilot, lambda: len(rows.rows) == 1, "its first event")
        await pilot.press("space")  # played on, at once
        await settle(pilot, lambda: "played to the end, at once" in source_line(), "the end")
        assert len(rows.rows) == 6


MIGRATION = "run_20261128T143000052_a0b1c2d3e4f50617"
"""A sample run: stale, its approval unanswered."""


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_notices_leave_the_counts_and_the_keys_in_view(
    fixtures: Path, size: tuple[int, int]
) -> None:
    """On a run, a notice covered the header's counts (events, time, tokens, tool calls);
    there is room for one under them, off the detail pane: the newest shows there."""
    app = sample_app(fixtures)
    async with app.run_test(size=size, notifications=True) as pilot:
        await loaded(pilot)
        before = screen_lines(app)  # the runs: the source line, the column titles, the keys
        app.notify(f"cancel requested for {MIGRATION}", markup=False)
        app.notify("copied to the clipboard")
        await noticed(pilot, "copied to the clipboard")
        await pilot.pause(0.2)
        lines = screen_lines(app)
        assert [lines[0], lines[1], lines[-1]] == [before[0], before[1], before[-1]]
        assert any("copied to the clipboard" in line for line in lines)
        assert any(f"cancel requested for {MIGRATION}" in line for line in lines)

        await open_run(pilot, MIGRATION)
        await settle(pilot, lambda: "3 events" in screen_lines(app)[1], "the run's counts")
        await pilot.pause(0.2)
        before = screen_lines(app)  # the run's status, its counts, the keys
        await pilot.press("a", "c")  # two refusals at once
        await noticed(pilot, "cannot cancel")
        await pilot.pause(0.2)
        lines = screen_lines(app)
        assert [lines[0], lines[1], lines[-1]] == [before[0], before[1], before[-1]]
        assert "cannot cancel" in lines[2]  # the line under the counts, not one lower
        assert not any("cannot approve" in line for line in lines)  # gave way to the newest


async def test_a_burst_of_notices_shows_the_newest_under_the_counts(fixtures: Path) -> None:
    """Fourteen notices at once on the runs at 80x24 rose over the source line's counts,
    and the column titles."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await loaded(pilot)
        before = screen_lines(app)
        for count in range(14):
            app.notify(f"notice {count}")
        await settle(pilot, lambda: any("notice 13" in said for said in notices(app)), "the last")
        await pilot.pause(0.2)
        lines = screen_lines(app)
        assert [lines[0], lines[1], lines[-1]] == [before[0], before[1], before[-1]]
        shown = [line for line in lines if "notice " in line]
        assert any("notice 13" in line for line in shown), shown  # the newest in view
        assert not any("notice 0 " in line for line in shown), shown  # the oldest gave way


async def test_a_refused_key_says_its_own_verb_and_what_is_missing(fixtures: Path) -> None:
    """``d`` said "cannot approve", and on a stale run waiting on an approval both ``a``
    and ``d`` said "nothing to cancel"."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await loaded(pilot)
        await open_run(pilot, MIGRATION)  # stale, its approval never answered
        await pilot.press("d")
        said = await noticed(pilot, "cannot deny")
        assert "the run is stale (its writer went quiet): no writer would read the answer" in said
        assert "nothing to cancel" not in said
        await pilot.press("c")
        assert "nothing to cancel" in await noticed(pilot, "cannot cancel")
