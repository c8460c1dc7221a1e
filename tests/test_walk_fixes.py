"""What a fresh-eyes walk found that lied or stuck, each walked again here as it was seen."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import ReplaySource
from tests.test_tui_interaction import screen_lines
from tests.tui_support import settle
from tui.app import make_app
from tui.screens.compare import CompareScreen
from tui.settings import Settings
from tui.widgets.run_table import RunTable

pytestmark = pytest.mark.timeout(60)


async def test_a_replays_comparison_draws_both_timelines(fixtures: Path) -> None:
    """Two runs of a replay played to its end, compared: both timelines stayed under the
    loading dots for good (the pane's first read, from memory, ended before the dots set
    up in its constructor were drawn, and nothing took them away)."""
    replay = ReplaySource(sorted(fixtures.glob("*.jsonl")), speed=0, name="replay")
    app = make_app(Settings(flush_interval=0.01), [replay])
    async with app.run_test(size=(160, 48)) as pilot:
        rows = app.screen.query_one(RunTable)
        await settle(pilot, lambda: len(rows.rows) == 6, "every run replayed")
        await pilot.pause(0.5)
        await pilot.press("home", "m", "down", "m", "C")
        await settle(pilot, lambda: isinstance(app.screen, CompareScreen), "the comparison")
        await settle(
            pilot,
            lambda: sum(" wall " in line for line in screen_lines(app)) == 2,
            "both timelines' summaries",
        )
        await pilot.pause(0.5)
        assert not any("● ● ●" in line for line in screen_lines(app))  # no loading dots
