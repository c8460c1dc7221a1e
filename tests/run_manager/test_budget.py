"""Budgets with real agents and real ledgers: asked at ``ask_at``, enforced at the limit."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from ledger_reader import RunStatus, summarize_ledger
from run_manager import BadBudget, Budget, Manager, RunCanceled, Status, tool_call
from tests.budget_agents import (
    Delegator,
    Spender,
    asked,
    events,
    model_calls,
    question_of,
    spending_function,
    until,
)

pytestmark = pytest.mark.timeout(30)


async def test_a_run_asks_at_ask_at_goes_on_when_approved_and_stops_when_denied(
    tmp_path: Path,
) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(Spender(), "go", budget=Budget(cost_usd=1.00))
        assert (
            await question_of(manager, handle.run_id) == "budget: $0.80 of $1.00 spent; continue?"
        )
        assert model_calls(handle) == 4  # the fifth waits on the answer
        summary = summarize_ledger(handle.info().ledger_path or "")
        assert summary.status is RunStatus.AWAITING_APPROVAL
        assert summary.budget is not None
        assert summary.budget.state == "asking"
        manager.approve(handle.run_id, None, approved=True)
        # The limit grew by its first size: it asks again at $1.60 of $2.00.
        await until(lambda: len(asked(handle.info().ledger_path)) == 2)
        assert asked(handle.info().ledger_path)[1] == "budget: $1.60 of $2.00 spent; continue?"
        await until(lambda: handle.info().pending_approvals)
        manager.approve(handle.run_id, None, approved=False, reason="enough")
        with pytest.raises(RunCanceled, match=r"budget: \$1.60 of \$2.00 spent; not approved"):
            await handle.result()
    info = handle.info()
    assert info.status is Status.CANCELED
    assert model_calls(handle) == 8
    ended = events(info.ledger_path, "run_completed")[-1]["payload"]
    assert ended["reason"] == "budget"
    assert ended["error"] == "canceled: budget: $1.60 of $2.00 spent; not approved: enough"
    summary = summarize_ledger(info.ledger_path or "")
    assert summary.budget is not None
    assert (summary.budget.state, summary.budget.cost_usd) == ("denied", 2.0)
    assert summary.budget.spent is not None
    assert summary.budget.spent.model_calls == 8


async def test_a_run_at_its_limit_is_cancelled_before_its_next_model_call(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(Spender(cost=0.25), "go", budget=Budget(cost_usd=1.0, ask_at=None))
        with pytest.raises(RunCanceled, match=r"budget: \$1.00 of \$1.00 spent"):
            await handle.result()
    lines = events(handle.info().ledger_path)
    assert [line["type"] for line in lines].count("llm_call") == 4
    entered = [
        e for e in lines if e["type"] == "node_enter" and e["payload"]["node_id"][:4] == "llm:"
    ]
    assert len(entered) == 4  # the fifth call never started: not even sent
    assert lines[-1]["payload"]["error"] == "canceled: budget: $1.00 of $1.00 spent"
    assert asked(handle.info().ledger_path) == []  # ask_at=None never asks


async def test_a_child_run_spends_from_its_parents_budget(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        parent = Delegator(manager, Spender(cost=0.25))
        handle = manager.start(parent, "go", budget=Budget(cost_usd=1.0, ask_at=0.5))
        assert (
            await question_of(manager, handle.run_id) == "budget: $0.50 of $1.00 spent; continue?"
        )
        child = manager.get(parent.child_ids[0])
        assert model_calls(child) == 2
        assert child.info().status is Status.RUNNING  # waiting on its parent's question
        manager.approve(handle.run_id, None, approved=False)
        with pytest.raises(RunCanceled, match="budget"):
            await handle.result()
        await child.wait()
    assert child.info().status is Status.CANCELED
    assert model_calls(child) == 2
    assert "budget" in (child.info().error or "")
    spent = summarize_ledger(handle.info().ledger_path or "").budget
    assert spent is not None
    assert spent.spent is not None
    assert spent.spent.cost_usd == 0.5


async def test_the_managers_budget_is_every_runs_unless_a_start_gives_one(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path, budget=Budget(model_calls=3, ask_at=None)) as manager:
        limited = manager.start(Spender(), "go")
        wider = manager.start(Spender(calls=5), "go", budget=Budget(model_calls=10))
        with pytest.raises(RunCanceled, match="budget: 3 of 3 model calls spent"):
            await limited.result()
        assert await wider.result() == "5 calls"
    started = events(limited.info().ledger_path, "run_started")[0]["payload"]
    assert started["budget"] == {"model_calls": 3}


async def test_tokens_and_time_are_limits_too(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        tokens = manager.start(Spender(tokens=60_000), "go", budget=Budget(tokens=200_000))
        assert await question_of(manager, tokens.run_id) == (
            "budget: 180k of 200k tokens spent; continue?"
        )
        tokens.cancel("seen")
        slow = manager.start(Sleepy(), "go", budget=Budget(seconds=0.3, ask_at=None))
        with pytest.raises(RunCanceled, match=r"budget: 0.3s of 0.3s spent"):
            await slow.result()  # stopped in its tool call, not at the next call's start


class Sleepy:
    name = "sleepy"

    async def run(self, input: str) -> str:
        async with tool_call("sleep"):
            await asyncio.sleep(20)
        return "woke"


async def test_a_synchronous_agent_waits_on_its_question_in_its_thread(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(spending_function, "go", budget=Budget(cost_usd=1.0))
        assert (
            await question_of(manager, handle.run_id) == "budget: $0.80 of $1.00 spent; continue?"
        )
        manager.approve(handle.run_id, None, approved=True)
        await until(lambda: len(asked(handle.info().ledger_path)) == 2)
        manager.approve(handle.run_id, None, approved=True)
        assert await handle.result() == "done"  # ten calls: $2.00 of $3.00


@pytest.mark.parametrize(
    ("text", "budget"),
    [
        ("cost=1.00,tokens=200k", Budget(cost_usd=1.0, tokens=200_000)),
        ("cost=$0.50, calls=20, ask=off", Budget(cost_usd=0.5, model_calls=20, ask_at=None)),
        ("time=10m,ask=90%", Budget(seconds=600, ask_at=0.9)),
        ("cost=1.00,wait=10m", Budget(cost_usd=1.0, ask_timeout=600)),
    ],
)
def test_a_budget_reads_as_written(text: str, budget: Budget) -> None:
    assert Budget.parse(text) == budget


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("cots=1", "'cots' is not a limit (did you mean cost?)"),
        ("cost=lots", "'lots' is not an amount of dollars like 1.00 (for cost)"),
        ("tokens", "expected NAME=VALUE"),
        ("ask=0.5", "sets no limit"),
        ("cost=1,ask=2", "ask_at must be between 0 and 1"),
        ("cost=0", "cost_usd must be a number above 0"),
        ("cost=1,wait=soon", "'soon' is not a time span"),
        ("cost=1,wait=0s", "ask_timeout must be a number of seconds above 0"),
        ("cost=1,wiat=1m", "'wiat' is not a limit (did you mean wait?)"),
    ],
)
def test_a_budget_that_cannot_be_read_says_why(text: str, said: str) -> None:
    with pytest.raises(BadBudget, match=re.escape(said)):
        Budget.parse(text)


async def test_a_child_takes_no_default_budget_under_a_budgeted_parent(tmp_path: Path) -> None:
    default = Budget(model_calls=100, ask_at=None)
    async with Manager(ledger_dir=tmp_path, budget=default) as manager:
        parent = Delegator(manager, Spender(calls=3))
        handle = manager.start(parent, "go")
        assert await handle.result() == "3 calls"
        child = manager.get(parent.child_ids[0])
    assert events(handle.info().ledger_path, "run_started")[0]["payload"]["budget"]
    assert "budget" not in events(child.info().ledger_path, "run_started")[0]["payload"]
    budget = handle.info().budget
    assert budget is not None
    assert budget.spent is not None
    assert budget.spent.model_calls == 3  # the child's calls, spent from its parent's budget


async def test_a_resumed_run_has_the_budget_it_was_given(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path, agents=[Spender()]) as manager:
        first = manager.start(Spender(), "go", budget=Budget(model_calls=2, ask_at=None))
        with pytest.raises(RunCanceled, match="budget"):
            await first.result()
        again = manager.resume(first.run_id)  # from memory
        with pytest.raises(RunCanceled, match="budget: 2 of 2 model calls spent"):
            await again.result()
    async with Manager(ledger_dir=tmp_path, agents=[Spender()]) as other:
        from_ledger = other.resume(first.run_id)  # from its ledger: the budget it recorded
        with pytest.raises(RunCanceled, match="budget: 2 of 2 model calls spent"):
            await from_ledger.result()


async def test_a_question_unanswered_for_its_timeout_is_denied(tmp_path: Path) -> None:
    """A budget's question waited as long as the run lived: a run asked at night spent
    nothing more, and held its place, until someone came. With ``ask_timeout`` it is
    denied when the time is up, and the run is canceled saying so."""
    budget = Budget(cost_usd=1.00, ask_timeout=0.2)
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(Spender(), "go", budget=budget)
        said = r"budget: \$0.80 of \$1.00 spent; not approved: no answer in 0.2s"
        with pytest.raises(RunCanceled, match=said):
            await handle.result()
    lines = events(handle.info().ledger_path)
    started = lines[0]["payload"]["budget"]
    assert started["ask_timeout"] == 0.2
    request = next(line for line in lines if line["type"] == "approval_request")
    assert request["payload"]["timeout_seconds"] == 0.2
    assert model_calls(handle) == 4
    assert handle.info().budget is not None
    assert handle.info().budget.state == "denied"


def test_a_budget_with_no_timeout_waits_for_its_answer() -> None:
    with pytest.raises(BadBudget, match="ask_timeout must be a number of seconds above 0"):
        Budget(cost_usd=1.0, ask_timeout=-1)
    assert Budget(cost_usd=1.0).ask_timeout is None
