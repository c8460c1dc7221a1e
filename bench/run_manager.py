"""The run manager's figures: runs per second, memory over many runs, ledger writes, cancels.

    .venv/bin/python bench/run_manager.py [--runs 5]

Medians of ``--runs`` repetitions. Ledgers go to a temporary directory on
the same disk as the project's.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run_manager import Manager, model_call


class NoOp:
    name = "noop"

    async def run(self, input: str) -> str:
        return input


class Chatter:
    name = "chatter"

    def __init__(self, count: int) -> None:
        self.count = count

    async def run(self, input: str) -> str:
        async with model_call("m") as model:
            for number in range(self.count):
                model.chunk(f"token {number} of a streamed answer, about sixty bytes long")
        return "done"


class Sleeper:
    name = "sleeper"

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def run(self, input: str) -> str:
        self.started.set()
        await asyncio.sleep(60)
        return "woke"


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        resident = int(handle.read().split()[1])
    return resident * 4096 / 1e6


async def noop_runs(count: int, ledger_dir: Path | None) -> float:
    agent = NoOp()
    async with Manager(ledger_dir=ledger_dir) as manager:
        started = time.perf_counter()
        handles = [manager.start(agent, "x") for _ in range(count)]
        for handle in handles:
            await handle.wait()
        return time.perf_counter() - started


async def memory_after(counts: list[int]) -> list[float]:
    """RSS after each cumulative number of runs, in batches of 1,000."""
    agent = NoOp()
    readings = []
    done = 0
    async with Manager(ledger_dir=False) as manager:
        for target in counts:
            while done < target:
                handles = [manager.start(agent, "x") for _ in range(1000)]
                for handle in handles:
                    await handle.wait()
                done += 1000
            del handles
            gc.collect()
            readings.append(rss_mb())
    return readings


async def ledger_rate(events: int, ledger_dir: Path) -> float:
    async with Manager(ledger_dir=ledger_dir) as manager:
        started = time.perf_counter()
        handle = manager.start(Chatter(events), "x")
        await handle.result()
        elapsed = time.perf_counter() - started
        path = handle.info().ledger_path
    assert path is not None
    lines = path.read_bytes().count(b"\n")
    assert lines == events + 5, lines  # run_started, node_enter, llm_call, node_exit, run_completed
    return lines / elapsed


async def cancel_latency(samples: int) -> list[float]:
    latencies = []
    async with Manager(ledger_dir=False) as manager:
        for _ in range(samples):
            agent = Sleeper()
            handle = manager.start(agent, "x")
            await agent.started.wait()
            started = time.perf_counter()
            handle.cancel("bench")
            await handle.wait()
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="runtop-bench-", dir=Path(__file__).parent))
    try:
        times = [asyncio.run(noop_runs(10_000, None)) for _ in range(args.runs)]
        print(
            f"10,000 no-op runs started and finished: {statistics.median(times):.3f} s "
            f"(median of {args.runs}; target < 1 s)"
        )
        times = []
        for number in range(args.runs):
            times.append(asyncio.run(noop_runs(10_000, work / f"noop-{number}")))
        print(f"  the same, each writing its ledger: {statistics.median(times):.3f} s")

        readings = asyncio.run(memory_after([1_000, 10_000, 50_000, 100_000]))
        print(
            f"RSS after 1,000 / 10,000 / 50,000 / 100,000 runs (retained 100): "
            f"{' / '.join(f'{r:.1f}' for r in readings)} MB (target: flat)"
        )

        rates = [asyncio.run(ledger_rate(200_000, work / f"rate-{n}")) for n in range(args.runs)]
        print(
            f"ledger events written: {statistics.median(rates):,.0f} per second "
            f"(median of {args.runs}; target >= 100,000)"
        )

        latencies = asyncio.run(cancel_latency(50 * args.runs))
        cuts = statistics.quantiles(latencies, n=100)
        print(
            f"cancel -> canceled, async agent: median {statistics.median(latencies):.3f} ms, "
            f"p99 {cuts[98]:.3f} ms (target < 10 ms)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
