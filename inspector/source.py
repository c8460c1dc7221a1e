"""Where runs come from: the one interface every source implements.

A :class:`RunSource` is small: it yields :class:`SourceUpdate` batches
(runs that appeared or changed, with the events that landed, and runs
that went away) and serves a run's events by range. What else it can do
is optional and flagged (``live``, ``can_cancel``, ``can_resume``,
``can_approve``), so the UI greys out a key instead of failing when it is
pressed; a per-run check says why an action is refused for one run.
Failures are typed (:class:`SourceError`) and never take other sources
down.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from typing import ClassVar, Final

import msgspec

from ledger_reader import LedgerItem, RunSummary


class SourceError(Exception):
    """A source failed (a directory deleted, permission lost, a server gone): say what, in words."""


class ActionRefused(Exception):
    """An action the source cannot honour for this run, with the reason to show."""


class RunUpdate(msgspec.Struct):
    """One run that appeared or changed: its summary now and the items that landed."""

    run_id: str
    summary: RunSummary
    items: list[LedgerItem] = msgspec.field(default_factory=list)
    reset: bool = False
    """Earlier events of this run are void (its ledger was truncated or replaced)."""
    history_end: int | None = None
    """For a ledger: where the lines not delivered as items end (a detail pass reads up to it)."""
    history_count: int | None = None
    """For a source without a local ledger: how many events, from position 0, were not
    delivered as items; a detail pass asks :meth:`RunSource.events` for them."""
    items_end: int | None = None
    """The position after the last of ``items``, as :meth:`RunSource.events` numbers them,
    where the source knows it: the store then serves the run's newest items from those it
    holds, never decoded again (a ledger's lines, counted as they were read)."""


class SourceUpdate(msgspec.Struct):
    """A batch of changes from one source."""

    runs: list[RunUpdate] = msgspec.field(default_factory=list)
    removed: list[str] = msgspec.field(default_factory=list)
    error: SourceError | None = None
    available: bool = True
    initial: bool = False
    pending: int = 0
    """Runs found and not delivered yet: the first load goes on in the next updates."""
    status: str | None = None
    """How the source stands, in a few words ("connected", "reading 9,500 more ledgers"),
    when it has more to say than live; ``None`` leaves it as it was, ``""`` clears it."""


ACTED_BY: Final = "runtop"
"""Who a cancel, a resume or an answer to an approval sent from here says it came from:
one name, whichever source carries it (it read "tui" from some, "runtop" from others)."""


class RunSource(abc.ABC):
    """Runs from one place: a ledger directory, ledger files replayed, a manager, a server.

    Subclasses set the capability flags and implement :meth:`updates` and
    :meth:`events`; the actions default to refusing.
    """

    live: ClassVar[bool] = False
    """Runs may change while watched."""
    can_cancel: ClassVar[bool] = False
    """:meth:`cancel` may work (the app greys ``c`` where it cannot)."""
    can_resume: ClassVar[bool] = False
    """:meth:`resume` may work."""
    can_approve: ClassVar[bool] = False
    """:meth:`approve` may work."""
    can_replay: ClassVar[bool] = False
    """Plays recorded runs back: paused, stepped, sped up (:mod:`inspector.replay`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        """Short, unique among open sources: shown in the table's source column."""

    @abc.abstractmethod
    def updates(self) -> AsyncIterator[SourceUpdate]:
        """Every change, starting with the runs there are now (``initial``), until :meth:`close`."""

    @abc.abstractmethod
    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        """Items ``start`` to ``stop`` (exclusive, by position from 0) of one run."""

    async def event_count(self, run_id: str) -> int:
        """How many items :meth:`events` can serve for the run now."""
        return len(await self.events(run_id, 0, 1 << 62))

    def run_file(self, run_id: str) -> str | None:
        """The file whose line n is the run's item n, where there is one: a search inside
        the run scans its bytes (:mod:`ledger_reader.text_search`) rather than reading every
        event through :meth:`events`."""
        return None

    @abc.abstractmethod
    async def close(self) -> None:
        """Stop producing updates and release what the source holds."""

    # -- actions: refused unless a source says otherwise --------------------------

    def refusal(self, action: str, summary: RunSummary) -> str | None:
        """Why this source cannot carry ``action`` to this run, or ``None`` if it can.

        Only what the source can carry: whether the run itself can take ``action`` is
        decided once, before this is asked (:func:`inspector.actions.refusal`)."""
        allowed = {"cancel": self.can_cancel, "resume": self.can_resume}
        allowed["approve"] = self.can_approve
        if not allowed.get(action, False):
            return f"{self.describe()} cannot {action} runs"
        return None

    async def cancel(self, run_id: str, reason: str | None, *, by: str | None = None) -> None:
        """Ask the run to stop, with ``reason``; it ends once it has (an update says so).
        ``by``: who asks (a user's name), recorded with the request.

        Raises:
            ActionRefused: this source cannot cancel, or not this run (the words say why).
        """
        raise ActionRefused(f"{self.describe()} cannot cancel runs")

    async def resume(self, run_id: str) -> str:
        """Re-issue the run; the new run's id."""
        raise ActionRefused(f"{self.describe()} cannot resume runs")

    async def approve(
        self,
        run_id: str,
        approval_id: str | None,
        approved: bool,
        reason: str | None,
        *,
        by: str | None = None,
    ) -> None:
        """Decide the approval the run waits on (``approval_id`` ``None``: its only one);
        ``by``: who decides, recorded with the answer.

        Raises:
            ActionRefused: this source cannot approve, or the run waits on nothing.
        """
        raise ActionRefused(f"{self.describe()} cannot approve runs")

    def describe(self) -> str:
        """The source in a few words, for messages."""
        return f"source {self.name}"
