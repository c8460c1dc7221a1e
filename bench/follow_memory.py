"""Followers' memory while a ledger grows by 1 GB, beside opening the same 1 GB at start.

A writer process copies a 1 GB ledger (bench/generate.py's ``big_ledger``)
into a watched directory at ``--rate`` MB/s, in whole lines, its
``run_completed`` last. Each follower is a process of its own, its peak RSS
taken from the kernel (``wait4``'s ``ru_maxrss``) and its RSS once caught up
from ``/proc``:

- ``show``: ``runtop show RUN --follow --json`` into /dev/null, started on
  the ledger's first line; also how long after the writer's last write it
  prints the run's end and exits.
- ``app``: what the app runs to follow a directory (its
  :class:`~inspector.ledger_source.LedgerDirectorySource` feeding a
  :class:`~inspector.store.RunStore`), and ``app+open`` the same with the
  run open (its event count and last page of events read every 0.1 s, as the
  event view does).
- ``app@start`` / ``app+open@start``: the same processes started on the
  finished 1 GB, for the cost of the same bytes present at start.

The page cache is warm (the source was just written or read). Prints the
median of ``--runs`` runs of each.

    .venv/bin/python bench/follow_memory.py [--runs 3] [--rate 100] [--size-mb 1024]
        [--code DIR]  (DIR: a copy of another commit, e.g. ``git archive``, to compare)

Measured 2026-12-03 on the shared 2-core machine (load 6-9), peak RSS in MB,
1 GB appended at 100 MB/s; before: commit 129f451, one run; after: medians of 3:

    follower                 before          after
    show --follow --json     4095 (46.6 s)   45 (46.1 s after the writer)
    app (source + store)     28-2940         32     (28 with the 1 GB at start)
    app, run open            5812            67     (101 with the 1 GB at start)

and 300 MB appended at once (``--rate 0 --size-mb 300``): show --follow 1242
before, 45 after.

Measured 2026-12-04 (load 4-12), ``--only show --runs 1`` in turns, three each:
``show --follow --json`` ends 20.6 s after the writer (17.2, 20.6, 30.8) with
each batch written as the ledger's own lines at once, against 37.6 s (28.4,
40.8, 37.6) at b0a542b, a write and a flush a line. Its CPU per 100 MB went
from 1.6 s to 1.2 s; what is left is splitting and decoding the lines (about
1 s per 100 MB), so on a loaded machine it still trails the writer.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.generate import big_ledger  # noqa: E402

RUN_ID = "run_20261129T064500123_b16b16b16b16b16b"

WRITER = textwrap.dedent(
    """
    import json, os, sys, time
    source, target, rate, size = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    data = open(source, "rb")
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    first = data.readline()
    os.write(fd, first)
    written = len(first)
    copied = first
    sys.stdout.write("started\\n"); sys.stdout.flush()
    sys.stdin.readline()  # the follower is watching
    began = time.monotonic()
    step = 4 << 20
    while written < size:
        block = data.read(step)
        if not block:
            break
        cut = block.rfind(b"\\n") + 1
        data.seek(cut - len(block), 1)
        block = block[:cut]
        os.write(fd, block)
        copied = block
        written += len(block)
        if rate > 0:
            ahead = began + written / (rate * 1e6) - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
    # The run's end, right after the last event copied (no gap in seq).
    last = json.loads(copied[copied.rfind(b"\\n", 0, len(copied) - 1) + 1:])
    ending = {"run_id": last["run_id"], "seq": last["seq"] + 1, "time": last["time"],
              "type": "run_completed", "payload": {"status": "ok"}}
    os.write(fd, json.dumps(ending).encode() + b"\\n")
    os.close(fd)
    sys.stdout.write(f"{time.monotonic()!r} {written}\\n"); sys.stdout.flush()
    """
)

APP = textwrap.dedent(
    """
    import asyncio, os, sys, time
    sys.path.insert(0, sys.argv[1])
    from inspector.ledger_source import LedgerDirectorySource
    from inspector.store import RunStore
    from inspector.model import RunKey

    def rss_mb():
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    async def main():
        root, run_id, opened = sys.argv[2], sys.argv[3], sys.argv[4] == "1"
        store = RunStore()
        source = LedgerDirectorySource(root)
        store.add_source(source)
        key = RunKey(source.name, run_id)
        sys.stdout.write("watching\\n"); sys.stdout.flush()
        ended_at = None
        while True:
            view = store.get(key)
            if opened and view is not None:
                count = await store.event_count(key)
                await store.events(key, max(0, count - 50), count)
            if view is not None and not view.live:
                if opened:
                    count = await store.event_count(key)
                    if count < (view.event_count or 0):
                        await asyncio.sleep(0.1)
                        continue
                ended_at = time.monotonic()
                break
            await asyncio.sleep(0.1)
        if opened:  # the whole index, as a run kept open a few seconds has it
            await source.wait_indexed(run_id)
            count = await store.event_count(key)
            await store.events(key, max(0, count - 50), count)
        sys.stdout.write(f"{ended_at!r} {rss_mb()!r}\\n"); sys.stdout.flush()
        await store.close()

    asyncio.run(main())
    """
)


def _rss_of_exited(pid: int) -> tuple[int, float]:
    """Exit status and peak RSS in MB of a child, from ``wait4``."""
    _, status, usage = os.wait4(pid, 0)
    return status, usage.ru_maxrss / 1024


def _start_writer(source: Path, target: Path, rate: float, size: int) -> subprocess.Popen[str]:
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(source), str(target), str(rate), str(size)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    assert writer.stdout.readline() == "started\n"
    return writer


def _writer_done(writer: subprocess.Popen[str]) -> float:
    assert writer.stdout is not None
    line = writer.stdout.readline()
    writer.wait()
    return float(line.split()[0])


def _go(writer: subprocess.Popen[str]) -> None:
    assert writer.stdin is not None
    writer.stdin.write("go\n")
    writer.stdin.flush()


SHOW = "from tui.cli import main; raise SystemExit(main())"

CODE = ROOT
"""The checkout whose followers are measured (``--code``: a copy of an older commit, to
compare before and after in the same minute)."""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(CODE)}


def show_follow(source: Path, rate: float, size: int) -> tuple[float, float]:
    """Peak RSS (MB) of ``runtop show --follow`` and seconds it ends after the writer."""
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / f"{RUN_ID}.jsonl"
        writer = _start_writer(source, target, rate, size)
        show = subprocess.Popen(
            [sys.executable, "-c", SHOW, "show", str(target), "--follow", "--json"],
            env=_env(),
            cwd=CODE,  # python -c puts the working directory first on the path
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(1.0)  # its start-up (imports, first read) before the writer goes
        _go(writer)
        stopped = _writer_done(writer)
        status, peak = _rss_of_exited(show.pid)
        ended = time.monotonic()
        show.returncode = status
        assert status == 0, show.stderr.read() if show.stderr else status
        return peak, ended - stopped


def app_follow(source: Path, rate: float, size: int, *, opened: bool) -> tuple[float, float]:
    """Peak RSS and RSS once caught up (MB) of the app's source and store following."""
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / f"{RUN_ID}.jsonl"
        writer = _start_writer(source, target, rate, size)
        app = _start_app(tmp, opened)
        _go(writer)
        _writer_done(writer)
        return _app_result(app)


def app_at_start(source: Path, size: int, *, opened: bool) -> tuple[float, float]:
    """The same, on the finished ledger present at start."""
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / f"{RUN_ID}.jsonl"
        writer = _start_writer(source, target, 0, size)
        _go(writer)
        _writer_done(writer)
        return _app_result(_start_app(tmp, opened))


def _start_app(root: str, opened: bool) -> subprocess.Popen[str]:
    app = subprocess.Popen(
        [sys.executable, "-c", APP, str(CODE), root, RUN_ID, "1" if opened else "0"],
        env=_env(),
        cwd=CODE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert app.stdout is not None
    assert app.stdout.readline() == "watching\n"
    return app


def _app_result(app: subprocess.Popen[str]) -> tuple[float, float]:
    assert app.stdout is not None
    line = app.stdout.readline()
    status, peak = _rss_of_exited(app.pid)
    app.returncode = status
    assert status == 0, "the follower failed"
    assert line, "the follower said nothing"
    return peak, float(line.split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rate", type=float, default=100.0, help="MB/s the writer appends")
    parser.add_argument("--size-mb", type=int, default=1024, help="MB appended")
    parser.add_argument(
        "--only", choices=["show", "app"], default=None, help="measure one follower only"
    )
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout to measure")
    args = parser.parse_args()
    global CODE
    CODE = args.code.resolve()
    source = big_ledger()
    size = args.size_mb << 20
    print(f"{CODE}: {args.size_mb} MB appended at {args.rate:g} MB/s; medians of {args.runs} runs")

    def report(name: str, samples: list[tuple[float, float]], second: str) -> None:
        first = statistics.median(sample[0] for sample in samples)
        other = statistics.median(sample[1] for sample in samples)
        print(f"  {name:<16} peak RSS {first:7.0f} MB   {second} {other:7.2f}", flush=True)

    if args.only in (None, "show"):
        samples = [show_follow(source, args.rate, size) for _ in range(args.runs)]
        report("show --follow", samples, "ends after the writer (s)")
    if args.only in (None, "app"):
        for opened in (False, True):
            name = "app+open" if opened else "app"
            samples = [app_follow(source, args.rate, size, opened=opened) for _ in range(args.runs)]
            report(name, samples, "RSS caught up (MB)")
            samples = [app_at_start(source, size, opened=opened) for _ in range(args.runs)]
            report(name + "@start", samples, "RSS caught up (MB)")


if __name__ == "__main__":
    main()
