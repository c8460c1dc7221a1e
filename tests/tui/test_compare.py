"""Runs side by side: marking runs in the table, comparing them, and a run with its resume."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from inspector import LedgerDirectorySource, ManagerSource, ReplaySource
from run_manager import Manager
from tests.agents import Stepper
from tests.resumed_pair import FIRST, FROZEN_AFTER, RESUMED, write_pair
from tests.tui_support import loaded, noticed, sample_app, settle
from tui.app import RuntopApp, make_app
from tui.screens.compare import CompareScreen
from tui.screens.run import RunScreen
from tui.screens.runs import RunsScreen
from tui.settings import Settings
from tui.widgets.comparison_table import ComparisonTable
from tui.widgets.key_bar import KeyBar
from tui.widgets.run_table import MARK, RunTable

pytestmark = pytest.mark.timeout(60)


async def compare_the_pair(pilot: Any, *words: str) -> CompareScreen:
    """The two runs of :func:`pair_app` marked and compared, once ``words`` are shown."""
    await loaded(pilot, 2)
    await pilot.press("space", "down", "space", "C")
    await compared(pilot, *words)
    screen = pilot.app.screen
    assert isinstance(screen, CompareScreen)
    return screen


def pair_app(directory: Path, **settings: Any) -> RuntopApp:
    write_pair(directory)
    options: dict[str, Any] = {"clock": FROZEN_AFTER, "flush_interval": 0.01, **settings}
    return make_app(Settings(**options), [LedgerDirectorySource(directory, name="runs")])


def marked_lines(table: RunTable) -> list[str]:
    return [line for line in table.show_text().splitlines() if line.startswith(MARK)]


def table_text(app: RuntopApp) -> str:
    table = app.screen.query_one(ComparisonTable)
    return "\n".join(str(line) for line in table.lines(table.size.width))


def bar_keys(app: RuntopApp) -> dict[str, str]:
    """What the key bar offers: each key shown and what it says it does."""
    return {key: description for key, _, description, _ in app.screen.query_one(KeyBar)._shown()}


async def compared(pilot: Any, *words: str) -> str:
    """The comparison's text, once it says every one of ``words``."""
    app = pilot.app
    await settle(pilot, lambda: isinstance(app.screen, CompareScreen), "the comparison")
    await settle(pilot, lambda: all(w in table_text(app) for w in words), f"{words}")
    return table_text(app)


async def test_marking_two_runs_and_comparing_them(tmp_path: Path) -> None:
    app = pair_app(tmp_path / "runs")
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        rows = await loaded(pilot, 2)
        assert rows.rows[0].run_id == RESUMED  # newest first
        assert marked_lines(rows) == []
        await pilot.press("C")  # nothing marked
        await noticed(pilot, "no run is marked: mark two runs with space")
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("space")
        assert [line.split()[3] for line in marked_lines(rows)] == ["…" + RESUMED[-12:]]
        await pilot.press("C")  # one marked
        await noticed(pilot, "one run is marked")
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("space")  # the same run again: unmarked
        assert marked_lines(rows) == []
        await pilot.press("space", "down", "space")
        assert len(marked_lines(rows)) == 2
        assert app.screen.marked == [rows.rows[0].key, rows.rows[1].key]  # type: ignore[attr-defined]
        await pilot.press("C")
        text = await compared(pilot, "24s faster", "only in B")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        # Marked newest first, compared oldest first: the run resumed is A.
        assert (screen.left.run_id, screen.right.run_id) == (FIRST, RESUMED)
        header = str(screen.query_one("#compare-header").render())
        assert "resumed from A" in header
        outcome = next(line for line in text.splitlines() if line.startswith("outcome"))
        assert "✘ failed" in outcome
        assert "✔ succeeded" in outcome
        assert "✓ succeeded where A failed" in outcome
        assert "✗ 50 more (+4%)" in text  # prompt tokens: worse
        assert "$0.0010 cheaper" in text
        assert "timed out waiting for the condition" in text
        await pilot.press("y")  # the comparison as text, for a bug report
        assert FIRST in app.clipboard
        assert "✓ 24s faster (-73%)" in app.clipboard
        await pilot.press("x")  # swapped: the failure is now B's, and marked worse
        text = await compared(pilot, "✗ failed where A succeeded", "24s slower")
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)
        assert len(marked_lines(rows)) == 2  # the marks stay for another look


async def test_the_palette_marks_and_compares(tmp_path: Path) -> None:
    app = pair_app(tmp_path / "runs")
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 2)

        async def command(title: str) -> None:
            await pilot.press("ctrl+p")
            await settle(pilot, lambda: app.screen.query("CommandInput"), "the palette")
            await pilot.press(*title)
            await pilot.pause(0.3)  # the palette searches as it is typed
            await pilot.press("enter")
            await settle(pilot, lambda: not app.screen.query("CommandInput"), "it closed")

        await command("Mark")
        await pilot.press("down")
        await command("Mark")
        assert len(marked_lines(rows)) == 2
        await command("Compare")
        await compared(pilot, "24s faster")


async def test_a_third_mark_is_refused_and_says_why(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        rows = await loaded(pilot)
        await pilot.press("space", "down", "space", "down", "space")
        said = await noticed(pilot, "two runs are marked already")
        assert "unmark one first" in said
        assert len(marked_lines(rows)) == 2
        assert rows.rows[2].key not in app.screen.marked  # type: ignore[attr-defined]
        assert bar_keys(app).get("space") == "Mark"
        assert bar_keys(app).get("C") == "Compare"


async def test_in_a_replay_space_plays_and_m_marks(fixtures: Path) -> None:
    ledgers = sorted(fixtures.glob("*.jsonl"))[:2]
    replay = ReplaySource(ledgers, step=True, name="replay")
    app = make_app(Settings(clock=FROZEN_AFTER, flush_interval=0.01), [replay])
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        rows = app.screen.query_one(RunTable)
        for _ in range(40):  # step until the second run has started
            if len(rows.rows) == 2:
                break
            await pilot.press("n")
            await pilot.pause(0.05)
        await settle(pilot, lambda: len(rows.rows) == 2, "both replayed runs")
        assert bar_keys(app).get("space") == "Pause/play"  # not Mark: the bar tells the truth
        assert replay.paused
        await pilot.press("space")
        await settle(pilot, lambda: not replay.paused, "the replay playing")
        assert marked_lines(rows) == []  # space played; it marked nothing
        await pilot.press("home", "m", "down", "m")
        await settle(pilot, lambda: len(marked_lines(rows)) == 2, "two marks")
        await pilot.press("C")
        await settle(pilot, lambda: isinstance(app.screen, CompareScreen), "the comparison")


async def test_a_run_compared_with_its_resume_from_the_run_screen(tmp_path: Path) -> None:
    """A real run that failed, resumed with r: its resume's C sets the two side by side."""
    agent = Stepper(fail=True)
    async with Manager(ledger_dir=tmp_path / "runs") as manager:
        manager.register(agent)
        app = make_app(Settings(flush_interval=0.01), [ManagerSource(manager, name="local")])
        async with app.run_test(size=(160, 48), notifications=True) as pilot:
            first = manager.start(agent, "https://example.invalid/a")
            agent.open_all()
            with pytest.raises(Exception, match="the page made no sense"):
                await asyncio.wait_for(first.result(), 10)
            rows = await loaded(pilot, 1)
            await pilot.press("enter")
            assert isinstance(app.screen, RunScreen)
            assert "C" not in bar_keys(app)  # nothing to compare it with yet
            await pilot.press("escape")
            agent.fail = False
            await settle(pilot, lambda: rows.rows[0].status.value == "failed", "the failure")
            await pilot.press(
                "r", "enter"
            )  # resumed through the app (r asks first), as a user would
            await settle(pilot, lambda: len(rows.rows) == 2, "the resumed run")
            resumed = next(run for run in rows.rows if run.resumed_from == first.run_id)
            agent.open_all()
            rows.select_key(resumed.key)
            await pilot.press("enter")
            await settle(pilot, lambda: "C" in bar_keys(app), "the compare key")
            await pilot.press("C")
            text = await compared(pilot, "succeeded where A failed")
            screen = app.screen
            assert isinstance(screen, CompareScreen)
            assert (screen.left.run_id, screen.right.run_id) == (first.run_id, resumed.run_id)
            assert "fetch" in text
            assert "the page made no sense" in text
            await pilot.press("escape", "escape")
            rows.select_key(next(run.key for run in rows.rows if run.run_id == first.run_id))
            await pilot.press("enter", "C")  # and from the run resumed: the same two
            await settle(pilot, lambda: isinstance(app.screen, CompareScreen), "again")
            assert app.screen.left.run_id == first.run_id  # type: ignore[attr-defined]


async def test_a_live_run_against_a_finished_one_from_another_source(tmp_path: Path) -> None:
    """Two sources, one run still going: its figures say so far, and settle when it ends."""
    write_pair(tmp_path / "runs")
    agent = Stepper()
    async with Manager() as manager:
        sources = [LedgerDirectorySource(tmp_path / "runs", name="runs")]
        app = make_app(
            Settings(flush_interval=0.01), [*sources, ManagerSource(manager, name="local")]
        )
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            rows = await loaded(pilot, 2)
            live = manager.start(agent, "https://example.invalid/b")
            await settle(pilot, lambda: len(rows.rows) == 3, "the live run")
            rows.select_key(next(run.key for run in rows.rows if run.run_id == live.run_id))
            await pilot.press("space")
            rows.select_key(next(run.key for run in rows.rows if run.run_id == FIRST))
            await pilot.press("space", "C")
            text = await compared(pilot, "so far", "B has not ended")
            assert "1× running" in text  # the fetch in flight
            agent.open_all()
            assert await asyncio.wait_for(live.result(), 10) == "summary"
            await compared(pilot, "✓ succeeded where A failed")
            await settle(pilot, lambda: "so far" not in table_text(app), "B's figures settled")
            # Settled only once read after it ended: never the count taken while it ran.
            assert "$0.2500" in table_text(app)  # its model call's cost, read as it came


async def test_both_timelines_on_one_axis_from_each_start(tmp_path: Path) -> None:
    """A's 32.9 s and B's 8.9 s drawn on one 32.9 s axis; zoom on one zooms both alike."""
    from tui.widgets.timeline_pane import TimelinePane

    app = pair_app(tmp_path / "runs")
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await compare_the_pair(pilot, "24s faster")
        panes = screen.panes()
        first, resumed = panes[screen.left], panes[screen.right]
        await settle(
            pilot, lambda: len(first.timeline) == 3 and len(resumed.timeline) == 5, "the nodes"
        )
        (a0, a1), (b0, b1) = first.view.full_axis(), resumed.view.full_axis()
        assert a1 - a0 == pytest.approx(32.9)
        assert b1 - b0 == pytest.approx(32.9)  # as long as A's, from B's own start
        assert b0 == pytest.approx(screen.store.get(screen.right).started_at)  # type: ignore[union-attr]
        assert first.view.has_focus
        await pilot.press("plus")  # zoom A: B follows, each from its own start
        await settle(pilot, lambda: resumed.view.window is not None, "B zoomed too")
        assert first.view.window is not None
        assert resumed.view.window is not None
        assert resumed.view.window[0] - b0 == pytest.approx(first.view.window[0] - a0, abs=1e-3)
        assert resumed.view.window[1] - b0 == pytest.approx(first.view.window[1] - a0, abs=1e-3)
        await pilot.press("0")  # the whole run again, on both
        await settle(pilot, lambda: resumed.view.window is None, "B whole again")
        await pilot.press("x")  # swapped: B's timeline is on top now, labelled A
        rows = list(screen.query(TimelinePane))
        assert rows[0].key == screen.left
        assert rows[0].key.run_id == RESUMED
        rows[0].view.focus()  # Enter on its second node (the first shell call): its events
        await pilot.press("down", "enter")
        await settle(pilot, lambda: isinstance(app.screen, RunScreen), "the run's events")
        run_screen = app.screen
        assert isinstance(run_screen, RunScreen)
        assert run_screen.key.run_id == RESUMED
        assert run_screen.select == rows[0].timeline.rows()[1].detail_position
