"""A snapshot says the moment each replay has played up to, kept as its runs change: the
latest last event of its runs, back where it was when a run that set it is played again
or goes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime

import pytest

from inspector import RunSource, RunStore, RunUpdate, SourceUpdate
from ledger_reader import LedgerItem, RunStatus, RunSummary
from tui.text.runs import replay_moments

pytestmark = pytest.mark.timeout(30)


class Recording(RunSource):
    """A source that plays a recording (not live): its updates are what a test hands it."""

    def __init__(self) -> None:
        super().__init__("recording")
        self.queue: asyncio.Queue[SourceUpdate] = asyncio.Queue()

    async def updates(self) -> AsyncIterator[SourceUpdate]:
        while True:
            yield await self.queue.get()

    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        return []

    async def close(self) -> None:
        pass


def played_to(run_id: str, last: str, *, reset: bool = False) -> RunUpdate:
    summary = RunSummary(
        run_id=run_id,
        status=RunStatus.RUNNING,
        started_at="2026-11-28T10:00:00Z",
        last_event_at=last,
    )
    return RunUpdate(run_id, summary, reset=reset)


def at(moment: str) -> float:
    return datetime.fromisoformat(moment.replace("Z", "+00:00")).timestamp()


async def test_the_moment_replayed_follows_its_runs_back_and_forth() -> None:
    source = Recording()
    async with RunStore(flush_interval=0.001) as store:
        store.add_source(source)
        changes = store.changes()

        async def after(update: SourceUpdate, *played: str) -> dict[str, float]:
            """The moments once the store shows the runs played to ``played``."""
            await source.queue.put(update)
            while sorted(run.summary.last_event_at or "" for run in store.snapshot().runs) != [
                *played
            ]:
                await anext(changes)
            snapshot = store.snapshot()
            assert snapshot.replayed_at == replay_moments(snapshot.runs)  # every run looked at
            return snapshot.replayed_at

        five, nine, twelve, one = (f"2026-11-28T10:00:{s}Z" for s in ("05", "09", "12", "01"))
        first = SourceUpdate(runs=[played_to("a", five), played_to("b", nine)])
        assert await after(first, five, nine) == {"recording": at(nine)}
        later = SourceUpdate(runs=[played_to("a", twelve)])
        assert await after(later, nine, twelve) == {"recording": at(twelve)}
        # Played again from its start: the replay is back where the other run is.
        again = SourceUpdate(runs=[played_to("a", one, reset=True)])
        assert await after(again, one, nine) == {"recording": at(nine)}
        gone = SourceUpdate(removed=["b"])
        assert await after(gone, one) == {"recording": at(one)}
