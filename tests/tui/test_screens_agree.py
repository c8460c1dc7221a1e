"""A run's screens say the same of it as its table does: its clock runs while it is live,
and a model call under way is said whatever the calls before it spent."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from inspector import LedgerDirectorySource
from inspector.model import RunExtras, RunKey, make_view
from ledger_reader import RunStatus, RunSummary, RunTotals
from tests.tui_support import open_run, settle, write_waiting_run
from tui.app import make_app
from tui.settings import Settings
from tui.text.runs import tokens_said

pytestmark = pytest.mark.timeout(60)


async def test_the_header_s_clock_runs_while_the_run_waits(tmp_path: Path) -> None:
    """A run waiting on its approval writes nothing: its header's time still goes on, as
    the table's TIME does (it stopped at the last event: 2.1s beside the table's 8.7s)."""
    run_id = write_waiting_run(tmp_path)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path, name="dir")])
    async with app.run_test(size=(160, 48)) as pilot:
        await open_run(pilot, run_id)

        def header() -> str:
            return str(app.screen.query_one("#run-header", Static).render())

        first = header()
        assert "awaiting" in first
        await settle(pilot, lambda: header() != first, "the header's time going on")


def test_a_model_call_under_way_is_said_beside_the_tokens_spent() -> None:
    summary = RunSummary(run_id="run-1", status=RunStatus.RUNNING, current_node="llm:default#2")
    extras = RunExtras(totals=RunTotals(prompt_tokens=1800, output_tokens=36, cost_usd=0.0082))
    view = make_view(RunKey("here", "run-1"), summary, extras, detailed=True)
    assert tokens_said(view) == "1.8k tokens $0.0082, model call running"
    assert tokens_said(view, source_down=True) == "1.8k tokens $0.0082"  # nobody knows now
    silent = make_view(RunKey("here", "run-1"), summary, RunExtras(), detailed=True)
    assert tokens_said(silent) == "model call running"
