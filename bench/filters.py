"""``runtop ls --filter`` and the app's ``/`` select the same runs, on 10,000 generated ones.

    .venv/bin/python bench/filters.py [--runs 10000]

Makes (once) ``--runs`` small ledgers whose figures differ as real runs' do
(:func:`bench.generate.varied_ledgers`: costs, tokens, model calls, models, lengths and
ends), then for each filter compares the runs ``runtop ls --json --filter`` lists with
the runs the app's store keeps through the same filter once it has read the directory
(``Snapshot.filtered``, what the runs screen shows), and times both.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.generate import DATA, varied_ledgers
from inspector import LedgerDirectorySource, RunStore
from inspector.filters import RunFilter
from tui.cli import main as runtop

FILTERS = (
    "cost:>0.01 duration:>30s",
    "cost:0.01..0.10",
    "-cost:>0.01",
    "tokens:>=10k",
    "calls:>5 status:succeeded",
    "calls:0",
    "events:<5",
    "model:claude-*",
    "-model:gpt-* duration:<1m",
    "duration:1m..5m",
)


def ledgers(count: int) -> Path:
    root = DATA / f"varied-{count}"
    marker = root / ".complete"
    if not marker.exists():
        varied_ledgers(root, count)
        marker.touch()
    return root


def listed(root: Path, text: str) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = runtop(["ls", str(root), "--json", "--no-cache", f"--filter={text}"])
    assert status == 0, status
    return sorted(json.loads(text)["run_id"] for text in out.getvalue().splitlines())


async def shown(root: Path, count: int) -> dict[str, list[str]]:
    async with RunStore(flush_interval=0.01) as store:
        store.add_source(LedgerDirectorySource(root, name="varied"))
        changes = store.changes()
        while len(store.snapshot().runs) < count or not all(
            run.detailed for run in store.snapshot().runs
        ):
            await anext(changes)
        snapshot = store.snapshot()
        chosen: dict[str, list[str]] = {}
        for text in FILTERS:
            started = time.perf_counter()
            runs = snapshot.filtered(RunFilter.parse(text))
            took = (time.perf_counter() - started) * 1000
            chosen[text] = sorted(run.run_id for run in runs)
            print(f"  the store: {text!r:30} {len(runs):6,} runs in {took:6.1f} ms")
        return chosen


def compare(count: int) -> int:
    """The filters ls and the store disagree on (0: none)."""
    root = ledgers(count)
    print(f"{count:,} generated runs in {root}")
    app = asyncio.run(shown(root, count))
    wrong = 0
    for text in FILTERS:
        started = time.perf_counter()
        ls = listed(root, text)
        took = time.perf_counter() - started
        same = ls == app[text]
        wrong += not same
        print(f"  ls:        {text!r:30} {len(ls):6,} runs in {took:6.2f} s  same: {same}")
    return wrong


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10_000)
    sys.exit(1 if compare(parser.parse_args().runs) else 0)
