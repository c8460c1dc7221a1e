"""The command palette and the key bar as a fresh-eyes walk at 80x24 found them (issue 14).

The bar kept ``a Approve`` while it dropped ``d Deny``. Each test reads what the screen
shows: the bar's line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tui_support import loaded, sample_app, settle

pytestmark = pytest.mark.timeout(60)


def screen_lines(app: Any) -> list[str]:
    """The screen's lines as the terminal shows them (the palette over its screen)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def bottom_line(app: Any) -> str:
    """The last line drawn: the key bar (under the palette too)."""
    return screen_lines(app)[-1].rstrip()


async def test_a_narrow_bar_keeps_approve_and_deny_together(fixtures: Path) -> None:
    """At 80x24 the calls of a tool (ended runs: ``c``, ``r``, ``a``, ``d`` greyed) kept
    ``a Approve`` and dropped ``d Deny``, as if approving were the only answer."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("t")
        await settle(pilot, lambda: type(app.screen).__name__ == "ToolsScreen", "the tools")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot, lambda: type(app.screen).__name__ == "ToolCallsScreen", "its calls")
        await settle(pilot, lambda: "Open" in bottom_line(app), "the calls' keys")
        drawn = bottom_line(app)
        assert ("a Approve" in drawn) == ("d Deny" in drawn), drawn
        assert drawn.endswith("? Keys  q Quit"), drawn
        assert "⏎ Open" in drawn, drawn
