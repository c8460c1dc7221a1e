"""The run screen and its drill-downs.

``p`` stacks the parent over the child; token figures say their unit and never say 0 for
what was not recorded; the tool-call screens show Enter and act on the call's run; the
confirmations say one thing to leave a run as it is; a stale run is not said to have
ended; ``o`` says why it does nothing; a replay's state shows on the run screen; notices
stay off the detail pane.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from textual.widgets import Button, DataTable, Input, Label, Static

from inspector import LedgerDirectorySource, ManagerSource, ReplaySource
from run_manager import Manager
from tests.conftest import line
from tests.tui_support import (
    cancel_asked,
    events_read,
    loaded,
    noticed,
    notices,
    sample_app,
    settle,
)
from tui.app import make_app
from tui.screens.approval import ApprovalScreen
from tui.screens.cancel import CancelScreen
from tui.screens.resume import ResumeScreen
from tui.screens.run import RunScreen
from tui.screens.runs import RunsScreen
from tui.settings import Settings
from tui.widgets.detail import EventDetail
from tui.widgets.event_list import EventList
from tui.widgets.key_bar import KeyBar

pytestmark = pytest.mark.timeout(60)

PARENT = "run_20261129T064500100_aaaaaaaaaaaaaaaa"
CHILD = "run_20261129T064500200_bbbbbbbbbbbbbbbb"
RESEARCH = "run_20261128T143000012_4f1a9c2e7b3d8a60"
"""The sample research run: two model calls with tokens, two tool calls, an answer."""


def header(app: object) -> str:
    return str(app.screen.query_one("#run-header", Static).render())  # type: ignore[attr-defined]


def key_bar(app: object) -> str:
    return str(app.screen.query_one(KeyBar).render())  # type: ignore[attr-defined]


def event_lines(app: object) -> list[str]:
    events = app.screen.query_one(EventList)  # type: ignore[attr-defined]
    return [
        "".join(segment.text for segment in events.render_line(y))
        for y in range(len(events.entries()))
    ]


def write_family(directory: Path) -> None:
    """A parent run and its child, finished; the parent's model call never said its tokens."""
    directory.mkdir()
    (directory / f"{PARENT}.jsonl").write_bytes(
        line(1, "run_started", {"skill": "plan"}, run_id=PARENT)
        + line(2, "llm_call", {"model": "m"}, run_id=PARENT)
        + line(3, "run_completed", {"status": "ok", "output": "planned"}, run_id=PARENT)
    )
    (directory / f"{CHILD}.jsonl").write_bytes(
        line(1, "run_started", {"skill": "part", "parent_run_id": PARENT}, run_id=CHILD)
        + line(2, "run_completed", {"status": "ok", "output": "done"}, run_id=CHILD)
    )


async def test_p_stacks_the_parent_over_the_child_and_escape_comes_back(tmp_path: Path) -> None:
    write_family(tmp_path / "runs")
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path / "runs")])
    async with app.run_test(size=(80, 24)) as pilot:
        rows = await loaded(pilot, 2)
        rows.select_key(next(run.key for run in rows.rows if run.run_id == CHILD))
        await pilot.press("enter")
        child = app.screen
        assert isinstance(child, RunScreen)
        # At 80 columns the parent is said by its id's end, the key after it in view.
        assert f"parent …{PARENT[-12:]} (p)" in header(app)
        await pilot.press("p")
        assert isinstance(app.screen, RunScreen)
        assert app.screen.key.run_id == PARENT
        await pilot.press("escape")  # back to the child, not to the runs
        assert app.screen is child
        assert CHILD in header(app)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_tokens_say_their_unit_and_not_recorded_is_not_zero(
    fixtures: Path, tmp_path: Path
) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        rows.select_key(next(run.key for run in rows.rows if run.run_id == RESEARCH))
        await pilot.press("enter")
        await events_read(pilot, 20)
        # The table's figure and cost (2.9k $0.010), with its unit.
        assert "2.9k tokens $0.010" in header(app)
    write_family(tmp_path / "runs")
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path / "runs")])
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 2)
        rows.select_key(next(run.key for run in rows.rows if run.run_id == PARENT))
        await pilot.press("enter")
        await events_read(pilot, 2)
        await settle(pilot, lambda: len(event_lines(app)) == 3, "the parent's events")
        model = event_lines(app)[1]
        assert "model m tokens not recorded" in model  # as the comparison says: not 0
        assert "0 in / 0 out" not in model
        assert "no tokens recorded" in header(app)


async def test_the_tool_call_screens_show_enter_and_act_on_the_calls_run(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await loaded(pilot)
        await pilot.press("t")
        assert "⏎ Its calls" in key_bar(app)
        await pilot.press("enter")
        table = app.screen.query_one(DataTable)
        await settle(pilot, lambda: table.row_count > 0, "the tool's calls")
        assert "⏎ Open" in key_bar(app)
        # Every column fits 80 columns: no sideways scroll bar (its end was drawn as a ▊).
        assert table.virtual_size.width <= table.size.width
        assert not table.show_horizontal_scrollbar
        # c acts on the selected call's run, and says what the run screen says of it.
        await pilot.press("c")
        calls_said = await noticed(pilot, "cannot cancel")
        call_run = app.screen.current_run()  # type: ignore[attr-defined]
        assert call_run is not None
        assert "no run is selected" not in calls_said
        await pilot.press("enter")
        assert isinstance(app.screen, RunScreen)
        assert app.screen.key == call_run.key
        app.clear_notifications()
        await pilot.press("c")
        run_said = await noticed(pilot, "cannot cancel")
        assert run_said == calls_said


async def test_every_confirmation_says_back_to_leave_the_run_as_it_is(fixtures: Path) -> None:
    async with Manager() as manager:
        from tests.agents import Failing, Gatekeeper, stubborn_worker

        app = sample_app(fixtures, ManagerSource(manager, name="local"), clock=None)
        async with app.run_test(size=(80, 24)) as pilot:
            handle = manager.start(stubborn_worker, "0.05")
            waiting = manager.start(Gatekeeper(), "ship it")
            failed = manager.start(Failing(), "x")
            with contextlib.suppress(Exception):
                await asyncio.wait_for(failed.result(), 10)
            rows = await loaded(pilot, 9)
            await settle(
                pilot,
                lambda: any(r.run_id == waiting.run_id and r.pending_approval for r in rows.rows),
                "the question asked",
            )
            buttons: dict[str, str] = {}

            async def leave_button(run_id: str, key: str) -> str:
                rows.select_key(next(run.key for run in rows.rows if run.run_id == run_id))
                await pilot.press(key)
                screen = app.screen
                assert isinstance(screen, CancelScreen | ApprovalScreen | ResumeScreen), key
                said = [str(b.label) for b in screen.query(Button)]
                titles = "\n".join(str(label.render()) for label in screen.query(Label))
                await pilot.press("escape")
                assert isinstance(app.screen, RunsScreen)
                buttons[key] = said[0]
                return titles

            await leave_button(handle.run_id, "c")
            approve = await leave_button(waiting.run_id, "a")
            deny = await leave_button(waiting.run_id, "d")
            await settle(
                pilot,
                lambda: any(
                    r.run_id == failed.run_id and r.status.value == "failed" for r in rows.rows
                ),
                "the failed run",
            )
            await leave_button(failed.run_id, "r")
            assert buttons == {"c": "Back", "a": "Back", "d": "Back", "r": "Back"}
            assert "for run" not in deny
            assert "Deny what gatekeeper asks?" in deny
            assert "Approve what gatekeeper asks?" in approve
            assert "may I ship it?" in deny
            manager.cancel_all()


async def test_at_80x24_the_cancel_reason_box_and_its_hint_read_whole(fixtures: Path) -> None:
    async with Manager() as manager:
        from tests.agents import stubborn_worker

        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(80, 24)) as pilot:
            await cancel_asked(pilot, manager, stubborn_worker, "0.05")
            await pilot.pause()
            box = app.screen.query_one("#reason", Input)
            assert len(box.placeholder) <= box.content_region.width
            hint = app.screen.query_one(".hint", Label)
            said = str(hint.render())
            assert said == "Left empty, 'canceled in runtop' is recorded."
            assert len(said) <= hint.content_region.width * hint.content_region.height
            await pilot.press("escape")
            manager.cancel_all()


async def test_o_on_a_short_output_says_it_is_shown_whole(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        rows = await loaded(pilot)
        rows.select_key(next(run.key for run in rows.rows if run.run_id == RESEARCH))
        await pilot.press("enter")
        await events_read(pilot, 20)
        detail = app.screen.query_one(EventDetail)
        before = detail.text
        await pilot.press("o")
        await noticed(pilot, "shown whole")
        assert detail.text == before


async def test_a_replays_state_shows_on_the_run_screen(fixtures: Path) -> None:
    ledger = next(fixtures.glob("run_20261128T143000012_*.jsonl"))
    replay = ReplaySource([ledger], step=True, name="replay")
    app = make_app(Settings(clock=1795876500.0, flush_interval=0.01), [replay])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n", "n")
        await loaded(pilot, 1)
        await pilot.press("enter")
        assert isinstance(app.screen, RunScreen)
        await settle(pilot, lambda: "replay (paused, at 1x)" in header(app), "paused")
        await pilot.press("x")
        await settle(pilot, lambda: "replay (paused, at 2x)" in header(app), "2x")
        await pilot.press("space")
        await settle(pilot, lambda: "replay (playing, at 2x)" in header(app), "playing")


async def test_a_canceled_runs_header_says_canceled_once(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        rows = await loaded(pilot)
        rows.select_key(next(run.key for run in rows.rows if run.status.value == "canceled"))
        await pilot.press("enter")
        said = header(app)
        assert said.startswith("⊘ canceled")
        assert said.splitlines()[-1] == "wrong input file"  # not "canceled: wrong input file"
        assert said.count("cancel") == 1


async def test_cancel_on_a_stale_run_does_not_say_it_ended(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        rows = await loaded(pilot)
        stale = next(run for run in rows.rows if run.status.value == "stale")
        rows.select_key(stale.key)
        await pilot.press("enter")
        await pilot.press("c")
        said = await noticed(pilot, "cannot cancel")
        assert "ended" not in said
        assert "the run is stale" in said


async def test_the_demo_planners_answer_is_not_one_text_twice(tmp_path: Path) -> None:
    from tui.demo import Planner

    async with Manager(ledger_dir=tmp_path / "runs") as manager:
        handle = manager.start(Planner(0.02, manager), "textual")
        output = str(await asyncio.wait_for(handle.result(), 30))
        halves = output.split(" / ")
        assert len(halves) == 2
        assert halves[0].startswith("widgets: ")
        assert halves[1].startswith("events: ")
        assert halves[0].split(": ", 1)[1] != halves[1].split(": ", 1)[1]


async def test_at_80x24_notices_stay_off_the_detail_pane(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        rows = await loaded(pilot)
        rows.select_key(next(run.key for run in rows.rows if run.run_id == RESEARCH))
        await pilot.press("enter")
        await events_read(pilot, 20)
        await pilot.press("a", "c")  # two refusals at once: the newest shows (one on a run)
        await settle(pilot, lambda: any("cannot cancel" in s for s in notices(app)), "c's")
        await pilot.pause(0.3)  # shown, laid out
        detail = app.screen.query_one(EventDetail).region
        for toast in app.screen.query("Toast"):
            assert not toast.region.overlaps(detail), (toast.region, detail)
        assert len(notices(app)) == 1, notices(app)
