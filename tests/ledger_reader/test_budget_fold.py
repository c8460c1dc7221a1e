"""A budgeted run's budget, as every fold of its ledger reads it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ledger_reader import SummaryBuilder, summarize_ledger
from ledger_reader.block_fold import fold_block
from ledger_reader.events import BudgetSpent, BudgetState
from ledger_reader.head_tail import HEAD_BYTES, WHOLE_FILE_BYTES
from tests.conftest import RUN_ID, completed, line, started

GIVEN = {"cost_usd": 1.0, "tokens": 200_000, "ask_at": 0.8}
GROWN = {
    "cost_usd": 2.0,
    "tokens": 200_000,
    "ask_at": 0.8,
    "spent": {"cost_usd": 0.85, "tokens": 1200, "model_calls": 4, "seconds": 3.5},
    "state": "ok",
}


def test_the_budget_given_is_the_budget_until_it_changes(
    write_ledger: Callable[..., Path],
) -> None:
    path = write_ledger(started(budget=GIVEN), line(2, "llm_call", {"cost_usd": 0.1}))
    budget = summarize_ledger(path).budget
    assert budget == BudgetState(cost_usd=1.0, tokens=200_000, ask_at=0.8, state="ok")


def test_each_budget_updated_replaces_the_one_before_in_every_fold(
    write_ledger: Callable[..., Path],
) -> None:
    asking = {**GIVEN, "state": "asking", "limit": "cost_usd", "spent": {"cost_usd": 0.8}}
    path = write_ledger(
        started(budget=GIVEN),
        line(2, "budget_updated", asking),
        line(3, "budget_updated", GROWN),
        completed(4),
    )
    expected = BudgetState(
        cost_usd=2.0,
        tokens=200_000,
        ask_at=0.8,
        spent=BudgetSpent(cost_usd=0.85, tokens=1200, model_calls=4, seconds=3.5),
        state="ok",
    )
    assert summarize_ledger(path).budget == expected
    builder = SummaryBuilder(RUN_ID)
    fold_block(path.read_bytes(), 0, builder, final=True)  # the fast block fold alike
    assert builder.summary().budget == expected


def test_a_run_without_a_budget_has_none(write_ledger: Callable[..., Path]) -> None:
    assert summarize_ledger(write_ledger(started(), completed(2))).budget is None


def test_the_last_budget_updated_is_read_from_the_tail_of_a_large_ledger(tmp_path: Path) -> None:
    path = tmp_path / f"{RUN_ID}.jsonl"
    with path.open("wb") as handle:
        handle.write(started(budget=GIVEN))
        seq = 1
        while handle.tell() < WHOLE_FILE_BYTES + 4 * HEAD_BYTES:
            seq += 1
            handle.write(line(seq, "llm_chunk", {"delta": "x" * 200}))
        handle.write(line(seq + 1, "budget_updated", {**GROWN, "state": "exceeded"}))
    summary = summarize_ledger(path)
    assert summary.partial
    assert summary.budget is not None
    assert (summary.budget.state, summary.budget.cost_usd) == ("exceeded", 2.0)
