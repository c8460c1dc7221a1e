"""The timeline's figures: opening it on a run of 100,000 nodes, and a key press on it.

    .venv/bin/python bench/timeline.py [--repeats 5] [--presses 30]

Writes two ledgers under ``bench/data/timeline/`` on first use: a run of
100,000 nodes (model and tool calls taking turns, 400,001 events, ~80 MB)
and one of ten. For each, in turns, a fresh app (headless, 160x48) opens
the run's screen, and then:

- **open**: ``T`` pressed, to the first frame the terminal is sent with the
  timeline's rows on it (the first page of events folded: the rest is read
  while the user looks);
- **complete**: ``T`` to the whole timeline read and its summary shown;
- **key**: once complete, ``down`` posted to the first frame drawn with the
  cursor moved (the median of ``--presses``).

Medians of ``--repeats`` runs; the ten-node run is the floor in the same runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATA = ROOT / "bench" / "data" / "timeline"
BASE = datetime(2026, 11, 29, 6, 0, tzinfo=UTC)


def run_id(nodes: int) -> str:
    return f"run_20261129T060000000_{nodes:016x}"


def write_ledger(nodes: int) -> Path:
    """A finished run of ``nodes`` nodes, four events each, 10 ms apart (two in parallel)."""
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"{run_id(nodes)}.jsonl"
    if path.exists():
        return path
    rid = run_id(nodes)
    seq = 0
    lines: list[bytes] = []

    def add(at: float, kind: str, payload: dict[str, Any]) -> None:
        nonlocal seq
        seq += 1
        moment = (BASE + timedelta(seconds=at)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        record = {"run_id": rid, "seq": seq, "time": moment, "type": kind, "payload": payload}
        lines.append(json.dumps(record, separators=(",", ":")).encode() + b"\n")

    add(0, "run_started", {"skill": "bench", "writer": "bench"})
    for number in range(nodes):
        at = 0.01 + number * 0.01
        if number % 2:
            node, call = f"tool:search#{number}", f"call_{number:016x}"
            add(at, "node_enter", {"node_id": node, "node_name": "search"})
            add(at, "tool_call", {"call_id": call, "node_id": node, "name": "search"})
            add(at + 0.015, "tool_result", {"call_id": call, "node_id": node, "output": "ok"})
            add(at + 0.015, "node_exit", {"node_id": node, "success": True})
        else:
            node = f"llm:default#{number}"
            add(at, "node_enter", {"node_id": node, "node_name": "default"})
            add(at + 0.002, "llm_chunk", {"index": number, "delta": "text", "node_id": node})
            usage = {"model": "m", "prompt_tokens": 100, "output_tokens": 10, "node_id": node}
            add(at + 0.008, "llm_call", usage)
            add(at + 0.008, "node_exit", {"node_id": node, "success": True})
    add(nodes * 0.01 + 0.1, "run_completed", {"status": "ok"})
    path.write_bytes(b"".join(lines))
    return path


def nodes_expected(path: Path) -> int:
    """The run's events (four a node, and its start and end)."""
    nodes = int(path.stem.rsplit("_", 1)[1], 16)
    return nodes * 4 + 2


async def measure(path: Path, presses: int) -> dict[str, float]:
    from textual import events

    from inspector import LedgerDirectorySource
    from tui.app import make_app
    from tui.screens.run import RunScreen
    from tui.settings import Settings
    from tui.widgets.event_list import EventList
    from tui.widgets.run_table import RunTable
    from tui.widgets.timeline_pane import TimelinePane
    from tui.widgets.timeline_view import TimelineView

    source = LedgerDirectorySource(path.parent, only=[str(path)], name="bench")
    app = make_app(Settings(), [source])
    display = app._display
    marks: dict[str, float] = {}
    wanted: list[int] = []
    shown = asyncio.Event()

    def timed_display(screen: object, renderable: object) -> None:
        display(screen, renderable)  # type: ignore[arg-type]
        views = app.screen.query(TimelineView)
        if not views:
            return
        view = views.first()
        if "open" not in marks and view.display and len(view.timeline):
            marks["open"] = time.perf_counter()
        if wanted and view.cursor == wanted[0]:
            wanted.clear()
            shown.set()  # the first frame drawn with the cursor moved

    app._display = timed_display  # type: ignore[method-assign]
    async with app.run_test(size=(160, 48)) as pilot:
        while not app.screen.query(RunTable) or not app.screen.query_one(RunTable).rows:
            await pilot.pause(0.01)
        await pilot.press("enter")
        while not isinstance(app.screen, RunScreen):
            await pilot.pause(0.01)
        # The run's screen settled: its event list counted (the ledger's index built);
        # a user reads it, then presses T.
        stream = app.screen.query_one(EventList)
        for _ in range(1200):
            if stream.count >= nodes_expected(path):
                break
            await pilot.pause(0.05)
        else:
            print("the event list never counted the run's events", flush=True)
        await pilot.pause(2.0)
        pressed = time.perf_counter()
        await pilot.press("T")
        pane = app.screen.query_one(TimelinePane)
        while pane.loading or pane.summary is None:
            await pilot.pause(0.002)
        complete = time.perf_counter()
        await pilot.pause(0.3)
        view = pane.view
        latencies = []
        for number in range(presses):
            key = "down" if number % 2 == 0 else "up"  # in range however few the rows
            shown.clear()
            wanted[:] = [view.cursor + (1 if key == "down" else -1)]
            started = time.perf_counter()
            app.post_message(events.Key(key, None))
            await asyncio.wait_for(shown.wait(), 10.0)
            latencies.append(time.perf_counter() - started)
            await asyncio.sleep(0.05)
        nodes = len(pane.timeline)
    return {
        "nodes": nodes,
        "open": marks["open"] - pressed,
        "complete": complete - pressed,
        "key": statistics.median(latencies),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--presses", type=int, default=30)
    parser.add_argument("--nodes", type=int, default=100_000)
    args = parser.parse_args()
    big, small = write_ledger(args.nodes), write_ledger(10)
    asyncio.run(measure(small, args.presses))  # a first app pays for imports: not counted
    results: dict[int, list[dict[str, float]]] = {args.nodes: [], 10: []}
    for repeat in range(args.repeats):
        for nodes, path in ((args.nodes, big), (10, small)):
            figures = asyncio.run(measure(path, args.presses))
            assert figures["nodes"] == nodes, figures
            results[nodes].append(figures)
            print(
                f"run {repeat + 1}, {nodes:,} nodes: open {figures['open'] * 1000:.0f} ms, "
                f"complete {figures['complete'] * 1000:.0f} ms, key {figures['key'] * 1000:.1f} ms",
                flush=True,
            )
    for nodes in (args.nodes, 10):
        runs = results[nodes]
        open_ms = statistics.median(r["open"] for r in runs) * 1000
        complete_ms = statistics.median(r["complete"] for r in runs) * 1000
        key_ms = statistics.median(r["key"] for r in runs) * 1000
        print(
            f"{nodes:,} nodes, medians of {len(runs)}: T to the first frame of the timeline "
            f"{open_ms:.0f} ms (target < 300), to all of it read {complete_ms:.0f} ms; "
            f"key to frame {key_ms:.1f} ms (target < 50)"
        )


if __name__ == "__main__":
    main()
