"""A replay's columns stay put as it plays: laid out from the start for what its recording
holds (a DAMAGED column came once a damaged line was played, TOKENS / COST with the first
model call, and STATUS narrowed by eight cells each time no run was live)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector import ReplaySource
from tests.tui_support import FROZEN, settle
from tui.app import make_app
from tui.settings import Settings
from tui.widgets.run_table import RunTable

pytestmark = pytest.mark.timeout(60)


def played(app: Any) -> int:
    """The ledger lines the table shows played: events, and lines that could not be read."""
    rows = app.screen.query_one(RunTable).rows
    return sum((run.event_count or 0) + (run.summary.damaged_lines or 0) for run in rows)


@pytest.mark.parametrize("size", [(160, 48), (120, 30)])
async def test_the_titles_stay_as_a_replay_plays_its_damaged_line(
    fixtures: Path, size: tuple[int, int]
) -> None:
    replay = ReplaySource(sorted(fixtures.glob("*.jsonl")), step=True, name="replay")
    app = make_app(Settings(clock=FROZEN, flush_interval=0.01), [replay])
    async with app.run_test(size=size) as pilot:
        await settle(pilot, lambda: replay.holding.is_set(), "the paused replay")
        titles: set[str] = set()
        steps = 0
        while not replay.finished.is_set():
            steps += 1
            await pilot.press("n")
            await settle(
                pilot,
                lambda steps=steps: played(app) >= steps or replay.finished.is_set(),
                f"line {steps} played",
            )
            await pilot.pause()
            titles.add(str(app.screen.query_one("#header").render()).rstrip())
        damaged = [run for run in app.screen.query_one(RunTable).rows if run.damaged_lines]
        assert damaged, "the samples' damaged line was played"
        assert len(titles) == 1, titles
        assert "DAMAGED" in next(iter(titles))
