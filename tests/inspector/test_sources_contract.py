"""One contract, every source: runs appear, grow, finish, fail and are cancelled, seen the same.

Each harness drives the same scenarios through a real run manager (with
real agents and real ledger files) and watches them through one kind of
source feeding a RunStore. Replay cannot watch a run live, so it records
the run first and then plays it back one step at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from inspector import (
    ActionRefused,
    LedgerDirectorySource,
    ManagerSource,
    RemoteSource,
    ReplaySource,
    RunKey,
    RunStore,
    RunView,
    Snapshot,
)
from ledger_reader import RunStatus
from run_manager import Manager
from tests.agents import Sleeper, Stepper

pytestmark = pytest.mark.timeout(30)


async def until(store: RunStore, check: Callable[[Snapshot], Any], what: str) -> Any:
    """Wait until ``check(snapshot)`` is truthy; return what it returned."""
    changes = store.changes()
    try:
        async with asyncio.timeout(10):
            while True:
                found = check(store.snapshot())
                if found:
                    return found
                await anext(changes)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}: {store.snapshot().runs}") from None
    finally:
        await changes.aclose()  # type: ignore[attr-defined]


def run_of(run_id: str) -> Callable[[Snapshot], RunView | None]:
    def check(snapshot: Snapshot) -> RunView | None:
        return next((view for view in snapshot.runs if view.run_id == run_id), None)

    return check


class Harness:
    """Drives a scenario and opens the source under test."""

    live = True
    kind = ""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.ledgers = tmp_path / "runs"
        self.store = RunStore(flush_interval=0.005)
        self.manager = Manager(ledger_dir=self.ledgers)

    async def begin(self, agent: Any, input: str, *, cancel: bool = False) -> RunKey:
        raise NotImplementedError

    async def advance(self, agent: Stepper) -> None:
        agent.gate.put_nowait(None)

    async def close(self) -> None:
        await self.store.close()
        await self.manager.close()


class DirectoryHarness(Harness):
    kind = "ledger_directory"

    async def open(self) -> None:
        self.ledgers.mkdir(mode=0o700, exist_ok=True)  # the manager made it
        self.store.add_source(LedgerDirectorySource(self.ledgers, liveness_interval=0.1))

    async def begin(self, agent: Any, input: str, *, cancel: bool = False) -> RunKey:
        handle = self.manager.start(agent, input)
        return RunKey(self.ledgers.name, handle.run_id)


class ManagerHarness(Harness):
    kind = "manager"

    async def open(self) -> None:
        self.store.add_source(ManagerSource(self.manager, name="local"))

    async def begin(self, agent: Any, input: str, *, cancel: bool = False) -> RunKey:
        return RunKey("local", self.manager.start(agent, input).run_id)


class RemoteHarness(Harness):
    """The manager served on loopback by a real attach server, watched over HTTP."""

    kind = "remote"

    async def open(self) -> None:
        from aiohttp import web

        from run_manager.server.attach import API_PREFIX, AttachServer

        self.server = AttachServer(self.manager, token="contract-token")
        root = web.Application()
        root.add_subapp(API_PREFIX, self.server.app)
        self.runner = web.AppRunner(root, access_log=None, shutdown_timeout=1)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = self.runner.addresses[0][1]
        url = f"http://127.0.0.1:{port}"
        self.store.add_source(RemoteSource(url, "contract-token", name="remote"))

    async def begin(self, agent: Any, input: str, *, cancel: bool = False) -> RunKey:
        return RunKey("remote", self.manager.start(agent, input).run_id)

    async def close(self) -> None:
        await self.store.close()
        await self.runner.cleanup()
        await self.manager.close()


class ReplayHarness(Harness):
    """Records the run to the end, then replays its ledger one step at a time."""

    kind = "replay"
    live = False

    async def open(self) -> None:
        self.source: ReplaySource | None = None

    async def begin(self, agent: Any, input: str, *, cancel: bool = False) -> RunKey:
        if isinstance(agent, Stepper):
            agent.open_all()
        handle = self.manager.start(agent, input)
        if cancel:
            await asyncio.sleep(0.05)
            handle.cancel("enough")
        await handle.wait()
        path = handle.info().ledger_path
        assert path is not None
        self.source = ReplaySource([path], step=True, name="replay")
        self.store.add_source(self.source)
        self.source.step(1)
        return RunKey("replay", handle.run_id)

    async def advance(self, agent: Stepper) -> None:
        assert self.source is not None
        self.source.step(3)

    def finish(self) -> None:
        assert self.source is not None
        self.source.play(0)


HARNESSES = [DirectoryHarness, ManagerHarness, RemoteHarness, ReplayHarness]


@asynccontextmanager
async def opened(kind: type[Harness], tmp_path: Path) -> AsyncIterator[Harness]:
    harness = kind(tmp_path)
    await harness.open()  # type: ignore[attr-defined]
    try:
        yield harness
    finally:
        await harness.close()


@pytest.fixture(params=HARNESSES, ids=lambda kind: kind.kind)
def harness_kind(request: pytest.FixtureRequest) -> type[Harness]:
    kind: type[Harness] = request.param
    return kind


async def test_a_run_appears_grows_and_finishes(
    harness_kind: type[Harness], tmp_path: Path
) -> None:
    async with opened(harness_kind, tmp_path) as harness:
        store = harness.store
        agent = Stepper()
        key = await harness.begin(agent, "https://example.org")
        first = await until(store, run_of(key.run_id), "the run to appear")
        assert first.status in {RunStatus.RUNNING}
        assert first.agent == "stepper"
        before = first.event_count
        await harness.advance(agent)
        grown = await until(
            store,
            lambda s: (v := run_of(key.run_id)(s)) and v.event_count > before and v,
            "the run to grow",
        )
        assert grown.event_count > before
        if isinstance(harness, ReplayHarness):
            harness.finish()
        else:
            await harness.advance(agent)
        done = await until(
            store,
            lambda s: (v := run_of(key.run_id)(s)) and v.status is RunStatus.SUCCEEDED and v,
            "the run to finish",
        )
        assert done.event_count == 10
        assert (done.tool_calls, done.tool_errors) == (1, 0)
        assert (done.prompt_tokens, done.output_tokens, done.cost_usd) == (100, 20, 0.25)
        assert done.current_tool is None
        calls = store.tool_calls(key)
        assert [(call.name, call.output, call.done) for call in calls] == [
            ("fetch", "<html>page</html>", True)
        ]
        stats = {stat.name: stat for stat in store.tool_stats()}
        assert (stats["fetch"].count, stats["fetch"].in_flight) == (1, 0)
        events = await store.events(key, 0, 100)
        assert [event.type for event in events] == [
            "run_started",
            "node_enter",
            "tool_call",
            "tool_result",
            "node_exit",
            "node_enter",
            "llm_chunk",
            "llm_call",
            "node_exit",
            "run_completed",
        ]
        assert store.refusal(key, "cancel") is not None


async def test_a_failing_run(harness_kind: type[Harness], tmp_path: Path) -> None:
    async with opened(harness_kind, tmp_path) as harness:
        agent = Stepper(fail=True)
        key = await harness.begin(agent, "bad")
        if isinstance(harness, ReplayHarness):
            harness.finish()
        else:
            agent.open_all()
        # A source may list a run that already ended and count its events a moment later
        # (its detail pass): wait for both, then check what was counted.
        failed = await until(
            harness.store,
            lambda s: (
                (v := run_of(key.run_id)(s)) and v.status is RunStatus.FAILED and v.detailed and v
            ),
            "the run to fail",
        )
        assert failed.error == "the page made no sense"
        assert failed.error_count == 1


async def test_a_cancelled_run(harness_kind: type[Harness], tmp_path: Path) -> None:
    async with opened(harness_kind, tmp_path) as harness:
        store = harness.store
        agent = Sleeper()
        key = await harness.begin(agent, "30", cancel=True)
        running = await until(store, run_of(key.run_id), "the run to appear")
        if harness.live:
            assert running.status is RunStatus.RUNNING
            assert store.refusal(key, "cancel") is None
            await store.cancel(key, "enough")
        else:
            assert store.refusal(key, "cancel") == "a replay cannot cancel runs"
            with pytest.raises(ActionRefused):
                await store.cancel(key, "enough")
            harness.finish()  # type: ignore[attr-defined]
        canceled = await until(
            store,
            lambda s: (v := run_of(key.run_id)(s)) and v.status is RunStatus.CANCELED and v,
            "the run to be canceled",
        )
        assert not canceled.cancel_requested  # asked, and it did stop
        assert "enough" in (canceled.error or "")
        assert store.refusal(key, "cancel") == "the run already ended (canceled)"
