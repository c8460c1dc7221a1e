"""A home of coding agents' sessions, and the app on it: first screen, memory, idle CPU.

    .venv/bin/python bench/coding_agents.py [--sessions 2000] [--runs 3] [--home DIR]

The home is made from the real sessions in ``tests/sessions_home`` (see its
README): each session repeats a real one's conversation, its ids and times
made its own, so the files have the shapes, sizes of records and mix of
record types the agents write. 2,000 sessions are about 2 GB: seven in ten
Claude Code 2.1 sessions (~1 MB, each with its sub-agent's file), one in ten
Claude Code 2.0, three in twenty Codex CLI, one in twenty Gemini CLI.

Then, ``--runs`` times, the app (``runtop`` with ``HOME`` set to the home, so
the sessions come in as its "coding agents" source) is launched in a fresh
process, headless at 160x48, and measured:

1. first screen: seconds from launch to the first frame showing runs, and to
   the first frame with every session listed (the files are dated over the
   last 300 days, one of them written now: it is followed);
2. memory: the process's peak resident size once every session has been read
   whole (the source's first load done);
3. idle: its share of a core over 20 s after that, nothing written (the
   sessions followed, the clock ticking).

Sessions are read with a warm page cache (each is read through first). The
load average is printed beside the figures: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.tui import bare_first_screen  # noqa: E402
from tests.session_times import retimed  # noqa: E402

REAL = REPO / "tests" / "sessions_home"
CLAUDE_21 = next(REAL.glob(".claude/projects/-home-*/ae4a77f8-*.jsonl"))
SUBAGENT_21 = next(REAL.glob(".claude/projects/-home-*/ae4a77f8-*/subagents/agent-*.jsonl"))
CLAUDE_20 = next(REAL.glob(".claude/projects/-Users-*/7f2abd2d-*.jsonl"))
CODEX = next(REAL.glob(".codex/sessions/2025/**/rollout-*.jsonl"))
GEMINI = next(REAL.glob(".gemini/tmp/*/chats/session-*.json"))

IDS = re.compile(rb'"(msg_|toolu_|call_|req_)([A-Za-z0-9]+)"')
HOURS = re.compile(rb"T(\d\d):")


def _made_own(block: bytes, copy: int, session: str, old_session: bytes, day: str) -> bytes:
    """A real session's records, their ids this copy's and its session's, its times later."""
    block = IDS.sub(lambda m: b'"' + m.group(1) + b"%s%d" % (m.group(2), copy) + b'"', block)
    block = HOURS.sub(lambda m: b"T%02d:" % (copy % 24), block)
    block = re.sub(rb"\d{4}-\d\d-\d\dT", day.encode() + b"T", block)
    return block.replace(old_session, session.encode())


def _session_id(number: int) -> str:
    return f"{number:08x}-0000-4000-8000-{number:012x}"


def claude_21(home: Path, number: int, copies: int) -> None:
    lines = CLAUDE_21.read_bytes().splitlines(keepends=True)
    head, body = b"".join(lines[:6]), b"".join(lines[6:])
    old = b"ae4a77f8-aedd-4bc1-888f-c94edc91af04"
    session = _session_id(number)
    day = f"2026-{1 + number % 12:02d}-{1 + number % 28:02d}"
    folder = home / ".claude" / "projects" / f"-home-dev-project-{number % 40}"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"{session}.jsonl").open("wb") as file:
        file.write(_made_own(head, 0, session, old, day))
        for copy in range(copies):
            file.write(_made_own(body, copy, session, old, day))
    agents = folder / session / "subagents"
    agents.mkdir(parents=True, exist_ok=True)
    sub = SUBAGENT_21.read_bytes()
    (agents / SUBAGENT_21.name).write_bytes(_made_own(sub, 0, session, old, day))


def claude_20(home: Path, number: int, copies: int) -> None:
    lines = CLAUDE_20.read_bytes().splitlines(keepends=True)
    old = b"7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"
    session = _session_id(number)
    day = f"2025-{1 + number % 12:02d}-{1 + number % 28:02d}"
    folder = home / ".claude" / "projects" / f"-Users-dev-sample-{number % 10}"
    folder.mkdir(parents=True, exist_ok=True)
    body = b"".join(lines)
    with (folder / f"{session}.jsonl").open("wb") as file:
        for copy in range(copies):
            file.write(_made_own(body, copy, session, old, day))


def codex(home: Path, number: int, copies: int) -> None:
    lines = CODEX.read_bytes().splitlines(keepends=True)
    old = b"019b04ae-b1c6-7c72-a134-a4c2de66058c"
    session = _session_id(number)
    day = f"2025-{1 + number % 12:02d}-{1 + number % 28:02d}"
    folder = home / ".codex" / "sessions" / "2025" / day[5:7] / day[8:10]
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"rollout-{day}T10-00-00-{session}.jsonl").open("wb") as file:
        file.write(_made_own(lines[0], 0, session, old, day))
        body = b"".join(lines[1:])
        for copy in range(copies):
            file.write(_made_own(body, copy, session, old, day))


def gemini(home: Path, number: int, copies: int) -> None:
    document = json.loads(GEMINI.read_text())
    session = _session_id(number)
    messages = []
    for copy in range(copies):
        for message in document["messages"]:
            mine = dict(message)
            mine["id"] = f"{message['id']}-{copy}"
            mine["timestamp"] = re.sub(r"T\d\d:", f"T{copy % 24:02d}:", message["timestamp"])
            messages.append(mine)
    document["messages"] = messages
    document["sessionId"] = session
    folder = home / ".gemini" / "tmp" / f"{number:064x}" / "chats"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"session-2025-12-09T19-51-{session[:8]}.json").write_text(json.dumps(document))


def make_home(home: Path, sessions: int) -> int:
    """Write ``sessions`` sessions under ``home``; their bytes in all."""
    for number in range(sessions):
        kind = number % 20
        if kind < 14:
            claude_21(home, number, 7)
        elif kind < 16:
            claude_20(home, number, 20)
        elif kind < 19:
            codex(home, number, 24)
        else:
            gemini(home, number, 24)
    return sum(path.stat().st_size for path in home.rglob("*") if path.is_file())


CHILD = textwrap.dedent(
    """
    import os, resource, sys, time
    spawned = float(sys.argv[1])
    expected = int(sys.argv[2])
    import tui.cli  # the console script's module, as runtop starts
    from tui.app import make_app
    from tui.commands.watch import home_sessions
    from tui.settings import Settings
    from tui.widgets.run_table import RunTable
    from textual._compositor import CompositorUpdate

    app = make_app(Settings(), home_sessions())
    marks = {}

    def rows():
        tables = app.screen.query(RunTable)
        return len(tables.first().rows) if tables else 0

    display = app._display

    def timed(screen, renderable):
        display(screen, renderable)
        if renderable is None:
            return
        count = rows()
        for name, ready in (("some", count > 0), ("all", count >= expected)):
            if ready and name not in marks:
                if isinstance(renderable, CompositorUpdate):
                    renderable.render_segments(app.console)
                marks[name] = time.time() - spawned
                print(name, marks[name], flush=True)

    app._display = timed

    async def measure():
        store = app.store
        while True:  # every session read whole: nothing pending, every run detailed
            views = [store.get(key) for key in list(store._runs)]
            whole = [v for v in views if v is not None and not v.summary.partial]
            if len(whole) >= expected:
                break
            await __import__("asyncio").sleep(0.2)
        print("loaded", time.time() - spawned, flush=True)
        print("rss_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, flush=True)
        await __import__("asyncio").sleep(2)
        start_cpu, start = time.process_time(), time.monotonic()
        await __import__("asyncio").sleep(20)
        print("idle", (time.process_time() - start_cpu) / (time.monotonic() - start), flush=True)
        print("rss_after_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, flush=True)
        app.exit()

    app.call_later(lambda: app.run_worker(measure()))
    app.run(headless=True, size=(160, 48))
    """
)


def launch(home: Path, expected: int) -> dict[str, float]:
    env = dict(os.environ, HOME=str(home), RUNTOP_HOME=str(home / ".runtop"))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, repr(time.time()), str(expected)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        check=False,
        timeout=900,
    )
    if done.returncode != 0:
        raise SystemExit(f"the launch failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    found: dict[str, float] = {}
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            found[parts[0]] = float(parts[1])
    return found


def load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--home", type=Path, default=REPO / "bench" / "tmp-coding-home")
    args = parser.parse_args()
    marker = args.home / f".made-{args.sessions}"
    if not marker.exists():
        started = time.time()
        size = make_home(args.home, args.sessions)
        marker.write_text(str(size))
        print(
            f"made {args.sessions:,} sessions, {size / 1e9:.2f} GB in {time.time() - started:.0f} s"
        )
    size = int(marker.read_text())
    files = [path for path in args.home.rglob("*") if path.is_file() and path != marker]
    now = time.time()
    for number, path in enumerate(sorted(files)):  # a warm page cache; written days ago
        path.read_bytes()
        written = now - 86400 * (1 + number % 300) - number
        os.utime(path, (written, written))
    followed = sorted(files)[0]  # and one session being written now, followed: running
    followed.write_bytes(retimed(followed.read_bytes()))  # by its own times too
    expected = sum(1 for path in files if path.suffix in (".jsonl", ".json"))
    print(
        f"home: {args.sessions:,} sessions ({expected:,} runs with sub-agents), {size / 1e9:.2f} GB"
    )
    results = []
    for turn in range(args.runs):
        before = load_average()
        found = launch(args.home, expected)
        found["bare"] = bare_first_screen()["all"]  # the floor, in the same minute
        results.append(found)
        print(
            f"  run {turn + 1}: first rows {found.get('some', float('nan')):.2f} s, all listed "
            f"{found.get('all', float('nan')):.2f} s, all read whole "
            f"{found.get('loaded', float('nan')):.1f} s, "
            f"peak RSS {found.get('rss_after_mb', float('nan')):.0f} MB, idle "
            f"{found.get('idle', float('nan')):.1%} of a core; a bare Textual app's first "
            f"frame {found['bare']:.2f} s (load {before} -> {load_average()})"
        )
    for name, unit in (
        ("bare", "s"),
        ("some", "s"),
        ("all", "s"),
        ("loaded", "s"),
        ("rss_after_mb", "MB"),
        ("idle", ""),
    ):
        values = [found[name] for found in results if name in found]
        if values:
            print(f"median {name}: {statistics.median(values):.3g} {unit}")


if __name__ == "__main__":
    main()
