"""Budgets: what a run may spend, asked about before it is spent, enforced when it is.

A :class:`Budget` given to a run (``Manager(budget=...)``, ``start(..., budget=...)``)
becomes its :class:`BudgetAccount`, which every model call of the run, and of its
child runs, spends from. It is checked when each model and tool call starts
(:func:`gate`, :func:`gate_blocking`) and while a model's answer streams in
(:func:`check_budgets`):

- at ``ask_at`` of a limit the run asks, through the same approval gates as
  :func:`~run_manager.approval`, ``budget: $0.80 of $1.00 spent; continue?``;
  the call waits for the answer. Approved, the limit grows by its first size (and
  the run asks again at ``ask_at`` of the new one); denied, the run is cancelled
  with a reason that begins ``budget``;
- at a limit the run is cancelled: ``budget: $1.00 of $1.00 spent``.

Each change is written to the run's ledger as ``budget_updated`` (its limits as they
stand, what was spent, its state), so readers say a budget as the manager sees it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import difflib
import math
import time
from collections.abc import Mapping
from typing import Any, Final, Protocol

import msgspec

from ledger_reader import quantities
from ledger_reader.budgets import LIMITS, spent_of
from ledger_reader.events import (
    BudgetLimits,
    BudgetSpent,
    BudgetState,
    BudgetUpdated,
    LlmCallPayload,
)
from ledger_reader.timespan import duration
from ledger_reader.totals import RunTotals
from run_manager.agents import AgentEvent, Canceled, CancelToken, ModelRequest, ToolCallEvent

SLACK: Final = 1e-9
"""What a sum of floats may fall short of a limit by and still reach it (0.1 + 0.7)."""

_NAMES: Final = {"cost": "cost_usd", "tokens": "tokens", "calls": "model_calls", "time": "seconds"}
"""``serve --budget``'s words for the limits; ``ask`` is ``ask_at``, ``wait`` ``ask_timeout``."""
_SETTINGS: Final = {"ask": "ask_at", "wait": "ask_timeout"}
"""``serve --budget``'s words for how the budget asks."""


class BudgetedRun(Protocol):
    """What a budget needs of a run (the manager's :class:`~run_manager.run.Run`)."""

    budgets: tuple[BudgetAccount, ...]
    """The budgets its calls spend from: its own, then its parent's (and theirs)."""
    cancel_kind: Any
    """Why it was asked to stop, once it was (``None`` before)."""
    token: CancelToken
    loop: asyncio.AbstractEventLoop
    done: asyncio.Future[None]

    def emit(self, event_type: type[Any], payload: Any) -> Any:
        """Write and publish one event."""

    def request_approval(
        self, prompt: str, *, name: str = ..., timeout: float | None = ...
    ) -> concurrent.futures.Future[Any]:
        """Open an approval gate; its future resolves with the decision."""

    def stop_for_budget(self, reason: str) -> bool:
        """Cancel the run, its budget spent (``run_completed.reason``: ``budget``)."""


class BadBudget(ValueError):
    """A budget that cannot be read or makes no sense, said for the user."""


@dataclasses.dataclass(frozen=True, slots=True)
class Budget:
    """What a run (with its child runs) may spend; a limit left ``None`` is none.

    Args:
        cost_usd: dollars its model calls may cost (as they report it; the Agents SDK's
            are estimated from their tokens).
        tokens: tokens its model calls may send and answer with.
        model_calls: model calls it may make.
        seconds: seconds it may last.
        ask_at: the share of a limit at which the run asks whether to go on (``0.8``:
            at $0.80 of $1.00); ``None`` never asks, and the run stops at the limit.
        ask_timeout: seconds the question waits for an answer: unanswered, it is denied
            and the run canceled (``budget: … not approved: no answer in 10m00s``);
            ``None`` waits as long as the run lives.

    Raises:
        BadBudget: a limit that is not above 0, ``ask_at`` not between 0 and 1, or
            ``ask_timeout`` not above 0.
    """

    cost_usd: float | None = None
    tokens: int | None = None
    model_calls: int | None = None
    seconds: float | None = None
    ask_at: float | None = 0.8
    ask_timeout: float | None = None

    def __post_init__(self) -> None:
        for name in LIMITS:
            value = getattr(self, name)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if value is not None and not (number and 0 < value < math.inf):
                raise BadBudget(f"{name} must be a number above 0, not {value!r}")
        ask = self.ask_at
        if ask is not None and (not isinstance(ask, int | float) or isinstance(ask, bool)):
            raise BadBudget(f"ask_at must be a number between 0 and 1, not {ask!r}")
        if self.ask_at is not None and not 0 < self.ask_at < 1:
            raise BadBudget(f"ask_at must be between 0 and 1 (0.8 asks at 80%), not {self.ask_at}")
        wait = self.ask_timeout
        number = isinstance(wait, int | float) and not isinstance(wait, bool)
        if wait is not None and not (number and 0 < wait < math.inf):
            raise BadBudget(f"ask_timeout must be a number of seconds above 0, not {wait!r}")

    @classmethod
    def parse(cls, text: str) -> Budget:
        """``cost=1.00,tokens=200k,calls=50,time=10m,ask=0.8,wait=10m``: any of them
        (``ask=off`` never asks; ``wait``: how long a question waits for its answer), as
        ``runtop serve --budget`` takes it.

        Raises:
            BadBudget: a part that is not one of these, or a value that is not an amount.
        """
        given: dict[str, float | None] = {}
        for part in text.split(","):
            word, equals, value = part.strip().partition("=")
            word = word.strip().lower()
            if not equals or not value.strip():
                raise BadBudget(f"{part.strip()!r}: expected NAME=VALUE, {_GRAMMAR}")
            if word not in (*_NAMES, *_SETTINGS):
                close = difflib.get_close_matches(word, [*_NAMES, *_SETTINGS], n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                raise BadBudget(f"{word!r} is not a limit{hint}: {_GRAMMAR}")
            try:
                given[_NAMES.get(word) or _SETTINGS[word]] = _amount(word, value)
            except quantities.BadQuantity as error:
                raise BadBudget(f"{error} (for {word})") from None
        if not any(name in given for name in LIMITS):
            raise BadBudget(f"{text.strip()!r} sets no limit: {_GRAMMAR}")
        return cls(
            **_counted(given),
            ask_at=given.get("ask_at", 0.8),
            ask_timeout=given.get("ask_timeout"),
        )

    def limits(self) -> BudgetLimits:
        """The budget as the ledger's ``run_started`` records it (the same fields)."""
        return BudgetLimits(**dataclasses.asdict(self))

    @classmethod
    def of(cls, limits: BudgetLimits) -> Budget:
        """The budget a ledger recorded (to re-issue its run with it)."""
        return cls(**msgspec.structs.asdict(limits))


_GRAMMAR: Final = (
    "cost=DOLLARS, tokens=N[k|M], calls=N, time=N[s|m|h], ask=0.8 or ask=off, wait=N[s|m|h]"
)


def _counted(limits: Mapping[str, float | None]) -> dict[str, Any]:
    """Limits by name, each of :data:`LIMITS` (``None`` where not set), tokens and model
    calls as whole numbers."""
    counted: dict[str, Any] = {name: limits.get(name) for name in LIMITS}
    for name in ("tokens", "model_calls"):
        if counted[name] is not None:
            counted[name] = int(counted[name])
    return counted


def _amount(word: str, value: str) -> float | None:
    if word == "cost":
        return quantities.usd(value)
    if word in ("tokens", "calls"):
        return quantities.count(value)
    if word in ("time", "wait"):
        return quantities.seconds(value)
    said = value.strip().lower()
    if said in ("off", "never", "none"):
        return None
    if said.endswith("%"):
        return quantities.usd(said[:-1]) / 100
    return quantities.usd(said)


class BudgetAccount:
    """One budget as it is spent: given to its ``owner`` run, spent by it and its children.

    Lives on the owner's event loop; a synchronous agent's thread reads it and waits on
    its question, and spends from it through the run (whose emits are thread-safe).
    """

    def __init__(self, budget: Budget, owner: BudgetedRun) -> None:
        self.budget = budget
        self.owner = owner
        self.limits: dict[str, float] = {
            name: float(getattr(budget, name))
            for name in LIMITS
            if getattr(budget, name) is not None
        }
        self.first = dict(self.limits)
        """Each limit's first size: what an approval grows it by."""
        self.totals = RunTotals()
        self.model_calls = 0
        self.started = time.monotonic()
        self.state = "ok"
        self.asked: set[str] = set()
        """The limits asked about at their present size (asked once per size)."""
        self.question: concurrent.futures.Future[Any] | None = None
        """The question the run waits on to go on, while it is asked."""
        self.denied: str | None = None
        """Why the run was stopped, once it was: a limit reached, or a question denied."""
        self.ended: float | None = None
        """When its owner ended (its time stops counting)."""
        self._timer: asyncio.TimerHandle | None = None

    # -- what was spent ------------------------------------------------------------

    def spent(self, in_flight: RunTotals | None = None) -> dict[str, float]:
        """What was spent of each limit, with what the call in flight has reported so far."""
        totals = self.totals
        cost, tokens = totals.cost_usd or 0.0, totals.tokens or 0
        if in_flight is not None:
            cost += in_flight.cost_usd or 0.0
            tokens += in_flight.tokens or 0
        return {
            "cost_usd": cost,
            "tokens": float(tokens),
            "model_calls": float(self.model_calls),
            "seconds": (self.ended or time.monotonic()) - self.started,
        }

    def add(self, call: LlmCallPayload) -> None:
        """A model call of the owner or of a child run ended: it spent this."""
        self.totals.add_call(call)
        self.model_calls += 1
        self.record()

    # -- checking ------------------------------------------------------------------

    def check(self, in_flight: RunTotals | None = None) -> None:
        """Stop the run at a limit; ask at ``ask_at`` of one (once for each size)."""
        if self.denied is not None:
            return
        spent = self.spent(in_flight)
        reached = [name for name, limit in self.limits.items() if spent[name] >= limit - SLACK]
        asking = self.question is not None and not self.question.done()
        if reached and not (asking and "seconds" in self.asked and reached == ["seconds"]):
            # A question on the time spent holds the run until it is answered.
            self.stop("exceeded", reached, spent)
            return
        ask_at = self.budget.ask_at
        if ask_at is None or asking:
            return
        due = [
            name
            for name, limit in self.limits.items()
            if name not in self.asked and spent[name] >= ask_at * limit - SLACK
        ]
        if due:
            self.ask(due, spent)

    def ask(self, names: list[str], spent: dict[str, float]) -> None:
        """Ask whether to go on past ``names``; the calls wait for the answer."""
        self.asked.update(names)
        self.state = "asking"
        words = ", ".join(spent_of(name, spent[name], self.limits[name]) for name in names)
        question = self.owner.request_approval(
            f"budget: {words} spent; continue?", name="budget", timeout=self.budget.ask_timeout
        )
        self.question = question
        self.record(limit=names[0])
        question.add_done_callback(lambda done: self._answered(done, names, words))

    def _answered(
        self, question: concurrent.futures.Future[Any], names: list[str], words: str
    ) -> None:
        if question.cancelled() or self.denied is not None:
            return
        decision = question.result()
        if decision.approved:
            for name in names:
                self.limits[name] += self.first[name]
                self.asked.discard(name)
            self.state = "ok"
            self.record()
            self.owner.loop.call_soon_threadsafe(self.arm)
            return
        why = f": {decision.reason}" if decision.reason else ""
        if decision.source == "timeout" and self.budget.ask_timeout is not None:
            why = f": no answer in {duration(self.budget.ask_timeout)}"
        self.deny(f"budget: {words} spent; not approved{why}", names[0], "denied")

    def stop(self, state: str, names: list[str], spent: dict[str, float]) -> None:
        """A limit is reached: the run is cancelled, saying which."""
        words = ", ".join(spent_of(name, spent[name], self.limits[name]) for name in names)
        self.deny(f"budget: {words} spent", names[0], state)

    def deny(self, reason: str, limit: str, state: str) -> None:
        self.denied = reason
        self.state = state
        self.record(limit=limit)
        self.owner.stop_for_budget(reason)

    # -- the time limit ----------------------------------------------------------

    def arm(self) -> None:
        """Check again when the time spent reaches ``ask_at`` of its limit, or the limit."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        limit = self.limits.get("seconds")
        if limit is None or self.denied is not None:
            return
        elapsed = time.monotonic() - self.started
        moments = [limit]
        if self.budget.ask_at is not None and "seconds" not in self.asked:
            moments.append(self.budget.ask_at * limit)
        ahead = [moment - elapsed for moment in moments if moment > elapsed]
        wait = min(ahead) if ahead else 0.0
        self._timer = self.owner.loop.call_later(wait + 0.001, self._time_check)

    def _time_check(self) -> None:
        self._timer = None
        if self.owner.done.done():
            return
        self.check()
        self.arm()

    def close(self) -> None:
        """The owner ended: its time stops counting, and is checked no more."""
        self.ended = time.monotonic()
        if self.state == "asking":  # its question went with it
            self.state = "ok"
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- the ledger ----------------------------------------------------------------

    def record(self, *, limit: str | None = None) -> None:
        """Write the budget as it stands to the owner's ledger (``budget_updated``)."""
        self.owner.emit(BudgetUpdated, self.now(limit=limit))

    def now(self, *, limit: str | None = None) -> BudgetState:
        """The budget as it stands: its limits now, what was spent, its state."""
        spent = self.spent()
        return BudgetState(
            **_counted(self.limits),
            ask_at=self.budget.ask_at,
            ask_timeout=self.budget.ask_timeout,
            spent=BudgetSpent(
                cost_usd=round(spent["cost_usd"], 10) if self.totals.cost_usd is not None else None,
                tokens=int(spent["tokens"]),
                model_calls=self.model_calls,
                seconds=round(spent["seconds"], 3),
            ),
            state=self.state,
            limit=limit,
        )


# -- checks at the calls ---------------------------------------------------------------


def check_budgets(run: BudgetedRun, in_flight: RunTotals | None = None) -> None:
    """Check ``run``'s budgets now, without waiting: stop at a limit, ask at ``ask_at``.

    For where a call cannot wait (a model's answer streaming in, a synchronous block on
    the event loop): a question asked here is waited on at the next call's start.
    """
    for account in run.budgets:
        account.check(in_flight)
        if account.denied is not None and run.cancel_kind is None:
            # A parent's budget is spent: its child stops too, for the same reason.
            run.stop_for_budget(account.denied)


def starts_a_call(event: AgentEvent) -> bool:
    """Whether a streamed agent event starts a model or tool call (checked before it)."""
    if isinstance(event, ModelRequest):
        return True
    return isinstance(event, ToolCallEvent) and event.status in ("starting", "executing")


def _waiting_on(run: BudgetedRun) -> concurrent.futures.Future[Any] | None:
    for account in run.budgets:
        if account.question is not None and not account.question.done():
            return account.question
    return None


async def gate(run: BudgetedRun) -> None:
    """Before a model or tool call starts: check the budgets, wait on a question they ask,
    and stop here (``CancelledError``) if the run is cancelled for them."""
    if not run.budgets:
        return
    while True:
        check_budgets(run)
        if run.cancel_kind is not None:
            await _stopped(run)
        question = _waiting_on(run)
        if question is None:
            return
        # Shielded: a task of the agent's being cancelled must not cancel the question.
        await asyncio.shield(asyncio.wrap_future(question))


def gate_blocking(run: BudgetedRun) -> None:
    """:func:`gate` for a synchronous agent in its thread (blocks it).

    Raises:
        Canceled: the run was cancelled (for its budget, or otherwise).
    """
    if not run.budgets:
        return
    while True:
        check_budgets(run)
        if run.cancel_kind is not None:
            raise Canceled(run.token.reason or "canceled")
        question = _waiting_on(run)
        if question is None:
            return
        try:
            question.result()
        except concurrent.futures.CancelledError:
            raise Canceled(run.token.reason or "canceled") from None


def gate_sync(run: BudgetedRun) -> None:
    """:func:`gate` for a ``with`` block: in a synchronous agent's thread it waits
    (:func:`gate_blocking`); on the event loop, which must not wait, a limit reached
    stops the run here and a question asked is waited on at the next call's start.

    Raises:
        Canceled: the run was cancelled.
    """
    if not run.budgets:
        return
    try:
        on_loop = asyncio.get_running_loop() is run.loop
    except RuntimeError:
        on_loop = False
    if not on_loop:
        gate_blocking(run)
        return
    check_budgets(run)
    if run.cancel_kind is not None:
        raise Canceled(run.token.reason or "canceled")


async def _stopped(run: BudgetedRun) -> None:
    """Wait until the cancel reaches this task (the run's, or one of its agent's); a task
    it never reaches stops here once the run has ended."""
    await asyncio.shield(run.done)
    raise asyncio.CancelledError(run.token.reason)


__all__ = [
    "BadBudget",
    "Budget",
    "BudgetAccount",
    "check_budgets",
    "gate",
    "gate_blocking",
    "gate_sync",
    "starts_a_call",
]
