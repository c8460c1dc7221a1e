"""A coding agent's session's timeline: a sub-agent that ran before its session's first
record is not said to have taken ``0s``, and every model's name is cut at one width,
whatever its call's numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inspector.session_source import SessionSource
from inspector.timeline import NodeKind
from tests.tui.test_timeline_view import row_text
from tests.tui_support import open_run, settle
from tui.app import make_app
from tui.settings import Settings
from tui.widgets.timeline_pane import TimelinePane

pytestmark = pytest.mark.timeout(60)

PROJECTS = Path(__file__).parent.parent / "sessions_home" / ".claude" / "projects"
NAME = re.compile(r"◆ [^ …]*…?")
"""A model's name as a row cuts it."""
SESSION = "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"
"""Its Warmup sub-agent ran two minutes before the session's first record."""


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 48)])
async def test_the_sessions_timeline_says_where_its_time_went(size: tuple[int, int]) -> None:
    app = make_app(Settings(flush_interval=0.01), [SessionSource([PROJECTS])])
    async with app.run_test(size=size) as pilot:
        await open_run(pilot, SESSION)
        await pilot.press("T")
        pane = app.screen.query_one(TimelinePane)
        summary = pane.query_one("#timeline-summary")
        await settle(pilot, lambda: "wall " in str(summary.render()), "the timeline read")
        view = pane.view
        rows = view.timeline.rows()
        names = {
            NAME.match(row_text(view, y + 1)).group()  # type: ignore[union-attr]
            for y, node in enumerate(rows[: size[1] - 8])
            if node.kind is NodeKind.MODEL
        }
        assert len(names) == 1, names
        said = str(summary.render())
        assert "child runs 0s" not in said, said
        assert "child runs 6.3s outside the run's time" in said, said
