"""A budgeted run in the app: its header says the burn rate, its budget and when the rate
reaches it; the source line says the rate; its question is answered with ``a``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import Input

from inspector import ManagerSource
from ledger_reader.decode import decode_line
from ledger_reader.events import CancelRequested
from run_manager import Budget, Manager
from tests.budget_agents import Spender, asked, until
from tests.tui_support import open_run, settle
from tui.app import make_app
from tui.screens.approval import ApprovalScreen
from tui.screens.run import RunScreen
from tui.settings import Settings
from tui.text.events import describe
from tui.widgets.run_table import RunTable
from tui.widgets.source_line import SourceLine

pytestmark = pytest.mark.timeout(60)

RATE = re.compile(r"\$\d+\.\d+/min [\d.]+k? tok/min")


def header(screen: RunScreen) -> str:
    return str(screen.query_one("#run-header").render())


async def test_a_budget_question_answered_with_a_and_the_header_keeps_count(
    tmp_path: Path,
) -> None:
    async with Manager(ledger_dir=tmp_path / "runs") as manager:
        app = make_app(Settings(flush_interval=0.01), [ManagerSource(manager, name="local")])
        async with app.run_test(size=(160, 48)) as pilot:
            spender = Spender(pause=0.3)  # between its calls, time to read the header
            handle = manager.start(spender, "go", budget=Budget(cost_usd=1.00))
            rows = app.screen.query_one(RunTable)
            await settle(
                pilot, lambda: any(r.pending_approval for r in rows.rows), "the budget's question"
            )
            line = app.screen.query_one(SourceLine)
            # Four calls of $0.20 and 100 tokens each, in the run's first seconds: the rate
            # is theirs over 5 s (inspector.burn's figures are checked in tests/inspector).
            await settle(pilot, lambda: RATE.fullmatch(line.burn), "the rate")  # no "a budget
            # in 5s" while it asks: it spends nothing until it is answered
            screen = await open_run(pilot, handle.run_id)
            said = header(screen)
            assert RATE.search(said)
            assert "tok/min  budget $0.80 of $1.00, asking to go on\n" in said
            assert "budget: $0.80 of $1.00 spent; continue?" in said  # the question, below
            await pilot.press("a")
            assert isinstance(app.screen, ApprovalScreen)
            await settle(pilot, lambda: app.screen.query_one("#reason", Input).has_focus, "")
            await pilot.press("enter")
            # Going on, with $1.00 more: when it reaches $2.00 at its rate.
            going = re.compile(r"budget \$\d\.\d0 of \$2\.00; \$2\.00 in [\d.]+s at this rate")
            await settle(pilot, lambda: going.search(header(screen)), "the time to its budget")
            await settle(pilot, lambda: len(asked(handle.info().ledger_path)) == 2, "again")
            await settle(pilot, lambda: "budget $1.60 of $2.00" in header(screen), "the growth")
            handle.cancel("seen enough")
            await handle.wait()
            await settle(pilot, lambda: "asking" not in header(screen), "the end")


@pytest.mark.parametrize(
    ("approved", "said"),
    [
        (False, "cancel requested: budget: $0.80 of $1.00 spent; not approved: too dear"),
        (None, "cancel requested by runtop (root): seen enough"),
    ],
)
async def test_a_cancel_for_a_budget_says_budget_once(
    tmp_path: Path, approved: bool | None, said: str
) -> None:
    """Denied, the run's cancel read ``cancel requested by budget: budget: $0.80 of $1.00
    spent; …``: the budget said twice. A cancel by someone still says who asked."""
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(Spender(), "go", budget=Budget(cost_usd=1.00))
        await until(lambda: handle.info().pending_approvals)
        if approved is None:
            manager.cancel(
                handle.run_id, reason="seen enough", source="runtop", requested_by="root"
            )
        else:
            manager.approve(handle.run_id, None, approved=approved, reason="too dear")
        await handle.wait()
    path = handle.info().ledger_path
    assert path is not None
    lines = [decode_line(line) for line in path.read_bytes().splitlines()]
    cancels = [e for e in lines if isinstance(e, CancelRequested)]
    assert [describe(cancel) for cancel in cancels] == [said]
