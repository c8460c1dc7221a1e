"""Acting safely: approvals confirmed with the question shown, replays restarted."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import Label, Static

from inspector import ManagerSource, ReplaySource
from run_manager import Manager
from tests.tui_support import awaiting_approval, loaded, notices, sample_app, settle
from tui.app import make_app
from tui.palette import palette_commands
from tui.screens.approval import ApprovalScreen
from tui.screens.run import RunScreen
from tui.screens.runs import RunsScreen
from tui.settings import Settings
from tui.widgets.source_line import SourceLine

pytestmark = pytest.mark.timeout(60)


def labels(app: object) -> str:
    return "\n".join(str(label.render()) for label in app.screen.query(Label))  # type: ignore[attr-defined]


async def test_approve_and_deny_ask_first_showing_the_question(fixtures: Path) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48)) as pilot:
            rows, handle = await awaiting_approval(pilot, manager, input="drop the table")
            rows.select_key(next(r.key for r in rows.rows if r.run_id == handle.run_id))
            await pilot.press("a")
            assert isinstance(app.screen, ApprovalScreen)
            assert "may I drop the table?" in labels(app)  # the question, in full
            assert "Approve what gatekeeper asks?" in labels(app)
            await pilot.press("escape")  # left waiting: nothing was answered
            assert isinstance(app.screen, RunsScreen)
            assert handle.status.value == "running"
            await pilot.press("d")
            assert "Deny what gatekeeper asks?" in labels(app)
            await pilot.press(*"not on a friday", "enter")
            assert await asyncio.wait_for(handle.result(), 5) == "denied: not on a friday"
            await pilot.press("enter", "end")
            assert isinstance(app.screen, RunScreen)
            from tests.tui.test_status_words import _event_lines

            await settle(pilot, lambda: "not on a friday" in _event_lines(app), "the denial")
            denial = next(x for x in _event_lines(app).splitlines() if "not on a friday" in x)
            assert "⊗ approval" in denial  # not drawn with a tick
            assert "✓" not in denial


async def test_a_replay_played_to_the_end_starts_again(fixtures: Path) -> None:
    ledger = next(fixtures.glob("run_20261128T143000031_*.jsonl"))
    replay = ReplaySource([ledger], step=True, name="replay")
    app = make_app(Settings(clock=1795876500.0, flush_interval=0.01), [replay])
    async with app.run_test(size=(160, 48)) as pilot:
        sources = app.screen.query_one(SourceLine)

        def said() -> str:
            return str(sources.render())

        await settle(pilot, lambda: "paused" in said(), "the paused replay")
        await pilot.press(*"nnnnnnn")
        rows = await loaded(pilot, 1)
        await settle(pilot, lambda: "played to the end" in said(), "the end")
        assert rows.rows[0].event_count == 7
        await pilot.press("R")  # again from the start, still stepping
        await settle(pilot, lambda: "paused" in said(), "the restart")
        await pilot.press("n")
        await settle(pilot, lambda: rows.rows[0].event_count == 1, "the first event again")
        await pilot.press("space")  # playing on to the end
        await settle(pilot, lambda: "played to the end" in said(), "the end again")
        await pilot.press("space")  # at the end, space plays it again
        await settle(pilot, lambda: "played to the end" not in said(), "a second restart")


async def test_at_80x24_every_screen_shows_keys_help_and_quit(fixtures: Path) -> None:
    from tui.widgets.key_bar import KeyBar
    from tui.widgets.run_table import RunTable

    ledger = next(fixtures.glob("run_20261128T143000012_*.jsonl"))
    replay = ReplaySource([ledger], step=True, name="replay")
    app = sample_app(fixtures, replay)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.press("n")
        await settle(pilot, lambda: len(app.screen.query_one(RunTable).rows) == 7, "7 runs")

        def bar() -> str:
            return str(app.screen.query_one(KeyBar).render())

        for screen_keys in ([], ["enter"], ["t"]):
            await pilot.press(*screen_keys)
            await pilot.pause()
            shown = bar()
            assert len(shown) <= 80, shown
            assert " ? " in shown, shown
            assert " q Quit" in shown, shown
            if screen_keys == ["t"]:
                assert "Cancel" not in shown  # no run here: the run keys do not apply
            if screen_keys == ["enter"]:
                assert "Parent" not in shown  # this run has no parent
            for replay_key in ("Pause/play", "n Step", "Speed", "Restart"):
                assert replay_key in shown, shown  # a replay is open: its keys apply
            await pilot.press("escape")
        header = app.screen.query_one("#header", Static)
        assert "TOKENS / COST" in str(header.render())  # figures before text, at 80 columns
        assert "SKILL " in str(header.render())
        assert "SKILL / AGE" not in str(header.render())  # a title shortened, not cut
        await pilot.press(*"sssss")  # status, agent, time, events, tokens
        assert "TOKENS / COST ▼" in str(header.render())  # sorted by it: on screen, marked
        assert "2.9k $0.010" in app.screen.query_one(RunTable).render_line(0).text
        await pilot.pause()
        assert not notices(app)  # sorting says nothing: the header shows it


async def test_a_tool_leads_to_its_calls_and_a_call_to_its_run(fixtures: Path) -> None:
    from textual.widgets import DataTable

    from tui.screens.tool_calls import ToolCallsScreen
    from tui.screens.tools import ToolsScreen
    from tui.widgets.detail import EventDetail
    from tui.widgets.event_list import EventList

    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("t")
        assert isinstance(app.screen, ToolsScreen)
        tools = app.screen.query_one(DataTable)
        await settle(pilot, lambda: tools.row_count >= 3, "the tools")
        row = next(
            index for index in range(tools.row_count) if str(tools.get_row_at(index)[0]) == "shell"
        )
        tools.move_cursor(row=row)
        await pilot.press("enter")
        assert isinstance(app.screen, ToolsScreen) is False
        assert isinstance(app.screen, ToolCallsScreen)
        title = str(app.screen.query_one("#calls-title", Static).render())
        assert "shell: 1 call, 1 error" in title  # the outcome's word, as the rows say it
        calls = app.screen.query_one(DataTable)
        failed = next(
            index for index in range(calls.row_count) if calls.get_row_at(index)[4] == "error"
        )
        assert str(calls.get_row_at(failed)[3]) == "30s"  # TOOK, a number: right-aligned
        assert getattr(calls.get_row_at(failed)[3], "justify", None) == "right"
        assert str(calls.get_row_at(failed)[0]) == "…7a6f5e4d3c2b"  # the failed deploy run
        calls.move_cursor(row=failed)
        await pilot.press("enter")
        assert isinstance(app.screen, RunScreen)
        assert app.screen.key.run_id.endswith("9c8b7a6f5e4d3c2b")
        events = app.screen.query_one(EventList)
        detail = app.screen.query_one(EventDetail)
        await settle(pilot, lambda: "tool shell  ·  error" in detail.text, "the call, selected")
        assert not events.follow
        header = str(app.screen.query_one("#run-header", Static).render())
        assert "1 tool call (1 error)" in header  # not "1 tool calls"


async def test_the_demo_shows_the_whole_picture_and_where_its_ledgers_are(
    tmp_path: Path,
) -> None:
    from tui.demo import start_demo
    from tui.widgets.run_table import RunTable

    async with Manager(ledger_dir=tmp_path / "runs") as manager:
        app = make_app(Settings(flush_interval=0.01), [ManagerSource(manager, name="demo")])
        async with app.run_test(size=(160, 48)) as pilot:
            demo = asyncio.create_task(start_demo(manager, pace=0.05, forever=False))
            table = app.screen.query_one(RunTable)
            sources = app.screen.query_one(SourceLine)
            said = f"ledgers in {tmp_path / 'runs'}"
            await settle(pilot, lambda: said in str(sources.render()), said)

            def seen() -> set[str]:
                runs = table.rows
                found = {f"agent {run.agent}" for run in runs}
                found |= {"child" for run in runs if run.parent_run_id}
                found |= {"resumed" for run in runs if run.resumed_from}
                found |= {run.status.value for run in runs}
                return found

            wanted = {"child", "resumed", "failed", "awaiting_approval", "running"}
            await settle(pilot, lambda: wanted <= seen(), f"{wanted}")
            await demo
            await settle(
                pilot, lambda: len({s for s in seen() if s.startswith("agent ")}) >= 8, "8 agents"
            )
            manager.cancel_all()


async def test_the_palette_reaches_o_w_and_search_on_a_run(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("enter")
        assert isinstance(app.screen, RunScreen)
        titles = [command.title for command in palette_commands(app, app.screen)]
        assert {"All output", "Raw line", "Search", "Follow"} <= set(titles)
