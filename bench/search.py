"""``has:`` across runs: the runs' files searched by their bytes, beside ``grep -F -l``.

    .venv/bin/python bench/search.py [--gigabytes 2] [--runs 5] [--home DIR] [--app]

Makes a home of run files once (kept in ``--home``, default ``bench/tmp-search-home``):
about ``--gigabytes`` GB in files of about 1 MB, half ledgers as runtop writes them
(model calls with their messages, streamed chunks, tool calls and results), half
session files shaped as Claude Code writes them (``user`` and ``assistant`` records
with content blocks, ``tool_use`` and ``tool_result``), their words drawn from a
vocabulary so no two lines repeat. One word is in 1% of the files, another in none.

Then, warm (every file read once first), in turns, the median of ``--runs`` each:

1. ``has:`` for the word in no file (every byte of every file read) and for the word
   in 1% (each file read up to its first match, as ``grep -l`` does): through
   :class:`inspector.content_search.ContentSearch`, as ``runtop ls --filter`` and the
   app's table judge each run; in GB/s of the files' bytes;
2. the same with the runs shared out among two threads (what the GIL allows: the
   search of a block holds it, the fold of a block's case does not);
   ``grep -F -l`` (and ``-i``, which ``has:`` without a capital compares with) on the
   same files, in the same turn;
3. with ``--app``: the app on the ledgers, ``has:`` applied: seconds until every run is
   judged, and the longest the event loop went without running a 10 ms timer meanwhile
   (what a user feels as a frozen screen).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from inspector.content_search import ContentSearch
from inspector.filters import RunFilter
from ledger_reader import RunSummary

RARE = "quetzalcoatl"
"""In 1% of the files."""
ABSENT = "xylophonist"
"""In none."""

FILE_BYTES = 1_000_000
SENTENCES = (
    "the of and to in is that for it as with was on be by this are or from at an which "
    "file test run error output model tool call result value config server request data "
    "python function class import return module package install build check found line "
    "should would could will please let me look read write update change fix add remove "
    "directory path branch commit merge review token cost prompt cache session agent user"
)
VOCABULARY = SENTENCES.split()


def words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choices(VOCABULARY, k=count))


def ledger_lines(rng: random.Random, run_id: str, planted: str | None) -> list[str]:
    """A runtop ledger's lines, about :data:`FILE_BYTES` of them."""
    lines = [
        json.dumps(
            {
                "run_id": run_id,
                "seq": 1,
                "time": "2026-12-01T10:00:00Z",
                "type": "run_started",
                "payload": {"skill": "research", "input": words(rng, 20)},
            }
        )
    ]
    size = len(lines[0])
    seq = 2
    while size < FILE_BYTES:
        kind = rng.choice(["llm_call", "llm_chunk", "tool_call", "tool_result"])
        if kind == "llm_call":
            payload: dict[str, object] = {
                "model": "claude-sonnet-4-5",
                "prompt_tokens": 1200,
                "output_tokens": 80,
                "messages": [
                    {"role": "user", "content": words(rng, 150)},
                    {"role": "assistant", "content": words(rng, 100)},
                ],
                "response": [{"role": "assistant", "content": words(rng, 60)}],
            }
        elif kind == "llm_chunk":
            payload = {"index": seq, "delta": words(rng, 4) + " ", "node_id": "llm:m#1"}
        elif kind == "tool_call":
            payload = {
                "call_id": f"call_{seq}",
                "name": "shell",
                "arguments": {"cmd": words(rng, 8)},
            }
        else:
            payload = {"call_id": f"call_{seq - 1}", "output": words(rng, 200)}
        line = json.dumps(
            {
                "run_id": run_id,
                "seq": seq,
                "time": "2026-12-01T10:00:01Z",
                "type": kind,
                "payload": payload,
            }
        )
        lines.append(line)
        size += len(line) + 1
        seq += 1
    if planted:
        at = rng.randrange(1, len(lines))
        record = json.loads(lines[at])
        record["payload"]["said"] = f"{words(rng, 5)} {planted} {words(rng, 5)}"
        lines[at] = json.dumps(record)
    return lines


def session_lines(rng: random.Random, session: str, planted: str | None) -> list[str]:
    """A Claude Code session file's lines, about :data:`FILE_BYTES` of them."""
    common = {
        "sessionId": session,
        "cwd": "/home/dev/project",
        "gitBranch": "main",
        "version": "2.1.3",
    }
    lines: list[str] = []
    size = 0
    number = 0
    while size < FILE_BYTES:
        number += 1
        if number % 2:
            record: dict[str, object] = {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"toolu_{number}",
                            "content": words(rng, 250),
                        }
                    ],
                },
            }
        else:
            record = {
                "type": "assistant",
                "message": {
                    "id": f"msg_{number}",
                    "model": "claude-opus-4-5",
                    "content": [
                        {"type": "text", "text": words(rng, 60)},
                        {
                            "type": "tool_use",
                            "id": f"toolu_{number + 1}",
                            "name": "Bash",
                            "input": {"command": words(rng, 6)},
                        },
                    ],
                    "usage": {
                        "input_tokens": 4,
                        "output_tokens": 120,
                        "cache_read_input_tokens": 20000,
                    },
                },
            }
        record.update(common, uuid=f"u{number}", timestamp="2026-12-01T10:00:00.000Z")
        line = json.dumps(record)
        lines.append(line)
        size += len(line) + 1
    if planted:
        at = rng.randrange(len(lines))
        planted_in: Any = json.loads(lines[at])
        planted_in["message"]["content"][0]["said"] = f"{words(rng, 5)} {planted} {words(rng, 5)}"
        lines[at] = json.dumps(planted_in)
    return lines


def make_home(home: Path, gigabytes: float) -> None:
    """The home's files, unless they are there already."""
    files = int(gigabytes * 1e9 / FILE_BYTES)
    ledgers, sessions = home / "ledgers", home / "sessions"
    if ledgers.is_dir() and len(list(ledgers.iterdir())) + len(list(sessions.iterdir())) == files:
        return
    ledgers.mkdir(parents=True, exist_ok=True)
    sessions.mkdir(parents=True, exist_ok=True)
    rng = random.Random(36)
    for number in range(files):
        planted = RARE if number % 100 == 7 else None
        if number % 2:
            run_id = f"run_20261201T{number // 1000:06d}{number % 1000:03d}_{number:016x}"
            text = "\n".join(ledger_lines(rng, run_id, planted)) + "\n"
            (ledgers / f"{run_id}.jsonl").write_text(text)
        else:
            session = f"{number:08x}-0000-4000-8000-{number:012x}"
            text = "\n".join(session_lines(rng, session, planted)) + "\n"
            (sessions / f"{session}.jsonl").write_text(text)


def run_files(home: Path) -> list[Path]:
    return sorted((home / "ledgers").iterdir()) + sorted((home / "sessions").iterdir())


def has_time(files: list[Path], word: str, threads: int = 1) -> tuple[float, int]:
    """Seconds ``has:word`` takes to judge every run, and how many it found (the runs
    shared out among ``threads`` threads, each with its own search)."""
    summaries = [RunSummary(run_id=path.stem, path=str(path)) for path in files]
    phrases = RunFilter.parse(f"has:{word}").phrases

    def judge(share: list[RunSummary]) -> int:
        search = ContentSearch(phrases)
        return sum(search.passes(summary) for summary in share)

    began = time.perf_counter()
    if threads == 1:
        found = judge(summaries)
    else:
        with ThreadPoolExecutor(threads) as pool:
            found = sum(pool.map(judge, [summaries[n::threads] for n in range(threads)]))
    return time.perf_counter() - began, found


def grep_time(files: list[Path], word: str, *options: str) -> tuple[float, int]:
    """Seconds ``grep -F -l`` takes on the same files, and how many it lists."""
    began = time.perf_counter()
    done = subprocess.run(
        ["grep", "-F", "-l", *options, word, "-r", str(files[0].parent.parent)],
        stdout=subprocess.PIPE,
        check=False,
    )
    return time.perf_counter() - began, len(done.stdout.splitlines())


async def app_time(home: Path, word: str) -> tuple[float, float, float, int]:
    """The app on the ledgers, ``has:word`` applied: seconds until every run is judged,
    the longest gap between two ticks of a 10 ms timer meanwhile, and in the second
    before, without a search (the machine's own stalls), and the runs shown."""
    from inspector import LedgerDirectorySource
    from tui.app import make_app
    from tui.screens.runs import RunsScreen
    from tui.settings import Settings
    from tui.widgets.run_table import RunTable

    ledgers = home / "ledgers"
    count = len(list(ledgers.iterdir()))
    app = make_app(Settings(), [LedgerDirectorySource(ledgers)])
    async with app.run_test(size=(160, 48)) as pilot:
        while len(app.store.snapshot().runs) < count:
            await pilot.pause(0.05)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        ticks: list[float] = []
        timer = screen.set_interval(0.01, lambda: ticks.append(time.perf_counter()))
        await pilot.pause(1.0)
        idle = max(after - before for before, after in itertools.pairwise(ticks[1:]))
        began = time.perf_counter()
        screen._apply_filter(f"has:{word}")
        await pilot.pause(0.02)
        while screen.searching:
            await pilot.pause(0.01)
        took = time.perf_counter() - began
        timer.stop()
        during = [tick for tick in ticks if tick >= began - 0.02]
        gaps = [after - before for before, after in itertools.pairwise(during)]
        return took, max(gaps, default=0.0), idle, len(screen.query_one(RunTable).rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gigabytes", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--home", type=Path, default=Path(__file__).parent / "tmp-search-home")
    parser.add_argument("--app", action="store_true")
    options = parser.parse_args()
    make_home(options.home, options.gigabytes)
    files = run_files(options.home)
    size = sum(path.stat().st_size for path in files)
    for path in files:  # warm: every byte in the page cache
        with path.open("rb") as file:
            while file.read(1 << 20):
                pass
    print(f"load {os.getloadavg()[0]:.1f}; {len(files):,} files, {size / 1e9:.2f} GB, warm")
    for word, what in [(ABSENT, "a word in no file"), (RARE, "a word in 1% of the files")]:
        times: dict[str, list[float]] = {"has": [], "has, 2 threads": [], "grep": [], "grep -i": []}
        counts: dict[str, int] = {}
        for _ in range(options.runs):  # in turns
            took, counts["has"] = has_time(files, word)
            times["has"].append(took)
            took, counts["has, 2 threads"] = has_time(files, word, 2)
            times["has, 2 threads"].append(took)
            took, counts["grep"] = grep_time(files, word)
            times["grep"].append(took)
            took, counts["grep -i"] = grep_time(files, word, "-i")
            times["grep -i"].append(took)
        medians = {name: statistics.median(each) for name, each in times.items()}
        said = ", ".join(
            f"{name} {took:.2f} s ({size / took / 1e9:.2f} GB/s, {counts[name]} found)"
            for name, took in medians.items()
        )
        ratio = medians["has"] / medians["grep"]
        print(
            f"1. has: for {what}: {said}; has: / grep -F -l = {ratio:.2f}; median of {options.runs}"
        )
    if options.app:
        results = [asyncio.run(app_time(options.home, RARE)) for _ in range(options.runs)]
        stall = statistics.median(r[1] for r in results)
        idle = statistics.median(r[2] for r in results)
        print(
            f"3. the app, has:{RARE} over {len(list((options.home / 'ledgers').iterdir())):,} "
            f"ledgers: every run judged in {statistics.median(r[0] for r in results):.2f} s, "
            f"the event loop's longest stall {stall * 1000:.0f} ms (a 10 ms timer; in the "
            f"second before, with no search, {idle * 1000:.0f} ms), {results[0][3]} runs shown; "
            f"median of {options.runs}"
        )
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
