"""Summaries of a directory of 10,000 ledgers, each from a cold process.

Every run starts a fresh interpreter that imports ledger_reader, scans the
tree and summarises every ledger (head and tail, lock probes for unfinished
runtop runs). The time is measured from before the process is spawned to
its exit; peak memory is the child's maximum resident set. The page cache is
warm: the files were just written or read.

Then ``runtop ls DIR --json`` beside its floor, in turns: a bare Python
process that only finds the ledgers and reads 4 KiB of each one's head and
tail (ISSUE 11: runtop must stay within 3x of it), with the ratio of the
medians. ``ls`` is timed twice: cold (a fresh ``RUNTOP_HOME``: the first
listing, which reads every ledger and writes the summary cache) and warm
(the cache valid: only a stat per ledger, and a lock probe per unfinished
runtop run). ``--against CHECKOUT`` times another checkout's ``ls --json``
in the same turns (with a fresh home each time, so cold too). Then ``runtop
ls`` (the table), and the CPU an idle watcher of that directory uses: the
store following it (as runtop does), once every run is listed and detailed,
over 10 s.

    .venv/bin/python bench/directory.py [--runs 5] [--only-ls] [--against CHECKOUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.generate import DATA, ledger_directory
from ledger_reader.summary_cache import reader_fingerprint

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


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Seconds from spawn to exit, output into a pipe; and the CPU seconds the process used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.PIPE, check=True, timeout=300, env=env)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


AGAINST = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); from tui.cli import main; sys.exit(main())"
)
"""Another checkout's ``runtop``: its ``tui.cli`` first on the path, run by this interpreter."""


def ls_json_against_floor(root: Path, runs: int, against: Path | None = None) -> None:
    """``runtop ls DIR --json``, cold and warm, and the floor, in turns so all see one machine.

    The CPU each used is printed too: on a machine shared with other work the
    wall time of a 1 s job swings by 2x from run to run, its CPU much less.
    """
    runtop = str(Path(sys.executable).parent / "runtop")
    homes = DATA / "homes"
    shutil.rmtree(homes, ignore_errors=True)
    warm_home = homes / "warm"
    warm_env = {**os.environ, "RUNTOP_HOME": str(warm_home)}
    timed([runtop, "ls", str(root), "--json"], warm_env)  # writes the cache the warm runs use
    cache_bytes = sum(path.stat().st_size for path in (warm_home / "cache").iterdir())
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in ("floor", "cold", "warm")}
    if against is not None:
        times["against"] = []
    for turn in range(runs):
        times["floor"].append(timed([sys.executable, "-c", FLOOR, str(root)]))
        cold_env = {**os.environ, "RUNTOP_HOME": str(homes / f"cold-{turn}")}
        times["cold"].append(timed([runtop, "ls", str(root), "--json"], cold_env))
        times["warm"].append(timed([runtop, "ls", str(root), "--json"], warm_env))
        if against is not None:
            other_env = {**os.environ, "RUNTOP_HOME": str(homes / f"against-{turn}")}
            command = [sys.executable, "-c", AGAINST, str(against), "ls", str(root), "--json"]
            times["against"].append(timed(command, other_env))
    shutil.rmtree(homes, ignore_errors=True)
    floor = statistics.median(wall for wall, _ in times["floor"])
    floor_cpu = statistics.median(cpu for _, cpu in times["floor"])
    labels = {
        "floor": "floor (open, 4 KiB of head and tail, bare Python)",
        "cold": "runtop ls DIR --json, cold (no cache: reads all, writes the cache)",
        "warm": "runtop ls DIR --json, warm (the cache valid)",
        "against": f"{against} ls DIR --json (fresh home)",
    }
    for name, measured in times.items():
        wall = statistics.median(wall for wall, _ in measured)
        cpu = statistics.median(cpu for _, cpu in measured)
        ratio = (
            "" if name == "floor" else f"; ratio {wall / floor:.2f}, of CPU {cpu / floor_cpu:.2f}"
        )
        print(
            f"{labels[name]}: {wall:.3f} s, CPU {cpu:.3f} s{ratio} "
            f"(median of {runs}: {', '.join(f'{wall:.3f}' for wall, _ in measured)})"
        )
    print(
        f"target: ratio <= 3; the cache {cache_bytes / 1e6:.1f} MB; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    started = time.perf_counter()
    reader_fingerprint()
    spent = time.perf_counter() - started
    print(f"the reader's fingerprint (its source hashed, on each listing): {spent * 1e3:.1f} ms")


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
    parser.add_argument("--against", type=Path, help="another checkout's ls --json, in turns")
    args = parser.parse_args()
    root = ledger_directory()
    files = sum(1 for _ in root.rglob("*.jsonl"))
    print(f"directory: {root.name}, {files} ledgers in 100 subdirectories, warm page cache")
    ls_json_against_floor(root, max(args.runs, 5), args.against)
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
        f"runtop ls --no-cache of it (a table of {files:,} rows, into a pipe): "
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
    command = [str(runtop), "ls", str(root), "--no-cache"]  # reading all, as before the cache
    subprocess.run(command, stdout=subprocess.PIPE, check=True, timeout=120)
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
