"""How fast runs spend and what is left of a budget, in words, for the run's header and the
source line: ``$0.24/min 12k tok/min``, ``budget $0.80 of $1.00, asking; $1.00 in 50s``.

The budget's figures are said as the run manager says them in the question it asks
(:mod:`ledger_reader.budgets`), so the header reads as the question does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from inspector import RunView
from inspector.burn import Burn, burn_of, time_to_budget, total
from inspector.ledger import BudgetSpent, budget_words, duration, limit_words, limits_of
from tui.text import cost, inert, tokens

_STATES: Final = {
    "asking": "asking to go on",
    "exceeded": "limit reached",
    "denied": "not approved",
}
"""What a budget's state says beside its figures (``ok`` says nothing)."""


def burn_said(burn: Burn) -> str:
    """``$0.24/min 12.0k tok/min``: how fast runs spent over the last minute; nothing when
    they made no model call in it. A cost no call said is left out, never ``$0``."""
    if not burn.spending:
        return ""
    said = f"{tokens(burn.tokens)} tok/min"
    return f"{cost(burn.cost_usd)}/min {said}" if burn.cost_said else said


def runs_burn(runs: Iterable[RunView], now: float) -> Burn:
    """How fast the live ones of ``runs`` spend, each over the minute before ``now`` (or
    since it started): a run that ended spends nothing more."""
    return total(
        burn_of(run.recent_calls, now, run.started_at)
        for run in runs
        if run.recent_calls and run.live
    )


def spending_said(runs: Iterable[RunView], now: float) -> str:
    """The source line's: what ``runs`` spent over the last minute, and how soon the
    first of their budgets is reached at its run's rate (``$0.24/min 12.0k tok/min, a
    budget in 50s``); nothing while none of them spends."""
    shown = list(runs)
    said = burn_said(runs_burn(shown, now))
    soonest: float | None = None
    for run in shown:
        budget = run.summary.budget
        if budget is None or not run.live or budget.state not in (None, "ok"):
            continue
        reached = time_to_budget(budget, runs_burn((run,), now), run.duration(now))
        if reached is not None and (soonest is None or reached[1] < soonest):
            soonest = reached[1]
    if soonest is not None:
        said = (
            f"{said}, a budget in {duration(soonest)}"
            if said
            else f"a budget in {duration(soonest)}"
        )
    return said


def budget_said(run: RunView, burn: Burn, now: float) -> str:
    """``budget $0.80 of $1.00, asking to go on; $1.00 in 50s at this rate``: a budgeted
    run's budget as it stands (its time spent counted to ``now`` while it runs), and when
    the rate of its last minute reaches its first limit; nothing for a run without one."""
    budget = run.summary.budget
    if budget is None:
        return ""
    elapsed = run.duration(now)
    spent = budget.spent or BudgetSpent()
    if elapsed is not None and "seconds" in limits_of(budget):
        spent = BudgetSpent(
            cost_usd=spent.cost_usd,
            tokens=spent.tokens,
            model_calls=spent.model_calls,
            seconds=elapsed,
        )
    said = f"budget {budget_words(budget, spent)}"
    state = _STATES.get(budget.state or "")
    if state and (budget.state != "asking" or run.live):  # an ended run asks nothing
        said += f", {state}"
    if run.live and budget.state in (None, "ok"):
        reached = time_to_budget(budget, burn, elapsed)
        if reached is not None:
            name, seconds = reached
            limit = limit_words(name, float(getattr(budget, name) or 0))
            said += f"; {limit} in {duration(seconds)} at this rate"
    return inert(said, single_line=True)


__all__ = ["budget_said", "burn_said", "runs_burn", "spending_said"]
