"""The TUI's figures: first screens, a huge run, and runtop beside toolong.

    .venv/bin/python bench/tui.py [--runs 5] [--toolong /path/to/tl] [--only launch]
        [--against CHECKOUT]

1. 10,000 runs on screen, from launch (a fresh process): fed from memory
   (the table's own cost) and from a directory of 10,000 ledgers; and the
   first frame, which names the source (saying "opening" until its runs come).
2. Opening a run of 1,000,000 events: from Enter to its first screen.
3. Time to first screen on the 1 GB ledger, in tmux at 160x48, for
   ``runtop FILE`` and toolong's ``tl FILE`` (installed from PyPI in a venv
   of its own), in turns, with the ratio of each pair.

With ``--against CHECKOUT`` (an earlier commit, ``git worktree add``), the
launch from memory is also timed there, in turns with this one.

Ledgers are read with a warm page cache (each is read through first).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import resource
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.generate import big_ledger, ledger_directory

REPO = Path(__file__).resolve().parent.parent

FIRST_FRAME = textwrap.dedent(
    """
    def first_frames(app, marks):
        \"\"\"Print, for each ``(name, ready)``, the seconds from spawn to the first frame
        drawn once ``ready()``; exit after the last.

        The frame is turned into what a terminal would be sent (headless, the
        app skips that step), so the time is the time to a frame on screen.
        \"\"\"
        from textual._compositor import CompositorUpdate

        display = app._display
        waiting = list(marks)

        def timed(screen, renderable):
            now_ready = [name for name, ready in waiting if renderable is not None and ready()]
            display(screen, renderable)
            if now_ready:
                if isinstance(renderable, CompositorUpdate):
                    renderable.render_segments(app.console)
                seconds = time.time() - spawned
                for name in now_ready:
                    print(name, seconds)
                waiting[:] = [mark for mark in waiting if mark[0] not in now_ready]
                if not waiting:
                    app.exit()

        app._display = timed
    """
)
"""Shared by both children: the time of the first frames that show what was waited for."""

CHILD = FIRST_FRAME + textwrap.dedent(
    """
    import sys, time
    spawned = float(sys.argv[1])
    mode = sys.argv[2]
    import tui.cli  # the console script's module, as runtop starts
    from pathlib import Path
    from inspector import LedgerDirectorySource, RunSource, RunUpdate, SourceUpdate
    from ledger_reader import RunStatus, RunSummary
    from tui.app import make_app
    from tui.settings import Settings
    from tui.widgets.run_table import RunTable
    from tui.widgets.source_line import SourceLine

    class Memory(RunSource):
        async def updates(self):
            update = SourceUpdate(initial=True)
            for n in range(10_000):
                s = RunSummary(run_id=f"run_{n:06d}", status=RunStatus.SUCCEEDED, skill="s",
                               started_at=f"2026-11-29T06:{n // 600 % 60:02d}:{n % 60:02d}Z")
                update.runs.append(RunUpdate(s.run_id, s))
            yield update
        async def events(self, run_id, start, stop):
            return []
        async def close(self):
            pass

    source = Memory("memory") if mode == "memory" else LedgerDirectorySource(sys.argv[3])
    app = make_app(Settings(), [source])

    def rows():
        tables = app.screen.query(RunTable)
        return len(tables.first().rows) if tables else 0

    def names_the_source():
        lines = app.screen.query(SourceLine)
        return bool(lines) and f" {source.name} (" in str(lines.first().render())

    first_frames(
        app,
        [
            ("first", names_the_source),
            ("some", lambda: rows() > 0),
            ("all", lambda: rows() == 10_000),
        ],
    )
    app.run(headless=True, size=(160, 48))
    """
)


BARE = FIRST_FRAME + textwrap.dedent(
    """
    import sys, time
    spawned = float(sys.argv[1])
    from textual.app import App
    from textual.widgets import Static

    class Bare(App):
        def compose(self):
            yield Static("hello")

    bare = Bare()
    first_frames(bare, [("all", lambda: bool(bare.screen.query(Static)))])
    bare.run(headless=True, size=(160, 48))
    """
)


def bare_first_screen() -> dict[str, float]:
    """The floor: a Textual app of one Static, launched and drawn the same way."""
    return _frames([sys.executable, "-c", BARE, repr(time.time())], "bare")


def first_screen(mode: str, directory: Path | None, checkout: Path = REPO) -> dict[str, float]:
    """Seconds from launch to the first frame naming the source, the first with ``some``
    runs and the first with ``all`` 10,000; the code launched is ``checkout``'s."""
    args = [sys.executable, "-c", CHILD, repr(time.time()), mode]
    if directory is not None:
        args.append(str(directory))
    return _frames(args, mode, checkout)


def _frames(args: list[str], what: str, checkout: Path = REPO) -> dict[str, float]:
    """The child's marks, and ``cpu``: the CPU seconds it used, start to exit (a figure the
    machine's load moves less than the wall clock's, which waits for a core)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(
            args, capture_output=True, text=True, cwd=checkout, check=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        return dict.fromkeys(("first", "some", "all"), float("inf"))  # "inf": over 60 s
    except subprocess.CalledProcessError as error:
        raise SystemExit(f"the {what} launch failed:\n{error.stdout}\n{error.stderr}") from error
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    marks = (line.split() for line in done.stdout.splitlines() if line.strip())
    found = {name: float(seconds) for name, seconds in marks}
    found["cpu"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return found


async def open_huge_run(path: Path) -> float:
    from inspector import LedgerDirectorySource
    from tui.app import make_app
    from tui.settings import Settings
    from tui.widgets.event_list import EventList
    from tui.widgets.run_table import RunTable

    source = LedgerDirectorySource(path.parent, only=[str(path)], name="huge")
    app = make_app(Settings(), [source])
    async with app.run_test(size=(160, 48)) as pilot:
        while not app.screen.query(RunTable) or not app.screen.query_one(RunTable).rows:
            await pilot.pause(0.01)
        await pilot.pause(0.5)  # a user reads the table before pressing Enter
        started = time.perf_counter()
        await pilot.press("enter")
        events = app.screen.query_one(EventList)
        while not (events.count and events.item(events.count - 1) is not None):
            await pilot.pause(0.002)
        await pilot.pause(0)
        return time.perf_counter() - started


class MemoryRuns:
    """10,000 finished runs from memory (a source that costs nothing to read)."""

    @staticmethod
    def make() -> object:
        from inspector import RunSource, RunUpdate, SourceUpdate
        from ledger_reader import LedgerItem, RunStatus, RunSummary

        class Memory(RunSource):
            async def updates(self):  # type: ignore[no-untyped-def]
                update = SourceUpdate(initial=True)
                for n in range(10_000):
                    summary = RunSummary(
                        run_id=f"run_{n:06d}",
                        status=RunStatus.SUCCEEDED,
                        skill="s",
                        started_at=f"2026-11-29T05:{n // 600 % 60:02d}:{n % 60:02d}Z",
                    )
                    update.runs.append(RunUpdate(summary.run_id, summary))
                yield update

            async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
                return []

            async def close(self) -> None:
                pass

        return Memory("memory")


def key_latency(presses: int) -> tuple[list[float], float]:
    """Key to frame with 10,000 runs shown and 100 live ones at 10,000 events/s in all."""
    import tempfile

    from bench.store import WRITER

    with tempfile.TemporaryDirectory(dir=Path(__file__).parent) as tmp:
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, tmp, "100", "10000", "120"],
            stdout=subprocess.DEVNULL,
        )
        try:
            time.sleep(0.3)
            return asyncio.run(_key_latency(Path(tmp), presses))
        finally:
            writer.kill()
            writer.wait()


async def _key_latency(live: Path, presses: int) -> tuple[list[float], float]:
    from textual import events

    from inspector import LedgerDirectorySource
    from tui.app import make_app
    from tui.settings import Settings
    from tui.widgets.run_table import RunTable

    sources = [MemoryRuns.make(), LedgerDirectorySource(live, name="live")]
    app = make_app(Settings(), sources)  # type: ignore[arg-type]
    display = app._display
    wanted: list[int] = []
    shown = asyncio.Event()

    def timed_display(screen: object, renderable: object) -> None:
        display(screen, renderable)  # type: ignore[arg-type]
        tables = app.screen.query(RunTable)
        if wanted and tables and tables.first().cursor == wanted[0]:
            wanted.clear()
            shown.set()  # the first frame drawn with the cursor moved

    app._display = timed_display  # type: ignore[method-assign]
    async with app.run_test(size=(160, 48)) as pilot:
        loaded = 0
        while loaded < 10_100:
            await pilot.pause(0.05)
            tables = app.screen.query(RunTable)
            loaded = len(tables.first().rows) if tables else 0
        table = app.screen.query_one(RunTable)
        await pilot.pause(2.0)  # the live runs are streaming by now
        cpu, wall = time.process_time(), time.perf_counter()
        latencies = []
        for number in range(presses):
            key = "down" if number % 20 < 10 else "up"
            shown.clear()
            wanted[:] = [table.cursor + (1 if key == "down" else -1)]
            pressed = time.perf_counter()
            app.post_message(events.Key(key, None))
            await shown.wait()
            latencies.append(time.perf_counter() - pressed)
            await asyncio.sleep(0.1)
        share = (time.process_time() - cpu) / (time.perf_counter() - wall)
    return latencies, share


def tmux_first_screen(command: list[str], expect: str) -> float:
    session = "runtop-bench"
    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    started = time.time()
    subprocess.run(
        ["tmux", "new", "-d", "-s", session, "-x", "160", "-y", "48", *command], check=True
    )
    try:
        while time.time() - started < 30:
            screen = subprocess.run(
                ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
            ).stdout
            if expect in screen:
                return time.time() - started
            time.sleep(0.01)
        raise RuntimeError(f"{command[0]} never showed {expect!r}")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--toolong", default=shutil.which("tl") or "/tmp/tlvenv/bin/tl")
    parser.add_argument(
        "--only",
        choices=["launch", "keys", "huge", "tmux"],
        help="measure one figure: the first screens, key latency, the huge run, or tmux",
    )
    parser.add_argument(
        "--against",
        type=Path,
        help="a checkout of an earlier commit (git worktree add DIR COMMIT): its launch from "
        "memory is timed in turns with this one's",
    )
    args = parser.parse_args()
    compile_bytecode(REPO, *([args.against] if args.against else []))
    if args.only in (None, "launch"):
        launch(args.runs, args.against)
    if args.only in (None, "keys"):
        keys(args.runs)
    if args.only in (None, "huge"):
        huge_run(args.runs)
    if args.only in (None, "tmux"):
        beside_toolong(args.runs, Path(args.toolong))


def compile_bytecode(*checkouts: Path) -> None:
    """Write the project's bytecode first, as an install does.

    With ``PYTHONDONTWRITEBYTECODE`` set (it is, on these machines) nothing
    writes it, and every launch would compile ~50 modules from source
    (~70 ms) that a user's install has compiled once.
    """
    for checkout in checkouts:
        for package in ("inspector", "ledger_reader", "run_manager", "tui"):
            compileall.compile_dir(checkout / package, quiet=1)


def launch(runs: int, against: Path | None = None) -> None:
    memory, first, bare, before = [], [], [], []
    cpu: dict[str, list[float]] = {"here": [], "there": [], "bare": []}
    for _ in range(runs):  # side by side: the machine's speed drifts
        floor = bare_first_screen()
        bare.append(floor["all"])
        cpu["bare"].append(floor["cpu"])
        if against is not None:
            there = first_screen("memory", None, against)
            before.append(there["all"])
            cpu["there"].append(there["cpu"])
        marks = first_screen("memory", None)
        memory.append(marks["all"])
        first.append(marks["first"])
        cpu["here"].append(marks["cpu"])
    if before:
        print(
            f"10,000 runs from memory, in turns with {against}: "
            f"{statistics.median(before):.3f} s there ({', '.join(f'{t:.2f}' for t in before)}) "
            f"against {statistics.median(memory):.3f} s here; CPU, start to exit: "
            f"{statistics.median(cpu['there']):.3f} s there, {statistics.median(cpu['here']):.3f}"
            f" s here, {statistics.median(cpu['bare']):.3f} s the bare app"
        )
    print(
        f"10,000 runs on screen from launch, fed from memory: {statistics.median(memory):.3f} s "
        f"({', '.join(f'{t:.2f}' for t in memory)}; target < 0.5 s); the first frame, naming "
        f"the source: {statistics.median(first):.3f} s ({', '.join(f'{t:.2f}' for t in first)}); "
        f"a bare Textual app (one Static) in the same run: {statistics.median(bare):.3f} s; "
        f"CPU, start to exit, {statistics.median(cpu['here']):.3f} s against the bare app's "
        f"{statistics.median(cpu['bare']):.3f} s"
    )
    directory = ledger_directory()
    from_dir = [first_screen("directory", directory) for _ in range(min(runs, 5))]
    first = [marks["first"] for marks in from_dir]
    some = [marks["some"] for marks in from_dir]
    every = [marks["all"] for marks in from_dir]
    print(
        f"from a directory of 10,000 ledgers: the first frame, naming it, after "
        f"{statistics.median(first):.3f} s ({', '.join(f'{t:.2f}' for t in first)}); "
        f"the newest runs on screen after "
        f"{statistics.median(some):.3f} s ({', '.join(f'{t:.2f}' for t in some)}), all 10,000 "
        f"after {statistics.median(every):.3f} s ({', '.join(f'{t:.2f}' for t in every)})"
    )


def keys(runs: int) -> None:
    latencies, shares = [], []
    for _ in range(min(runs, 3)):
        seen, share = key_latency(60)
        latencies.append(statistics.median(seen))
        shares.append(share)
        p99 = sorted(seen)[int(0.99 * len(seen))]
    print(
        f"key press to frame, 10,000 runs shown, 100 live at 10,000 events/s: median "
        f"{statistics.median(latencies) * 1000:.1f} ms (last run's p99 {p99 * 1000:.1f} ms; "
        f"target < 50 ms), the app's CPU {statistics.median(shares):.0%} of a core (< 100%)"
    )


def warm(path: Path) -> None:
    """Read ``path`` through once: the figures are for a warm page cache.

    The cache drops files here with memory free (MEASURED.md): after the
    key-latency run, the first open of the huge run read cold and took 842 ms.
    """
    with path.open("rb") as handle:
        while handle.read(1 << 24):
            pass


def huge_run(runs: int) -> None:
    huge = big_ledger(280 << 20)
    warm(huge)
    opened = [asyncio.run(open_huge_run(huge)) for _ in range(runs)]
    print(
        f"opening a run of ~1,000,000 events ({huge.stat().st_size >> 20} MiB), Enter to first "
        f"screen: {statistics.median(opened) * 1000:.0f} ms "
        f"({', '.join(f'{t * 1000:.0f}' for t in opened)}; target < 300 ms)"
    )


def beside_toolong(runs: int, toolong: Path) -> None:
    """runtop and toolong on the 1 GB ledger, in turns (which goes first alternates): the
    machine's speed drifts within a minute, so each pair is taken together."""
    gigabyte = big_ledger()
    warm(gigabyte)
    runtop_command = [str(REPO / ".venv/bin/runtop"), str(gigabyte)]
    if not toolong.exists():
        print("toolong not found: pip install toolong in a venv of its own, pass --toolong")
    runtop: list[float] = []
    peer: list[float] = []
    for turn in range(runs):
        pair = [("runtop", runtop_command, "succeeded")]
        if toolong.exists():
            pair.append(("toolong", [str(toolong), str(gigabyte)], '"run_id"'))
        for name, command, expect in pair if turn % 2 == 0 else reversed(pair):
            (runtop if name == "runtop" else peer).append(tmux_first_screen(command, expect))
    print(
        f"first screen, 1 GB ledger, in tmux: runtop {statistics.median(runtop):.2f} s "
        f"({', '.join(f'{t:.2f}' for t in runtop)})"
    )
    if peer:
        ratios = [mine / theirs for mine, theirs in zip(runtop, peer, strict=True)]
        print(
            f"                                        toolong {statistics.median(peer):.2f} s "
            f"({', '.join(f'{t:.2f}' for t in peer)}); runtop / toolong: median of the "
            f"medians {statistics.median(runtop) / statistics.median(peer):.2f}x, of the "
            f"pairs {statistics.median(ratios):.2f}x ({', '.join(f'{r:.2f}' for r in ratios)})"
        )


if __name__ == "__main__":
    main()
