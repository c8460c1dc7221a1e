"""The store's columns of its runs' fields select what reading each view selects: for every
kind of term, as runs come, change and go between filterings, while runs are live and
while a source is away; an earlier snapshot is answered from its own views."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import msgspec
import pytest

from inspector import RunSource, RunStore, RunUpdate, SourceUpdate, filters
from inspector import store as store_module
from inspector.filters import FilterError, RunFilter
from inspector.store_state import Snapshot
from ledger_reader import LedgerItem, RunStatus, RunSummary
from ledger_reader.decode import decode_line
from tests.conftest import line

NOW = time.time()

FILTERS = (
    "cost:>0.01",
    "cost:>0.01 duration:>30s",
    "cost:0.01..0.10",
    "-cost:0.01..0.10",
    "cost:..0.005",
    "tokens:>=10k calls:>2",
    "tokens:<1k",
    "-tokens:>=10k",
    "calls:0",
    "events:<50",
    "duration:>1m",
    "duration:<30s",
    "-duration:>1m",
    "since:1h",
    "-since:10m",
    "status:failed",
    "status:running,awaiting",
    "-status:succeeded",
    "status:unknown",
    "model:claude-*",
    "-model:gpt-*",
    "model:sonnet",
    "model:/^gpt/",
    "model:claude-haiku*,gpt-5.?",
    "skill:deploy",
    "skill:DEP,tri",
    "-skill:research",
    "skill:/^(deploy|triage)$/",
    "agent:ops",
    "error:timeout",
    "-error:timeout",
    "run:0007",
    "parent:run_0000",
    "source:b",
    "-source:a",
    "user:ada",
    "service:api",
    "tag:nightly",
    "session:thread",
    "deploy",
    "DEPLOY",
    "-deploy",
    "deploy,triage",
    "unknown",
    "running",
    "/dep.oy/",
    "/DEP.OY-eu/",
    "/[A-Z]-eu/",
    "/(?-i:Deploy)/",
    "/^$/",
    r"/conn\w+ refused/",
    "run:/00[0-4]7$/",
    "-run:/^RUN_0001/",
    "error:/TIMEOUT$/",
    "-/^run_00001/",
    '"tool timeout"',
    "has:word",
    "has:word status:failed",
    "deploy cost:>0.005 -model:gpt-* status:succeeded,failed",
)

MODELS = ("claude-haiku-4-5", "claude-sonnet-4-5", "gpt-5.2", "gpt-5.2-mini")
STATUSES = tuple(RunStatus)


def when(seconds_ago: float) -> str:
    return datetime.fromtimestamp(NOW - seconds_ago, UTC).isoformat().replace("+00:00", "Z")


def summary(number: int, rng: random.Random) -> RunSummary:
    """A run whose every field the filter reads is drawn at random (any of them unknown)."""
    status = rng.choice(STATUSES)
    started = rng.uniform(0, 7200)
    lasted = rng.uniform(0, 300)
    models = rng.sample(MODELS, rng.randint(0, 2))
    return RunSummary(
        run_id=f"run_{number:06d}",
        status=status,
        skill=rng.choice(("deploy", "research", "triage", "Deploy-EU", None)),
        agent=rng.choice(("ops", "bench", None)),
        error=rng.choice((None, None, "tool timeout", "Connection refused")),
        parent_run_id=rng.choice((None, None, f"run_{number // 2:06d}")),
        started_at=rng.choice((when(started), when(started), None)),
        last_event_at=when(max(started - lasted, 0)),
        completed_at=None if status.is_live else when(max(started - lasted, 0)),
        event_count=rng.choice((None, rng.randint(1, 200))),
        cost_usd=rng.choice((None, round(rng.uniform(0, 0.2), 4))),
        prompt_tokens=rng.choice((None, rng.randint(0, 30_000))),
        output_tokens=rng.randint(0, 3_000),
        model_calls=rng.choice((None, rng.randint(0, 9))),
        model=models[0] if models else None,
        models=models,
        user_id=rng.choice((None, "ada", "grace")),
        service=rng.choice((None, "deploy-api", "worker")),
        tags=rng.sample(["nightly", "eu", "smoke"], rng.randint(0, 2)),
        session_id=rng.choice((None, "session-7")),
        conversation_id=rng.choice((None, "thread-9")),
    )


def updates(numbers: range, rng: random.Random, *, initial: bool = False) -> SourceUpdate:
    made = [summary(number, rng) for number in numbers]
    return SourceUpdate(runs=[RunUpdate(made.run_id, made) for made in made], initial=initial)


def agree(snapshot: Snapshot, text: str, now: float) -> list[str]:
    """The runs the columns select, checked against a reading of every view."""
    run_filter = RunFilter.parse(text, now=now)
    chosen = snapshot.filtered(run_filter, now=now)
    each = run_filter.select_views(
        snapshot.runs, snapshot.sources_down(), now, snapshot.replayed_at
    )
    assert [run.key for run in chosen] == [run.key for run in each], text
    return [run.run_id for run in chosen]


@pytest.mark.parametrize("many_changes", [10_000, 7])  # read as filters read, or at once
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
async def test_the_columns_select_what_reading_each_view_selects(
    seed: int, many_changes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filters, "MANY_CHANGES", many_changes)
    rng = random.Random(seed)
    store = RunStore(detail=False)
    store.apply("a", updates(range(300), rng, initial=True))
    store.apply("b", updates(range(300, 500), rng, initial=True))
    store.flush()
    chosen = {text: agree(store.snapshot(), text, NOW) for text in FILTERS}
    # The runs tell the terms apart: most filters keep some and leave some.
    telling = [text for text, ids in chosen.items() if 0 < len(ids) < 500]
    assert len(telling) > len(FILTERS) * 3 // 4
    # Runs change, come and go between filterings: some in place (the order holds), some
    # new, gone, back, or started at another time (the runs are sorted again); at times
    # twice between two filterings.
    gone: list[str] = []
    for step in range(8):
        changed = [number for number in rng.sample(range(500), 40) if number < 300]
        if step % 3 == 0:  # their fields change, not their start: the order holds
            runs = {run.run_id: run.summary for run in store.snapshot().runs}
            remade = [
                msgspec.structs.replace(
                    runs[made.run_id], status=made.status, cost_usd=made.cost_usd
                )
                for made in (summary(number, rng) for number in changed)
                if made.run_id in runs
            ]
        else:
            remade = [summary(number, rng) for number in changed]
        store.apply("a", SourceUpdate(runs=[RunUpdate(made.run_id, made) for made in remade]))
        if step % 2:
            store.apply("b", updates(range(500 + step * 10, 510 + step * 10), rng))
            gone = [f"run_{number:06d}" for number in changed[:5]]
            store.apply("a", SourceUpdate(removed=gone))
        elif gone:  # back, under the same ids
            back = [summary(int(run_id[4:]), rng) for run_id in gone]
            store.apply("a", SourceUpdate(runs=[RunUpdate(made.run_id, made) for made in back]))
        store.flush()
        if step == 4:
            store.snapshot()  # sorted, not filtered: the next filtering lays out twice over
            store.apply("b", updates(range(600, 610), rng))
            store.flush()
        for text in FILTERS:
            agree(store.snapshot(), text, NOW + step * 20)  # the live runs' clocks run on
    await store.close()


class Told(RunSource):
    """A live source whose updates the test folds into the store itself."""

    live = True

    async def updates(self) -> AsyncIterator[SourceUpdate]:
        await asyncio.Event().wait()
        yield SourceUpdate()  # never

    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        return []

    async def close(self) -> None:
        pass


async def test_a_source_away_shows_its_live_runs_as_unknown_to_the_columns() -> None:
    rng = random.Random(7)
    store = RunStore(detail=False)
    store.add_source(Told("a"))
    store.add_source(Told("b"))
    store.apply("a", updates(range(200), rng, initial=True))
    store.apply("b", updates(range(200, 400), rng, initial=True))
    store.flush()
    for text in FILTERS:
        agree(store.snapshot(), text, NOW)
    store.apply("b", SourceUpdate(available=False))
    store.flush()
    snapshot = store.snapshot()
    assert set(snapshot.sources_down()) == {"b"}
    unknown = set(agree(snapshot, "status:unknown", NOW))
    live_in_b = {run.run_id for run in snapshot.runs if run.source == "b" and run.live}
    assert live_in_b
    assert live_in_b <= unknown
    assert not live_in_b & set(agree(snapshot, "running", NOW))
    for text in FILTERS:
        agree(snapshot, text, NOW)
    await store.close()


async def test_an_earlier_snapshot_is_answered_from_its_own_views() -> None:
    rng = random.Random(11)
    store = RunStore(detail=False)
    store.apply("a", updates(range(100), rng, initial=True))
    store.flush()
    before = store.snapshot()
    failed = agree(before, "status:failed", NOW)
    # Every run fails now: the columns say so of the store's runs now, and the snapshot
    # taken before still says what its own views say.
    store.apply(
        "a",
        SourceUpdate(
            runs=[
                RunUpdate(view.run_id, RunSummary(run_id=view.run_id, status=RunStatus.FAILED))
                for view in before.runs
            ]
        ),
    )
    store.flush()
    assert len(agree(store.snapshot(), "status:failed", NOW)) == 100
    assert agree(before, "status:failed", NOW) == failed
    await store.close()


async def test_a_model_call_folded_changes_the_cost_the_columns_read() -> None:
    """A run's summary may stay the same while its events add up (the store's totals):
    its row is read again all the same."""
    store = RunStore(detail=False)
    run = RunSummary(run_id="run_1", status=RunStatus.RUNNING, started_at=when(60))
    other = RunSummary(run_id="run_2", status=RunStatus.SUCCEEDED, started_at=when(90))
    store.apply("a", SourceUpdate(runs=[RunUpdate("run_1", run), RunUpdate("run_2", other)]))
    store.flush()
    assert agree(store.snapshot(), "cost:>0.1", NOW) == []
    for seq in (2, 3):
        call = decode_line(line(seq, "llm_call", {"model": "m", "cost_usd": 0.1}, run_id="run_1"))
        assert call is not None
        store.apply("a", SourceUpdate(runs=[RunUpdate("run_1", run, items=[call])]))
        store.flush()
    assert agree(store.snapshot(), "cost:>0.1", NOW) == agree(store.snapshot(), "calls:2", NOW)
    assert agree(store.snapshot(), "calls:2", NOW) == ["run_1"]
    assert agree(store.snapshot(), "calls:2 tokens:<1", NOW) == []
    await store.close()


TYPED = (
    "deploy -model:gpt-* cost:>0.005 status:succeeded,failed",
    'skill:deploy tag:nightly "tool timeout"',
    "duration:>1m run:000 -deploy since:1h",
    "model:claude agent:ops session:thread user:ad",
)


async def test_a_filter_typed_on_selects_what_it_selects_from_scratch() -> None:
    """Typed a letter at a time, and taken back: each filtering tests only the runs the one
    before kept where it may, and selects what reading every view selects, also as runs
    change between letters and live runs' clocks run on."""
    rng = random.Random(5)
    store = RunStore(detail=False)
    store.apply("a", updates(range(400), rng, initial=True))
    # Running for a little under a minute: over it as the clock runs on.
    running = [
        RunSummary(run_id=f"run_{900 + n:06d}", status=RunStatus.RUNNING, started_at=when(40 + n))
        for n in range(20)
    ]
    store.apply("a", SourceUpdate(runs=[RunUpdate(run.run_id, run) for run in running]))
    store.flush()
    for typed in TYPED:
        now = NOW  # the running runs pass a minute as each filter is typed
        letters = [typed[:end] for end in range(1, len(typed) + 1)]
        for number, text in enumerate([*letters, *reversed(letters[:-1])]):
            if number % 9 == 8:  # some runs change between two letters
                changed = [summary(n, rng) for n in rng.sample(range(400), 10)]
                store.apply("a", SourceUpdate(runs=[RunUpdate(s.run_id, s) for s in changed]))
                store.flush()
            if number % 5 == 4:
                now += 7
            try:
                RunFilter.parse(text, now=now)
            except FilterError:
                continue  # cost:> half typed
            agree(store.snapshot(), text, now)
    await store.close()


async def test_the_store_makes_its_columns_ahead_once_it_holds_many_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With many runs, an idle store makes every column before a first filtering needs it
    (one at a time), and they select what reading each view selects as runs change; with
    few, none is made until a filter reads it."""
    monkeypatch.setattr(store_module, "COLUMNS_AHEAD", 300)
    monkeypatch.setattr(store_module, "COLUMNS_AFTER", 0.01)
    rng = random.Random(13)
    store = RunStore(detail=False)
    store.add_source(Told("a"))
    store.apply("a", updates(range(200), rng, initial=True))
    await asyncio.sleep(0.3)  # idle, with too few runs to make them ahead
    columns = store.snapshot().columns
    assert columns is not None
    assert "text" in columns.unmade()
    store.apply("a", updates(range(200, 400), rng))
    async with asyncio.timeout(10):
        while columns.unmade():  # noqa: ASYNC110 (made in the background, and told to no one)
            await asyncio.sleep(0.01)
    for text in FILTERS:
        agree(store.snapshot(), text, NOW)
    store.apply("a", updates(range(100, 150), rng))  # changed, as the columns are kept
    store.apply("a", updates(range(400, 420), rng))  # new, laid out in the new order
    store.apply("a", SourceUpdate(removed=[f"run_{number:06d}" for number in range(10)]))
    await asyncio.sleep(0.2)
    for text in FILTERS:
        agree(store.snapshot(), text, NOW)
    await store.close()
