"""How the app answers keys at 80x24: notices said once, in one line, on the screen that
raised them; a palette and a help that offer only what can be done, with the keys that do
it; confirmations that show their own keys; a ``/`` pressed twice; no sideways scroll bar;
the first frame whole; a stale run's question in its header.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.widgets import Static

from inspector import ManagerSource, RunSource, RunUpdate, SourceUpdate
from ledger_reader import LedgerItem, RunStatus, RunSummary
from run_manager import Manager
from tests.terminal import RUNTOP, Terminal
from tests.tui_support import (
    awaiting_approval,
    events_read,
    loaded,
    notices,
    open_run,
    sample_app,
    settle,
)
from tui import textual_compat as compat
from tui.app import RuntopApp, make_app
from tui.demo import STARTING
from tui.palette import palette_commands
from tui.settings import Settings
from tui.widgets.key_bar import KeyBar
from tui.widgets.keys_help import KeyList

pytestmark = pytest.mark.timeout(60)

MIGRATION = "run_20261128T143000052_a0b1c2d3e4f50617"
"""The sample run whose approval went unanswered (stale: its writer went quiet)."""
RESEARCH = "run_20261128T143000012_4f1a9c2e7b3d8a60"
"""A sample run that succeeded, with several entries to move through."""


def screen_lines(app: Any) -> list[str]:
    """The screen's lines as the terminal shows them (toasts and modals included)."""
    return compat.screen_lines(app.screen)


def bar(app: Any) -> str:
    return str(app.screen.query_one(KeyBar).render())


# -- 1, 2: notices --------------------------------------------------------------------------


async def test_a_notice_said_again_while_it_shows_is_not_stacked(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await loaded(pilot)  # the first run selected: it ended, it cannot be canceled
        for _ in range(4):
            await pilot.press("c")
            await pilot.pause(0.05)
        await pilot.press("y")  # another notice: shown beside it
        await settle(pilot, lambda: any("copied" in said for said in notices(app)), "copied")
        await pilot.pause(0.2)
        said = notices(app)
        assert sum("cannot cancel" in line for line in said) == 1, said
        assert len(said) == 2, said
        shown = "\n".join(screen_lines(app))
        assert shown.count("cannot cancel") == 1


async def test_a_notice_is_one_line_across_the_screen_with_run_ids_whole(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await loaded(pilot)
        app.notify(f"cancel requested for {MIGRATION}", markup=False)
        await settle(pilot, lambda: notices(app), "the notice")
        await pilot.pause(0.2)
        toast = app.screen.query_one("Toast")
        assert (toast.region.width, toast.region.height) == (80, 1)
        assert any(MIGRATION in line for line in screen_lines(app))  # not broken in two


async def test_on_a_run_notices_leave_its_status_line_and_stay_there(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await loaded(pilot)
        await open_run(pilot, MIGRATION)
        status_line = screen_lines(app)[0]
        assert "stale" in status_line
        assert MIGRATION in status_line
        await pilot.press("c")  # cannot cancel: the run is stale
        await settle(pilot, lambda: notices(app), "the notice")
        await pilot.pause(0.2)
        lines = screen_lines(app)
        assert lines[0] == status_line  # the status line is not covered
        assert any("cannot cancel" in line for line in lines)
        await pilot.press("escape")  # back to the runs: the run's notice went with it
        await settle(pilot, lambda: type(app.screen).__name__ == "RunsScreen", "the runs")
        await pilot.pause(0.2)
        assert not notices(app)
        assert not any("cannot cancel" in line for line in screen_lines(app))


# -- 3: the palette -------------------------------------------------------------------------


def palette(app: RuntopApp) -> dict[str, str]:
    """Our commands in the palette now (after Textual's own): title -> help."""
    own = list(palette_commands(app, app.screen))
    textual_own = {command.title for command in App.get_system_commands(app, app.screen)}
    return {command.title: command.help for command in own if command.title not in textual_own}


def key_displays(app: RuntopApp) -> dict[str, str]:
    """Each key bound on the screen now, as shown (``/``, ``space``, ``⏎``), to its action."""
    return {
        app.get_key_display(active.binding): active.binding.action
        for active in app.screen.active_bindings.values()
    }


async def test_the_palette_offers_what_can_be_done_with_its_keys(fixtures: Path) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48)) as pilot:
            rows, waiting = await awaiting_approval(pilot, manager)
            ended = next(run for run in rows.rows if run.run_id == RESEARCH)
            rows.select_key(ended.key)
            await pilot.pause()
            commands = palette(app)
            for title, kind in (
                ("Cancel run", "cancel"),
                ("Resume", "resume"),
                ("Approve", "approve"),
                ("Deny", "approve"),
            ):
                refused = app.store.refusal(ended.key, kind)  # type: ignore[arg-type]
                assert (title in commands) == (refused is None), (title, refused)
            assert "Approve" not in commands
            assert "Cancel run" not in commands
            bound = key_displays(app)
            for title, help_text in commands.items():
                hint = re.search(r"\(([^()]+)\)$", help_text)
                assert hint is not None, f"{title!r} says no key: {help_text!r}"
                assert hint.group(1) in bound, (title, hint.group(1), sorted(bound))
            rows.select_key(next(run.key for run in rows.rows if run.run_id == waiting.run_id))
            await pilot.pause()
            commands = palette(app)
            assert commands["Approve"].endswith("(a)")
            assert commands["Deny"].endswith("(d)")
            assert commands["Cancel run"].endswith("(c)")
            await pilot.press("ctrl+p")
            await settle(pilot, lambda: "Palette" in type(app.screen).__name__, "the palette")
            await pilot.press(*"approve")
            await settle(
                pilot,  # the key beside the command, on screen
                lambda: any("pending approval (a)" in line for line in screen_lines(app)),
                "the key beside Approve",
            )
            manager.cancel_all()


# -- 4: the ? panel -------------------------------------------------------------------------


async def test_every_key_the_help_lists_on_a_run_does_something(fixtures: Path) -> None:
    """Each key ``?`` lists (and does not grey) on a run screen, pressed there, changes what
    the screen shows: ``N`` was listed with no search, where it did nothing."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await loaded(pilot)
        await open_run(pilot, RESEARCH)
        await pilot.press("question_mark")
        await settle(pilot, lambda: app.screen.query(KeyList), "the keys")
        listed = [line for line in app.screen.query_one(KeyList).lines() if line.enabled]
        keys = {display: key for key, display in _keys_by_display(app).items()}
        pressed = [keys[label] for line in listed for label in line.keys.split(" ")]
        assert pressed
        assert "N" not in pressed  # no search: N has nothing to step through
        await pilot.press("escape")
        for key in pressed:
            if key == "q":
                continue  # last: it leaves the app
            app.clear_notifications()
            while type(app.screen).__name__ != "RunsScreen":
                app.pop_screen()
                await pilot.pause()
            await open_run(pilot, RESEARCH)
            events = await events_read(pilot, 3)
            events.select(2)  # in the middle, not following: up, down, first and last all move
            await pilot.press("question_mark")
            await settle(pilot, lambda: app.screen.query(KeyList), "the keys")
            await pilot.pause(0.2)
            before, screen = screen_lines(app), app.screen
            await pilot.press(key)
            await settle(
                pilot,
                lambda: app.screen is not screen or screen_lines(app) != before,  # noqa: B023
                f"{key!r}, listed by ?, to change what the run screen shows",
            )
        assert "q" in pressed
        await pilot.press("q")
        await pilot.pause(0.2)
    assert app.return_code == 0  # q quit


def _keys_by_display(app: RuntopApp) -> dict[str, str]:
    return {
        key: app.get_key_display(active.binding)
        for key, active in app.screen.active_bindings.items()
    }


async def test_with_a_search_the_help_lists_both_n_and_N(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await open_run(pilot, RESEARCH)
        await events_read(pilot, 3)
        await pilot.press("slash")
        await settle(pilot, lambda: getattr(app.focused, "id", None) == "search", "the box")
        await pilot.press(*"search", "enter")
        await settle(pilot, lambda: app.screen.matches, "a match")  # type: ignore[attr-defined]
        await pilot.press("question_mark")
        await settle(pilot, lambda: app.screen.query(KeyList), "the keys")
        said = {line.description: line.keys for line in app.screen.query_one(KeyList).lines()}
        assert said["Next match"] == "n"
        assert said["Previous match"] == "N"


# -- 5: key bars ----------------------------------------------------------------------------


async def test_the_tool_call_screens_do_not_offer_the_tool_calls(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        assert "Tool calls" in bar(app)
        await pilot.press("t")
        await settle(pilot, lambda: type(app.screen).__name__ == "ToolsScreen", "tools")
        await pilot.pause()
        assert "Tool calls" not in bar(app)
        await pilot.press("enter")
        await settle(pilot, lambda: type(app.screen).__name__ == "ToolCallsScreen", "calls")
        await pilot.pause()
        assert "Tool calls" not in bar(app)
        stack = len(app.screen_stack)
        await pilot.press("t")  # does not stack another list of tools
        await pilot.pause(0.2)
        assert len(app.screen_stack) == stack


async def test_a_confirmation_shows_its_own_keys(fixtures: Path) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(80, 24)) as pilot:
            rows, waiting = await awaiting_approval(pilot, manager)
            rows.select_key(next(run.key for run in rows.rows if run.run_id == waiting.run_id))
            await pilot.pause()
            await pilot.press("a")
            await settle(pilot, lambda: type(app.screen).__name__ == "ApprovalScreen", "approval")
            await pilot.pause(0.2)
            bottom = screen_lines(app)[-1]
            assert "⏎ Approve" in bottom, bottom
            assert "esc Back" in bottom, bottom
            for unrelated in ("Filter", "Sort", "Tree", "Mark", "Quit", "Keys"):
                assert unrelated not in bottom, bottom
            await pilot.press("tab")  # to the Back button: Enter presses it, the bar says so
            await pilot.pause(0.2)
            assert "⏎ Back" in screen_lines(app)[-1]
            await pilot.press("enter")
            await settle(pilot, lambda: type(app.screen).__name__ == "RunsScreen", "back")
            assert waiting.status.value == "running"  # left waiting: nothing was answered
            manager.cancel_all()


# -- 6: the filter box ----------------------------------------------------------------------


async def test_a_slash_typed_first_is_in_the_filter_as_typed(fixtures: Path) -> None:
    """A second ``/`` was once left out as the opening key again; it is the filter's first
    character (a bare regular expression starts with it), shown as typed."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("slash", "slash", "f", "a")  # in one burst
        box = app.screen.query_one("#filter")
        await settle(pilot, lambda: box.value == "/fa", "/fa")  # type: ignore[attr-defined]
        await pilot.press("escape")
        await pilot.press("slash")
        await settle(pilot, lambda: box.has_focus, "the box focused")
        await pilot.press("slash")  # the box has focus: typed into it
        await pilot.press(*"x/")
        await settle(pilot, lambda: box.value == "/x/", "/x/")  # type: ignore[attr-defined]


# -- 7: no sideways scroll bar --------------------------------------------------------------


class ManyRuns(RunSource):
    """Forty runs: more than an 80x24 table has rows."""

    def __init__(self) -> None:
        super().__init__("many")

    async def updates(self) -> AsyncIterator[SourceUpdate]:
        runs = [
            RunUpdate(
                f"run_20261128T1430{n:05d}_{n:016x}",
                RunSummary(
                    run_id=f"run_20261128T1430{n:05d}_{n:016x}",
                    status=RunStatus.SUCCEEDED,
                    skill="summarize a long log, chunk by chunk",
                ),
            )
            for n in range(40)
        ]
        yield SourceUpdate(runs=runs, initial=True)

    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        return []

    async def close(self) -> None:
        pass


async def test_no_sideways_scroll_bar_at_80_columns() -> None:
    app = make_app(Settings(flush_interval=0.01), [ManyRuns()])
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 40)
        await pilot.pause(0.2)
        table = app.screen.query_one("RunTable")
        assert table.show_vertical_scrollbar  # more runs than rows
        sideways = [
            widget
            for widget in app.screen.query("*")
            if getattr(widget, "show_horizontal_scrollbar", False)
        ]
        assert not sideways, sideways


# -- 8: the first frame ---------------------------------------------------------------------


def test_the_first_frame_written_is_whole(tmp_path: Path, fixtures: Path) -> None:
    """The first frame the terminal gets starts at the top, with the source line: the runs
    screen was laid out while Textual held frames back at start-up, and the first frame
    written held only what changed after it (rows 3 to 24, no source line)."""
    with Terminal([*RUNTOP, str(fixtures)], size=(80, 24), home=tmp_path) as terminal:
        terminal.wait_for("STATUS")
        first = re.search(rb"\x1b\[(\d+);(\d+)H", bytes(terminal.output))
        assert first is not None
        assert first.group(1) == b"1", bytes(terminal.output)[first.start() : first.start() + 200]
        text = terminal.text()
        assert text.index(f"{fixtures.name} (") < text.index("STATUS")
        terminal.press("q")
        assert terminal.wait_exit() == 0


async def test_the_demo_says_it_is_starting_until_its_first_run(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        app = make_app(
            Settings(flush_interval=0.01), [ManagerSource(manager, name="demo")], starting=STARTING
        )
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, lambda: type(app.screen).__name__ == "RunsScreen", "the runs")
            empty = app.screen.query_one("#empty", Static)
            await settle(pilot, lambda: STARTING in str(empty.render()), "starting")
            assert screen_lines(app)[0].strip().startswith("demo (live")


# -- 9: a stale run's question --------------------------------------------------------------


async def test_a_stale_runs_unanswered_question_is_in_its_header(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        rows = await loaded(pilot)
        doing = next(run.doing for run in rows.rows if run.run_id == MIGRATION)
        assert doing.startswith("approval unanswered: Apply migration v42")
        await open_run(pilot, MIGRATION)
        await pilot.pause(0.2)
        header = "\n".join(screen_lines(app)[:5])
        assert "approval unanswered: Apply migration v42 to production?" in header
