"""A second search typed fast on a run replaces the first: `/`, the words and Enter in one
burst after Escape read `errorcanceled` where `canceled` was typed."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from tests.tui.test_confirm_open_burst import typed_at_once
from tests.tui.test_interaction import open_run
from tests.tui_support import events_read, loaded, sample_app, settle
from tui.screens.run import RunScreen

pytestmark = pytest.mark.timeout(60)


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
