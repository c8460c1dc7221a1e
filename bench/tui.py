"""The TUI's figures: first screens, keys under load, a huge run, and runtop beside toolong.

    .venv/bin/python bench/tui.py [--runs 5] [--toolong /path/to/tl]
        [--only launch|keys|run|events|idle|huge|tmux] [--against CHECKOUT ...]

1. 10,000 runs on screen, from launch (a fresh process): fed from memory
   (the table's own cost) and from a directory of 10,000 ledgers; and the
   first frame, which names the source (saying "opening" until its runs come).
2. keys: a key pressed on the runs table to the first frame drawn with the
   cursor moved, with 10,000 runs shown and 100 live written at 10,000
   events/s in all; p50, p99, the app's share of a core while keys are
   pressed, and its CPU per event folded (steadier than wall time on a
   loaded machine).
3. run: the same on a live run's timeline (``T`` on its screen), the run
   written at 2,000 events/s (a checkout from before the timeline: its event
   list).
4. events: the same run's event list (Enter on the run, as a user opens
   it): the app's CPU per event folded while the list follows the newest
   events, each read for it as it comes (the live path that decodes each
   event once), then key to frame from its first event (Home: a list that
   follows moves its cursor to each new event).
5. idle: the app's share of a core with 10,000 ledgers followed and nothing
   written, once the store's detail pass has read every run's history
   (target <= 3%).
6. Opening a run of 1,000,000 events: from Enter to its first screen.
7. Time to first screen on the 1 GB ledger, in tmux at 160x48, for
   ``runtop FILE`` and toolong's ``tl FILE`` (installed from PyPI in a venv
   of its own), in turns, with the ratio of each pair.

With ``--against CHECKOUT`` (an earlier commit, ``git worktree add``), the
launch from memory and 2-5 are also measured there, each run in turns with
this one (which goes first alternates), in a fresh process with the
checkout's own code (and its ``.venv``, if it has one); the load average is
printed beside them: the machine is shared.

Ledgers are read with a warm page cache (each is read through first).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

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


KEYS = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from pathlib import Path
    mode, presses = sys.argv[1], int(sys.argv[2])
    live = Path(sys.argv[3])
    from textual import events
    from inspector import LedgerDirectorySource, RunSource, RunUpdate, SourceUpdate
    from ledger_reader import RunStatus, RunSummary
    from tui.app import make_app
    from tui.settings import Settings
    from tui.widgets.run_table import RunTable
    try:
        # Imported here, not by the app after its first frame: 435a2cd imports it in a
        # thread, and its key checks, reading the module half made, crashed its app.
        import tui.screens.run
    except ImportError:
        pass

    class Memory(RunSource):
        async def updates(self):
            update = SourceUpdate(initial=True)
            for n in range(10_000):
                s = RunSummary(run_id=f"run_{n:06d}", status=RunStatus.SUCCEEDED, skill="s",
                               started_at=f"2026-11-29T05:{n // 600 % 60:02d}:{n % 60:02d}Z")
                update.runs.append(RunUpdate(s.run_id, s))
            yield update
        async def events(self, run_id, start, stop):
            return []
        async def close(self):
            pass

    async def main():
        sources = [LedgerDirectorySource(live, name="live")]
        if mode == "table":
            sources.insert(0, Memory("memory"))
        app = make_app(Settings(), sources)
        display = app._display
        wanted = []
        shown = asyncio.Event()

        def timed(screen, renderable):
            display(screen, renderable)
            if wanted and wanted[0](wanted[1].cursor):
                wanted.clear()
                shown.set()  # the first frame drawn with the cursor moved

        app._display = timed
        async with app.run_test(size=(160, 48)) as pilot:
            expect = {"table": 10_100, "run": 1, "events": 1, "idle": 10_000}[mode]
            while True:
                await pilot.pause(0.05)
                tables = app.screen.query(RunTable)
                if tables and len(tables.first().rows) >= expect:
                    break
            target = app.screen.query_one(RunTable)
            target.cursor = 0  # from the top in every checkout, whichever source came first
            store = app.store
            what = "the runs table"
            if mode == "idle":
                while store.loading:
                    await pilot.pause(0.1)
                # Idle once the detail pass (every run's history read once, for its tokens
                # and tools) is done: at most a minute (a checkout without one waits 5 s).
                queue = getattr(store, "_detail_queue", None)
                waited = time.monotonic()
                while queue and time.monotonic() - waited < 60:
                    await pilot.pause(0.5)
                await pilot.pause(5.0)
                cpu, wall = time.process_time(), time.perf_counter()
                await asyncio.sleep(10.0)
                share = (time.process_time() - cpu) / (time.perf_counter() - wall)
                print(json.dumps({"share": share}))
                return
            if mode == "run":
                runs_screen = app.screen
                await pilot.press("enter")
                while app.screen is runs_screen:
                    await pilot.pause(0.05)
                what = "the run's events"
                try:
                    from tui.widgets.timeline_view import TimelineView
                except ImportError:  # a checkout from before the timeline
                    from tui.widgets.event_list import EventList
                    target = app.screen.query_one(EventList)
                else:
                    await pilot.press("T")
                    target = app.screen.query_one(TimelineView)
                    while len(target.timeline) < 2:
                        await pilot.pause(0.05)
                    what = "the run's timeline"
            following = {}
            if mode == "events":
                # A user watching one run's events: the list follows the newest, each
                # arriving event read for it (decoded again before each was decoded once).
                runs_screen = app.screen
                await pilot.press("enter")
                while app.screen is runs_screen:
                    await pilot.pause(0.05)
                from tui.widgets.event_list import EventList
                target = app.screen.query_one(EventList)
                while target.count < 2 or not target.follow:
                    await pilot.pause(0.05)
                await pilot.pause(2.0)
                cpu, wall, folded = time.process_time(), time.perf_counter(), store.applied
                await asyncio.sleep(10.0)
                following = {"following_cpu": time.process_time() - cpu,
                             "following_wall": time.perf_counter() - wall,
                             "following_folded": store.applied - folded}
                # Keys on a list that follows move a cursor the next event moves again:
                # Home (the first event) stops following, and the keys move from there.
                await pilot.press("home")
                while target.cursor != 0 or target.follow:
                    await pilot.pause(0.05)
                what = "the run's events, from its first"
            await pilot.pause(2.0)  # the live runs are streaming by now
            cpu, wall, folded = time.process_time(), time.perf_counter(), store.applied
            latencies = []
            unmoved = 0
            first = "down" if target.cursor == 0 else "up"
            other = "up" if first == "down" else "down"
            for number in range(presses):
                key = first if number % 20 < 10 else other
                shown.clear()
                if mode == "events":
                    # An entry holds one event or several (a streamed answer's chunks).
                    was, sign = target.cursor, 1 if key == "down" else -1
                    wanted[:] = [lambda cursor: (cursor - was) * sign > 0, target]
                else:
                    moved_to = target.cursor + (1 if key == "down" else -1)
                    wanted[:] = [lambda cursor: cursor == moved_to, target]
                pressed = time.perf_counter()
                app.post_message(events.Key(key, None))
                try:
                    await asyncio.wait_for(shown.wait(), 10)
                except asyncio.TimeoutError:
                    wanted.clear()  # counted as 10 s: the key was not seen to move it
                    unmoved += 1
                else:
                    unmoved = 0
                latencies.append(time.perf_counter() - pressed)
                if unmoved == 3:
                    break  # the cursor does not follow the keys: said, not waited out
                await asyncio.sleep(0.1)
            used = time.process_time() - cpu
            share = used / (time.perf_counter() - wall)
            folded = store.applied - folded
            print(json.dumps({"latencies": latencies, "share": share, "cpu": used,
                              "folded": folded, "what": what, "stuck": unmoved == 3,
                              **following}))

    asyncio.run(main())
    """
)
"""Run in a checkout (its own code, its venv's Python): keys pressed while runs stream in."""

WRITER_ONE = textwrap.dedent(
    """
    import json, os, sys, time
    root, rate, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    run_id = "run_20261129T070000000_00000000000000aa"
    fd = os.open(os.path.join(root, run_id + ".jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    seq = 0

    def write(kind, payload):
        global seq
        seq += 1
        now = time.time()
        moment = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
        moment += f".{int(now % 1 * 1e6):06d}Z"
        line = {"run_id": run_id, "seq": seq, "time": moment, "type": kind, "payload": payload}
        os.write(fd, (json.dumps(line, separators=(",", ":")) + "\\n").encode())

    def node(number):
        # A model call streaming its answer, then a tool call: 14 events.
        llm = f"llm:default#{number}"
        yield "node_enter", {"node_id": llm, "node_name": "default"}
        for index in range(8):
            yield "llm_chunk", {"index": index, "delta": "streamed text", "node_id": llm}
        yield "llm_call", {"model": "m", "prompt_tokens": 100, "output_tokens": 10, "node_id": llm}
        yield "node_exit", {"node_id": llm, "success": True}
        tool, call = f"tool:search#{number}", f"call_{number:016x}"
        yield "node_enter", {"node_id": tool, "node_name": "search"}
        yield "tool_call", {"call_id": call, "node_id": tool, "name": "search"}
        yield "tool_result", {"call_id": call, "node_id": tool, "output": "ok"}
        yield "node_exit", {"node_id": tool, "success": True}

    def stream():
        number = 0
        while True:
            yield from node(number)
            number += 1

    write("run_started", {"skill": "bench", "agent": "bench", "input": {}})
    events = stream()
    started = time.monotonic()
    written = 0
    while time.monotonic() - started < seconds:
        for _ in range(int(rate * 0.01)):
            write(*next(events))
        written += int(rate * 0.01)
        target = started + written / rate
        now = time.monotonic()
        if target > now:
            time.sleep(target - now)
    """
)
"""One live run written at ``rate`` events/s: model calls that stream, and tool calls."""


def python_of(checkout: Path) -> str:
    """The checkout's own venv (its pinned Textual), else this one's."""
    own = checkout / ".venv" / "bin" / "python"
    return str(own) if own.exists() else sys.executable


def keys_in(checkout: Path, mode: str, presses: int) -> dict[str, Any] | None:
    """Keys pressed in a fresh app of ``checkout``'s code while a writer streams: ``table``,
    10,000 runs shown and 100 live at 10,000 events/s in all; ``run``, one run's timeline
    open while the run writes 2,000 events/s; ``events``, that run's event list, followed
    for 10 s (the CPU only), then from its first event (Home stops following) with keys;
    ``idle``, 10,000 ledgers followed, nothing written (no keys: the CPU only)."""
    import tempfile

    from bench.store import WRITER

    with tempfile.TemporaryDirectory(dir=Path(__file__).parent) as tmp:
        writer = None
        if mode == "table":
            writer = subprocess.Popen(
                [sys.executable, "-c", WRITER, tmp, "100", "10000", "120"],
                stdout=subprocess.DEVNULL,
            )
        elif mode in ("run", "events"):
            writer = subprocess.Popen([sys.executable, "-c", WRITER_ONE, tmp, "2000", "120"])
        live = str(ledger_directory()) if mode == "idle" else tmp
        try:
            time.sleep(0.3)
            done = subprocess.run(
                [python_of(checkout), "-c", KEYS, mode, str(presses), live],
                capture_output=True,
                text=True,
                cwd=checkout,
                timeout=300,
            )
        except subprocess.TimeoutExpired:
            print(f"  ({checkout}: a {mode} run took over 300 s, left out)")
            return None
        finally:
            if writer is not None:
                writer.kill()
                writer.wait()
    if done.returncode != 0:
        raise SystemExit(f"the {mode} keys run in {checkout} failed:\n{done.stderr[-3000:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def load_average() -> str:
    return " ".join(f"{load:.1f}" for load in os.getloadavg())


def keys(runs: int, against: list[Path], mode: str = "table") -> None:
    """Key to frame in turns (which checkout goes first alternates): medians of ``runs``."""
    checkouts = [REPO, *against]
    seen: dict[Path, list[dict[str, Any]]] = {checkout: [] for checkout in checkouts}
    loads = []
    for turn in range(runs):
        for checkout in checkouts if turn % 2 == 0 else reversed(checkouts):
            loads.append(os.getloadavg()[0])
            found = keys_in(checkout, mode, 60)
            if found is not None:
                seen[checkout].append(found)
    for checkout in checkouts:
        stuck = [r for r in seen[checkout] if r.get("stuck")]
        if stuck:
            print(f"  ({checkout}: in {len(stuck)} run(s) 3 keys in a row did not move the cursor)")
        results = [r for r in seen[checkout] if not r.get("stuck")]
        if not results:
            continue
        p50 = [statistics.median(r["latencies"]) * 1000 for r in results]
        p99 = [sorted(r["latencies"])[int(0.99 * len(r["latencies"]))] * 1000 for r in results]
        share = [r["share"] for r in results]
        per_event = [r["cpu"] / max(1, r["folded"]) * 1e6 for r in results]
        name = "here" if checkout == REPO else str(checkout)
        if "following_cpu" in results[0]:
            followed = [r["following_cpu"] / r["following_wall"] for r in results]
            per_followed = [
                r["following_cpu"] / max(1, r["following_folded"]) * 1e6 for r in results
            ]
            print(
                f"  {name}: following the run's events, the app's CPU "
                f"{statistics.median(followed):.0%} of a core "
                f"({', '.join(f'{c:.0%}' for c in followed)}), "
                f"{statistics.median(per_followed):.1f} us per event folded "
                f"({', '.join(f'{c:.0f}' for c in per_followed)})"
            )
        print(
            f"  {name}: key to frame on {results[0]['what']}, p50 {statistics.median(p50):.1f} ms "
            f"({', '.join(f'{t:.0f}' for t in p50)}), p99 {statistics.median(p99):.1f} ms "
            f"({', '.join(f'{t:.0f}' for t in p99)}); the app's CPU "
            f"{statistics.median(share):.0%} of a core ({', '.join(f'{c:.0%}' for c in share)}), "
            f"{statistics.median(per_event):.1f} us per event folded"
        )
    print(
        f"  (medians of {runs} runs in turns; load average at each start: "
        f"{statistics.median(loads):.1f} median, {min(loads):.1f}-{max(loads):.1f})"
    )


def idle(runs: int, against: list[Path]) -> None:
    checkouts = [REPO, *against]
    shares: dict[Path, list[float]] = {checkout: [] for checkout in checkouts}
    for turn in range(runs):
        for checkout in checkouts if turn % 2 == 0 else reversed(checkouts):
            found = keys_in(checkout, "idle", 0)
            if found is not None:
                shares[checkout].append(found["share"])
    for checkout in checkouts:
        if not shares[checkout]:
            continue
        name = "here" if checkout == REPO else str(checkout)
        print(
            f"  {name}: idle, 10,000 ledgers followed, the app's CPU "
            f"{statistics.median(shares[checkout]):.1%} of a core "
            f"({', '.join(f'{c:.1%}' for c in shares[checkout])}; target <= 3%)"
        )


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
        choices=["launch", "keys", "run", "events", "idle", "huge", "tmux"],
        help="measure one figure: the first screens, key latency on the runs table, on a "
        "live run's timeline, on its event list (and the CPU following it), the idle CPU, "
        "the huge run, or tmux",
    )
    parser.add_argument(
        "--against",
        type=Path,
        action="append",
        default=[],
        help="a checkout of an earlier commit (git worktree add DIR COMMIT), with its own "
        ".venv if its dependencies differ: its launch from memory and its keys are timed in "
        "turns with this one's (may be given more than once)",
    )
    args = parser.parse_args()
    compile_bytecode(REPO, *args.against)
    if args.only in (None, "launch"):
        launch(args.runs, args.against[0] if args.against else None)
    if args.only in (None, "keys"):
        print(
            "key press to frame, 10,000 runs shown, 100 live at 10,000 events/s in all "
            "(targets: p50 <= 15 ms, p99 <= 50 ms, the app under 50% of a core):"
        )
        keys(args.runs, args.against)
    if args.only in (None, "run"):
        print("key press to frame on a live run's timeline, the run writing 2,000 events/s:")
        keys(args.runs, args.against, "run")
    if args.only in (None, "events"):
        print(
            "a live run's event list, the run writing 2,000 events/s: followed (the newest "
            "events read as they come), then key press to frame from its first event:"
        )
        keys(args.runs, args.against, "events")
    if args.only in (None, "idle"):
        print("idle, 10,000 ledgers followed (bench/generate.py), nothing written:")
        idle(args.runs, args.against)
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
