"""A replay's running run: its TIME counts with the moment replayed, as its STARTED does.

A run started 11 s before the moment replayed has run 11 s, not the 0.1 s to its last event
so far, as the demo's running rows count up. A stale run's clock still stops at its last
event.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector import ReplaySource
from tests.tui.test_interaction import screen_lines
from tests.tui_support import FROZEN, loaded, open_run, settle
from tui.app import make_app
from tui.settings import Settings
from tui.text.runs import short_id
from tui.widgets.run_table import RunTable
from tui.widgets.source_line import SourceLine

pytestmark = pytest.mark.timeout(60)

DEPLOY = "run_20261128T143000031_9c8b7a6f5e4d3c2b"
"""Started 14:30:10.000, three events by 14:30:10.110, then nothing until it fails at 14:30:40."""
SUMMARIZE = "run_20261128T143000045_1f2e3d4c5b6a7980"
"""Started 14:30:20.000: played after the deploy's first three events, it moves the replay on."""
MIGRATE = "run_20261128T143000052_a0b1c2d3e4f50617"
"""Asks an approval at 14:30:30.110 and writes nothing more: stale once played."""
TORN = "run_20261128T143000058_5e6f708192a3b4c5"
"""Started 14:30:40.000, its last whole event at 14:30:40.300: stale once played."""


def source_line(app: Any) -> str:
    return screen_lines(app)[app.screen.query_one(SourceLine).region.y]


def row(app: Any, run_id: str) -> str:
    return next((text for text in screen_lines(app) if short_id(run_id) in text), "")


def time_cell(app: Any, run_id: str) -> str:
    """What the TIME column shows on the run's line (right-aligned under its title)."""
    lines = screen_lines(app)
    titles = lines[app.screen.query_one("#header").region.y]
    end = titles.index("TIME") + len("TIME")
    line = row(app, run_id)
    assert line, lines
    return line[end - 7 : end].strip()


def started_cell(app: Any, run_id: str) -> str:
    line = row(app, run_id)
    return line[: line.index(" ago") + len(" ago")].rsplit("  ", 1)[-1].strip()


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_a_running_runs_time_counts_with_the_moment_replayed(
    fixtures: Path, size: tuple[int, int]
) -> None:
    """Stepped to the summarize run's start (14:30:20), the deploy run, running since
    14:30:10, has run 10s, as its STARTED says: not 0.1s, its last event so far. Paused,
    the replay's clock stands, and the TIME with it."""
    ledgers = [next(fixtures.glob(f"{run_id}.jsonl")) for run_id in (DEPLOY, SUMMARIZE)]
    replay = ReplaySource(ledgers, step=True, name="replay")
    app = make_app(Settings(clock=FROZEN, flush_interval=0.01), [replay])
    async with app.run_test(size=size) as pilot:
        await settle(pilot, lambda: "paused" in source_line(app), "the paused replay")
        await pilot.press("n", "n", "n", "n")  # the deploy's three events, the summarize's start
        table = await loaded(pilot, 2)
        assert isinstance(table, RunTable)
        await settle(pilot, lambda: "14:30:20" in source_line(app), "stepped to 14:30:20")
        await settle(pilot, lambda: "10s ago" in row(app, DEPLOY), "the deploy started 10s ago")
        assert "running" in row(app, DEPLOY), screen_lines(app)
        assert started_cell(app, DEPLOY) == "10s ago", row(app, DEPLOY)
        assert time_cell(app, DEPLOY) == "10s", screen_lines(app)
        # The summarize run has only started at the moment replayed: no TIME yet, not 0s.
        assert time_cell(app, SUMMARIZE) == "", screen_lines(app)
        await pilot.pause(1.2)  # paused: the wall clock goes on, the replay's does not
        assert time_cell(app, DEPLOY) == "10s", screen_lines(app)
        await pilot.press("n", "n")  # the summarize's next two events, to 14:30:20.300
        await settle(pilot, lambda: time_cell(app, SUMMARIZE) == "0.3s", "summarize ran 0.3s")
        assert time_cell(app, DEPLOY) == "10s", screen_lines(app)  # 10.3s, said to the second


async def test_a_stale_runs_time_stays_its_last_events_when_a_replay_ends(
    fixtures: Path,
) -> None:
    """Played to the end (14:30:50), the runs that stopped writing are stale: their clocks
    stopped at their last events (0.1s, 0.3s), not at the moment replayed (20s, 10s later)."""
    replay = ReplaySource(sorted(fixtures.glob("*.jsonl")), speed=0, name="replay")
    app = make_app(Settings(clock=FROZEN, flush_interval=0.01), [replay])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, lambda: "played to the end" in source_line(app), "the replay played")
        await loaded(pilot, 6)
        await settle(pilot, lambda: "stale" in row(app, TORN), "the torn run judged stale")
        await settle(pilot, lambda: "stale" in row(app, MIGRATE), "the approval judged stale")
        assert "14:30:50" in source_line(app), source_line(app)
        assert started_cell(app, MIGRATE) == "20s ago", row(app, MIGRATE)
        assert time_cell(app, MIGRATE) == "0.1s", screen_lines(app)
        assert started_cell(app, TORN) == "10s ago", row(app, TORN)
        assert time_cell(app, TORN) == "0.3s", screen_lines(app)
        assert time_cell(app, DEPLOY) == "30s", screen_lines(app)  # it failed at 14:30:40


async def test_a_running_runs_header_counts_with_the_moment_replayed(fixtures: Path) -> None:
    """The run's header said ``3 events  0.1s`` where its row said ``10s``."""
    ledgers = [next(fixtures.glob(f"{run_id}.jsonl")) for run_id in (DEPLOY, SUMMARIZE)]
    replay = ReplaySource(ledgers, step=True, name="replay")
    app = make_app(Settings(clock=FROZEN, flush_interval=0.01), [replay])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, lambda: "paused" in source_line(app), "the paused replay")
        await pilot.press("n", "n", "n", "n")
        await loaded(pilot, 2)
        await settle(pilot, lambda: time_cell(app, DEPLOY) == "10s", "the deploy's 10s")
        await open_run(pilot, DEPLOY)
        await settle(pilot, lambda: "3 events" in "\n".join(screen_lines(app)[:3]), "header")
        header = "\n".join(screen_lines(app)[:3])
        assert "3 events  10s" in header, header
