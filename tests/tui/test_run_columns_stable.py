"""The runs table's columns stay put as what the runs say changes: a column empty for every
run shown goes first, at every width, never only while DOING NOW's text is long."""

from __future__ import annotations

import pytest

from tui.widgets.run_columns import Fill, visible_columns

pytestmark = pytest.mark.timeout(10)

EMPTY: frozenset[str] = frozenset({"damaged", "tokens"})


def layout(total: int, doing: int) -> tuple[str, ...]:
    fill = Fill(status=9, empty=EMPTY, doing=doing)
    return tuple(key for key, _, _ in visible_columns(total, "", fill))


@pytest.mark.parametrize("total", [60, 80, 100, 120, 160, 200])
def test_the_columns_do_not_change_as_doing_now_grows(total: int) -> None:
    """At 160 columns an empty DAMAGED and TOKENS / COST came and went as another run's
    DOING NOW grew from a tool's name to a question, shifting every title after them."""
    shown = {layout(total, doing) for doing in (0, 12, 40, 90, 120)}
    assert len(shown) == 1, shown
    assert not EMPTY & set(next(iter(shown)))


def test_a_column_sorted_by_stays_even_empty() -> None:
    fill = Fill(status=9, empty=EMPTY)
    assert "tokens" in [key for key, _, _ in visible_columns(160, "tokens", fill)]
