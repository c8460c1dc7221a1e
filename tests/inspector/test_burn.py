"""How fast runs spend, and when a budget is reached at that rate: the figures."""

from __future__ import annotations

from inspector.burn import Burn, RecentCall, RecentCalls, burn_of, time_to_budget, total
from ledger_reader import LlmCall
from ledger_reader.events import BudgetSpent, BudgetState, LlmCallPayload

NOW = 1_800_000_000.0


def call(at: float, cost: float | None = 0.1, tokens: int = 1000) -> RecentCall:
    return RecentCall(NOW + at, cost, tokens)


def test_the_rate_is_the_last_minutes_spending() -> None:
    calls = (call(-90), call(-50), call(-20), call(-1))  # the first is over a minute ago
    assert burn_of(calls, NOW) == Burn(0.30000000000000004, 3000, 3, True)


def test_a_run_younger_than_a_minute_spends_at_its_own_pace() -> None:
    calls = (call(-8), call(-4))  # $0.20 in the 10 s since it started: $1.20 a minute
    burn = burn_of(calls, NOW, started=NOW - 10)
    assert (round(burn.cost_usd, 6), burn.tokens, burn.model_calls) == (1.2, 12_000, 12)


def test_a_young_run_spending_fast_is_said_at_its_pace_and_its_budget_as_near() -> None:
    """The demo's translator, $0.10 every 0.5 s: at 2 s the source line said $2.52 a minute
    and a budget in 20 s; it was reached 4 s later (walk finding)."""
    calls = (call(-1.5), call(-1.0), call(-0.5), call(0.0))  # $0.40 in the 2 s since it started
    burn = burn_of(calls, NOW, started=NOW - 2)
    assert round(burn.cost_usd, 6) == 12.0
    budget = BudgetState(cost_usd=1.0, spent=BudgetSpent(cost_usd=0.4))
    reached = time_to_budget(budget, burn, elapsed=2.0)
    assert reached is not None
    assert reached[0] == "cost_usd"
    assert round(reached[1], 6) == 3.0  # $0.60 left at $0.20 a second


def test_a_cost_no_call_said_is_unknown_not_nothing() -> None:
    assert not burn_of((call(-5, cost=None),), NOW).cost_said
    runs = [burn_of((call(-5, cost=None),), NOW), burn_of((call(-5),), NOW)]
    assert total(runs).cost_said


def test_the_first_limit_reached_at_that_rate_and_when() -> None:
    budget = BudgetState(
        cost_usd=1.0, tokens=100_000, spent=BudgetSpent(cost_usd=0.4, tokens=10_000)
    )
    rate = Burn(cost_usd=0.6, tokens=6000, model_calls=6, cost_said=True)
    assert time_to_budget(budget, rate, elapsed=30.0) == ("cost_usd", 60.0)  # $0.60 left
    timed = BudgetState(seconds=45.0, tokens=100_000, spent=BudgetSpent(tokens=10_000))
    assert time_to_budget(timed, rate, elapsed=30.0) == ("seconds", 15.0)
    assert time_to_budget(budget, Burn(), elapsed=30.0) is None  # spending nothing


def test_a_run_keeps_only_its_last_minute_of_calls_in_any_order() -> None:
    recent = RecentCalls()
    for seconds in (0, 100, 50, 130):  # a history call folded after the live ones
        moment = f"2027-01-15T08:00:{seconds % 60:02d}Z" if seconds < 60 else None
        time = moment or f"2027-01-15T08:0{seconds // 60}:{seconds % 60:02d}Z"
        recent.add(LlmCall(time=time, payload=LlmCallPayload(cost_usd=0.1, prompt_tokens=5)))
    assert [round(c.at) % 3600 for c in recent.calls] == [100, 130]
