"""The runs table at a narrow terminal: the text gives way before the figures, and a figure
is never cut (at 80 columns TOKENS / COST went second while DOING NOW kept 18 cells)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.test_interaction import screen_lines
from tests.tui.test_runs_screen_text import titles
from tests.tui_support import loaded, sample_app
from tui.columns import COLUMNS
from tui.widgets.run_columns import NUMERIC, Fill, visible_columns

pytestmark = pytest.mark.timeout(60)

TEXT = frozenset({"doing", "source"})
"""The columns of text that say what the rest of the screen says too."""
WIDTHS = {key: width for key, _, width in COLUMNS}


@pytest.mark.parametrize("status", [6, 11, 19])
@pytest.mark.parametrize("empty", [frozenset(), frozenset({"damaged"}), frozenset({"tokens"})])
@pytest.mark.parametrize("sources", [1, 2])
def test_no_text_is_shown_while_a_figure_is_left_out(
    status: int, empty: frozenset[str], sources: int
) -> None:
    for total in range(40, 201):
        fill = Fill(status=status, empty=empty, sources=sources)
        shown = {key: width for key, _, width in visible_columns(total, "started", fill)}
        figures = NUMERIC - empty
        if TEXT & set(shown):
            assert figures <= set(shown), (total, shown)
        for key in figures & set(shown):  # whole: never cut
            assert shown[key] == WIDTHS[key], (total, key, shown)
        assert sum(shown.values()) + len(shown) - 1 <= total, (total, shown)


async def test_the_samples_at_80x24_show_what_each_run_cost(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        said = titles(app)
        for title in ("TIME", "TOKENS / COST", "DAMAGED"):
            assert title in said, said
        spent = next(line for line in screen_lines(app) if "3d8a60" in line)
        assert spent.rstrip().endswith("2.9k $0.0102"), spent
