"""The runs table's columns stay put as what the runs say changes: a column empty for every
run shown goes first, at every width, never only while DOING NOW's text is long."""

from __future__ import annotations

import pytest

from inspector.model import RunKey, make_view
from ledger_reader import RunStatus, RunSummary
from tui.widgets.run_columns import Fill, visible_columns
from tui.widgets.run_tally import RowTally

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


def _tallied(*statuses: RunStatus) -> Fill:
    tally = RowTally()
    rows = [
        make_view(
            RunKey("here", f"run-{n}"),
            RunSummary(run_id=f"run-{n}", status=status, skill="triage", event_count=3),
            None,
            detailed=True,
        )
        for n, status in enumerate(statuses)
    ]
    tally.update(rows, frozenset())
    return tally.fill()


@pytest.mark.parametrize("total", [78, 100, 118, 158])
def test_the_columns_do_not_move_as_a_live_run_comes_to_wait(total: int) -> None:
    """At 80 columns STATUS grew from 11 cells to 19 as a run came to await its approval,
    and TIME went: a live run may come to wait (or be canceled) at any moment, and below
    120 columns the waiting one says ``◐ awaiting…`` (its DOING NOW says the question)."""
    running = _tallied(RunStatus.RUNNING, RunStatus.SUCCEEDED)
    waiting = _tallied(RunStatus.AWAITING_APPROVAL, RunStatus.SUCCEEDED)
    assert visible_columns(total, "started", running) == visible_columns(total, "started", waiting)
    status = {key: width for key, _, width in visible_columns(total, "started", waiting)}
    assert status["status"] == (11 if total < 120 else 19), status


def test_ended_runs_keep_status_as_wide_as_their_words() -> None:
    ended = _tallied(RunStatus.STALE, RunStatus.FAILED)
    assert {key: width for key, _, width in visible_columns(160, "", ended)}["status"] == 8
