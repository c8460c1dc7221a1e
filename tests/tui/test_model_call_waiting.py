"""A model call is on screen from the moment its request goes out.

A PydanticAI agent, started by a real manager writing a ledger directory the
app watches, asks a ``FunctionModel`` that does not answer until the test lets
it: the run's event stream says the model and what it was asked, and the
detail pane shows the messages, waiting for the answer. Canceled then, the
call ends ``canceled`` with what it was sent; answered instead, the detail
shows the answer where it showed the wait.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from inspector import LedgerDirectorySource
from run_manager import Manager, RunCanceled
from tests.run_manager.adapters.test_model_call_sent import QUESTION, Thinking, pydantic_agent
from tests.tui.test_interaction import screen_lines
from tests.tui_support import loaded, open_run, settle
from tui.app import make_app
from tui.screens.run import RunScreen
from tui.settings import Settings
from tui.widgets.detail import EventDetail
from tui.widgets.event_list import EventList

SIZES = [(160, 48), (80, 24)]


async def asked_run(
    runs: Path, model: Thinking, pilot: Any, manager: Manager
) -> tuple[RunScreen, Any]:
    handle = manager.start(pydantic_agent(model), QUESTION)
    await model.asked.wait()
    await loaded(pilot, 1)
    screen = await open_run(pilot, handle.run_id)
    events = screen.query_one(EventList)
    await settle(pilot, lambda: events.count == 2 and events.item(1), "the model call sent")
    return screen, handle


def shown(app: Any) -> str:
    return "\n".join(screen_lines(app))


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[Manager]:
    async with Manager(ledger_dir=tmp_path / "runs") as running:
        yield running


@pytest.mark.parametrize("size", SIZES)
async def test_the_waiting_call_shows_what_it_was_asked_until_canceled(
    tmp_path: Path, manager: Manager, size: tuple[int, int]
) -> None:
    model = Thinking()
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path / "runs")])
    async with app.run_test(size=size) as pilot:
        screen, handle = await asked_run(tmp_path / "runs", model, pilot, manager)
        detail = screen.query_one(EventDetail)
        # Followed, the newest entry is the call: its messages, waiting for the answer.
        await settle(pilot, lambda: "waiting for its answer" in detail.text, "the wait")
        assert QUESTION in detail.text
        await pilot.pause()
        assert "model slow-heron asked: Which way" in shown(app)
        handle.cancel("the heron flew off")
        with pytest.raises(RunCanceled):
            await handle.result()
        await settle(
            pilot, lambda: "◆ model slow-heron canceled" in shown(app), "the call canceled"
        )
        await settle(pilot, lambda: "waiting" not in detail.text, "the wait over")


async def test_a_call_selected_while_it_waits_shows_its_answer_once_it_comes(
    tmp_path: Path, manager: Manager
) -> None:
    model = Thinking()
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path / "runs")])
    async with app.run_test(size=(160, 48)) as pilot:
        screen, handle = await asked_run(tmp_path / "runs", model, pilot, manager)
        events = screen.query_one(EventList)
        await pilot.press("home", "down", "f")  # the call's request, no longer followed
        assert not events.follow
        detail = screen.query_one(EventDetail)
        await settle(pilot, lambda: "waiting for its answer" in detail.text, "the wait")
        model.answer.set()
        assert await handle.result() == "South."
        await settle(pilot, lambda: "South." in detail.text, "the answer")
        assert "waiting" not in detail.text
        assert QUESTION in detail.text
