"""The app's store keeps a parent run's totals with its child runs' as runs come and go;
the one fold (:func:`ledger_reader.totals.family_totals`) counts each run once."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import LedgerDirectorySource, RunKey, RunStore
from inspector.filters import RunFilter
from ledger_reader import RunSummary, RunTotals
from ledger_reader.totals import family_totals
from tests.family_runs import (
    BIG_CHILD,
    BIG_PARENT,
    FAMILY_COST,
    FAMILY_TOKENS,
    PARENT_COST,
    family,
    family_with_a_big_ledger,
)
from tui.text.runs import spent_forms

pytestmark = pytest.mark.timeout(60)


def test_each_descendant_counts_once_however_the_ids_loop() -> None:
    def run(run_id: str, parent: str | None, cost: float) -> RunSummary:
        return RunSummary(run_id=run_id, parent_run_id=parent, cost_usd=cost)

    runs = [run("a", "c", 1.0), run("b", "a", 2.0), run("c", "b", 4.0), run("d", None, 8.0)]
    runs.append(run("e", "gone", 16.0))  # its parent is not among them: only its own
    totals = family_totals(runs)
    assert sorted(totals) == ["a", "b", "c"]
    assert {totals[key].cost_usd for key in totals} == {7.0}
    silent = family_totals([RunSummary(run_id="p"), RunSummary(run_id="q", parent_run_id="p")])
    assert silent["p"] == RunTotals()  # nobody said: unknown, not 0


def test_a_total_is_partial_where_any_run_of_the_family_is() -> None:
    """One rule: a summary read at its head and tail has partial totals, and a total that
    counts such a run, however far down, is partial too."""

    def run(run_id: str, parent: str | None, *, partial: bool = False) -> RunSummary:
        cost = None if partial else 1.0  # a head and tail read counts no calls
        return RunSummary(run_id=run_id, parent_run_id=parent, cost_usd=cost, partial=partial)

    whole = family_totals([run("a", None), run("b", "a"), run("c", "b")])
    assert [whole[key].partial for key in ("a", "b")] == [False, False]
    totals = family_totals([run("a", None), run("b", "a"), run("c", "b", partial=True)])
    assert (totals["a"].cost_usd, totals["a"].partial) == (2.0, True)
    assert (totals["b"].cost_usd, totals["b"].partial) == (1.0, True)
    assert run("d", None, partial=True).totals.partial
    assert not run("d", None).totals.partial


async def test_the_store_adds_child_runs_to_their_parent_as_they_come(tmp_path: Path) -> None:
    """Watched live: the parent is there before its child runs start, and its total grows
    as each one ends (the store keeps it, one family at a time)."""
    async with RunStore() as store:
        store.add_source(LedgerDirectorySource(tmp_path, name="dir"))
        changes = store.changes()
        parent = await family(tmp_path)
        key = RunKey("dir", parent)

        def settled() -> bool:
            view = store.get(key)
            return (
                view is not None
                and view.with_children is not None
                and view.with_children.tokens == FAMILY_TOKENS
            )

        while not settled():
            await anext(changes)
        view = store.get(key)
        assert view is not None
        assert view.with_children is not None
        assert view.with_children.cost_usd == pytest.approx(FAMILY_COST)
        assert view.totals.cost_usd == PARENT_COST  # its own stays its own
        assert view.total is view.with_children
        leaves = [v for v in store.snapshot().runs if v.agent == "leaf"]
        assert [leaf.with_children for leaf in leaves] == [None, None]  # no child runs
        # The filter reads the total the table shows (Σ), not the run's own cost alone.
        chosen = store.snapshot().filtered(RunFilter.parse("cost:>0.025"))
        assert [run.key for run in chosen] == [key]


@pytest.mark.parametrize("big", [BIG_CHILD, BIG_PARENT], ids=["big child", "big parent"])
async def test_a_total_with_a_run_not_read_whole_says_at_least_until_it_is(
    big: str, tmp_path: Path
) -> None:
    """The app reads a big ledger's newest events first and the rest later (never, past
    32 MiB): until then the parent's total leaves calls out, and its header says so."""
    family_with_a_big_ledger(tmp_path, big)
    key = RunKey("dir", BIG_PARENT)
    for detail in (False, True):
        async with RunStore(detail=detail) as store:
            store.add_source(LedgerDirectorySource(tmp_path, name="dir"))
            changes = store.changes()

            def family_said() -> RunTotals | None:
                view = store.get(key)
                return view.with_children if view is not None else None

            while (total := family_said()) is None or total.partial == detail:
                await anext(changes)
            view = store.get(key)
            assert view is not None
            said = spent_forms(view)
            if detail:  # read whole: the family's every call
                assert (total.tokens, total.cost_usd) == (330, pytest.approx(0.03))
                assert said[0] == "330 tokens $0.0300 with its child runs (own 110 tokens $0.0100)"
                assert "≥" not in said[1]
            else:
                assert said[0].startswith("at least "), said
                assert said[1].startswith("Σ≥"), said
                assert said[2].startswith("Σ≥"), said
