"""Append to delivery: how long from a writer's write() to the event reaching a follower.

A writer process appends events to a ledger in a watched directory, each
carrying the CLOCK_MONOTONIC time of its write (the clock is system-wide,
so two processes can compare it); the follower is LedgerDirectory.watch,
as the inspector uses it. Prints p50 and p99 over all events of several
runs.

    .venv/bin/python bench/tail_latency.py [--runs 5] [--events 300]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ledger_reader import LedgerDirectory, LlmChunk, iter_events

WRITER = textwrap.dedent(
    """
    import json, os, random, sys, time
    path, count = sys.argv[1], int(sys.argv[2])
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    time.sleep(0.3)  # let the follower start watching
    for seq in range(1, count + 1):
        time.sleep(random.uniform(0.002, 0.010))
        record = {"run_id": "run_bench", "seq": seq, "time": "2026-11-29T00:00:00Z",
                  "type": "llm_chunk", "payload": {"delta": "x" * 200, "index": seq,
                  "node_id": repr(time.monotonic())}}
        record["payload"]["node_id"] = repr(time.monotonic())
        os.write(fd, (json.dumps(record) + "\\n").encode())
    os.close(fd)
    """
)


async def one_run(count: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "run_bench.jsonl"
        path.touch()
        latencies: list[float] = []
        stop = asyncio.Event()
        writer = await asyncio.create_subprocess_exec(
            sys.executable, "-c", WRITER, str(path), str(count)
        )
        async for update in LedgerDirectory(root).watch(stop):
            now = time.monotonic()
            for change in update.changes:
                for event in iter_events(change.items):
                    if isinstance(event, LlmChunk) and event.payload.node_id:
                        latencies.append((now - float(event.payload.node_id)) * 1000)
            if len(latencies) >= count:
                stop.set()
        await writer.wait()
        return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--events", type=int, default=300)
    args = parser.parse_args()
    p50s: list[float] = []
    p99s: list[float] = []
    for _ in range(args.runs):
        latencies = asyncio.run(one_run(args.events))
        assert len(latencies) == args.events, len(latencies)
        cuts = statistics.quantiles(latencies, n=100)
        p50s.append(cuts[49])
        p99s.append(cuts[98])
    print(
        f"append -> delivery through LedgerDirectory.watch, {args.events} events x {args.runs} runs"
    )
    print(f"p50: {statistics.median(p50s):.2f} ms (runs: {', '.join(f'{v:.2f}' for v in p50s)})")
    print(
        f"p99: {statistics.median(p99s):.2f} ms (runs: {', '.join(f'{v:.2f}' for v in p99s)}; "
        "target < 10 ms)"
    )


if __name__ == "__main__":
    main()
