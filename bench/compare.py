"""Two runs side by side: from C to the comparison read whole, for big runs and small.

    .venv/bin/python bench/compare.py [--runs 3] [--events 100000]

Two ledgers of ``--events`` events each (tool calls, model calls, streamed
text) are marked in the runs table of a headless app at 160x48, and C is
pressed. Timed: until the first comparison is on screen, and until both
runs are read whole (every measure settled, both timelines filled). Beside
it, in the same run, the same for two runs of ten events: the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.generate import event_line, typical_events
from inspector import LedgerDirectorySource
from tui.app import make_app
from tui.screens.compare import CompareScreen
from tui.settings import Settings
from tui.widgets.comparison_table import ComparisonTable
from tui.widgets.run_table import RunTable
from tui.widgets.timeline_pane import TimelinePane

IDS = ("run_20261129T064500123_a1a1a1a1a1a1a1a1", "run_20261129T064600123_b2b2b2b2b2b2b2b2")


def write_pair(directory: Path, events: int) -> None:
    for run_id in IDS:
        with (directory / f"{run_id}.jsonl").open("wb") as ledger:
            ledger.writelines(typical_events(run_id, events - 1))
            ledger.write(event_line(run_id, events, "run_completed", {"status": "ok"}))


async def until(check: object, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError("the comparison never finished")
        await asyncio.sleep(0.005)


async def one(directory: Path) -> tuple[float, float]:
    """Seconds from C to the first comparison drawn, and to both runs read whole."""
    app = make_app(Settings(flush_interval=0.05), [LedgerDirectorySource(directory, name="b")])
    async with app.run_test(size=(160, 48)) as pilot:
        table = app.screen.query_one(RunTable)
        await until(lambda: len(table.rows) == 2 and all(r.detailed for r in table.rows))
        await pilot.press("space", "down", "space")
        began = time.perf_counter()
        app.simulate_key("C")  # not pilot.press: it waits for the app to be idle (read whole)

        def shown() -> bool:
            screen = app.screen
            return isinstance(screen, CompareScreen) and bool(
                screen.query(ComparisonTable) and screen.query_one(ComparisonTable).comparison
            )

        await until(shown)
        first = time.perf_counter() - began
        screen = app.screen
        comparison = screen.query_one(ComparisonTable)

        def whole() -> bool:
            panes = list(screen.query(TimelinePane))
            return not comparison.reading and all(not pane.loading for pane in panes)

        await until(whole)
        return first, time.perf_counter() - began


async def measure(pairs: list[tuple[str, Path]], runs: int) -> None:
    for name, directory in pairs:
        times = [await one(directory) for _ in range(runs)]
        first = statistics.median(t[0] for t in times)
        whole = statistics.median(t[1] for t in times)
        print(
            f"compare two runs of {name}: first comparison {first * 1000:.0f} ms, "
            f"read whole {whole * 1000:.0f} ms (median of {runs})"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--events", type=int, default=100_000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as big, tempfile.TemporaryDirectory() as small:
        write_pair(Path(big), options.events)
        write_pair(Path(small), 10)
        for path in Path(big).iterdir():
            path.read_bytes()  # a warm page cache, as for the other figures
        pairs = [(f"{options.events:,} events each", Path(big)), ("10 events each", Path(small))]
        asyncio.run(measure(pairs, options.runs))


if __name__ == "__main__":
    main()
