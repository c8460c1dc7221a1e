"""Each screen says what is so, and moves on when it changes: nothing stale, nothing stuck."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import ReplaySource
from tests.tui.test_interaction import screen_lines
from tests.tui_support import settle
from tui.app import make_app
from tui.screens.compare import CompareScreen
from tui.settings import Settings
from tui.widgets.event_list import EventList
from tui.widgets.run_table import RunTable

pytestmark = pytest.mark.timeout(60)


async def test_a_replays_comparison_draws_both_timelines(fixtures: Path) -> None:
    """Two runs of a replay played to its end, compared: both timelines stayed under the
    loading dots for good (the pane's first read, from memory, ended before the dots set
    up in its constructor were drawn, and nothing took them away)."""
    replay = ReplaySource(sorted(fixtures.glob("*.jsonl")), speed=0, name="replay")
    app = make_app(Settings(flush_interval=0.01), [replay])
    async with app.run_test(size=(160, 48)) as pilot:
        rows = app.screen.query_one(RunTable)
        await settle(pilot, lambda: len(rows.rows) == 6, "every run replayed")
        await pilot.pause(0.5)
        await pilot.press("home", "m", "down", "m", "C")
        await settle(pilot, lambda: isinstance(app.screen, CompareScreen), "the comparison")
        await settle(
            pilot,
            lambda: sum(" wall " in line for line in screen_lines(app)) == 2,
            "both timelines' summaries",
        )
        await pilot.pause(0.5)
        assert not any("● ● ●" in line for line in screen_lines(app))  # no loading dots


async def test_a_run_opened_while_its_server_was_down_is_read_when_it_is_back(
    tmp_path: Path,
) -> None:
    """Attached, the server stopped, a finished run opened: its rows say "reading…", and
    are read once the server is back, with no key pressed. (A walk saw them stay
    "reading…" until a key; this test, on loopback, did not catch that on the old code:
    it guards the path, it does not prove that fix.)"""
    from inspector import RemoteSource
    from tests.agents import Echo
    from tests.inspector.test_remote_source import TOKEN, Server, free_port
    from tui.screens.run import RunScreen

    port = free_port()
    server = Server(tmp_path / "runs", port)
    manager = await server.start()
    try:
        done = manager.start(Echo(), "hello")
        await done.wait()
        source = RemoteSource(f"http://127.0.0.1:{port}", TOKEN, name="remote", backoff_first=0.2)
        app = make_app(Settings(flush_interval=0.01), [source])
        async with app.run_test(size=(80, 24)) as pilot:
            rows = app.screen.query_one(RunTable)
            await settle(pilot, lambda: len(rows.rows) == 1, "the finished run")
            await server.stop()
            down = app.store.snapshot
            await settle(pilot, lambda: "remote" in down().sources_down(), "the server gone")
            await pilot.press("enter")
            await settle(pilot, lambda: isinstance(app.screen, RunScreen), "the run")
            events = app.screen.query_one(EventList)
            await pilot.pause(0.3)
            assert events.pages.item(0) is None  # not read: the server is away (item() would ask)
            await server.start()
            await settle(pilot, lambda: "remote" not in down().sources_down(), "the server back")
            await settle(pilot, lambda: events.pages.item(0) is not None, "its events, unasked")
            await settle(
                pilot, lambda: not any("reading…" in line for line in screen_lines(app)), "rows"
            )
    finally:
        await server.stop()


async def test_an_event_row_too_long_for_the_list_ends_in_an_ellipsis(fixtures: Path) -> None:
    """At 80x24 a row read `The textual docs de` at the pane's edge: cut, with no sign."""
    from tests.tui.test_interaction import RESEARCH
    from tests.tui_support import events_read, loaded, open_run, sample_app

    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await open_run(pilot, RESEARCH)
        events = await events_read(pilot, 21)
        width = events.size.width
        rows = [events.render_line(y).text for y in range(events.size.height)]
        ended = next(row for row in rows if "run succeeded:" in row)
        assert len(ended) == width
        assert ended.endswith("…")
        assert all(len(row) <= width for row in rows)


async def test_the_comparisons_keys_list_tab_and_tab_goes_to_the_other_timeline(
    tmp_path: Path,
) -> None:
    """The README says tab goes from one timeline to the other; `?` did not list it."""
    from tests.tui.test_compare import compare_the_pair, pair_app

    app = pair_app(tmp_path / "runs")
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await compare_the_pair(pilot, "faster")
        a, b = (pane.view for pane in screen.panes().values())
        await settle(pilot, lambda: a.has_focus, "A's timeline focused")
        await pilot.press("tab")
        await settle(pilot, lambda: b.has_focus, "B's timeline")
        await pilot.press("tab")
        await settle(pilot, lambda: a.has_focus, "A's again")
        await pilot.press("question_mark")
        await settle(
            pilot,
            lambda: any("tab" in line and "Other timeline" in line for line in screen_lines(app)),
            "tab in the keys",
        )


async def test_copy_is_not_offered_where_there_is_nothing_to_copy(fixtures: Path) -> None:
    """The tools' stats screen showed `y Copy`, which did nothing there."""
    from tests.tui.test_interaction import bar
    from tests.tui_support import loaded, sample_app
    from tui.screens.tools import ToolsScreen

    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        assert "y Copy" in bar(app)  # a run is selected: its id is copied
        await pilot.press("t")
        await settle(pilot, lambda: isinstance(app.screen, ToolsScreen), "the tools")
        await pilot.pause(0.2)
        assert "y Copy" not in bar(app)
        await pilot.press("enter")  # a tool's calls: a call's run is selected
        await settle(pilot, lambda: "y Copy" in bar(app), "copy, with a call's run")


async def test_the_last_filter_offered_in_the_box_says_it_is_not_applied(
    fixtures: Path, tmp_path: Path
) -> None:
    """A walk: `/` showed the last session's `deployer` in the box while the table still
    showed every run and the line named no filter, as if it were applied."""
    from tests.tui_support import loaded, sample_app
    from tui.screens.runs import OFFERED_NOT_APPLIED

    state = tmp_path / "state.json"
    state.write_text('{"filter": "status:failed"}')
    app = sample_app(fixtures, state_file=state)
    async with app.run_test(size=(80, 24)) as pilot:
        rows = await loaded(pilot)
        await pilot.press("slash")
        await settle(
            pilot, lambda: any(OFFERED_NOT_APPLIED in line for line in screen_lines(app)), "said"
        )
        assert len(rows.rows) == 6
        await pilot.press("enter")
        await settle(pilot, lambda: len(rows.rows) == 1, "applied")
        await pilot.press("slash", "ctrl+u", *"deploy")
        await settle(
            pilot,
            lambda: not any(OFFERED_NOT_APPLIED in line for line in screen_lines(app)),
            "gone",
        )


async def test_a_cut_event_row_ends_in_an_ellipsis_beside_the_scroll_bar(tmp_path: Path) -> None:
    """At 80x24 a live run's rows with a scroll bar beside them were cut under it, the
    ellipsis drawn beneath the bar: `21.0k in / 2` read as a whole figure (walk finding)."""
    from inspector import LedgerDirectorySource
    from tests.conftest import RUN_ID, line
    from tests.tui_support import events_read, loaded, open_run

    runs = tmp_path / "runs"
    runs.mkdir()
    lines = line(1, "run_started", {"skill": "translate", "input": "the guide"})
    for seq in range(2, 62):
        lines += line(seq, "tool_result", {"call_id": f"c{seq}", "output": "x" * 20 + " 21.0k"})
    (runs / f"{RUN_ID}.jsonl").write_bytes(lines)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(runs, name="runs")])
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 1)
        await open_run(pilot, RUN_ID)
        events = await events_read(pilot, 60)
        await settle(pilot, lambda: events.show_vertical_scrollbar, "the scroll bar")
        room = events.scrollable_content_region.width
        assert room < events.size.width or room < events.outer_size.width
        rows = [events.render_line(y).text for y in range(events.size.height)]
        cut = [row for row in rows if "result" in row]
        assert cut
        assert all(len(row) == room for row in cut), cut
        assert all(row.endswith("…") for row in cut), cut
