"""Keys typed in one burst (a paste, tmux's send-keys, fast typing) land where they would
have typed slowly (``tui.typed_ahead``, the confirmations, the search and filter boxes).

A terminal hands the keys of one read to the app all at once; ``pilot.press`` waits for the
app to be idle after each key, so it does not: the keys are posted here all at once, as the
terminal's driver posts what it read. Checked: a reason and Enter typed fast into a
confirmation are the reason recorded; the key that opens a confirmation, its reason and
Enter in one burst cancel, approve or deny with that reason, none of its letters the keys of
the screen under it; behind a run key refused, the keys typed after it are set aside and
the notice says how many; a search or a filter typed with the key that opens its box goes
into the box whole, its editing keys in order, and the keys after Enter are the table's.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.command import CommandPalette
from textual.widgets import Input

from inspector import ManagerSource
from run_manager import Manager, approval
from tests.agents import stubborn_worker
from tests.tui.test_filter_box import CANCELED, FAILED, apply, box, burst, line, shown, typed
from tests.tui.test_palette_keybar import key_of, open_palette
from tests.tui_support import (
    awaiting_approval,
    cancel_asked,
    events_read,
    loaded,
    noticed,
    notices,
    one_ended_run,
    open_run,
    sample_app,
    settle,
)
from tui import textual_compat as compat
from tui.screens.approval import ApprovalScreen
from tui.screens.cancel import CancelScreen
from tui.screens.run import RunScreen
from tui.screens.runs import RunsScreen
from tui.text.runs import short_id
from tui.widgets.filter_box import FilterBox
from tui.widgets.key_bar import KeyBar
from tui.widgets.keys_help import KeyList
from tui.widgets.run_table import RunTable

pytestmark = pytest.mark.timeout(60)


# -- a reason typed fast into a confirmation --------------------------------------------

FAST_REASON = "burst one, typed fast"


def reason_and_enter_at_once(app: Any, text: str) -> None:
    """``text`` and Enter, all posted to the app before the first is handled."""
    names = {" ": "space", ",": "comma"}
    for character in text:
        app.post_message(events.Key(names.get(character, character), character))
    app.post_message(events.Key("enter", "\r"))


async def test_a_cancel_reason_typed_fast_is_recorded_whole(fixtures: Path) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48)) as pilot:
            _, handle = await cancel_asked(pilot, manager, stubborn_worker, "0.05")
            await settle(pilot, lambda: app.screen.query_one("#reason", Input).has_focus, "")
            reason_and_enter_at_once(app, FAST_REASON)
            await settle(pilot, lambda: handle.info().cancel_reason is not None, "canceled")
            assert handle.info().cancel_reason == FAST_REASON


class Asker:
    """Asks an approval, then says what was decided and why."""

    name = "asker"

    async def run(self, input: str) -> str:
        decision = await approval(f"may I {input}?", name="deploy", timeout_seconds=None)
        return f"{'approved' if decision.approved else 'denied'}: {decision.reason}"


@pytest.mark.parametrize(("key", "decided"), [("a", "approved"), ("d", "denied")])
async def test_an_approval_reason_typed_fast_is_recorded_whole(
    fixtures: Path, key: str, decided: str
) -> None:
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48)) as pilot:
            rows, waiting = await awaiting_approval(pilot, manager, agent=Asker())
            rows.select_key(next(r.key for r in rows.rows if r.run_id == waiting.run_id))
            await pilot.press(key)
            assert isinstance(app.screen, ApprovalScreen)
            await settle(pilot, lambda: app.screen.query_one("#reason", Input).has_focus, "")
            reason_and_enter_at_once(app, FAST_REASON)
            assert await waiting.result() == f"{decided}: {FAST_REASON}"


async def test_a_notice_said_as_the_app_exits_is_dropped_without_a_crash(fixtures: Path) -> None:
    """A cancel's notice that arrived after the screens were gone (as a cancel's is, when a test
    exits while it is said) crashed the app with ScreenStackError in
    runtop's notice handler: a notice said while ``q`` quits must not."""
    from textual.notifications import Notification, Notify

    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
    assert not app.screen_stack  # exited: its screens are gone
    app.on_notify(Notify(Notification("canceled in runtop", title="")))
    assert not compat.notices_shown(app)


# -- the key that opens a confirmation, its reason and Enter in one burst ---------------

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
            await noticed(pilot, f"cancel requested: {short_id(handle.run_id)}")
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
            shown: list[object] = []
            app.screen_change_signal.subscribe(app, shown.append)
            typed_at_once(app, *f"c{REASON}", "escape")
            await settle(
                pilot,
                lambda: (
                    any(isinstance(on, CancelScreen) for on in shown)
                    and isinstance(app.screen, RunsScreen)
                ),
                "the confirmation opened, then closed by escape",
            )
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
            assert isinstance(app.screen, CommandPalette)
            await pilot.press("enter")  # its first entry, once it has searched what was typed
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
    (the run is live): they are the screen's keys, and its bar and ``?`` say them."""
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


# -- keys typed behind a run key that is refused -------------------------------------------

BURST = [*"cafter the end, resume it", "enter"]
"""``c``, a reason and Enter: its ``t`` opens the tool calls, ``r`` and Enter a resume."""


async def set_aside(pilot: Any) -> None:
    """The refusal said, with the keys behind it set aside; nothing opened by them."""
    said = await noticed(pilot, "cannot cancel")
    assert "the run already ended" in said
    assert "keys typed after it were not used" in said
    await pilot.pause(0.3)
    only_the_runs(pilot.app)  # no tool calls (t), no confirmation (r), no run opened
    assert not [words for words in notices(pilot.app) if "cannot resume" in words]


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_c_refused_sets_the_keys_typed_behind_it_aside_and_says_so(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    async with one_ended_run(tmp_path, size) as (manager, app, pilot, _, _):
        typed_at_once(app, *BURST)
        await set_aside(pilot)
        assert len(manager.list()) == 1  # none resumed


async def test_a_move_onto_an_ended_run_then_c_and_a_reason_sets_them_aside(
    tmp_path: Path,
) -> None:
    """``End`` onto an ended run, then ``c``, a reason and Enter in one burst: ``c`` taken
    while the live run was selected waits for the ``End``, then is refused there."""
    async with one_ended_run(tmp_path, (80, 24)) as (manager, app, pilot, _, _):
        live = manager.start(stubborn_worker, "0.05")
        rows = await loaded(pilot, 2)
        assert rows.rows[0].run_id == live.run_id
        rows.select_key(rows.rows[0].key)
        await pilot.pause(0.1)
        typed_at_once(app, "end", *BURST)
        await set_aside(pilot)
        await pilot.pause(1.2)  # past the old hold's one second: nothing let go late
        only_the_runs(app)
        assert live.info().cancel_reason is None
        assert len(manager.list()) == 2  # none resumed


async def test_a_refused_c_slow_to_come_round_still_sets_its_burst_aside(
    tmp_path: Path,
) -> None:
    """On a loaded machine (three demos and a test run) ``c`` took over a second to come
    round the table; the keys held behind it went on at one second and ran as keys (the
    tool calls, then a tool's calls, opened). Held until it has come round, they do not."""
    async with one_ended_run(tmp_path, (80, 24)) as (manager, app, pilot, rows, _):

        async def busy() -> None:  # the table's queue held up, as a loaded machine does
            await asyncio.sleep(1.5)

        rows.call_later(busy)
        typed_at_once(app, *BURST)
        await set_aside(pilot)
        assert len(manager.list()) == 1


# -- a search typed again ----------------------------------------------------------------


@pytest.mark.parametrize("close", ["escape", "none"])
async def test_a_search_typed_again_in_one_burst_replaces_the_last(
    fixtures: Path, close: str
) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        run_id = next(run.run_id for run in rows.rows if run.skill == "summarize")
        await open_run(pilot, run_id)
        await events_read(pilot, 3)
        screen = app.screen
        assert isinstance(screen, RunScreen)
        typed_at_once(app, "/", *"error", "enter")
        await settle(pilot, lambda: screen.search_text == "error", "the first search")
        if close == "escape":
            await pilot.press("escape")
            await pilot.pause(0.1)
        typed_at_once(app, "/", *"canceled", "enter")
        await settle(pilot, lambda: screen.search_text not in ("", "error"), "the second search")
        assert screen.search_text == "canceled"
        assert screen.query_one("#search", Input).value == "canceled"


# -- the filter box: editing keys and a filter typed in one burst ---------------------------


async def test_ctrl_u_and_a_filter_typed_in_one_burst_replace_the_filter(fixtures: Path) -> None:
    """The box holds ``status:failed``, the cursor at its end; ``ctrl+u`` then
    ``status:canceled`` come in one burst. The box's binding ran ``ctrl+u`` after the
    characters were typed: the box was left empty and every run shown."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await apply(pilot, "status:failed")
        await pilot.press("slash", "end")
        await settle(pilot, lambda: box(app).has_focus, "the box")
        burst(box(app), "ctrl+u", *typed("status:canceled"))
        await settle(pilot, lambda: shown(app) == [CANCELED], "the canceled run alone")
        await pilot.pause(0.2)
        assert box(app).value == "status:canceled"
        assert "1 of 6 runs  ⊘1  filter: status:canceled" in line(app)
        burst(
            box(app), *typed(" x"), "ctrl+w", "backspace", "left", "left", "ctrl+k", *typed("led")
        )
        await settle(pilot, lambda: box(app).value == "status:cancelled", "the edits")
        await pilot.pause(0.2)
        assert box(app).value == "status:cancelled"  # the ledger's spelling: the same runs
        assert shown(app) == [CANCELED]


async def test_ctrl_u_typed_ahead_of_the_box_goes_into_it_in_order(fixtures: Path) -> None:
    """``/``, ``x``, ``ctrl+u``, ``status:canceled`` and Enter reach the table in one
    burst, before the box has focus: they go into it in order. ``ctrl+u`` was left to
    the app's bindings, to do nothing on the table or to empty the box after the
    characters typed after it (``xstatus:canceled`` or nothing: no run, or every one)."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await apply(pilot, "status:failed")
        rows = app.screen.query_one(RunTable)
        await settle(pilot, lambda: rows.has_focus, "the table")
        burst(rows, "/", "x", "ctrl+u", *typed("status:canceled"), "enter")
        await settle(pilot, lambda: rows.has_focus, "the table again")
        await pilot.pause(0.2)
        assert box(app).value == "status:canceled"
        assert shown(app) == [CANCELED]
        assert "filter: status:canceled" in line(app)


async def test_a_filter_typed_with_the_slash_that_opens_the_box_is_kept_whole(
    fixtures: Path,
) -> None:
    """``/status:failed`` came in two reads: ``/status:fai`` before the box had focus, typed
    into it, then ``led``. The box selected what it held when it took focus, and ``led``
    replaced it."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        burst(app.screen.query_one(RunTable), "/", *typed("status:fai"))
        await settle(pilot, lambda: app.screen.query(FilterBox) and box(app).has_focus, "it")
        await pilot.pause(0.1)
        burst(box(app), *typed("led"))
        await settle(pilot, lambda: shown(app) == [FAILED], "the failed run alone")
        await pilot.pause(0.2)
        assert box(app).value == "status:failed"
        assert shown(app) == [FAILED]


async def test_the_keys_typed_after_enter_in_one_burst_are_the_tables(fixtures: Path) -> None:
    """``status:failed``, Enter, ``?`` in one burst: the filter applies and ``?`` shows
    the keys. Enter was the Input's binding, run after ``?`` had been typed into the box
    (``status:failed?``: an unknown status, the box left open)."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("slash")
        await settle(pilot, lambda: app.screen.query(FilterBox) and box(app).has_focus, "it")
        burst(box(app), *typed("status:failed"), "enter", "?")
        await settle(pilot, lambda: app.screen.query("HelpPanel"), "the keys")
        assert box(app).value == "status:failed"
        assert not box(app).display  # closed: the filter applied
        assert shown(app) == [FAILED]
        assert "1 of 6 runs" in line(app)
        await pilot.press("escape")  # the keys closed
        await settle(pilot, lambda: not app.screen.query("HelpPanel"), "the keys closed")
        rows = app.screen.query_one(RunTable)
        await settle(pilot, lambda: rows.has_focus, "the table")
        burst(rows, "/", *typed("status:cancel"), "enter", "?")  # typed ahead of the box
        await settle(pilot, lambda: app.screen.query("HelpPanel"), "the keys again")
        assert box(app).value == "status:cancel"
        assert shown(app) == [CANCELED]


async def test_the_keys_typed_after_enter_on_a_filter_refused_stay_in_the_box(
    fixtures: Path,
) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("slash")
        await settle(pilot, lambda: app.screen.query(FilterBox) and box(app).has_focus, "it")
        burst(box(app), *typed("status:bogus"), "enter", "ctrl+w", *typed("failed"))
        await settle(pilot, lambda: shown(app) == [FAILED], "the failed run alone")
        assert box(app).value == "status:failed"
        assert box(app).has_focus
