"""A view's columns at narrow widths: the numbers it names stay, the names give way first,
and what it leaves out makes room for the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.test_interaction import screen_lines
from tests.tui.test_runs_screen_text import titles
from tests.tui.test_views_in_app import choose
from tests.tui_support import loaded, sample_app, settle
from tui.views import View, save_view
from tui.widgets.run_columns import Fill, visible_columns

pytestmark = pytest.mark.timeout(60)

SPENDING = View("spending", columns=("status", "run", "agent", "duration", "tokens"))


def layout(total: int, fill: Fill, keep: str = "started") -> dict[str, int]:
    return {key: width for key, _, width in visible_columns(total, keep, fill)}


@pytest.mark.parametrize("total", [60, 70, 78, 100, 160])
@pytest.mark.parametrize("status", [11, 19])  # ``? stale``; ``◐ awaiting_approval``
def test_a_views_numbers_stay_and_the_line_fits(total: int, status: int) -> None:
    """At 80 columns the view's TOKENS / COST went while the columns it leaves out were
    still counted as taking room."""
    shown = layout(total, Fill(status=status, hidden=SPENDING.hidden))
    assert {"duration", "tokens", "started"} <= set(shown), shown
    assert not SPENDING.hidden & set(shown) - {"started"}, shown  # sorted by: it stays
    assert sum(shown.values()) + len(shown) - 1 <= total, shown


def test_the_names_give_way_before_a_views_numbers() -> None:
    wide = layout(160, Fill(status=19, hidden=SPENDING.hidden))
    narrow = layout(60, Fill(status=19, hidden=SPENDING.hidden))
    assert narrow["tokens"] == wide["tokens"]
    assert narrow["duration"] == wide["duration"]
    assert narrow["status"] < wide["status"] or "agent" not in narrow, narrow


def test_without_a_view_the_text_gives_way_before_the_figures() -> None:
    """Every column shown: DOING NOW and SOURCE give way before TOKENS / COST and TIME (at
    80 columns TOKENS / COST went second, before DOING NOW gave up a cell)."""
    shown = layout(78, Fill(status=19))
    assert {"tokens", "duration", "damaged"} <= set(shown), shown
    assert not {"doing", "source"} & set(shown), shown


async def test_a_view_shows_its_tokens_at_80x24(fixtures: Path, tmp_path: Path) -> None:
    views = tmp_path / "views.toml"
    save_view(views, SPENDING)
    app = sample_app(fixtures, views_file=views)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await choose(pilot, "spending")
        await settle(pilot, lambda: "DOING" not in titles(app), "the view's columns")
        said = titles(app)
        assert "TOKENS / COST" in said, said
        assert "TIME" in said, said
        spent = next(line for line in screen_lines(app) if "…9c2e7b3d8a60" in line)
        assert spent.rstrip().endswith("2.9k $0.0102"), spent
