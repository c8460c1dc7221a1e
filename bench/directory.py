"""Summaries of a directory of 10,000 ledgers, each from a cold process.

Every run starts a fresh interpreter that imports ledger_reader, scans the
tree and summarises every ledger (head and tail, lock probes for unfinished
runtop runs). The time is measured from before the process is spawned to
its exit; peak memory is the child's maximum resident set. The page cache is
warm: the files were just written or read.

Then ``runtop ls DIR --json`` beside its floor, in turns: a bare Python
process that only finds the ledgers and reads 4 KiB of each one's head and
tail (ISSUE 11: runtop must stay within 3x of it), with the ratio of the
medians. Then ``runtop ls`` (the table), and the CPU an idle watcher of
that directory uses: the store following it (as runtop does), once every
run is listed and detailed, over 10 s.

    .venv/bin/python bench/directory.py [--runs 5] [--only-ls]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.generate import ledger_directory

CHILD = """
import json, sys, time
started = time.perf_counter()
from ledger_reader import scan_paths
from pathlib import Path
result = scan_paths([Path(sys.argv[1])])
summaries = result.summaries()
statuses = {}
for summary in summaries:
    statuses[summary.status.value] = statuses.get(summary.status.value, 0) + 1
print(json.dumps({"runs": len(summaries), "errors": len(result.errors), "statuses": statuses,
                  "inside_s": time.perf_counter() - started}))
"""


FLOOR = """
import os, sys
def walk(directory):
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_dir():
                yield from walk(entry.path)
            elif entry.name.endswith(".jsonl"):
                yield entry.path
count = 0
for name in walk(sys.argv[1]):
    fd = os.open(name, os.O_RDONLY)
    size = os.fstat(fd).st_size
    os.pread(fd, 4096, 0)
    os.pread(fd, 4096, max(0, size - 4096))
    os.close(fd)
    count += 1
print(count)
"""
"""The floor: find every ledger, open it, read 4 KiB of its head and of its tail."""


def timed(command: list[str]) -> tuple[float, float]:
    """Seconds from spawn to exit, output into a pipe; and the CPU seconds the process used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.PIPE, check=True, timeout=300)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def ls_json_against_floor(root: Path, runs: int) -> None:
    """``runtop ls DIR --json`` and the floor, in turns so both see the same machine.

    The CPU each used is printed too: on a machine shared with other work the
    wall time of a 1 s job swings by 2x from run to run, its CPU much less.
    """
    runtop = str(Path(sys.executable).parent / "runtop")
    listed: list[tuple[float, float]] = []
    floors: list[tuple[float, float]] = []
    for _ in range(runs):
        floors.append(timed([sys.executable, "-c", FLOOR, str(root)]))
        listed.append(timed([runtop, "ls", str(root), "--json"]))
    ls_median = statistics.median(wall for wall, _ in listed)
    floor_median = statistics.median(wall for wall, _ in floors)
    ls_cpu = statistics.median(cpu for _, cpu in listed)
    floor_cpu = statistics.median(cpu for _, cpu in floors)
    print(
        f"runtop ls DIR --json: {ls_median:.3f} s, CPU {ls_cpu:.3f} s "
        f"(median of {runs}: {', '.join(f'{wall:.3f}' for wall, _ in listed)})"
    )
    print(
        f"floor (open, 4 KiB of head and tail, bare Python): {floor_median:.3f} s, "
        f"CPU {floor_cpu:.3f} s ({', '.join(f'{wall:.3f}' for wall, _ in floors)})"
    )
    print(
        f"ratio: {ls_median / floor_median:.2f} (target <= 3); "
        f"of CPU: {ls_cpu / floor_cpu:.2f}; load average {os.getloadavg()[0]:.1f}"
    )


def one_run(root: Path) -> tuple[float, float, dict[str, object]]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root)], capture_output=True, text=True, check=True
    )
    elapsed = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    report = json.loads(done.stdout)
    # ru_maxrss of children is the largest of any child so far; each run is alike.
    return elapsed, max(peak_kib, before) / 1024, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only-ls", action="store_true", help="only ls --json and its floor")
    args = parser.parse_args()
    root = ledger_directory()
    files = sum(1 for _ in root.rglob("*.jsonl"))
    print(f"directory: {root.name}, {files} ledgers in 100 subdirectories, warm page cache")
    ls_json_against_floor(root, max(args.runs, 5))
    if args.only_ls:
        return
    times: list[float] = []
    peaks: list[float] = []
    for _ in range(args.runs):
        elapsed, peak, report = one_run(root)
        times.append(elapsed)
        peaks.append(peak)
    assert report["runs"] == files, report
    print(
        f"summaries of all ledgers, cold process: {statistics.median(times):.3f} s "
        f"(median of {args.runs}: {', '.join(f'{t:.3f}' for t in times)}; target < 1.5 s)"
    )
    print(f"  of which inside the process after start-up: {report['inside_s']:.3f} s (last run)")
    print(f"peak resident memory: {max(peaks):.0f} MB (target < 150 MB)")
    print(f"statuses: {report['statuses']}")
    listed = [runtop_ls(root) for _ in range(min(args.runs, 3))]
    print(
        f"runtop ls of it (a table of {files:,} rows, into a pipe): "
        f"{statistics.median(listed):.2f} s ({', '.join(f'{t:.2f}' for t in listed)})"
    )
    shares = [asyncio.run(idle_share(root, files)) for _ in range(min(args.runs, 3))]
    print(
        f"following it idle, once loaded: {statistics.median(shares):.1%} of a core "
        f"({', '.join(f'{share:.1%}' for share in shares)})"
    )


def runtop_ls(root: Path) -> float:
    """Seconds for ``runtop ls DIR`` from spawn to exit, its table written into a pipe."""
    runtop = Path(sys.executable).parent / "runtop"
    started = time.perf_counter()
    subprocess.run([str(runtop), "ls", str(root)], stdout=subprocess.PIPE, check=True, timeout=120)
    return time.perf_counter() - started


async def idle_share(root: Path, files: int) -> float:
    """CPU share of a store following ``root`` with nothing written, once it is all loaded."""
    from inspector import LedgerDirectorySource, RunStore

    async with RunStore() as store:
        store.add_source(LedgerDirectorySource(root))
        changes = store.changes()
        while not (
            len(runs := store.snapshot().runs) == files and all(run.detailed for run in runs)
        ):
            await anext(changes)
        await asyncio.sleep(2)  # the last flushes and probes
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.sleep(10)
        return (time.process_time() - cpu) / (time.perf_counter() - wall)


if __name__ == "__main__":
    main()
