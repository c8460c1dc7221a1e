"""The TUI driven as a user drives it: keys, mouse, states, actions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from inspector import LedgerDirectorySource, ManagerSource
from ledger_reader import RunStatus
from run_manager import Manager
from tests.agents import Gatekeeper, slow_to_stop, stubborn_worker
from tests.conftest import line, runs_listed
from tests.tui_support import (
    FROZEN,
    age,
    cancel_asked,
    canceled,
    events_read,
    loaded,
    noticed,
    notices,
    sample_app,
    settle,
    write_waiting_run,
)
from tui.app import make_app
from tui.palette import palette_commands
from tui.screens.cancel import CancelScreen
from tui.screens.run import RunScreen
from tui.screens.runs import RunsScreen
from tui.settings import Settings
from tui.widgets.event_list import EventList

pytestmark = pytest.mark.timeout(60)


def texts(app: object) -> str:
    """Everything the current screen's text widgets say."""
    from tui.widgets.detail import EventDetail

    screen = app.screen  # type: ignore[attr-defined]
    shown = [str(widget.render()) for widget in screen.query("Static, SourceLine, RunPreview")]
    shown += [detail.text for detail in screen.query(EventDetail)]
    return "\n".join(shown)


async def test_runs_table_shows_the_samples(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        assert [run.run_id[:29] for run in rows.rows] == [
            "run_20261128T143000063_c5b4a3",
            "run_20261128T143000058_5e6f70",
            "run_20261128T143000052_a0b1c2",
            "run_20261128T143000045_1f2e3d",
            "run_20261128T143000031_9c8b7a",
            "run_20261128T143000012_4f1a9c",
        ]
        shown = rows.show_text()
        assert "✘ failed" in shown
        # Its approval's 24 h timeout passed on 29 November: no writer waits on it now.
        waiting = rows.rows[2]
        assert "? stale" in rows.show_text().splitlines()[2]
        assert "approval unanswered: Apply migration v42 to production?" in shown
        assert waiting.pending_approval is not None
        assert "wrong input file" in shown  # why the canceled one was canceled
        assert "canceled: wrong" not in shown
        assert "? stale" in shown
        assert "2.9k $0.010" in shown  # tokens and cost of the research run
        assert "samples (live)   6 runs" in texts(app)


async def test_keys_move_open_and_go_back(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        await pilot.press("end")
        assert rows.selected is not None
        assert rows.selected.run_id.startswith("run_20261128T143000012")
        assert "run_20261128T143000012_4f1a9c2e7b3d8a60  succeeded" in texts(app)
        await pilot.press("enter")
        assert isinstance(app.screen, RunScreen)
        events = app.screen.query_one(EventList)
        await settle(pilot, lambda: events.count == 22, "22 events")
        await settle(pilot, lambda: events.item(21) is not None, "the last event")
        assert "22 events" in texts(app)
        assert "2 tool calls (0 errors)" in texts(app)
        await pilot.press("home")
        assert events.cursor == 0
        assert not events.follow
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_mouse_selects_and_double_click_opens(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        await pilot.click("#runs", offset=(5, 4))
        assert rows.cursor == 4
        await pilot.click("#runs", offset=(5, 4), times=2)
        assert isinstance(app.screen, RunScreen)
        assert app.screen.key.run_id.startswith("run_20261128T143000031")


async def test_tool_call_detail(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("end", "enter")
        await events_read(pilot, 8)
        # started, enter llm, a paragraph of 3 chunks, model, exit llm, then web_search as one.
        await pilot.press("home", *["down"] * 5)
        assert "tool web_search  ·  ok  ·  1.4s" in texts(app)  # one duration format, one word
        assert "2 tool calls (0 errors)" in texts(app)  # the word of a call's outcome
        assert " ms" not in texts(app)  # the 'exit llm:default#1 ok in 401 ms' line too
        assert '"query": "python tui framework mouse support"' in texts(app)
        await pilot.press("y")
        assert "tool web_search" in (app.clipboard or "")
        await pilot.press("w")  # the raw ledger line of the call
        assert '"type":"tool_call"' in texts(app)


async def test_streamed_text_reads_as_paragraphs_and_calls_as_one_line(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("end", "enter")
        events = await events_read(pilot, 21)
        await pilot.press("home")
        lines = [
            "".join(segment.text for segment in events.render_line(y))
            for y in range(len(events.entries()))
        ]
        assert len(lines) < events.count == 22
        assert any("¶ text Let me search for that.  [3 chunks]" in line for line in lines)
        assert any("⚙ web_search ✔ 1.4s" in line for line in lines)
        assert any("… thinking" in line for line in lines)
        await pilot.press("down", "down")  # the paragraph: the detail holds all of it
        assert "text  ·  3 chunks" in texts(app)
        assert "Let me search for that." in texts(app)
        await pilot.press("end")
        assert events.follow


async def test_filter_hides_rows_and_is_remembered(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"status:failed,canceled", "enter")
        assert [run.status for run in rows.rows] == [RunStatus.CANCELED, RunStatus.FAILED]
        assert app.last_filter == "status:failed,canceled"
        assert "2 of 6 runs" in texts(app)
        await pilot.press("slash", *"skill:/(/", "enter")
        box = app.screen.query_one("#filter", Input)
        assert "bad regular expression" in str(box.border_subtitle)  # said in the box
        assert app.focused is box  # not applied: the box stays open to mend it
        await pilot.press("escape", "escape")
        assert len(rows.rows) == 6


async def test_an_action_the_source_cannot_do_says_why(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await loaded(pilot)
        await pilot.press("c")
        assert not isinstance(app.screen, CancelScreen)
        said = await noticed(pilot, "cannot cancel")
        assert "already ended" in said
        assert app.screen.check_action("run_key", ("cancel",)) is None  # greyed in the footer


async def test_cancel_with_a_reason_shows_cancelling_then_canceled(fixtures: Path) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48)) as pilot:
            rows, handle = await cancel_asked(pilot, manager, slow_to_stop, "1.0")
            await pilot.press(*"runaway loop", "enter")
            await settle(pilot, lambda: "cancelling" in rows.show_text(), "cancelling")
            assert handle.status.value == "running"  # the thread has not stopped yet
            # Its own row (a sample run is canceled too, so "⊘ canceled" in the table says
            # nothing of this one).
            await settle(pilot, lambda: canceled(rows, handle.run_id), "canceled")
            assert handle.info().cancel_reason == "runaway loop"


async def test_escape_keeps_the_run(fixtures: Path) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48)) as pilot:
            handle = manager.start(stubborn_worker, "0.2")
            rows = await loaded(pilot, 7)
            rows.select_key(next(r.key for r in rows.rows if r.run_id == handle.run_id))
            await pilot.press("c", "escape")
            assert isinstance(app.screen, RunsScreen)
            assert not handle.info().cancel_requested
            handle.cancel()


async def test_approve_and_deny(fixtures: Path) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48)) as pilot:
            yes = manager.start(Gatekeeper(), "ship")
            no = manager.start(Gatekeeper(), "drop")
            rows = await loaded(pilot, 8)
            await settle(
                pilot,
                lambda: sum(r.pending_approval is not None for r in rows.rows) == 3,
                "two approvals",
            )
            rows.select_key(next(r.key for r in rows.rows if r.run_id == yes.run_id))
            await pilot.press("a", "enter")  # the confirmation, then yes
            assert await asyncio.wait_for(yes.result(), 5) == "approved"
            rows.select_key(next(r.key for r in rows.rows if r.run_id == no.run_id))
            await pilot.press("d", "enter")
            assert (await asyncio.wait_for(no.result(), 5)).startswith("denied")


async def test_read_only_turns_every_action_off(fixtures: Path) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"), read_only=True)
        async with app.run_test(size=(160, 48), notifications=True) as pilot:
            handle = manager.start(Gatekeeper(), "x")
            rows = await loaded(pilot, 7)
            rows.select_key(next(r.key for r in rows.rows if r.run_id == handle.run_id))
            await pilot.press("c", "a")
            assert not isinstance(app.screen, CancelScreen)
            await noticed(pilot, "--read-only")
            assert handle.status.value == "running"
            handle.cancel()


async def test_hostile_strings_are_shown_inert(tmp_path: Path) -> None:
    evil = "\x1b]0;pwned\x07\x1b[2J[bold red]boom[/]\u202e"
    (tmp_path / "run_evil.jsonl").write_bytes(
        line(
            1,
            "run_started",
            {"skill": evil, "agent": evil, "input": {evil: evil}},
            run_id="run_evil",
        )
        + line(2, "error", {"message": evil}, run_id="run_evil")
    )
    app = sample_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 1)
        shown = rows.show_text() + texts(app)
        for byte in ("\x1b", "\x07", "\u202e"):
            assert byte not in shown
        assert "␛]0;pwned" in shown
        await pilot.press("enter")
        await events_read(pilot, 1)
        assert "\x1b" not in texts(app)
        assert "[bold red]boom[/]" in texts(app)


async def test_nothing_to_show_and_a_failed_source(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    app = sample_app(empty)
    # Wide enough for the reason after tmp_path's long path (at 80 columns the source line
    # gives way between words, and the reason is past the edge).
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, lambda: "No runs yet" in texts(app), "the empty state")
        empty.rmdir()
        await settle(pilot, lambda: "no such file or directory" in texts(app), "the failure")


async def test_damaged_lines_are_counted_and_visible(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        await pilot.press("home", "enter")  # the run with a damaged line
        await events_read(pilot, 2)
        assert "3 events, 1 damaged line  " in texts(app)  # one, not "1 damaged lines"
        await pilot.press("home", "down", "down")
        assert "damaged line at byte 347" in texts(app)
        del rows


async def test_a_theme_restyles_errors(fixtures: Path) -> None:
    """Errors are drawn in the theme's $error, not a red written by hand."""
    from rich.color import Color
    from textual.theme import Theme

    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        app.register_theme(Theme(name="green-errors", primary="#224466", error="#00ff00"))
        app.theme = "green-errors"
        await loaded(pilot)
        await pilot.press("home", "enter")  # the run with a damaged line
        await events_read(pilot, 2)
        header = app.screen.query_one("#run-header", Static)
        await pilot.pause()
        drawn = [segment for y in range(3) for segment in header.render_line(y)]
        damaged = [segment for segment in drawn if "damaged" in segment.text]
        assert damaged, [segment.text for segment in drawn]
        assert damaged[0].style is not None
        assert damaged[0].style.color == Color.parse("#00ff00")


async def test_small_terminal_and_help(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        rows = await loaded(pilot)
        assert len(rows.rows) == 6
        await pilot.press("question_mark")
        assert app.screen.query("HelpPanel")
        await pilot.press("question_mark")
        assert not app.screen.query("HelpPanel")
        await pilot.press("q")
    assert app.return_code == 0


def test_runtop_ls_json_still_needs_no_textual(fixtures: Path) -> None:
    import subprocess
    import sys

    probe = (
        "import sys, io, contextlib; from tui.cli import main; "
        f"buf = io.StringIO(); code = main(['ls', '--json', {str(fixtures)!r}]); "
        "print('textual' in sys.modules, file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=30, check=True
    )
    assert result.stderr.strip() == "False"
    assert len(runs_listed(result.stdout)) == 6


async def test_tool_calls_screen(fixtures: Path) -> None:
    from textual.widgets import DataTable

    from tui.screens.tools import ToolsScreen

    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("t")
        assert isinstance(app.screen, ToolsScreen)
        table = app.screen.query_one(DataTable)
        rows = {
            str(table.get_row_at(n)[0]): [str(value) for value in table.get_row_at(n)]
            for n in range(table.row_count)
        }
        assert rows["shell"][1:4] == ["1", "1", "100%"]
        assert rows["web_search"][4] == "1.4s"  # the duration format of the runs table
        drawn = table.render_line(1).text  # the first row, under the titles
        assert drawn.rstrip().endswith("0")  # numbers right-aligned: IN FLIGHT ends the line
        numbers = table.get_row_at(0)[1:]
        assert all(getattr(value, "justify", None) == "right" for value in numbers)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_command_palette_reaches_the_actions(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        titles = [command.title for command in palette_commands(app, app.screen)]
        for wanted in ("Tool calls", "Filter", "Copy"):
            assert wanted in titles
        # The run selected ended: what it cannot take is not offered (test_tui_interaction).
        assert not {"Cancel run", "Approve", "Deny"} & set(titles)
        await pilot.press("ctrl+p")
        await pilot.press(*"tool calls")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot, lambda: type(app.screen).__name__ == "ToolsScreen", "tool calls")


async def test_the_table_catches_up_after_another_screen() -> None:
    async with Manager() as manager:
        # One quiet source: nothing but this run changes, so no later batch redraws the table.
        app = make_app(Settings(flush_interval=0.01), [ManagerSource(manager, name="local")])
        async with app.run_test(size=(160, 48)) as pilot:
            handle = manager.start(stubborn_worker, "0.05")
            rows = await loaded(pilot, 1)
            rows.select_key(next(r.key for r in rows.rows if r.run_id == handle.run_id))
            await pilot.press("enter")
            assert isinstance(app.screen, RunScreen)
            handle.cancel("from elsewhere")
            await handle.wait()
            await settle(pilot, lambda: "⊘ canceled" in texts(app), "the run screen's header")
            assert "● running" in rows.show_text()  # hidden: the table was not redrawn
            await pilot.pause(0.3)  # every change has been handed out by now
            await pilot.press("escape")
            assert "⊘ canceled" in rows.show_text()


async def test_clicking_a_key_in_the_bar_presses_it(fixtures: Path) -> None:
    from tui.screens.tools import ToolsScreen
    from tui.widgets.key_bar import KeyBar

    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        bar = app.screen.query_one(KeyBar)
        start, end, _ = next(span for span in bar._keys if span[2] == "t")
        await pilot.click(KeyBar, offset=((start + end) // 2, 0))
        await pilot.pause()
        assert isinstance(app.screen, ToolsScreen)


async def test_the_last_filter_is_offered_in_the_next_session(
    fixtures: Path, tmp_path: Path
) -> None:
    state = tmp_path / "home" / "state.json"
    first = sample_app(fixtures, state_file=state)
    async with first.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("slash", *"status:failed", "enter")
    assert json.loads(state.read_text())["filter"] == "status:failed"
    second = sample_app(fixtures, state_file=state)
    async with second.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        assert len(rows.rows) == 6  # remembered, not applied behind the user's back
        await pilot.press("slash")
        box = second.screen.query_one("#filter", Input)
        assert box.value == "status:failed"
        await pilot.press("enter")
        assert [run.status for run in rows.rows] == [RunStatus.FAILED]


async def test_clicking_a_column_title_sorts_by_it(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        rows = await loaded(pilot)
        events_x = 19 + 1 + 14 + 1 + 24 + 1 + 9 + 1 + 8 + 1 + 2  # inside EVENTS
        await pilot.click("#header", offset=(events_x, 0))
        counts = [run.event_count for run in rows.rows]
        assert counts == sorted(counts, reverse=True)
        assert "EVENTS ▼" in str(app.screen.query_one("#header", Static).render())
        await pilot.click("#header", offset=(events_x, 0))  # again: the other way
        assert [run.event_count for run in rows.rows] == sorted(counts)
        await pilot.click("#header", offset=(22, 0))  # RUN: ids do not sort
        await noticed(pilot, "does not sort")


async def test_replay_keys_step_pause_and_speed(fixtures: Path) -> None:
    from inspector import ReplaySource
    from tui.widgets.key_bar import KeyBar

    ledger = next(fixtures.glob("run_20261128T143000012_*.jsonl"))
    replay = ReplaySource([ledger], step=True, name="replay")
    app = make_app(Settings(clock=1795876500.0, flush_interval=0.01), [replay])
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(pilot, lambda: "replay (paused, at 1x)" in texts(app), "the replay's state")
        await pilot.press("n")
        rows = await loaded(pilot, 1)
        assert rows.rows[0].event_count == 1
        await pilot.press("n", "n")
        await settle(pilot, lambda: rows.rows[0].event_count == 3, "two more steps")
        assert "Step" in "".join(
            description for _, _, description, _ in app.screen.query_one(KeyBar)._shown()
        )
        await pilot.press("x", "x", "x")  # 2x, 10x, then at once
        assert replay.speed == 0.0
        await pilot.press("space")
        assert not replay.paused
        await settle(pilot, lambda: rows.rows[0].event_count == 22, "the rest at once")
        await settle(pilot, lambda: "replay (played to the end" in texts(app), "the end")
        await pilot.press("space")  # at the end: plays it again, from the start
        assert not replay.paused
        await noticed(pilot, "replay from the start")


async def test_replay_keys_are_hidden_without_a_replay(fixtures: Path) -> None:
    from tui.widgets.key_bar import KeyBar

    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        shown = app.screen.query_one(KeyBar)._shown()
        assert not any(description == "Step" for _, _, description, _ in shown)
        assert app.check_action("replay_step", ()) is False


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_the_cursor_row_keeps_every_status_readable(fixtures: Path, theme: str) -> None:
    """The cursor is the accent laid over the table, not the accent itself: an orange
    status ("approval") on a solid orange row could not be read."""
    write_waiting_run(fixtures)
    app = sample_app(fixtures, theme=theme)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 7)
        rows.cursor = next(
            number
            for number, run in enumerate(rows.rows)
            if run.status.value == "awaiting_approval"
        )
        await pilot.pause()
        line = rows.render_line(rows.cursor - rows.scroll_offset.y)
        status = next(segment for segment in line if "approval" in segment.text)
        assert status.style is not None
        assert status.style.color is not None
        assert status.style.bgcolor is not None
        foreground = status.style.color.get_truecolor()
        background = status.style.bgcolor.get_truecolor()
        contrast = sum(abs(a - b) for a, b in zip(foreground, background, strict=True))
        assert contrast > 150, (foreground, background)


async def test_a_run_whose_entries_all_fit_offers_no_scroll(fixtures: Path) -> None:
    """22 events read as 12 lines: at 80x24 they fit, so there is nothing to scroll to."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("end", "enter")
        events = await events_read(pilot, 21)
        await pilot.pause()
        assert events.count > events.size.height >= len(events.entries())
        assert events.entries()[-1].end == events.count  # every entry is on screen
        assert events.virtual_size.height <= events.size.height
        assert not events.show_vertical_scrollbar
        await pilot.press("home")
        assert events.entries()[0].start == 0
        assert events.entries()[-1].end == events.count


async def test_a_hostile_directory_name_and_parent_id_are_shown_inert(tmp_path: Path) -> None:
    """A source is named after its directory, and a run names its parent: anything at all."""
    evil = "\x1b]0;pwned\x07\x1b[2J[b]x[i]"  # no "/": it names a directory
    root = tmp_path / f"runs{evil}"
    root.mkdir()
    (root / "run_child.jsonl").write_bytes(
        line(1, "run_started", {"skill": "s", "parent_run_id": evil}, run_id="run_child")
    )
    app = make_app(Settings(clock=FROZEN), [LedgerDirectorySource(root)])
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        rows = await loaded(pilot, 1)
        assert "\x1b" not in texts(app)
        assert "runs␛]0;pwned␇␛[2J[b]x[i] (live)" in texts(app)
        await pilot.press("enter")
        await settle(pilot, lambda: "run_child" in texts(app), "the run's header")
        assert "\x1b" not in texts(app)
        await pilot.press("p")  # the parent is not here: the notice names it, inert
        await settle(pilot, lambda: bool(notices(app)), "the notice")
        notice = notices(app)[-1]
        assert "\x1b" not in notice
        assert "␛]0;pwned" in notice
        del rows


async def test_hovering_a_row_shows_its_full_run_id(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        await pilot.hover("#runs", offset=(20, 2))
        assert rows.tooltip is not None
        assert str(rows.tooltip) == f"{rows.rows[2].run_id}\nsamples"
        assert rows.rows[2].run_id not in rows.show_text()  # the column shows only its end
        await pilot.hover("#runs", offset=(20, 20))  # below the last run
        assert rows.tooltip is None


async def test_news_that_reaches_the_tool_calls_screen_before_its_columns_is_not_a_crash(
    fixtures: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's news comes when it comes: once it found the table without columns yet
    (seen in tmux: t pressed while runs streamed), and DataTable refused the rows."""
    from inspector import StoreChange
    from tui.screens.stats_table import StatsTableScreen
    from tui.screens.tools import ToolsScreen
    from tui.store_news import StoreChanged

    mounted = StatsTableScreen.on_mount  # the tool calls' and the model calls' screens'

    def news_first(self: StatsTableScreen) -> None:
        self.on_store_changed(StoreChanged(StoreChange()))
        mounted(self)

    monkeypatch.setattr(StatsTableScreen, "on_mount", news_first)
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("t")
        await settle(pilot, lambda: isinstance(app.screen, ToolsScreen), "the tool calls")
        await pilot.pause()
        assert "web_search" in [key.value for key in app.screen.query_one("DataTable").rows]
        assert app.is_running


@pytest.mark.parametrize("bad", ["status:bogus", "since:bogus", "foo:bar", "status:"])
async def test_a_filter_that_does_not_parse_is_not_applied_nor_claimed(
    fixtures: Path, bad: str
) -> None:
    """Typed a key at a time, ``status`` of ``status:bogus`` parses as free text on the way:
    the table must not be left filtered by that prefix, nor the line above say it is."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        await pilot.press("slash", *bad)
        box = app.screen.query_one("#filter", Input)
        assert box.has_class("invalid")
        assert str(box.border_subtitle)
        assert len(rows.rows) == 6  # no filter was ever applied
        assert "filter:" not in texts(app)
        assert not app.screen.query_one("#empty", Static).has_class("shown")
        await pilot.press("escape", "slash", *"status:failed", "enter")
        assert [run.status for run in rows.rows] == [RunStatus.FAILED]
        await pilot.press("slash", *bad)
        assert box.has_class("invalid")
        assert [run.status for run in rows.rows] == [RunStatus.FAILED]  # the last one Entered
        said = texts(app)
        assert "filter: status:failed" in said
        assert "1 of 6 runs" in said


async def test_a_replay_played_to_the_end_judges_an_unfinished_run(fixtures: Path) -> None:
    """The torn research ledger ends mid-paragraph and its writer is long gone: played to
    the end, it is what the directory calls it (stale), not running as at its last event."""
    from inspector import ReplaySource
    from ledger_reader import summarize_ledger

    age(fixtures)
    ledger = next(fixtures.glob("run_20261128T143000058_*.jsonl"))
    judged = summarize_ledger(ledger).status
    assert judged is RunStatus.STALE  # the directory's word for it
    replay = ReplaySource([ledger], speed=0, name="replay")
    app = make_app(Settings(clock=FROZEN, flush_interval=0.01), [replay])
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 1)
        await settle(pilot, lambda: "replay (played to the end" in texts(app), "the end")
        await settle(pilot, lambda: rows.rows[0].status is judged, "the judged status")
        shown = rows.show_text()
        assert "? stale" in shown
        assert "running" not in shown
