"""How fast runs spend: cost and tokens per minute over the last minute, and the time
left to a run's budget at that rate.

Each run keeps its model calls of the last minute (:class:`RecentCalls`, folded with
its events in :class:`~inspector.model.RunExtras`); :func:`burn_of` makes a run's rate
of them over the minute before ``now`` (or since the run started, if later),
:func:`total` adds runs' rates, and :func:`time_to_budget` says which limit of a budget
that rate reaches first, and when.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, NamedTuple

from ledger_reader import LlmCall, parse_time
from ledger_reader.budgets import limits_of
from ledger_reader.events import BudgetState

WINDOW: Final = 60.0
"""Seconds the burn rate is taken over: the last minute."""
SHORTEST: Final = 1.0
"""Seconds a rate is taken over at least: a run's first call, a moment after its start,
does not make a rate thousands of times what it spent. No more than a second: a run that
spent $0.20 in its first 2 s spends $6 a minute, and its budget of $1.00 is 8 s away, not
the 20 s a longer floor would say (a runaway is young when it matters most)."""
KEPT: Final = 1000
"""Model calls of the last minute a run keeps at most (a run calling faster is rare, and
its rate is then what the newest 1,000 say)."""


class RecentCall(NamedTuple):
    """One model call, as the burn rate counts it."""

    at: float
    """When it ended (POSIX seconds: its ``llm_call``'s time)."""
    cost_usd: float | None
    tokens: int


class Burn(NamedTuple):
    """What runs spent over the last minute: their rate per minute."""

    cost_usd: float = 0.0
    tokens: int = 0
    model_calls: int = 0
    cost_said: bool = False
    """Some call of the minute said what it cost (else the cost rate is unknown, not $0)."""

    @property
    def spending(self) -> bool:
        return self.model_calls > 0


class RecentCalls:
    """A run's model calls of the last minute before its newest one, oldest first."""

    __slots__ = ("calls",)

    def __init__(self) -> None:
        self.calls: list[RecentCall] = []

    def add(self, event: LlmCall) -> None:
        moment = parse_time(event.time)
        if moment is None:
            return
        at = moment.timestamp()
        newest = self.calls[-1].at if self.calls else at
        if at < newest - WINDOW:
            return  # a call of the run's history, folded after its live ones
        p = event.payload
        tokens = (p.prompt_tokens or 0) + (p.output_tokens or 0)
        call = RecentCall(at, p.cost_usd, tokens)
        if at >= newest:
            self.calls.append(call)
        else:
            self.calls.insert(_place(self.calls, at), call)
        first = self.calls[-1].at - WINDOW
        while self.calls and (self.calls[0].at < first or len(self.calls) > KEPT):
            self.calls.pop(0)


def _place(calls: list[RecentCall], at: float) -> int:
    for index in range(len(calls) - 1, -1, -1):
        if calls[index].at <= at:
            return index + 1
    return 0


def burn_of(calls: tuple[RecentCall, ...], now: float, started: float | None = None) -> Burn:
    """A run's rate per minute over the minute before ``now``, or since it ``started``
    where that is sooner (a run 10 s old that spent $0.10 spends $0.60 a minute), taken
    over :data:`SHORTEST` seconds at least."""
    since = now - WINDOW if started is None else max(now - WINDOW, started)
    cost, tokens, count, said = 0.0, 0, 0, False
    for call in reversed(calls):
        if call.at < since:
            break
        if call.at > now:
            continue
        count += 1
        tokens += call.tokens
        if call.cost_usd is not None:
            cost += call.cost_usd
            said = True
    scale = WINDOW / max(SHORTEST, now - since)
    return Burn(cost * scale, round(tokens * scale), round(count * scale), said)


def total(burns: Iterable[Burn]) -> Burn:
    """The rates of several runs together."""
    cost, tokens, count, said = 0.0, 0, 0, False
    for burn in burns:
        cost += burn.cost_usd
        tokens += burn.tokens
        count += burn.model_calls
        said = said or burn.cost_said
    return Burn(cost, tokens, count, said)


def time_to_budget(
    budget: BudgetState, burn: Burn, elapsed: float | None
) -> tuple[str, float] | None:
    """The limit of ``budget`` that the rate ``burn`` reaches first, and in how many
    seconds; ``None`` where no limit is reached at that rate (nothing spent this minute,
    and no time limit). ``elapsed``: how long the run has lasted (for a time limit)."""
    spent = budget.spent
    rates = {
        "cost_usd": burn.cost_usd if burn.cost_said else 0.0,
        "tokens": float(burn.tokens),
        "model_calls": float(burn.model_calls),
    }
    soonest: tuple[str, float] | None = None
    for name, limit in limits_of(budget).items():
        if name == "seconds":
            if elapsed is None:
                continue
            left = max(0.0, limit - elapsed)
        else:
            rate = rates[name] / WINDOW
            if rate <= 0:
                continue
            used = float(getattr(spent, name, None) or 0) if spent is not None else 0.0
            left = max(0.0, limit - used) / rate
        if soonest is None or left < soonest[1]:
            soonest = (name, left)
    return soonest


__all__ = [
    "KEPT",
    "SHORTEST",
    "WINDOW",
    "Burn",
    "RecentCall",
    "RecentCalls",
    "burn_of",
    "time_to_budget",
    "total",
]
