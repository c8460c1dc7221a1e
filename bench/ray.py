"""Runs on Ray workers beside runs in process, in the same run: what Ray costs and gives.

    .venv/bin/python bench/ray.py [--runs 3]

Starts a local Ray cluster (``ray.init(num_cpus=2)``) and prints, each a
median of ``--runs`` repetitions, for the Ray executor and the in-process
one: 1,000 no-op runs (runs/s), one run at a time (start to result),
events per second from the agent into its ledger, and cancel to canceled
(p50/p99). Then Ray's own costs: cluster start-up, the hosts' start-up,
and the memory of the cluster's processes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# This file is called ray.py: keep its directory off the path, or `import ray` finds it.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import ray  # noqa: E402

from ledger_reader import ToolCall  # noqa: E402
from run_manager import Manager, model_call, tool_call  # noqa: E402
from run_manager.executors.ray import RayExecutor  # noqa: E402


class NoOp:
    name = "noop"

    async def run(self, input: str) -> str:
        return input


class Chatter:
    """Streams ``count`` chunks of about 60 bytes, letting the loop turn every 100."""

    name = "chatter"

    def __init__(self, count: int) -> None:
        self.count = count

    async def run(self, input: str) -> str:
        async with model_call("m") as model:
            for number in range(self.count):
                model.chunk(f"token {number} of a streamed answer, about sixty bytes long")
                if number % 100 == 99:
                    await asyncio.sleep(0)
        return "done"


class Waiter:
    """Opens a tool call and waits in it until cancelled."""

    name = "waiter"

    async def run(self, input: str) -> str:
        async with tool_call("wait", None):
            await asyncio.sleep(3600)
        return "woke"


MakeExecutor = Callable[[], Any]


async def noop_runs(count: int, executor: MakeExecutor, ledger_dir: Path) -> float:
    """Seconds for ``count`` no-op runs started at once, each writing its ledger."""
    async with Manager(ledger_dir=ledger_dir, executor=await ready(executor)) as manager:
        agent = NoOp()
        started = time.perf_counter()
        handles = [manager.start(agent, "x") for _ in range(count)]
        for handle in handles:
            await handle.result()
        return time.perf_counter() - started


async def one_at_a_time(count: int, executor: MakeExecutor, ledger_dir: Path) -> list[float]:
    """Milliseconds from start to result of one no-op run, the only one live."""
    took = []
    async with Manager(ledger_dir=ledger_dir, executor=await ready(executor)) as manager:
        agent = NoOp()
        for _ in range(count):
            started = time.perf_counter()
            await manager.start(agent, "x").result()
            took.append((time.perf_counter() - started) * 1000)
    return took


async def ledger_rate(events: int, executor: MakeExecutor, ledger_dir: Path) -> float:
    """Ledger lines per second from a run that streams ``events`` chunks."""
    async with Manager(ledger_dir=ledger_dir, executor=await ready(executor)) as manager:
        started = time.perf_counter()
        handle = manager.start(Chatter(events), "x")
        await handle.result()
        elapsed = time.perf_counter() - started
        path = handle.info().ledger_path
    assert path is not None
    lines = path.read_bytes().count(b"\n")
    assert lines >= events + 5, lines
    return lines / elapsed


async def cancel_latency(samples: int, executor: MakeExecutor, ledger_dir: Path) -> list[float]:
    """Milliseconds from ``cancel`` to the run's end, once the agent waits in its tool call."""
    latencies = []
    async with Manager(ledger_dir=ledger_dir, executor=await ready(executor)) as manager:
        for _ in range(samples):
            handle = manager.start(Waiter(), "x")
            async for item in manager.hub.subscribe(handle.run_id):
                if isinstance(item, ToolCall):
                    break
            started = time.perf_counter()
            handle.cancel("bench")
            await handle.wait()
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies


async def ready(make: MakeExecutor) -> Any:
    executor = make()
    if isinstance(executor, RayExecutor):
        await executor.placements()  # hosts up before the clock starts
    return executor


def cluster_memory_mb() -> tuple[int, float, float]:
    """The processes of the local cluster (this one's descendants): count, PSS and RSS in MB."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("PPid:"):
                parents[int(entry)] = int(line.split()[1])
                break
    mine = {os.getpid()}
    changed = True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in mine and pid not in mine:
                mine.add(pid)
                changed = True
    mine.discard(os.getpid())
    pss = rss = 0.0
    for pid in mine:
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in rollup.splitlines():
            if line.startswith("Pss:"):
                pss += int(line.split()[1]) / 1024
            elif line.startswith("Rss:"):
                rss += int(line.split()[1]) / 1024
    return len(mine), pss, rss


def own_rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * 4096 / 1e6


def percentile(values: list[float], point: int) -> float:
    return statistics.quantiles(values, n=100)[point - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="runtop-bench-", dir=_HERE))
    executors: dict[str, MakeExecutor] = {"ray": RayExecutor, "in-process": lambda: None}
    try:
        before = own_rss_mb()
        started = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        startup = time.perf_counter() - started
        started = time.perf_counter()
        asyncio.run(ready(RayExecutor))
        hosts = time.perf_counter() - started
        print(f"Ray {ray.__version__}: local cluster (num_cpus=2) started in {startup:.2f} s")
        print(f"  two hosts (async actors) up in {hosts:.2f} s")

        def each(label: str, measure: Callable[[str, int], float], digits: int = 0) -> None:
            figures = {name: [measure(name, n) for n in range(args.runs)] for name in executors}
            shown = " / ".join(
                f"{name} {statistics.median(values):,.{digits}f}"
                for name, values in figures.items()
            )
            print(f"{label}: {shown} (median of {args.runs})")

        each(
            "1,000 no-op runs at once, runs/s",
            lambda name, n: (
                1000 / asyncio.run(noop_runs(1000, executors[name], work / f"noop-{name}-{n}"))
            ),
        )
        each(
            "one run at a time, start to result, median ms",
            lambda name, n: statistics.median(
                asyncio.run(one_at_a_time(100, executors[name], work / f"one-{name}-{n}"))
            ),
            digits=2,
        )
        each(
            "ledger events/s from one agent streaming 100,000 chunks (target >= 20,000 on Ray)",
            lambda name, n: asyncio.run(
                ledger_rate(100_000, executors[name], work / f"rate-{name}-{n}")
            ),
        )
        latencies = {
            name: asyncio.run(cancel_latency(50 * args.runs, executors[name], work / f"c-{name}"))
            for name in executors
        }
        print(
            "cancel -> canceled, ms p50 / p99: "
            + "; ".join(
                f"{name} {statistics.median(values):.2f} / {percentile(values, 99):.2f}"
                for name, values in latencies.items()
            )
        )
        count, pss, rss = cluster_memory_mb()
        print(
            f"memory of the local cluster: {count} processes, {pss:,.0f} MB PSS "
            f"({rss:,.0f} MB RSS summed); this process {own_rss_mb():,.0f} MB "
            f"({before:,.0f} MB before ray.init)"
        )
    finally:
        ray.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
