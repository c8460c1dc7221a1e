"""One 1 GB ledger: the full line index, first and last event, events by number, decoding.

Prints medians of several runs. The page cache is warm (the file was just
written or read); MEASURED.md warns that cold reads run 0.7-3.2 GB/s here.

    .venv/bin/python bench/ledger_file.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.generate import big_ledger, typical_events
from ledger_reader import LedgerFile, decode_line


def median_of(runs: int, measure: object) -> tuple[float, list[float]]:
    samples = [measure() for _ in range(runs)]  # type: ignore[operator]
    return statistics.median(samples), samples


def index_rate(path: Path) -> float:
    with LedgerFile(path) as ledger:
        started = time.perf_counter()
        ledger.build_index()
        elapsed = time.perf_counter() - started
        assert ledger.index_complete
        return path.stat().st_size / elapsed / 1e9


def first_and_last_ms(path: Path) -> float:
    started = time.perf_counter()
    with LedgerFile(path) as ledger:
        first = ledger.first_event()
        last = ledger.last_event()
    elapsed = (time.perf_counter() - started) * 1000
    assert first is not None
    assert first.type == "run_started"
    assert last is not None
    assert last.type == "run_completed"
    return elapsed


def range_by_seq_ms(path: Path) -> float:
    started = time.perf_counter()
    with LedgerFile(path) as ledger:
        events = ledger.events_from_seq(1_000_000, 100)
    elapsed = (time.perf_counter() - started) * 1000
    assert [event.seq for event in events] == list(range(1_000_000, 1_000_100))
    return elapsed


def range_by_index_ms(ledger: LedgerFile) -> float:
    started = time.perf_counter()
    items = ledger.lines(999_999, 1_000_099)
    elapsed = (time.perf_counter() - started) * 1000
    assert len(items) == 100
    return elapsed


def decode_rate(lines: list[bytes]) -> float:
    started = time.perf_counter()
    for raw in lines:
        decode_line(raw)
    return len(lines) / (time.perf_counter() - started)


def stdlib_rate(lines: list[bytes]) -> float:
    started = time.perf_counter()
    for raw in lines:
        json.loads(raw)
    return len(lines) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    path = big_ledger()
    size = path.stat().st_size
    path.read_bytes() if size < 0 else None
    with path.open("rb") as handle:  # warm the page cache
        while handle.read(64 << 20):
            pass
    print(f"ledger: {path.name}, {size / 1e9:.2f} GB, warm page cache")

    rate, samples = median_of(args.runs, lambda: index_rate(path))
    print(
        f"full line index:           {rate:6.2f} GB/s   (median of {args.runs}: "
        f"{', '.join(f'{s:.2f}' for s in samples)}; target >= 3)"
    )

    ms, samples = median_of(args.runs * 2, lambda: first_and_last_ms(path))
    print(f"first + last event (open): {ms:6.2f} ms     (median of {args.runs * 2}; target < 50)")

    ms, samples = median_of(args.runs * 2, lambda: range_by_seq_ms(path))
    print(f"events 1,000,000-1,000,100, no index (open + seq search): {ms:6.2f} ms (target < 20)")

    with LedgerFile(path) as ledger:
        ledger.build_index()
        ms, samples = median_of(args.runs * 2, lambda: range_by_index_ms(ledger))
    print(f"events 1,000,000-1,000,100, indexed:                     {ms:6.2f} ms (target < 20)")

    lines = [raw.rstrip(b"\n") for raw in typical_events("run_x", 200_000)]
    mean = sum(map(len, lines)) / len(lines)
    rate, _ = median_of(args.runs, lambda: decode_rate(lines))
    base, _ = median_of(args.runs, lambda: stdlib_rate(lines))
    print(
        f"decode typical events ({mean:.0f} B): {rate / 1e6:5.2f} M events/s (target >= 0.7); "
        f"stdlib json.loads alone: {base / 1e6:.2f} M/s"
    )


if __name__ == "__main__":
    main()
