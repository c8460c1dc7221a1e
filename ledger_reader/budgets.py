"""A run's budget in words: ``$0.80 of $1.00``, ``160k of 200k tokens``.

The run manager asks and cancels in these words (``budget: $0.80 of $1.00 spent;
continue?``), and the app and ``runtop show`` say a run's budget in them, so the
question a run asks reads as its header does.
"""

from __future__ import annotations

from typing import Final

from ledger_reader.events import BudgetLimits, BudgetSpent
from ledger_reader.timespan import duration

LIMITS: Final = ("cost_usd", "tokens", "model_calls", "seconds")
"""The limits a budget may set, each named as :class:`BudgetLimits` and
:class:`BudgetSpent` name them."""


def dollars(usd: float, limit: float) -> str:
    """``$0.80``: cents, or four decimals where the limit is under a dime."""
    return f"${usd:,.2f}" if limit >= 0.1 else f"${usd:.4f}"


def count_words(value: float) -> str:
    """``950``, ``1.2k``, ``160k``, ``1.5M``."""
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{round(value / size, 1):g}{unit}"
    return f"{value:g}"


def spent_of(name: str, spent: float, limit: float) -> str:
    """One limit and what was spent of it: ``$0.80 of $1.00``, ``160k of 200k tokens``,
    ``8 of 10 model calls``, ``48s of 1m00s``."""
    if name == "cost_usd":
        return f"{dollars(spent, limit)} of {dollars(limit, limit)}"
    if name == "tokens":
        return f"{count_words(spent)} of {count_words(limit)} tokens"
    if name == "model_calls":
        return f"{spent:g} of {limit:g} model calls"
    return f"{duration(spent)} of {duration(limit)}"


def limit_words(name: str, limit: float) -> str:
    """One limit alone: ``$1.00``, ``200k tokens``, ``10 model calls``, ``10m00s``."""
    if name == "cost_usd":
        return dollars(limit, limit)
    if name == "tokens":
        return f"{count_words(limit)} tokens"
    if name == "model_calls":
        return f"{limit:g} model calls"
    return duration(limit)


def limits_of(budget: BudgetLimits) -> dict[str, float]:
    """The limits a budget sets, by name (those it leaves out are none)."""
    found = ((name, getattr(budget, name)) for name in LIMITS)
    return {name: float(value) for name, value in found if value is not None}


def budget_words(budget: BudgetLimits, spent: BudgetSpent | None) -> str:
    """Every limit of ``budget`` with what was spent of it, one after another."""
    said = []
    for name, limit in limits_of(budget).items():
        value = getattr(spent, name, None) if spent is not None else None
        said.append(spent_of(name, float(value or 0), limit))
    return ", ".join(said)


__all__ = [
    "LIMITS",
    "budget_words",
    "count_words",
    "dollars",
    "limit_words",
    "limits_of",
    "spent_of",
]
