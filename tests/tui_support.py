"""Building the app the way the command line does, on sample ledgers, for pilot tests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.pilot import Pilot

from inspector import (
    LedgerDirectorySource,
    ManagerSource,
    RunSource,
    RunUpdate,
    RunView,
    SourceUpdate,
)
from inspector.source import SourceError
from ledger_reader import LedgerItem, RunStatus, RunSummary
from run_manager import Manager
from tests.agents import Echo
from tui.app import RuntopApp, make_app
from tui.settings import Settings
from tui.widgets.event_list import EventList
from tui.widgets.run_table import RunTable

if TYPE_CHECKING:
    from tui.screens.run import RunScreen

FROZEN = 1795876500.0
"""2026-11-28T14:35:00Z: five minutes after the sample runs; relative times stay put."""


def age(directory: Path) -> None:
    """Make the sample ledgers look an hour old, so liveness is judged the same every run."""
    old = time.time() - 3600
    for path in directory.iterdir():
        os.utime(path, (old, old))


WAITING_ID = "run_20261201T000000001_a1a1a1a1a1a1a1a1"
"""The run :func:`write_waiting_run` writes."""


def write_waiting_run(directory: Path) -> str:
    """A run asked an approval a minute ago (by the clock now), its 24 h timeout to come.

    The sample awaiting approval asked on 28 November: it is long past its
    deadline, so stale. The liveness of this one does not depend on the date.
    """
    from datetime import UTC, datetime

    asked = time.time() - 60

    def line(seq: int, kind: str, payload: dict[str, Any], at: float) -> str:
        when = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        record = {"run_id": WAITING_ID, "seq": seq, "time": when, "type": kind}
        return json.dumps({**record, "payload": payload}) + "\n"

    question = {"approval_id": "ap_1", "prompt": "Ship it?", "timeout_seconds": 86400}
    (directory / f"{WAITING_ID}.jsonl").write_text(
        line(1, "run_started", {"skill": "ship"}, asked - 1)
        + line(2, "approval_request", question, asked)
    )
    return WAITING_ID


def sample_app(fixtures: Path, *extra: RunSource, **settings: Any) -> RuntopApp:
    age(fixtures)
    options: dict[str, Any] = {"clock": FROZEN, "flush_interval": 0.01}
    options.update(settings)
    sources: list[RunSource] = [LedgerDirectorySource(fixtures, name="samples"), *extra]
    return make_app(Settings(**options), sources)


SETTLE_SECONDS = 10.0
"""How long :func:`settle` waits, at most: an app on a loaded machine (the suite spreads
over every core) can take seconds to draw what a quiet one draws in milliseconds."""


async def settle(pilot: Pilot[Any], check: Callable[[], object], what: str) -> None:
    """Let the app run until ``check()`` is truthy (:data:`SETTLE_SECONDS` at most)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"the app never showed {what}")
        await pilot.pause(0.02)


def table(app: RuntopApp) -> RunTable:
    return app.screen.query_one(RunTable)


async def loaded(pilot: Pilot[Any], count: int = 6) -> RunTable:
    """Wait for the runs table to list ``count`` runs, every one detailed."""
    app = pilot.app
    assert isinstance(app, RuntopApp)
    await settle(
        pilot,
        lambda: len(table(app).rows) == count and all(run.detailed for run in table(app).rows),
        f"{count} runs",
    )
    await pilot.pause()
    return table(app)


async def open_run(pilot: Pilot[Any], run_id: str) -> RunScreen:
    """Select ``run_id`` on the runs screen, once it is listed, and open it (Enter)."""
    from tui.screens.run import RunScreen

    app = pilot.app
    rows = app.screen.query_one(RunTable)
    await settle(pilot, lambda: any(run.run_id == run_id for run in rows.rows), run_id)
    rows.select_key(next(run.key for run in rows.rows if run.run_id == run_id))
    await pilot.press("enter")
    await settle(pilot, lambda: isinstance(app.screen, RunScreen), "the run's screen")
    screen = app.screen
    assert isinstance(screen, RunScreen)
    return screen


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def events_read(pilot: Pilot[Any], upto: int) -> EventList:
    """The open run's event list, once its events up to position ``upto`` are read."""
    events = pilot.app.screen.query_one(EventList)
    await settle(pilot, lambda: events.item(upto) is not None, f"the events up to {upto}")
    return events


async def awaiting_approval(
    pilot: Pilot[Any], manager: Any, count: int = 7, *, agent: Any = None, input: str = "ship"
) -> tuple[RunTable, Any]:
    """A run started in ``manager`` (beside the samples) that asks an approval (``agent``,
    a Gatekeeper unless said): the table, once it lists ``count`` runs and the run's
    question, and the run's handle."""
    from tests.agents import Gatekeeper

    waiting = manager.start(agent if agent is not None else Gatekeeper(), input)
    rows = await loaded(pilot, count)
    await settle(
        pilot,
        lambda: any(r.pending_approval and r.run_id == waiting.run_id for r in rows.rows),
        "the approval",
    )
    return rows, waiting


async def cancel_asked(
    pilot: Pilot[Any], manager: Any, agent: Any, input: str, count: int = 7
) -> tuple[RunTable, Any]:
    """A run of ``agent`` started in ``manager`` (beside the samples: ``count`` runs in
    all), selected, and ``c`` pressed: the table and the run's handle, its cancel
    confirmation on screen."""
    from tui.screens.cancel import CancelScreen

    handle = manager.start(agent, input)
    rows = await loaded(pilot, count)
    rows.select_key(next(run.key for run in rows.rows if run.run_id == handle.run_id))
    await pilot.press("c")
    assert isinstance(pilot.app.screen, CancelScreen)
    return rows, handle


def canceled(rows: RunTable, run_id: str) -> bool:
    """Whether the table shows run ``run_id`` canceled (its own row, drawn)."""
    run = next((run for run in rows.rows if run.run_id == run_id), None)
    return run is not None and drawn_cells(rows, run)["status"].startswith("⊘ canceled")


def notices(app: Any) -> list[str]:
    """The notifications on screen now, as the user reads them (their toasts)."""
    return [str(toast.render()) for toast in app.screen.query("Toast")]


async def noticed(pilot: Pilot[Any], words: str) -> str:
    """The first notification on screen that says ``words``, once one does."""
    await settle(pilot, lambda: any(words in said for said in notices(pilot.app)), repr(words))
    return next(said for said in notices(pilot.app) if words in said)


def drawn_cells(rows: RunTable, run: RunView) -> dict[str, str]:
    """What the table draws for ``run`` in each column (by key: ``started``, ``duration``),
    at a width that shows every column but those empty for every run shown."""
    from rich.style import Style

    from tui.widgets.run_table import visible_columns

    keys = [key for key, _, _ in visible_columns(200, rows.sort_key, rows.fill)]
    texts = [segment.text.strip() for segment in rows._cells(run, 200, Style())]
    return dict(zip(keys, texts, strict=True))


SERVER_RUN = "run_20261202T010000000_5e6f708192a3b4c5"
"""The run :class:`GoesAway` serves."""


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class GoesAway(RunSource):
    """A server with one running run, started 9 s ago and last heard of 0.3 s after (in
    ``current_node``, ``event_count`` events long), that goes away when the test says
    (``away.set()``) and stays away: its events are not answered then, and a cancel
    cannot reach it."""

    live = True
    can_cancel = True

    def __init__(self, *, current_node: str | None = None, event_count: int = 3) -> None:
        super().__init__("127.0.0.1:8765")
        self.away = asyncio.Event()
        self.current_node = current_node
        self.count = event_count

    async def updates(self) -> AsyncIterator[SourceUpdate]:
        started = time.time() - 9  # and last heard of 0.3 s after (a summary: no events since)
        summary = RunSummary(
            run_id=SERVER_RUN,
            status=RunStatus.RUNNING,
            skill="research",
            started_at=_iso(started),
            last_event_at=_iso(started + 0.3),
            event_count=self.count,
            current_node=self.current_node,
        )
        yield SourceUpdate(runs=[RunUpdate(SERVER_RUN, summary)], initial=True)
        await self.away.wait()
        yield SourceUpdate(error=SourceError("reconnecting in 8 s: refused"), available=False)
        await asyncio.Event().wait()  # never back

    async def event_count(self, run_id: str) -> int:
        return self.count  # as last heard

    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        if self.away.is_set():
            await asyncio.Event().wait()  # asked while away: no answer (a dead connection)
        return []

    async def cancel(self, run_id: str, reason: str | None = None) -> None:
        raise SourceError("127.0.0.1:8765 cannot be reached")

    async def close(self) -> None:
        self.away.set()


@contextlib.asynccontextmanager
async def one_ended_run(
    tmp_path: Path, size: tuple[int, int] = (160, 48)
) -> AsyncIterator[tuple[Manager, RuntopApp, Pilot[Any], RunTable, str]]:
    """A manager whose one run (``Echo``) has ended, watched by the app (notices on):
    (manager, app, pilot, the runs table listing it, its run id)."""
    async with Manager(ledger_dir=tmp_path / "runs", agents=[Echo()]) as manager:
        app = make_app(Settings(flush_interval=0.01), [ManagerSource(manager, name="local")])
        async with app.run_test(size=size, notifications=True) as pilot:
            ended = manager.start(Echo(), "hello")
            await ended.result()
            rows = await loaded(pilot, 1)
            await settle(pilot, lambda: not rows.rows[0].live, "the run ended")
            yield manager, app, pilot, rows, ended.run_id
