"""What a caller holds for a run: a :class:`Handle` to await and steer, an :class:`Info` to read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ledger_reader.events import BudgetState
from run_manager.agents import AgentEvent
from run_manager.errors import RunCanceled, RunFailed
from run_manager.run import Run, Status


@dataclass(frozen=True, slots=True)
class Info:
    """A snapshot of one run: what :meth:`Handle.info`, :meth:`Handle.wait` and
    :meth:`Manager.list` give.

    It is a copy taken when asked for: ask again to see the run move on.
    """

    run_id: str
    """The run's id (``run_<UTC time>_<16 hex digits>``), the name of its ledger file."""
    agent: str
    """The agent's name."""
    input: Any
    """What the run was started with (what :meth:`Manager.resume` starts again)."""
    status: Status
    """``running``, then ``succeeded``, ``failed`` or ``canceled``."""
    started_at: datetime
    """When the run started (UTC)."""
    ended_at: datetime | None
    """When it ended (UTC); ``None`` while it runs."""
    error: str | None
    """Why it failed or was cancelled; ``None`` otherwise."""
    cancel_requested: bool
    """A cancel was asked for; the run may still be stopping."""
    cancel_reason: str | None
    """The reason given with the cancel (``timeout`` for a timeout, ``shutdown`` at close)."""
    streamed: bool
    """Started with :meth:`Manager.stream`."""
    parent_run_id: str | None
    """The run it was started from inside, if any."""
    resumed_from: str | None
    """The run it re-issues, for a run made by :meth:`Manager.resume`."""
    ledger_path: Path | None
    """Its ledger file; ``None`` for a manager without a ledger directory."""
    pending_approvals: tuple[str, ...] = ()
    """The ids of the approvals the run waits on now, oldest first: a run at an
    :func:`approval` gate has one, and :meth:`Manager.approve` decides it (given
    ``None`` for the id, the only one)."""
    budget: BudgetState | None = None
    """The budget given to the run, as it stands: its limits now (an approval grows
    one), what the run and its child runs spent of it (``spent``) and its ``state``
    (``ok``, ``asking``, ``exceeded``, ``denied``); ``None`` for a run given none."""


def info_of(run: Run) -> Info:
    """A snapshot of ``run`` as callers see it."""
    return Info(
        run_id=run.id,
        agent=run.agent_name,
        input=run.input,
        status=run.status,
        started_at=datetime.fromtimestamp(run.started_at, UTC),
        ended_at=datetime.fromtimestamp(run.ended_at, UTC) if run.ended_at else None,
        error=run.error,
        cancel_requested=run.cancel_kind is not None,
        cancel_reason=run.cancel_reason,
        streamed=run.stream is not None,
        parent_run_id=run.parent_run_id,
        resumed_from=run.resumed_from,
        ledger_path=run.writer.path if run.writer is not None else None,
        pending_approvals=tuple(run.pending_approvals),
        budget=run.budgets[0].now() if run.budget is not None else None,
    )


class Handle:
    """What a caller holds for one run: await it, watch it, cancel it."""

    __slots__ = ("_run",)

    def __init__(self, run: Run) -> None:
        self._run = run

    @property
    def run_id(self) -> str:
        """The run's id: what the manager, the attach API and ``runtop`` know it by."""
        return self._run.id

    @property
    def status(self) -> Status:
        """Where the run is now (cheaper than :meth:`info` for this one field)."""
        return self._run.status

    def info(self) -> Info:
        """A snapshot of the run now (its pending approvals among it)."""
        return info_of(self._run)

    def cancel(
        self, reason: str | None = None, *, source: str = "api", requested_by: str | None = None
    ) -> bool:
        """Ask the run to stop; safe twice and after the end (then ``False``); ``requested_by``:
        who asks (a user's name), recorded in ``cancel_requested``."""
        return self._run.request_cancel(reason, source=source, requested_by=requested_by)

    async def wait(self) -> Info:
        """Wait for the run to end, however it ends; its final snapshot."""
        await asyncio.shield(self._run.done)
        return self.info()

    async def result(self) -> str:
        """Wait for the run's output.

        Raises:
            RunFailed: the run failed (the message says why, a ledger that could
                not be written included).
            RunCanceled: the run was cancelled (by a user, a timeout, shutdown).
        """
        await asyncio.shield(self._run.done)
        run = self._run
        if run.status is Status.SUCCEEDED:
            return run.output or ""
        if run.status is Status.CANCELED:
            raise RunCanceled(run.error or "canceled")
        raise RunFailed(run.error or "failed")

    def events(self) -> AsyncIterator[AgentEvent] | None:
        """The streamed agent events from the start (``None`` for a run not streamed)."""
        stream = self._run.stream
        return stream.read() if stream is not None else None

    def __await__(self) -> Any:
        return self.result().__await__()

    def __repr__(self) -> str:
        return f"<Handle {self.run_id} {self.status.value}>"


__all__ = ["Handle", "Info", "info_of"]
