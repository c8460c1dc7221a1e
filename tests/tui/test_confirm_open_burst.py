"""The key that opens a confirmation, its reason and Enter typed in one burst: the reason
recorded is the one typed, and none of its letters are the keys of the screen under it.

A walk sent ``c``, a reason and Enter in one ``tmux send-keys`` on the runs screen: the
ledger said ``urst approve reason`` for ``burst approve reason``, or the reason was lost,
and the letters ran the table's keys (``t`` the tool calls, ``r`` a resume). ``c``, ``a``
and ``d`` ran once their key had gone round the table, after the app had handed on the
keys behind them, to the table. A terminal hands keys typed together to the app at once;
``pilot.press`` waits for the app to be idle after each key, so it does not: the keys are
posted here all at once, as the terminal's driver posts what it read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Input

from inspector import ManagerSource
from run_manager import Manager
from tests.agents import stubborn_worker
from tests.tui.test_confirm_burst import Asker
from tests.tui.test_palette_keybar import key_of, open_palette
from tests.tui_support import (
    awaiting_approval,
    loaded,
    noticed,
    notices,
    one_ended_run,
    sample_app,
    settle,
)
from tui.screens.approval import ApprovalScreen
from tui.screens.cancel import CancelScreen
from tui.screens.run import RunScreen
from tui.screens.runs import RunsScreen
from tui.widgets.filter_box import FilterBox
from tui.widgets.key_bar import KeyBar
from tui.widgets.keys_help import KeyList

pytestmark = pytest.mark.timeout(60)

REASON = "one two three"
"""Its letters are the runs screen's keys too: ``t`` the tool calls, ``r`` resume, ``n``
a step, ``e``, ``h``, ``o``, ``w`` nothing."""


NAMED = {" ": "space", "/": "slash"}
CHARACTER = {"enter": "\r", "escape": "\x1b"}


def typed_at_once(app: Any, *keys: str) -> None:
    """``keys`` (characters, or ``enter``, ``escape``) posted to the app before it takes the
    first, as a terminal's driver posts the keys of one read (a paste, tmux's send-keys)."""
    for key in keys:
        app.post_message(events.Key(NAMED.get(key, key), CHARACTER.get(key, key)))


def only_the_runs(app: Any) -> None:
    """The runs screen on top, nothing opened over it by a letter of the reason."""
    assert isinstance(app.screen, RunsScreen), app.screen
    assert [type(screen).__name__ for screen in app.screen_stack[1:]] == ["RunsScreen"]


@pytest.mark.parametrize("move", ["", "up", "home"])
async def test_c_a_reason_and_enter_in_one_burst_cancel_with_that_reason(
    fixtures: Path, move: str
) -> None:
    """Also behind a key that moves the selection onto the run, in the same burst (a walk:
    ``Down``, ``c``, a reason, Enter; ``c`` waited for the ``Down`` ahead of it, the
    reason went to the table, the confirmation sat with an empty box)."""
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48), notifications=True) as pilot:
            handle = manager.start(stubborn_worker, "0.05")
            rows = await loaded(pilot, 7)
            live = next(run.key for run in rows.rows if run.run_id == handle.run_id)
            assert rows.rows[0].key == live  # the newest: the sample runs are days old
            rows.select_key(rows.rows[{"": 0, "up": 1, "home": 3}[move]].key)
            await pilot.pause(0.1)
            typed_at_once(app, *[move] * bool(move), *f"c{REASON}", "enter")
            await settle(pilot, lambda: handle.info().cancel_reason is not None, "the cancel")
            assert handle.info().cancel_reason == REASON
            await noticed(pilot, f"cancel requested for {handle.run_id}")
            only_the_runs(app)
            assert not [said for said in notices(app) if "cannot" in said]  # r: no resume asked


@pytest.mark.parametrize(("key", "decided"), [("a", "approved"), ("d", "denied")])
async def test_a_or_d_a_reason_and_enter_in_one_burst_answer_with_that_reason(
    fixtures: Path, key: str, decided: str
) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48)) as pilot:
            rows, waiting = await awaiting_approval(pilot, manager, agent=Asker())
            rows.select_key(next(r.key for r in rows.rows if r.run_id == waiting.run_id))
            typed_at_once(app, *f"{key}{REASON}", "enter")
            await settle(pilot, lambda: not waiting.info().pending_approvals, "the answer")
            assert await waiting.result() == f"{decided}: {REASON}"
            await settle(pilot, lambda: isinstance(app.screen, RunsScreen), "the runs again")
            only_the_runs(app)


async def test_a_search_typed_fast_on_a_run_keeps_its_r_and_resumes_nothing(
    tmp_path: Path,
) -> None:
    """``/error`` and Enter in one burst on an ended run: its ``r`` is the search's, not a
    resume (the keys before it, ``/`` and ``e``, still on their way when the app took it)."""
    async with one_ended_run(tmp_path) as (manager, app, pilot, _, first):
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, RunScreen), "the run")
        await pilot.pause(0.2)
        typed_at_once(app, "/", *"error", "enter")
        await settle(pilot, lambda: getattr(app.screen, "search_text", "") == "error", "")
        assert isinstance(app.screen, RunScreen)
        assert app.screen.query_one("#search", Input).value == "error"
        await pilot.pause(0.3)
        assert [run.run_id for run in manager.list()] == [first]  # none resumed


async def test_r_and_enter_in_one_burst_resume_and_enter_is_not_the_tables(
    tmp_path: Path,
) -> None:
    """Enter is the confirmation's, not the table's (which opened the run under it)."""
    async with one_ended_run(tmp_path) as (_, app, pilot, rows, first):
        typed_at_once(app, "r", "enter")
        await settle(pilot, lambda: len(rows.rows) == 2, "the resumed run")
        resumed = next(run for run in rows.rows if run.resumed_from)
        assert resumed.resumed_from == first
        await pilot.pause(0.2)
        only_the_runs(app)


async def test_c_a_reason_and_escape_in_one_burst_leave_the_run_as_it_was(
    fixtures: Path,
) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48)) as pilot:
            handle = manager.start(stubborn_worker, "0.05")
            rows = await loaded(pilot, 7)
            rows.select_key(next(run.key for run in rows.rows if run.run_id == handle.run_id))
            typed_at_once(app, *f"c{REASON}", "escape")
            await settle(pilot, lambda: isinstance(app.screen, RunsScreen), "the runs again")
            await pilot.pause(0.3)
            only_the_runs(app)
            assert not handle.info().cancel_requested
            # Asked again, slowly: the box is empty, what is typed is the reason.
            await pilot.press("c")
            assert isinstance(app.screen, CancelScreen)
            await settle(pilot, lambda: app.screen.query_one("#reason", Input).has_focus, "")
            assert app.screen.query_one("#reason", Input).value == ""
            await pilot.press(*"slowly", "enter")
            await settle(pilot, lambda: handle.info().cancel_reason is not None, "the cancel")
            assert handle.info().cancel_reason == "slowly"
            only_the_runs(app)


@pytest.mark.parametrize(
    ("typed", "title", "decided"),
    [
        ("cancel run", "Cancel run", None),
        ("approve", "Approve", "approved"),
        ("deny", "Deny", "denied"),
    ],
)
async def test_the_palette_offers_the_run_keys_and_its_box_types_their_letters(
    fixtures: Path, typed: str, title: str, decided: str | None
) -> None:
    """Cancel, Approve and Deny are offered for a run awaiting approval; their letters
    typed in the palette's box are its search (a, c, d: not a confirmation opened)."""
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(80, 24)) as pilot:
            rows, waiting = await awaiting_approval(pilot, manager, agent=Asker())
            rows.select_key(next(r.key for r in rows.rows if r.run_id == waiting.run_id))
            await pilot.pause()
            entries = await open_palette(pilot)
            assert key_of(entries["Cancel run"]) == "c", entries
            assert key_of(entries["Approve"]) == "a", entries
            assert key_of(entries["Deny"]) == "d", entries
            typed_at_once(app, *typed)
            search = app.screen.query_one(Input)  # the palette's search box
            await settle(pilot, lambda: search.value == typed, f"{typed!r} in the palette")
            assert type(app.screen).__name__ == "CommandPalette"
            await pilot.pause(0.3)  # the palette searches as it is typed
            await pilot.press("enter")  # its first entry
            screen = CancelScreen if decided is None else ApprovalScreen
            await settle(pilot, lambda: isinstance(app.screen, screen), title)
            await settle(pilot, lambda: app.screen.query_one("#reason", Input).has_focus, "")
            await pilot.press(*"from the palette", "enter")
            if decided is None:
                await settle(pilot, lambda: waiting.info().cancel_reason is not None, "cancel")
                assert waiting.info().cancel_reason == "from the palette"
            else:
                await settle(pilot, lambda: not waiting.info().pending_approvals, "the answer")
                assert await waiting.result() == f"{decided}: from the palette"


async def test_the_filter_box_types_c_a_d_typed_fast_or_slowly(fixtures: Path) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48)) as pilot:
            rows, waiting = await awaiting_approval(pilot, manager, agent=Asker())
            rows.select_key(next(r.key for r in rows.rows if r.run_id == waiting.run_id))
            box = app.screen.query_one(FilterBox)
            typed_at_once(app, "/", *"cad")
            await settle(pilot, lambda: box.value == "cad", "cad in the box")
            await pilot.press(*"rdac")
            await settle(pilot, lambda: box.value == "cadrdac", "cadrdac in the box")
            await pilot.pause(0.2)
            only_the_runs(app)
            assert waiting.info().pending_approvals  # neither approved nor denied
            assert not waiting.info().cancel_requested


async def test_the_bar_and_the_keys_panel_still_name_the_run_keys(fixtures: Path) -> None:
    """On a run awaiting approval: c, a and d in the bar and in ``?``, r greyed in ``?``
    (the run is live), as before the keys had priority."""
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48)) as pilot:
            rows, waiting = await awaiting_approval(pilot, manager, agent=Asker())
            rows.select_key(next(r.key for r in rows.rows if r.run_id == waiting.run_id))
            await pilot.pause()
            shown = str(app.screen.query_one(KeyBar).render())
            for said in ("c Cancel run", "a Approve", "d Deny"):
                assert said in shown, shown
            await pilot.press("question_mark")
            await settle(pilot, lambda: app.screen.query(KeyList), "the keys")
            listed = {line.description: line for line in app.screen.query_one(KeyList).lines()}
            for key, said in (("c", "Cancel run"), ("a", "Approve"), ("d", "Deny")):
                assert (listed[said].keys, listed[said].enabled) == (key, True), listed[said]
            assert (listed["Resume"].keys, listed["Resume"].enabled) == ("r", False)
