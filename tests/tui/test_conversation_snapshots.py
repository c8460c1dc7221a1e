"""What a model call's conversation looks like, at 80x24 and 160x48.

The second model call of ``tests/conversation_run.py`` selected in the event
stream: its figures, then the system prompt folded, the user's question, the
first answer's tool call, the tool's result and the answer, each under its
role. Update with ``make snapshots`` after looking at the report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from inspector import LedgerDirectorySource
from tests.conversation_run import ANSWER, STARTED, write_conversation_run
from tests.tui.test_model_call_conversation import open_conversation_run
from tui.app import make_app
from tui.settings import Settings
from tui.widgets.detail import EventDetail

pytestmark = pytest.mark.timeout(60)

SIZES = {"80x24": (80, 24), "160x48": (160, 48)}


async def select_the_second_call(pilot: Pilot[Any]) -> None:
    screen = await open_conversation_run(pilot)
    await pilot.press("end", "up", "up")
    detail = screen.query_one(EventDetail)
    for _ in range(250):
        if ANSWER in detail.text and "tok/s" in detail.text:  # with its node's time
            break
        await pilot.pause(0.02)
    await pilot.pause(0.1)


@pytest.mark.parametrize("size", list(SIZES))
def test_a_model_calls_conversation(snap_compare: Any, tmp_path: Path, size: str) -> None:
    write_conversation_run(tmp_path / "runs")
    app = make_app(
        Settings(clock=STARTED + 60, flush_interval=0.01),
        [LedgerDirectorySource(tmp_path / "runs", name="runs")],
    )
    assert snap_compare(app, terminal_size=SIZES[size], run_before=select_the_second_call)
