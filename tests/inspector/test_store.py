"""The store beyond the contract: derived fields, filters, tool statistics, replay, failures."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from inspector import (
    ActionRefused,
    FilterError,
    LedgerDirectorySource,
    ManagerSource,
    ReplaySource,
    RunFilter,
    RunKey,
    RunStore,
    RunUpdate,
    RunView,
    SourceUpdate,
)
from inspector.model import make_view
from inspector.source import RunSource, SourceError
from inspector.store_state import RECENT_EVENTS
from ledger_reader import LedgerItem, RunStatus, RunSummary, summarize_ledger
from run_manager import Manager
from tests.agents import Gatekeeper, Sleeper
from tests.conftest import FIXTURES, completed, line, started
from tests.inspector.test_sources_contract import run_of, until

pytestmark = pytest.mark.timeout(30)


async def test_sample_ledgers_derive_what_a_user_wants(fixtures: Path) -> None:
    old = time.time() - 3600
    for path in fixtures.iterdir():
        os.utime(path, (old, old))
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(fixtures, name="samples"))
        views = await until(store, lambda s: len(s.runs) == 6 and s.runs, "six runs")
        await until(store, lambda s: all(v.detailed for v in s.runs), "details")
        by_id = {view.run_id[:29]: view for view in store.snapshot().runs}
    research = by_id["run_20261128T143000012_4f1a9c"]
    assert (research.tool_calls, research.prompt_tokens, research.output_tokens) == (2, 2742, 129)
    assert research.cost_usd == pytest.approx(0.0102)
    assert research.duration() == pytest.approx(4.85)
    deploy = by_id["run_20261128T143000031_9c8b7a"]
    assert (deploy.status, deploy.tool_errors, deploy.error_count) == (RunStatus.FAILED, 1, 1)
    waiting = by_id["run_20261128T143000052_a0b1c2"]
    assert waiting.status is RunStatus.STALE  # its approval's 24 h ran out on 29 November
    assert waiting.doing == "approval unanswered: Apply migration v42 to production?"
    assert by_id["run_20261128T143000058_5e6f70"].status is RunStatus.STALE
    assert by_id["run_20261128T143000063_c5b4a3"].damaged_lines == 1
    assert [view.run_id for view in views] == sorted((v.run_id for v in views), reverse=True)
    stats = {stat.name: stat for stat in store.tool_stats()}
    assert (stats["shell"].count, stats["shell"].errors) == (1, 1)
    assert stats["web_search"].median == pytest.approx(1.44)


async def test_live_derived_fields_through_the_manager() -> None:
    async with Manager() as manager, RunStore(flush_interval=0.005) as store:
        store.add_source(ManagerSource(manager))
        agent = Sleeper()
        handle = manager.start(agent, "30")
        key = RunKey("local", handle.run_id)
        await agent.started.wait()
        view = await until(store, run_of(handle.run_id), "the run")
        assert view.live
        assert view.duration(now=(view.started_at or 0) + 2) == pytest.approx(2)
        handle_gate = manager.start(Gatekeeper(), "ship it")
        gate_key = RunKey("local", handle_gate.run_id)
        await until(
            store,
            lambda s: (v := run_of(handle_gate.run_id)(s)) and v.pending_approval is not None,
            "the approval",
        )
        assert store.refusal(key, "approve") == "the run is not waiting on an approval"
        await store.approve(gate_key, True, "fine")
        assert await handle_gate.result() == "approved"
        await store.cancel(key, "enough")
        await until(
            store,
            lambda s: (v := run_of(handle.run_id)(s)) and v.status is RunStatus.CANCELED,
            "the cancel",
        )
        new_id = await store.resume(key)
        assert manager.get(new_id).info().resumed_from == handle.run_id
        manager.cancel(new_id)


def test_filter_language() -> None:
    now = time.time()

    def view(source: str, **fields: Any) -> RunView:
        started = fields.pop("started_at")
        summary = RunSummary(started_at=datetime.fromtimestamp(started, UTC).isoformat(), **fields)
        return make_view(RunKey(source, summary.run_id), summary, None, detailed=True)

    runs = [
        view(
            "a",
            run_id="run_1",
            status=RunStatus.RUNNING,
            skill="deploy-prod",
            agent="ops",
            started_at=now - 60,
            session_id="session-7",
            user_id="ada",
            tags=["nightly", "eu"],
            service="deploy-api",
        ),
        view(
            "a",
            run_id="run_2",
            status=RunStatus.FAILED,
            skill="research",
            error="tool timeout",
            started_at=now - 7200,
        ),
        view(
            "b",
            run_id="run_3",
            status=RunStatus.SUCCEEDED,
            skill="deploy-eu",
            started_at=now - 30,
            parent_run_id="run_1",
            conversation_id="thread-9",
            host="deploy-api-host",
        ),
    ]

    def ids(text: str) -> list[str]:
        run_filter = RunFilter.parse(text, now=now)
        return [run.run_id for run in runs if run_filter.matches(run)]

    assert ids("") == ["run_1", "run_2", "run_3"]
    assert ids("status:running") == ["run_1"]
    assert ids("status:running,failed") == ["run_1", "run_2"]
    assert ids("-status:succeeded") == ["run_1", "run_2"]
    assert ids("skill:deploy") == ["run_1", "run_3"]
    assert ids("skill:/^deploy-(eu|us)$/") == ["run_3"]
    assert ids("since:1h") == ["run_1", "run_3"]
    assert ids("!since:1h") == ["run_2"]
    assert ids("error:timeout") == ["run_2"]
    assert ids("deploy source:b") == ["run_3"]
    assert ids("parent:run_1") == ["run_3"]
    assert ids("OPS") == ["run_1"]
    assert ids('"tool timeout"') == ["run_2"]
    # Who a run was for and which conversation: runs sent over OpenTelemetry say it.
    assert ids("session:session-7") == ids("user:ada") == ids("tag:nightly") == ["run_1"]
    assert ids("session:thread") == ["run_3"]  # a conversation is its session too
    assert ids("service:deploy") == ["run_1"]  # the service, not the host
    assert ids("-tag:eu") == ["run_2", "run_3"]
    for bad in ("skill:/(/", "since:yesterday", "status:", '"open', "sesion:x"):
        with pytest.raises(FilterError):
            RunFilter.parse(bad)


async def test_tool_statistics_median_p95_and_in_flight(tmp_path: Path) -> None:
    lines = [started()]
    seq = 1
    for number, millis in enumerate([100, 200, 300, 400, 900]):
        seq += 1
        lines.append(
            line(
                seq,
                "tool_call",
                {"call_id": f"c{number}", "name": "search"},
                time=f"2026-11-29T06:00:{number:02d}.000000Z",
            )
        )
        seq += 1
        lines.append(
            line(
                seq,
                "tool_result",
                {"call_id": f"c{number}", "is_error": number == 4},
                time=f"2026-11-29T06:00:{number:02d}.{millis * 1000:06d}Z",
            )
        )
    seq += 1
    lines.append(line(seq, "tool_call", {"call_id": "open", "name": "search", "arguments": {}}))
    path = tmp_path / "run_tools.jsonl"
    path.write_bytes(b"".join(lines))
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(ReplaySource([path], speed=0))
        await until(store, lambda s: s.runs and s.runs[0].tool_calls == 6, "six calls")
        stats = store.tool_stats()
        calls = store.tool_calls(store.snapshot().runs[0].key)
    assert len(stats) == 1
    search = stats[0]
    assert (search.count, search.errors, search.in_flight) == (6, 1, 1)
    assert search.median == pytest.approx(0.3)
    assert search.p95 == pytest.approx(0.9)
    assert [call.done for call in calls] == [True] * 5 + [False]
    assert calls[4].is_error
    assert calls[0].duration == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("speed", "low", "high"),
    [(1.0, 0.55, 1.5), (2.0, 0.27, 0.8), (10.0, 0.05, 0.4), (0.0, 0.0, 0.2)],
)
async def test_replay_speeds(tmp_path: Path, speed: float, low: float, high: float) -> None:
    path = tmp_path / "run_timed.jsonl"
    path.write_bytes(
        line(1, "run_started", time="2026-11-29T06:00:00.000000Z")
        + line(2, "llm_chunk", {"delta": "a"}, time="2026-11-29T06:00:00.300000Z")
        + line(3, "run_completed", {"status": "ok"}, time="2026-11-29T06:00:00.600000Z")
    )
    source = ReplaySource([path], speed=speed)
    async with RunStore(flush_interval=0.005) as store:
        started_at = time.monotonic()
        store.add_source(source)
        await asyncio.wait_for(source.finished.wait(), 10)
        elapsed = time.monotonic() - started_at
        view = await until(
            store, lambda s: s.runs and s.runs[0].status is RunStatus.SUCCEEDED, "the end"
        )
    assert view
    assert low <= elapsed <= high, elapsed


async def test_replay_steps_and_pauses(tmp_path: Path) -> None:
    path = tmp_path / "run_steps.jsonl"
    path.write_bytes(started() + line(2, "llm_chunk", {"delta": "a"}) + completed(3))
    source = ReplaySource([path], step=True)
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(source)
        source.step()
        await until(store, lambda s: s.runs and s.runs[0].event_count == 1, "one event")
        await asyncio.wait_for(source.holding.wait(), 5)  # it stopped after one step
        store.flush()
        assert store.snapshot().runs[0].event_count == 1
        source.step(2)
        await until(store, lambda s: s.runs[0].status is RunStatus.SUCCEEDED, "the end")


async def test_a_replayed_run_lasts_as_long_as_its_recording_so_far(tmp_path: Path) -> None:
    """A run still playing has lasted until its last event played, not until now (it
    started yesterday: "21h25m" was the time since then)."""
    path = tmp_path / "run_steps.jsonl"
    path.write_bytes(
        line(1, "run_started", {"skill": "s"}, time="2026-11-28T10:00:00Z")
        + line(2, "llm_chunk", {"delta": "a"}, time="2026-11-28T10:00:05Z")
        + completed(3)
    )
    source = ReplaySource([path], step=True)
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(source)
        source.step(2)
        run = await until(store, lambda s: s.runs and s.runs[0].event_count == 2 and s.runs[0], "2")
        assert run.live
        assert run.recorded
        assert run.duration(now=time.time()) == pytest.approx(5.0)


class BrokenSource(RunSource):
    """A source that fails after its first batch."""

    def __init__(self) -> None:
        super().__init__("broken")

    async def updates(self):  # type: ignore[no-untyped-def]
        summary = summarize_ledger(FIXTURES / "run_20261128T143000012_4f1a9c2e7b3d8a60.jsonl")
        yield SourceUpdate(runs=[RunUpdate(summary.run_id, summary)], initial=True)
        raise SourceError("the server hung up")

    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        raise SourceError("the server hung up")

    async def close(self) -> None:
        return None


async def test_a_failing_source_beside_a_healthy_one(tmp_path: Path) -> None:
    doomed = tmp_path / "doomed"
    doomed.mkdir()
    (doomed / "run_a.jsonl").write_bytes(line(1, "run_started", run_id="run_a"))
    async with Manager() as manager, RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(doomed, name="doomed", liveness_interval=0.1))
        store.add_source(BrokenSource())
        store.add_source(ManagerSource(manager))
        await until(store, lambda s: len(s.runs) == 2, "both sources' runs")
        shutil.rmtree(doomed)
        states = await until(
            store,
            lambda s: (
                {st.name: st for st in s.sources if not st.available}.keys() >= {"doomed", "broken"}
                and {st.name: st for st in s.sources}
            ),
            "the failures",
        )
        assert "doomed" in (states["doomed"].error or "")
        assert "no such file" in (states["doomed"].error or "")
        assert states["broken"].error == "stopped: the server hung up"
        assert states["local"].available
        handle = manager.start(Sleeper(), "0.01")
        await until(store, run_of(handle.run_id), "the healthy source's new run")
        assert len(store.snapshot().runs) == 3  # what the failed sources had is kept
        broken_run = next(v for v in store.snapshot().runs if v.source == "broken")
        with pytest.raises(ActionRefused, match="source broken cannot resume runs"):
            await store.resume(broken_run.key)


async def test_notifications_are_batched_in_time() -> None:
    """Ten thousand events in a burst wake a subscriber a handful of times, not per event."""
    from ledger_reader import RunSummary
    from ledger_reader.events import ChunkPayload, LlmChunk

    async with RunStore(flush_interval=0.05, detail=False) as store:
        changes = store.changes()
        woken = 0

        end_key = RunKey("burst", "run_end")

        async def count() -> None:
            """Count the wakes until the one that tells of the marked end."""
            nonlocal woken
            async for change in changes:
                woken += 1
                if end_key in change.runs:
                    return

        counter = asyncio.create_task(count())
        summary = RunSummary(run_id="run_burst", status=RunStatus.RUNNING)
        began = time.monotonic()
        for seq in range(1, 10_001):
            item = LlmChunk(run_id="run_burst", seq=seq, payload=ChunkPayload(delta="x"))
            store.apply("burst", SourceUpdate(runs=[RunUpdate("run_burst", summary, [item])]))
            if seq % 1000 == 0:
                await asyncio.sleep(0)  # the source yields to the loop now and then
        # The end of the burst, marked: a run applied right after the last chunk.
        end = RunSummary(run_id="run_end", status=RunStatus.SUCCEEDED)
        store.apply("burst", SourceUpdate(runs=[RunUpdate("run_end", end)]))
        took = time.monotonic() - began
        await asyncio.wait_for(counter, 10)
        assert store.applied == 10_000
        # One wake per flush interval the burst lasted (a loaded machine stretches it), and the
        # last: never one per event.
        assert 1 <= woken <= 3 + took / 0.05, (woken, took)
        assert len(store.recent(RunKey("burst", "run_burst"))) == RECENT_EVENTS  # a bounded window


async def test_a_big_directory_says_it_is_still_reading_then_lists_every_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ledger_reader.directory.FIRST_STEP", 2)
    for number in range(5):
        path = tmp_path / f"run_{number}.jsonl"
        path.write_bytes(line(1, "run_started", run_id=f"run_{number}"))
    source = LedgerDirectorySource(tmp_path, name="big")
    updates = source.updates()
    first, second = await anext(updates), await anext(updates)
    await updates.aclose()
    await source.close()
    assert (first.initial, first.status, len(first.runs)) == (True, "reading 3 more ledgers", 2)
    assert (second.initial, second.status, len(second.runs)) == (False, "", 3)

    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(tmp_path, name="big"))
        await until(store, lambda s: len(s.runs) == 5, "every run")
        assert store.snapshot().sources[0].status is None  # "live" again


class ReadsCounted(ThreadPoolExecutor):
    """The loop's executor, counting the work handed to it (``asyncio.to_thread``'s)."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.started = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.started += 1
        return super().submit(fn, *args, **kwargs)


async def test_detail_passes_wait_until_a_source_has_delivered_its_first_load(
    tmp_path: Path,
) -> None:
    """A detail pass reads a ledger again: beside a scan of 10,000 it slowed the scan 2.5x."""
    from ledger_reader import RunSummary

    ledger = tmp_path / "run_1.jsonl"
    ledger.write_bytes(
        started() + line(2, "llm_call", {"prompt_tokens": 7, "output_tokens": 3}) + completed(3)
    )
    summary = RunSummary(run_id="run_1", status=RunStatus.SUCCEEDED, path=str(ledger))
    history = RunUpdate("run_1", summary, history_end=ledger.stat().st_size)
    key = RunKey("dir", "run_1")
    reads = ReadsCounted()  # a pass reads in a thread: the loop's executor sees it begin
    asyncio.get_running_loop().set_default_executor(reads)
    async with RunStore(flush_interval=0.005) as store:
        store.apply("dir", SourceUpdate(runs=[history], initial=True, pending=9_999))
        # The detail pass was woken with the flush: it has had its turn once the run is shown.
        await until(store, run_of("run_1"), "the run")
        assert reads.started == 0
        assert not store.get(key).detailed  # type: ignore[union-attr]
        store.apply("dir", SourceUpdate(pending=0))
        view = await until(store, lambda s: s.runs[0].detailed and s.runs[0], "the detail pass")
        assert (view.prompt_tokens, view.output_tokens) == (7, 3)
        assert reads.started == 1


async def test_a_directory_source_waits_for_a_ledgers_index(tmp_path: Path) -> None:
    (tmp_path / "run_1.jsonl").write_bytes(started() + completed(2))
    async with RunStore(flush_interval=0.005) as store:
        source = LedgerDirectorySource(tmp_path, name="dir")
        store.add_source(source)
        await until(store, lambda s: len(s.runs) == 1, "the run")
        assert await source.wait_indexed("run_1")
        assert await store.event_count(RunKey("dir", "run_1")) == 2
        with pytest.raises(SourceError, match="no ledger for run run_2"):
            await source.wait_indexed("run_2")


async def test_a_source_that_fails_in_its_first_load_does_not_hold_detail_passes_back(
    tmp_path: Path,
) -> None:
    ledger = tmp_path / "run_1.jsonl"
    ledger.write_bytes(started() + line(2, "llm_call", {"prompt_tokens": 7}) + completed(3))
    summary = RunSummary(run_id="run_1", status=RunStatus.SUCCEEDED, path=str(ledger))

    class HalfLoaded(RunSource):
        async def updates(self):  # type: ignore[no-untyped-def]
            history = RunUpdate("run_1", summary, history_end=ledger.stat().st_size)
            yield SourceUpdate(runs=[history], initial=True, pending=9_999)
            raise SourceError("the disk went away")

        async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
            return []

        async def close(self) -> None:
            pass

    async with RunStore(flush_interval=0.005) as store:
        store.add_source(HalfLoaded("half"))
        view = await until(store, lambda s: s.runs and s.runs[0].detailed and s.runs[0], "detail")
        assert view.prompt_tokens == 7
        assert not store.loading
        assert store.snapshot().sources[0].error == "stopped: the disk went away"
