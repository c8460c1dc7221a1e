"""A reason typed in a confirmation and Enter right after it, in one burst, is the reason
recorded.

A walk typed ``burst one`` and Enter in one ``tmux send-keys`` into the cancel
confirmation: the ledger recorded ``canceled in runtop`` (and once ``wrong input
fi``). Enter, the confirmation's priority binding, is taken as the app receives it,
while the letters before it still wait in the reason box's queue. A terminal hands a
paste, or keys typed fast, to the app all at once, as posted here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Input

from inspector import ManagerSource
from run_manager import Manager, approval
from tests.agents import stubborn_worker
from tests.tui_support import awaiting_approval, cancel_asked, loaded, sample_app, settle
from tui.screens.approval import ApprovalScreen
from tui import textual_compat as compat

pytestmark = pytest.mark.timeout(60)

REASON = "burst one, typed fast"


def burst(app: Any, text: str) -> None:
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
            burst(app, REASON)
            await settle(pilot, lambda: handle.info().cancel_reason is not None, "canceled")
            assert handle.info().cancel_reason == REASON


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
            burst(app, REASON)
            assert await waiting.result() == f"{decided}: {REASON}"


async def test_a_notice_said_as_the_app_exits_is_dropped_without_a_crash(fixtures: Path) -> None:
    """A cancel's notice that arrived after the screens were gone (the test above, failing,
    exited while a run's cancel was being said) crashed the app with ScreenStackError in
    runtop's notice handler: a notice said while ``q`` quits must not."""
    from textual.notifications import Notification, Notify

    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
    assert not app.screen_stack  # exited: its screens are gone
    app.on_notify(Notify(Notification("canceled in runtop", title="")))
    assert not compat.notices_shown(app)
