"""What a run's model calls add up to: the one fold of tokens and cost.

``runtop ls`` and the attach server read it from a run's summary
(:class:`~ledger_reader.summary.SummaryBuilder`), the app from the events its store
folds (:class:`inspector.model.RunExtras`), ``runtop show`` from either: all through
:meth:`RunTotals.add_call`, so they cannot disagree. A run's child runs (and theirs) are
added to its own by :func:`family_totals` (``ls``, ``show``, ``stats``) or, one family at
a time as runs change, :meth:`RunTotals.add` (the app's store): a parent's total, beside
its own.

To count one more figure of a model call: a field here named as the ``llm_call``
payload's, and the same field on :class:`~ledger_reader.summary.RunSummary` (what
``ls --json`` prints and the server sends). Nothing else: the fold, the copies to and
from a summary and the app's view go by the fields' names. ``model_calls``, the one
figure no call says of itself, is counted here too: the filter's ``calls:`` reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, Protocol, TypeVar

import msgspec

from ledger_reader.events import LlmCallPayload


class RunTotals(msgspec.Struct):
    """A run's model calls summed; a figure no call said stays ``None``: unknown, not 0.

    Only adds up, so calls may be folded in any order (the app folds a live run's calls
    as they land and its earlier ones later).
    """

    prompt_tokens: int | None = None
    """Tokens the run's model calls were sent."""
    output_tokens: int | None = None
    """Tokens they answered with."""
    cost_usd: float | None = None
    """What they cost (``0.0``: said to be free)."""
    cache_read_tokens: int | None = None
    """The part of ``prompt_tokens`` read from the provider's prompt cache."""
    cache_write_tokens: int | None = None
    """The part of ``prompt_tokens`` written to it."""
    model_calls: int | None = None
    """The model calls counted; ``None`` when none was (a run read whole says ``0``:
    :meth:`~ledger_reader.summary.SummaryBuilder.summary`)."""
    partial: bool = False
    """Not every model call was read: the run's ledger was summarised from its head and
    tail (:attr:`~ledger_reader.summary.RunSummary.partial`, whose figures are then
    ``None``), or its events are not all folded yet, or a child run's were not (:meth:`add`
    carries it up). The figures said are then a floor, never the whole."""

    def add_call(self, call: LlmCallPayload) -> None:
        """Count one model call (what it did not say stays unsaid)."""
        for name in SAID:
            value = getattr(call, name)
            if value is not None:
                setattr(self, name, (getattr(self, name) or 0) + value)
        self.model_calls = (self.model_calls or 0) + 1

    def add(self, other: RunTotals) -> None:
        """Count another run's totals in: a child run's in its parent's (what neither
        said stays unsaid; its model calls too). A total with a run's that is
        :attr:`partial` is partial too: what that run's unread calls spent is not in it."""
        for name in FIGURES:
            value = getattr(other, name)
            if value is not None:
                setattr(self, name, (getattr(self, name) or 0) + value)
        self.partial = self.partial or other.partial

    @property
    def tokens(self) -> int | None:
        """Every token sent and answered; ``None`` when no call said either."""
        if self.prompt_tokens is None and self.output_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.output_tokens or 0)

    @property
    def said(self) -> bool:
        """Some model call said what it used or cost."""
        return any(getattr(self, name) is not None for name in SAID)

    def copy(self) -> RunTotals:
        """A copy that later calls do not change."""
        return msgspec.structs.replace(self)

    def rounded(self) -> RunTotals:
        """A copy with the cost rounded as a sum of floats should be (0.0106, not
        0.010600000000000002)."""
        cost = None if self.cost_usd is None else round(self.cost_usd, 10)
        return msgspec.structs.replace(self, cost_usd=cost)


FIGURES: Final = tuple(name for name in RunTotals.__struct_fields__ if name != "partial")
"""The figures a run's totals hold, each named as a summary's field."""

SAID: Final = tuple(name for name in FIGURES if name != "model_calls")
"""The figures a model call says of itself, each named as the ``llm_call`` payload's."""


class FamilyMember(Protocol):
    """A run as :func:`family_totals` reads it: a :class:`~ledger_reader.summary.RunSummary`
    is one."""

    @property
    def run_id(self) -> str: ...

    @property
    def parent_run_id(self) -> str | None: ...

    @property
    def totals(self) -> RunTotals: ...


def family_totals(runs: Iterable[FamilyMember]) -> dict[str, RunTotals]:
    """The totals of each run of ``runs`` that has child runs among them: its own, its
    child runs', theirs, and so on down (rounded as :meth:`RunTotals.rounded` does).

    A run whose parent is not among ``runs`` counts only in its own; a run is counted
    once in each of its ancestors, however the ids loop (a ledger naming a descendant as
    its parent ends the climb there).
    """
    members: dict[str, FamilyMember] = {run.run_id: run for run in runs}
    children: dict[str, list[str]] = {}
    for run in members.values():
        parent = run.parent_run_id
        if parent is not None and parent in members and parent != run.run_id:
            children.setdefault(parent, []).append(run.run_id)
    return {
        parent: descendants_added(members[parent].totals, children, members, parent)
        for parent in children
    }


Key = TypeVar("Key")


def descendants_added(
    own: RunTotals,
    children: Mapping[Key, Iterable[Key]],
    members: Mapping[Key, FamilyMember],
    run_id: Key,
) -> RunTotals:
    """``own`` (the run ``run_id``'s totals) with every descendant's added, each once:
    ``children`` names each run's child runs, ``members`` holds every run (by id, or by any
    key: the app's store keys runs by source and id)."""
    total = own.copy()
    seen = {run_id}
    stack = list(children.get(run_id, ()))
    while stack:
        child = stack.pop()
        if child in seen:
            continue
        seen.add(child)
        total.add(members[child].totals)
        stack.extend(children.get(child, ()))
    return total.rounded()
