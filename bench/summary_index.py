"""The attach server's memory over 100,000 runs: flat with the summary index bounded.

    .venv/bin/python bench/summary_index.py [--runs 200000] [--every 25000] [--repeat 3]

(about four minutes a repetition on 2 cores.)

Each run makes one recorded tool call (six events), through a Manager with
an AttachServer listening to it, as in a long-lived ``runtop serve``. The
resident set size (after a garbage collection) is printed every
``--every`` runs, for the bounded index (the default, 10,000 finished runs
kept) and, as the peer in the same run, an index with no bound (how the
server behaved before). Each variant runs in a fresh process; no ledgers
are written, so the figure is the server's own memory. Memory rises at
first while the bounded structures fill: the index (10,000 runs), the
ring of live SSE frames (65,536 events, ~11,000 runs) and the cache of
``ledger_reader.parse_time`` (65,536 times, one a run here: ~10 MiB, full
at ~66,000 runs). The figure is the median, over ``--repeat``
repetitions, of the growth over the last 100,000 runs (from ``--settle``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run_manager import Manager, tool_call
from run_manager.server.attach import AttachServer
from run_manager.server.summary_index import MAX_FINISHED

UNBOUNDED = 10**9


class Lookup:
    name = "lookup"

    async def run(self, input: str) -> str:
        async with tool_call("lookup", {"q": input}) as call:
            call.output = f"found {input}"
        return input.upper()


def resident_mib() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)


async def measure(runs: int, every: int, max_finished: int) -> list[tuple[int, float, int]]:
    manager = Manager(ledger_dir=False)
    server = AttachServer(manager, token="bench", max_finished_runs=max_finished)
    agent = Lookup()
    points = []
    done = 0
    while done < runs:
        batch = [manager.start(agent, str(done + n), detached=True) for n in range(100)]
        await asyncio.gather(*(handle.wait() for handle in batch))
        done += len(batch)
        if done % every == 0:
            gc.collect()
            points.append((done, resident_mib(), len(server.book.runs)))
    await server.close()
    await manager.close()
    return points


def child(arguments: argparse.Namespace) -> None:
    points = asyncio.run(measure(arguments.runs, arguments.every, arguments.max_finished))
    print(json.dumps(points))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200_000)
    parser.add_argument("--every", type=int, default=25_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--settle",
        type=int,
        default=100_000,
        help="growth is counted from here, once every bounded structure is full",
    )
    parser.add_argument("--max-finished", type=int, default=None, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.max_finished is not None:
        child(arguments)
        return
    growth: dict[str, list[float]] = {"bounded": [], "unbounded (peer)": []}
    for repetition in range(arguments.repeat):
        for label, bound in (("bounded", MAX_FINISHED), ("unbounded (peer)", UNBOUNDED)):
            output = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--runs",
                    str(arguments.runs),
                    "--every",
                    str(arguments.every),
                    "--max-finished",
                    str(bound),
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            points = json.loads(output)
            settled = next(mib for runs, mib, _ in points if runs >= arguments.settle)
            growth[label].append(points[-1][1] - settled)
            if repetition == 0:
                print(f"{label}: runs, RSS MiB, runs in the index")
                for runs, mib, indexed in points:
                    print(f"  {runs:>7,}  {mib:7.1f}  {indexed:>7,}")
    for label, values in growth.items():
        each = ", ".join(f"{value:.1f}" for value in values)
        print(
            f"{label}: RSS growth from {arguments.settle:,} to {arguments.runs:,} runs, "
            f"median of {len(values)}: {statistics.median(values):.1f} MiB ({each})"
        )


if __name__ == "__main__":
    main()
