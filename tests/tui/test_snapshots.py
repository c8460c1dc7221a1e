"""What the screens look like, at 80x24 and 160x48, dark and light, on the sample ledgers.

The clock is frozen (``Settings.clock``) and the samples aged alike every run,
so a snapshot changes only when what the app draws changes. Update them
with ``make snapshots`` after looking at the report.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui_support import loaded, sample_app, settle
from tui.screens.cancel import CancelScreen
from tui.screens.runs import RunsScreen
from tui.widgets.event_list import EventList
from tui.widgets.run_preview import RunPreview
from tui.widgets.run_table import RunTable

pytestmark = pytest.mark.timeout(60)

SMALL = (80, 24)
LARGE = (160, 48)


def before(*keys: str, extra: Callable[[Pilot[Any]], Awaitable[None]] | None = None) -> Any:
    async def run_before(pilot: Pilot[Any]) -> None:
        await loaded(pilot)
        if keys:
            await pilot.press(*keys)
        if extra is not None:
            await extra(pilot)
        if isinstance(pilot.app.screen, RunsScreen) and pilot.app.screen.query_one(RunTable).rows:
            preview = pilot.app.screen.query_one(RunPreview)
            await settle(pilot, lambda: str(preview.render()).count("\n") >= 3, "the preview")
        await pilot.pause(0.1)

    return run_before


async def events_read(pilot: Pilot[Any]) -> None:
    events = pilot.app.screen.query_one(EventList)
    await settle(
        pilot, lambda: events.count and events.item(events.count - 1) is not None, "the events"
    )
    await pilot.pause(0.1)


async def select_tool_call(pilot: Pilot[Any]) -> None:
    await events_read(pilot)
    await pilot.press("home", *["down"] * 5)  # the web_search call: one entry


async def confirm_cancel(pilot: Pilot[Any]) -> None:
    app = pilot.app
    run = app.screen.query_one("RunTable").rows[2]  # type: ignore[attr-defined]
    app.push_screen(CancelScreen(run))
    await pilot.pause(0.1)
    for box in app.screen.query("Input"):
        box.cursor_blink = False  # type: ignore[attr-defined]


async def search_mouse(pilot: Pilot[Any]) -> None:
    await events_read(pilot)
    await pilot.press("home", "slash", *"mouse", "enter")
    box = pilot.app.screen.query_one("#search")
    await settle(pilot, lambda: "of" in str(box.border_title), "the matches")
    box.cursor_blink = False  # type: ignore[attr-defined]
    await pilot.pause(0.1)


async def shell_calls(pilot: Pilot[Any]) -> None:
    from textual.widgets import DataTable

    tools = pilot.app.screen.query_one(DataTable)
    await settle(pilot, lambda: tools.row_count >= 3, "the tools")
    names = [str(tools.get_row_at(index)[0]) for index in range(tools.row_count)]
    tools.move_cursor(row=names.index("shell"))
    await pilot.press("enter")
    await pilot.pause(0.1)


async def confirm_approval(pilot: Pilot[Any]) -> None:
    from tui.screens.approval import ApprovalScreen

    app = pilot.app
    run = app.screen.query_one("RunTable").rows[2]  # type: ignore[attr-defined]
    app.push_screen(ApprovalScreen(run, approve=False))
    await pilot.pause(0.1)
    for box in app.screen.query("Input"):
        box.cursor_blink = False  # type: ignore[attr-defined]


CASES = {
    "runs": before(),
    "runs_filtered": before("slash", *"status:failed,canceled,stale", "enter"),
    "run_tool_call": before("end", "enter", extra=select_tool_call),
    "run_damaged": before("home", "enter", extra=events_read),
    "cancel_confirm": before(extra=confirm_cancel),
    "approval_confirm": before(extra=confirm_approval),
    "run_search": before("end", "enter", extra=search_mouse),
    "tool_drilldown": before("t", extra=shell_calls),
    "tool_calls": before("t"),
}


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "160x48"])
@pytest.mark.parametrize("case", list(CASES))
def test_screens(
    snap_compare: Any, fixtures: Path, case: str, size: tuple[int, int], theme: str
) -> None:
    if theme == "textual-light" and case in {"approval_confirm", "run_search", "tool_drilldown"}:
        pytest.skip("the dark theme shows it")
    if theme == "textual-light" and case in {"runs_filtered", "tool_calls"} and size == SMALL:
        pytest.skip("covered in the dark theme at this size")
    app = sample_app(fixtures, theme=theme)
    assert snap_compare(app, terminal_size=size, run_before=CASES[case])


async def compare_resumed(pilot: Pilot[Any]) -> None:
    """The failed deploy and its resume, marked in the table and compared."""
    from tui.screens.compare import CompareScreen
    from tui.widgets.comparison_table import ComparisonTable
    from tui.widgets.timeline_pane import TimelinePane

    await loaded(pilot, 2)
    await pilot.press("space", "down", "space", "C")
    app = pilot.app
    await settle(pilot, lambda: isinstance(app.screen, CompareScreen), "the comparison")
    table = app.screen.query_one(ComparisonTable)
    await settle(pilot, lambda: table.comparison and not table.reading, "both runs read")
    panes = list(app.screen.query(TimelinePane))
    # each timeline's summary line is worked out in a thread of its own, after the table's
    await settle(pilot, lambda: all(pane.summary is not None for pane in panes), "the timelines")
    app.clear_notifications()  # the marks' toasts would time out at a moment of their own
    await pilot.pause(0.1)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "160x48"])
def test_comparison(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    from inspector import LedgerDirectorySource
    from tests.resumed_pair import FROZEN_AFTER, write_pair
    from tui.app import make_app
    from tui.settings import Settings

    write_pair(tmp_path / "runs")
    settings = Settings(clock=FROZEN_AFTER, flush_interval=0.01)
    app = make_app(settings, [LedgerDirectorySource(tmp_path / "runs", name="runs")])
    assert snap_compare(app, terminal_size=size, run_before=compare_resumed)
