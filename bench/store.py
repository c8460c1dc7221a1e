"""The inspector's store: keeping up with live runs, snapshots of many runs, ranges of a huge run.

    .venv/bin/python bench/store.py [--seconds 60] [--runs 5]

1. 100 live runs in a ledger directory, written by another process at
   10,000 events/s in all: every second, the events written and the events
   the store has folded, and the store process's CPU use.
2. A snapshot of 10,000 and of 100,000 runs for the UI: the cached case and
   the case where a new run joins the order.
3. Events 1,000,000 to 1,000,100 of the 1 GB ledger (bench/generate.py)
   through the store, before the index is built and after.
4. Filtering 100,000 runs in the store (the app's ``/``): a snapshot's runs
   through filters of every kind of term (numbers, a range, a status, a model
   glob, free text, regular expressions, the summary's part of a ``has:``
   filter, a mix), read from the store's columns
   (``inspector.filters.FilterColumns``), each from scratch (after an
   unrelated filter), beside a floor (a bare list comprehension on the status,
   in turns); apart: the columns made ahead (as the store does once idle), a
   first filtering with them made, a filtering after a new run came (the
   columns laid out in the new order), a filter typed on by a letter or a
   term (only the runs the one before kept are tested), and a first filtering
   that makes its columns itself (before the store made them)
   (``--only-filter`` runs this part alone).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.generate import big_ledger
from inspector import LedgerDirectorySource, RunKey, RunStore, RunUpdate, SourceUpdate
from inspector.filters import RunFilter
from ledger_reader import RunStatus, RunSummary

WRITER = textwrap.dedent(
    """
    import json, os, sys, time
    root, runs, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    seconds = float(sys.argv[4])
    fds = []
    for number in range(runs):
        run_id = f"run_20261129T060000000_{number:016x}"
        path = os.path.join(root, run_id + ".jsonl")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        line = {"run_id": run_id, "seq": 1, "time": "2026-11-29T06:00:00.000000Z",
                "type": "run_started",
                "payload": {"skill": "load", "agent": "bench", "input": {"n": number}}}
        os.write(fd, (json.dumps(line) + "\\n").encode())
        fds.append((fd, run_id))
    seqs = [1] * runs
    written = runs
    started = time.monotonic()
    tick = 0.01
    per_tick = int(rate * tick)
    next_report = started + 1
    chunk = {"index": 0, "delta": "streamed text of a model answer, forty bytes",
             "node_id": "llm:m#1"}
    while time.monotonic() - started < seconds:
        for i in range(per_tick):
            number = (written + i) % runs
            fd, run_id = fds[number]
            seqs[number] += 1
            line = {"run_id": run_id, "seq": seqs[number], "time": "2026-11-29T06:00:01.000000Z",
                    "type": "llm_chunk", "payload": chunk}
            os.write(fd, (json.dumps(line, separators=(",", ":")) + "\\n").encode())
        written += per_tick
        now = time.monotonic()
        if now >= next_report:
            print(written, flush=True)
            next_report += 1
        target = started + (written - runs) / rate
        if target > now:
            time.sleep(target - now)
    print(written, flush=True)
    """
)


async def keep_up(seconds: float) -> None:
    with tempfile.TemporaryDirectory(dir=Path(__file__).parent) as tmp:
        root = Path(tmp)
        store = RunStore()
        store.add_source(LedgerDirectorySource(root, name="load"))
        await asyncio.sleep(0.5)
        writer = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            WRITER,
            str(root),
            "100",
            "10000",
            str(seconds),
            stdout=subprocess.PIPE,
        )
        assert writer.stdout is not None
        cpu_before = time.process_time()
        wall_before = time.monotonic()
        rows = []
        while True:
            raw = await writer.stdout.readline()
            if not raw:
                break
            written = int(raw)
            cpu = time.process_time()
            wall = time.monotonic()
            applied = store.applied
            rows.append((written, applied, (cpu - cpu_before) / (wall - wall_before)))
            cpu_before, wall_before = cpu, wall
        await writer.wait()
        await asyncio.sleep(1.0)
        final = store.applied
        backlogs = [written - applied for written, applied, _ in rows]
        cpus = [load for _, _, load in rows[1:]]
        print(f"100 live runs, 10,000 events/s for {seconds:.0f} s:")
        print(
            f"  backlog (written - folded) each second: first {backlogs[:3]}, "
            f"last {backlogs[-3:]}, max {max(backlogs)}"
        )
        print(f"  after the writer stopped: {rows[-1][0]} written, {final} folded")
        print(
            f"  store process CPU: median {statistics.median(cpus):.0%} of a core, "
            f"max {max(cpus):.0%} (target < 100%)"
        )
        await store.close()


def snapshot_times(runs: int, repeats: int) -> tuple[float, float]:
    async def measure() -> tuple[float, float]:
        store = RunStore(detail=False)
        base = time.time() - 86_400
        updates = SourceUpdate(initial=True)
        for number in range(runs):
            summary = RunSummary(
                run_id=f"run_{number:08d}",
                status=RunStatus.SUCCEEDED,
                skill="s",
                started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(base + number)),
            )
            updates.runs.append(RunUpdate(summary.run_id, summary))
        store.apply("bench", updates)
        store.flush()
        cached: list[float] = []
        resorted: list[float] = []
        for number in range(repeats):
            started = time.perf_counter()
            snapshot = store.snapshot()
            cached.append((time.perf_counter() - started) * 1000)
            assert len(snapshot.runs) == runs + number
            fresh = RunSummary(run_id=f"run_new_{number}", status=RunStatus.RUNNING)
            store.apply("bench", SourceUpdate(runs=[RunUpdate(fresh.run_id, fresh)]))
            store.flush()
            started = time.perf_counter()
            snapshot = store.snapshot()
            resorted.append((time.perf_counter() - started) * 1000)
        return statistics.median(cached), statistics.median(resorted)

    return asyncio.run(measure())


FILTERS = (
    "cost:>0.01 duration:>30s",
    "tokens:>=10k calls:>2",
    "cost:0.01..0.10",
    "status:failed",
    "model:claude-*",
    "deploy",
    "has:timeout status:failed",
    "deploy -model:gpt-* cost:>0.005",
    "/dep.oy/",
    "/Dep.oy/",
)
TYPED_ON = (
    ("deplo", "deploy"),
    ("cost:>0.01", "cost:>0.01 duration:>30s"),
    ("model:claude-*", "model:claude-* status:failed"),
)
"""A filter, and the same typed on by a letter or a term."""


def filter_times(runs: int, repeats: int) -> dict[str, tuple[float, int]]:
    """Each of :data:`FILTERS` over a snapshot of ``runs`` runs whose figures differ: the
    median milliseconds of ``repeats`` filterings, and the runs it kept (``has:`` is the
    search of the runs' files that follows: only the terms of the summary are timed)."""

    async def measure() -> dict[str, tuple[float, int]]:
        store = RunStore(detail=False)
        base = time.time() - 86_400
        models = ["claude-haiku-4-5", "claude-sonnet-4-5", "gpt-5.2"]
        statuses = [RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.SUCCEEDED, RunStatus.CANCELED]
        updates = SourceUpdate(initial=True)
        for number in range(runs):
            start = base + number * 0.5
            summary = RunSummary(
                run_id=f"run_{number:08d}",
                status=statuses[number % len(statuses)],
                skill=("research", "deploy", "triage")[number % 3],
                started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start)),
                last_event_at=time.strftime(
                    "%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + (number * 7) % 120)
                ),
                event_count=10 + number % 90,
                cost_usd=(number % 200) / 10_000 if number % 7 else None,
                prompt_tokens=(number * 37) % 20_000,
                output_tokens=(number * 11) % 2_000,
                model_calls=number % 6,
                model=models[number % 3],
                models=[models[number % 3]],
            )
            updates.runs.append(RunUpdate(summary.run_id, summary))
        store.apply("bench", updates)
        store.flush()
        snapshot = store.snapshot()
        assert len(snapshot.runs) == runs
        times: dict[str, tuple[float, int]] = {}
        floor: list[float] = []  # the plainest pass over the same runs, in turns: a peer
        for _ in range(repeats):
            started = time.perf_counter()
            kept = [run for run in snapshot.runs if run.summary.status is RunStatus.FAILED]
            floor.append((time.perf_counter() - started) * 1000)
        times["(floor: a list comprehension on the status)"] = (statistics.median(floor), len(kept))
        started = time.perf_counter()
        store.make_filter_columns()  # as the store does once it is idle (made once)
        times["(every column made ahead, once, while the store is idle)"] = (
            (time.perf_counter() - started) * 1000,
            0,
        )
        made: list[float] = []
        unrelated = RunFilter.parse("status:running")  # from which no filter here narrows
        for text in FILTERS:
            run_filter = RunFilter.parse(text)
            started = time.perf_counter()
            snapshot.filtered(run_filter)  # the fields' columns made, as the first / does
            made.append((time.perf_counter() - started) * 1000)
            taken: list[float] = []
            for _ in range(repeats):
                snapshot.filtered(unrelated)
                started = time.perf_counter()
                kept = snapshot.filtered(run_filter)
                taken.append((time.perf_counter() - started) * 1000)
            times[text] = (statistics.median(taken), len(kept))
        times["(a first filtering, the columns made ahead: the slowest)"] = (max(made), 0)
        for first, then in TYPED_ON:
            typed: list[float] = []
            for _ in range(repeats):
                snapshot.filtered(RunFilter.parse(first))
                run_filter = RunFilter.parse(then)
                started = time.perf_counter()
                kept = snapshot.filtered(run_filter)
                typed.append((time.perf_counter() - started) * 1000)
            times[f"(typed on from {first}) {then}"] = (statistics.median(typed), len(kept))
        # A run comes: the store sorts its runs again, and the columns are laid out anew.
        run_filter = RunFilter.parse(FILTERS[0])
        after: list[float] = []
        for number in range(repeats):
            fresh = RunSummary(run_id=f"run_new_{number}", status=RunStatus.RUNNING)
            store.apply("bench", SourceUpdate(runs=[RunUpdate(fresh.run_id, fresh)]))
            store.flush()
            snapshot = store.snapshot()
            started = time.perf_counter()
            kept = snapshot.filtered(run_filter)
            after.append((time.perf_counter() - started) * 1000)
        times[f"(after a new run) {FILTERS[0]}"] = (statistics.median(after), len(kept))
        made = []
        snapshot = store.snapshot()
        assert snapshot.columns is not None
        for text in FILTERS:
            snapshot.columns.clear()  # as if the store had not made them yet
            started = time.perf_counter()
            snapshot.filtered(RunFilter.parse(text))
            made.append((time.perf_counter() - started) * 1000)
        times["(a first filtering before they were made, making them: the slowest)"] = (
            max(made),
            0,
        )
        await store.close()
        return times

    return asyncio.run(measure())


async def huge_range() -> tuple[float, float]:
    path = big_ledger()
    with tempfile.TemporaryDirectory(dir=Path(__file__).parent) as tmp:
        os.symlink(path, Path(tmp) / "run_20261129T064500123_b16b16b16b16b16b.jsonl")
        store = RunStore(detail=False, flush_interval=0.001)
        source = LedgerDirectorySource(tmp, name="big")
        store.add_source(source)
        key = RunKey("big", "run_20261129T064500123_b16b16b16b16b16b")
        changes = store.changes()
        while store.get(key) is None:
            await anext(changes)
        started = time.perf_counter()
        items = await store.events(key, 1_000_000, 1_000_100)
        cold = (time.perf_counter() - started) * 1000
        assert [item.seq for item in items] == list(range(1_000_001, 1_000_101))  # type: ignore[union-attr]
        # event_count answers at once for a ledger this big (its last seq): wait for the
        # index itself, or "after" would be measured beside the threads building it.
        assert await source.wait_indexed(key.run_id)
        started = time.perf_counter()
        items = await store.events(key, 1_000_000, 1_000_100)
        warm = (time.perf_counter() - started) * 1000
        assert len(items) == 100
        await store.close()
        return cold, warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--only-filter", action="store_true")
    args = parser.parse_args()
    if args.only_filter:
        print(
            f"filtering 100,000 runs (medians of {args.runs * 4}; target <= 20 ms), "
            f"load {os.getloadavg()[0]:.1f}:"
        )
        for text, (taken, kept) in filter_times(100_000, args.runs * 4).items():
            print(f"  {text!r:36} {taken:7.2f} ms  ({kept:,} runs kept)")
        return
    if not args.skip_load:
        asyncio.run(keep_up(args.seconds))
    for runs in (10_000, 100_000):
        cached, resorted = snapshot_times(runs, args.runs * 4)
        print(
            f"snapshot of {runs:,} runs: {cached:.3f} ms cached, {resorted:.2f} ms after a "
            f"new run (medians; target < 20 ms)"
        )
    results = [asyncio.run(huge_range()) for _ in range(args.runs)]
    print(
        f"events 1,000,000-1,000,100 of a 1 GB ledger: "
        f"{statistics.median(r[0] for r in results):.2f} ms before the index, "
        f"{statistics.median(r[1] for r in results):.2f} ms after (medians; target < 20 ms)"
    )


if __name__ == "__main__":
    main()
