"""The runs screen as a fourth fresh-eyes walk of ``runtop demo`` found it.

An empty table's bar offered Enter and space bright; the tree drew every child ``└``;
at 80 columns the source line dropped the runs by status before a reconnecting
source's words, and with ``?`` open STATUS kept room for ``awaiting_approval`` while
SKILL read ``classifi…``, and the keys panel folded a path in the middle of a name; the
table said ``unanswered:`` where ``runtop ls`` says ``approval unanswered:``. Each test
reads what the screen shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_keys_leftovers import greyed, palette
from tests.test_tui_interaction import screen_lines
from tests.tui_support import loaded, noticed, sample_app, settle
from tui.widgets.run_table import RunTable
from tui.widgets.source_line import SourceLine

pytestmark = pytest.mark.timeout(60)

MIGRATION = "run_20261128T143000052_a0b1c2d3e4f50617"
"""The sample run whose approval went unanswered (stale: its writer went quiet)."""


def source_line(app: Any) -> str:
    """The source line as the terminal shows it (not the keys panel beside it)."""
    return screen_lines(app)[app.screen.query_one(SourceLine).region.y].split("▏")[0]


def table_lines(app: Any) -> list[str]:
    """The runs table's lines as the terminal shows them, the column titles first."""
    top = app.screen.query_one("#header").region.y
    rows = app.screen.query_one(RunTable)
    return [line.split("▏")[0] for line in screen_lines(app)[top : top + 1 + len(rows.rows)]]


def keys_panel(app: Any) -> list[str]:
    """The keys panel's lines (``?``), as the terminal shows them beside the screen."""
    return [line.split("▏", 1)[1] for line in screen_lines(app) if "▏" in line]


# -- 1: an empty table greys the keys that act on a run ------------------------------------


async def test_enter_and_mark_are_greyed_and_not_offered_on_an_empty_table(
    fixtures: Path,
) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await loaded(pilot)
        assert not greyed(app, "⏎")
        assert not greyed(app, "space")
        assert {"Open", "Mark"} <= set(await palette(pilot))

        await pilot.press("slash", *"zzzz", "enter")
        await settle(pilot, lambda: "No run matches the filter" in "\n".join(screen_lines(app)), "")
        await settle(pilot, lambda: greyed(app, "⏎"), "Enter greyed")
        assert greyed(app, "space")
        offered = await palette(pilot)
        assert "Open" not in offered, offered
        assert "Mark" not in offered, offered
        await pilot.press("space")  # pressed anyway: it says why
        await noticed(pilot, "no run is selected to mark")

        await pilot.press("escape")  # every run again: the keys act again
        await settle(pilot, lambda: not greyed(app, "⏎"), "Enter bright again")
        assert not greyed(app, "space")
