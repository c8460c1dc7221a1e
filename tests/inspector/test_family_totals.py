"""The app's store keeps a parent run's totals with its child runs' as runs come and go;
the one fold (:func:`ledger_reader.totals.family_totals`) counts each run once."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import LedgerDirectorySource, RunKey, RunStore
from ledger_reader import RunSummary, RunTotals
from ledger_reader.totals import family_totals
from tests.family_runs import FAMILY_COST, FAMILY_TOKENS, PARENT_COST, family

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
