"""Make benchmark ledgers: realistic event mixes, written as a writer would.

Run as a script to (re)make the data under bench/data; the benchmarks call
the functions directly and reuse what is already there.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"

_TOOLS = ["web_search", "read_page", "shell", "query_db", "write_file"]


def event_line(run_id: str, seq: int, kind: str, payload: dict[str, object]) -> bytes:
    second, micro = divmod(seq, 1_000_000)
    record = {
        "run_id": run_id,
        "seq": seq,
        "time": f"2026-11-29T06:{(second // 60) % 60:02d}:{second % 60:02d}.{micro:06d}Z",
        "type": kind,
        "payload": payload,
    }
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def typical_events(run_id: str, count: int, *, start_seq: int = 1) -> Iterator[bytes]:
    """A run's events, about 300 bytes each: model text, tool calls, results."""
    seq = start_seq
    if seq == 1:
        yield event_line(
            run_id,
            1,
            "run_started",
            {"skill": "research", "agent": "bench", "writer": "runtop", "input": {"q": "x" * 40}},
        )
        seq = 2
    step = 0
    while seq < start_seq + count:
        step += 1
        tool = _TOOLS[step % len(_TOOLS)]
        node = f"tool:{tool}#{step}"
        call = f"call_{step:016x}"
        for kind, payload in (
            ("node_enter", {"node_id": node, "node_name": tool, "span_id": f"{step:016x}"}),
            (
                "tool_call",
                {
                    "call_id": call,
                    "node_id": node,
                    "name": tool,
                    "arguments": {
                        "query": f"benchmark query number {step}",
                        "limit": 10,
                        "filters": {"lang": "en", "site": "docs.example.org"},
                    },
                },
            ),
            (
                "tool_result",
                {
                    "call_id": call,
                    "node_id": node,
                    "is_error": step % 17 == 0,
                    "output": "result line one; result line two; " * 4,
                },
            ),
            (
                "node_exit",
                {"node_id": node, "duration_micros": 1000 + step % 5000, "success": True},
            ),
            (
                "llm_chunk",
                {
                    "index": step,
                    "delta": "Some streamed model text, a sentence or two " * 3,
                    "node_id": "llm:default#1",
                },
            ),
            (
                "llm_call",
                {
                    "model": "claude-sonnet",
                    "provider": "anthropic",
                    "prompt_tokens": 1200 + step % 900,
                    "output_tokens": 80 + step % 50,
                    "cache_read_tokens": 512,
                    "cost_usd": 0.0042,
                },
            ),
        ):
            if seq >= start_seq + count:
                return
            yield event_line(run_id, seq, kind, payload)
            seq += 1


def big_ledger(size_bytes: int = 1 << 30) -> Path:
    """A ledger of about ``size_bytes`` (default 1 GB), made once."""
    path = DATA / f"big-{size_bytes >> 20}MiB.jsonl"
    if path.exists() and path.stat().st_size >= size_bytes:
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    run_id = "run_20261129T064500123_b16b16b16b16b16b"
    partial = path.with_suffix(".partial")
    with partial.open("wb", buffering=8 << 20) as handle:
        written = 0
        seq = 1
        while written < size_bytes:
            block = b"".join(typical_events(run_id, 10_000, start_seq=seq))
            handle.write(block)
            written += len(block)
            seq += 10_000
        handle.write(event_line(run_id, seq, "run_completed", {"status": "ok", "output": "done"}))
    os.replace(partial, path)
    return path


def ledger_directory(count: int = 10_000, events: int = 40) -> Path:
    """A directory of ``count`` ledgers in 100 subdirectories, made once."""
    root = DATA / f"dir-{count}"
    marker = root / ".complete"
    if marker.exists():
        return root
    for index in range(count):
        run_id = f"run_20261129T{index // 1000:02d}{index % 1000:04d}000_{index:016x}"
        sub = root / f"{index % 100:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        lines = list(typical_events(run_id, events))
        if index % 3 == 0:
            lines.append(event_line(run_id, events + 1, "run_completed", {"status": "ok"}))
        elif index % 3 == 1:
            lines.append(event_line(run_id, events + 1, "error", {"message": "boom"}))
            lines.append(
                event_line(
                    run_id, events + 2, "run_completed", {"status": "error", "error": "boom"}
                )
            )
        (sub / f"{run_id}.jsonl").write_bytes(b"".join(lines))
    marker.touch()
    return root


def timed_line(
    run_id: str, seq: int, kind: str, payload: dict[str, object], moment: float
) -> bytes:
    """One ledger line at ``moment`` (POSIX seconds)."""
    whole = int(moment)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
    record = {
        "run_id": run_id,
        "seq": seq,
        "time": f"{stamp}.{int((moment - whole) * 1_000_000):06d}Z",
        "type": kind,
        "payload": payload,
    }
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


_MODELS = ["claude-haiku-4-5", "claude-sonnet-4-5", "gpt-5.2", "gemini-2.5-pro"]


def varied_ledgers(root: Path, count: int, *, first: int = 0) -> list[Path]:
    """``count`` small ledgers under ``root`` whose numbers differ as real runs' do: each
    run's model calls (0 to 11, of one or two models, some saying no cost), its length
    (0.2 s to 10 min) and its end (succeeded, failed, or never written: stale). The same
    ``first`` and ``count`` make the same ledgers (what the filters are checked on)."""
    import random

    chosen = random.Random(first * 7919 + count)
    root.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for index in range(first, first + count):
        run_id = f"run_20261129T{index // 1000 % 100:02d}{index % 1000:04d}000_{index:016x}"
        start = 1_795_932_000.0 + index * 3.0  # 2026-11-29T06:00:00Z onwards
        length = chosen.choice([0.2, 2.0, 29.0, 31.0, 45.0, 90.0, 600.0]) * chosen.uniform(0.9, 1.1)
        calls = chosen.choice([0, 1, 2, 3, 6, 11])
        models = chosen.sample(_MODELS, chosen.choice([1, 1, 2]))
        priced = chosen.random() < 0.85
        events: list[tuple[str, dict[str, object], float]] = []
        skill = chosen.choice(["research", "deploy", "summarize", "triage"])
        events.append(
            ("run_started", {"skill": skill, "agent": "bench", "writer": "runtop"}, start)
        )
        for number in range(calls):
            moment = start + length * (number + 1) / (calls + 1)
            call: dict[str, object] = {
                "model": models[number % len(models)],
                "provider": "bench",
                "prompt_tokens": chosen.randrange(200, 9000),
                "output_tokens": chosen.randrange(20, 1500),
            }
            if priced:
                call["cost_usd"] = round(chosen.uniform(0.0001, 0.02), 6)
            events.append(("llm_call", call, moment))
        ending = chosen.random()
        if ending < 0.7:
            events.append(("run_completed", {"status": "ok"}, start + length))
        elif ending < 0.9:
            events.append(("error", {"message": "tool shell failed"}, start + length))
            events.append(("run_completed", {"status": "error", "error": "boom"}, start + length))
        else:
            events.append(
                ("node_enter", {"node_id": "tool:shell#1", "node_name": "shell"}, start + length)
            )
        path = root / f"{run_id}.jsonl"
        path.write_bytes(
            b"".join(
                timed_line(run_id, seq, kind, payload, moment)
                for seq, (kind, payload, moment) in enumerate(events, 1)
            )
        )
        paths.append(path)
    return paths


if __name__ == "__main__":
    print(big_ledger(), file=sys.stderr)
    print(ledger_directory(), file=sys.stderr)
