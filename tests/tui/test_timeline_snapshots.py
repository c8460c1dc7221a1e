"""What the timeline looks like, at 80x24 and 160x48: a finished run, and a live one grown.

The ledgers are written at fixed times, the clock is frozen and the source is
named, so nothing in a snapshot depends on the day, the machine or the
temporary directory. Update them with ``make snapshots`` after looking.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from inspector import LedgerDirectorySource
from tests.timeline_ledgers import BASE, FROZEN, PARENT, LedgerWriter, write_runs
from tests.tui_support import settle
from tui.app import make_app
from tui.screens.run import RunScreen
from tui.settings import Settings
from tui.widgets.detail import EventDetail
from tui.widgets.timeline_pane import TimelinePane

pytestmark = pytest.mark.timeout(60)

SIZES = {"80x24": (80, 24), "160x48": (160, 48)}


async def open_timeline(pilot: Pilot[Any], runs: int) -> TimelinePane:
    app = pilot.app
    table = app.screen.query_one("RunTable")
    await settle(
        pilot,
        lambda: len(table.rows) == runs and all(r.detailed for r in table.rows),  # type: ignore[attr-defined]
        "the runs",
    )
    table.select_key(next(r.key for r in table.rows if r.run_id == PARENT))  # type: ignore[attr-defined]
    await pilot.press("enter")
    await settle(pilot, lambda: isinstance(app.screen, RunScreen), "the run")
    await pilot.press("T")
    pane = app.screen.query_one(TimelinePane)
    await settle(pilot, lambda: not pane.loading, "the timeline")
    return pane


@pytest.mark.parametrize("size", list(SIZES))
def test_finished_run_with_parallel_tools_and_a_child_run(
    snap_compare: Any, tmp_path: Path, size: str
) -> None:
    write_runs(tmp_path)

    async def select_the_failed_read(pilot: Pilot[Any]) -> None:
        await open_timeline(pilot, runs=2)
        await pilot.press("down", "down", "down")
        detail = pilot.app.screen.query_one(EventDetail)
        await settle(pilot, lambda: "timed out" in detail.text, "the node's detail")
        await pilot.pause(0.1)

    app = make_app(
        Settings(clock=FROZEN, flush_interval=0.01),
        [LedgerDirectorySource(tmp_path, name="runs")],
    )
    assert snap_compare(app, terminal_size=SIZES[size], run_before=select_the_failed_read)


@pytest.mark.parametrize("size", list(SIZES))
def test_live_run_grown(snap_compare: Any, tmp_path: Path, size: str) -> None:
    run = LedgerWriter(PARENT)
    run.add(0, "run_started", skill="research", agent="researcher")
    run.model(0.2, 2.0, 1, 812, 41)
    run.tool_start(2.5, "web_search", 1, {"q": "waterfall"})
    run.tool_start(2.6, "read_page", 1, {"url": "https://example.com"})
    path = run.write(tmp_path)
    os.utime(path, (time.time(), time.time()))  # written just now: the run is live

    async def grow(pilot: Pilot[Any]) -> None:
        pane = await open_timeline(pilot, runs=1)
        run.tool_end(3.1, "web_search", 1, "3 results")
        run.add(3.3, "node_enter", node_id="llm:default#2", node_name="default")
        with path.open("ab") as ledger:
            ledger.write(b"".join(run.lines[-3:]))
        await settle(pilot, lambda: len(pane.timeline) == 4, "the new node")
        summary = pane.query_one("#timeline-summary")
        await settle(pilot, lambda: "4 nodes" in str(summary.render()), "the summary")
        await pilot.pause(0.1)

    clock = BASE.timestamp() + 4.0  # the run is live at the app's now, its last event 2 s old
    app = make_app(
        Settings(clock=clock, flush_interval=0.01),
        [LedgerDirectorySource(tmp_path, name="runs", clock=clock)],
    )
    assert snap_compare(app, terminal_size=SIZES[size], run_before=grow)
