"""A budgeted run in the app: its header says the burn rate, its budget and when the rate
reaches it; the source line says the rate; its question is answered with ``a``."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from inspector import ManagerSource
from run_manager import Budget, Manager
from tests.budget_agents import Spender, asked
from tests.tui_support import open_run, settle
from tui.app import make_app
from tui.screens.approval import ApprovalScreen
from tui.screens.run import RunScreen
from tui.settings import Settings
from tui.widgets.run_table import RunTable
from tui.widgets.source_line import SourceLine

pytestmark = pytest.mark.timeout(60)


def header(screen: RunScreen) -> str:
    return str(screen.query_one("#run-header").render())


async def test_a_budget_question_answered_with_a_and_the_header_keeps_count(
    tmp_path: Path,
) -> None:
    async with Manager(ledger_dir=tmp_path / "runs") as manager:
        app = make_app(Settings(flush_interval=0.01), [ManagerSource(manager, name="local")])
        async with app.run_test(size=(160, 48)) as pilot:
            handle = manager.start(Spender(), "go", budget=Budget(cost_usd=1.00))
            rows = app.screen.query_one(RunTable)
            await settle(
                pilot, lambda: any(r.pending_approval for r in rows.rows), "the budget's question"
            )
            line = app.screen.query_one(SourceLine)
            # Four calls of $0.20 and 100 tokens in the last minute; $0.20 left: 15 s more.
            await settle(pilot, lambda: line.burn.startswith("$0.8000/min 400 tok/min"), "the rate")
            assert line.burn == "$0.8000/min 400 tok/min, a budget in 15s"
            screen = await open_run(pilot, handle.run_id)
            said = header(screen)
            assert "$0.8000/min 400 tok/min  budget $0.80 of $1.00, asking to go on" in said
            assert "$1.00 in 15s at this rate" in said
            assert "budget: $0.80 of $1.00 spent; continue?" in said  # the question, below
            await pilot.press("a")
            assert isinstance(app.screen, ApprovalScreen)
            await settle(pilot, lambda: app.screen.query_one("#reason", Input).has_focus, "")
            await pilot.press("enter")
            await settle(pilot, lambda: len(asked(handle.info().ledger_path)) == 2, "again")
            await settle(pilot, lambda: "budget $1.60 of $2.00" in header(screen), "the growth")
            assert "$1.60/min 800 tok/min" in header(screen)
            handle.cancel("seen enough")
            await handle.wait()
            await settle(pilot, lambda: "asking" not in header(screen), "the end")
