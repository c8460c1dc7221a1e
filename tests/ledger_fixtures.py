"""Ledgers for each way a real ledger was read wrong, built in a directory on demand.

Generated rather than committed: two of them are over 256 KiB (one holds a
3 MB line). Each is named for the bug it keeps fixed, and says what a
correct reader finds in it (:data:`EXPECTED`).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES

BOM = b"\xef\xbb\xbf"
CAP = 64 * 1024
"""The writers' payload cap: over it, a value is cut to 64 KiB and ``truncated`` set."""

IDS = {
    "capped_65k": "run_20261130T010000001_6500065000650006",
    "capped_3m": "run_20261130T010000002_3000030000300003",
    "bom": "run_20261130T010000003_b0b0b0b0b0b0b0b0",
    "empty": "run_20261130T010000004_0000000000000000",
    "blank": "run_20261130T010000005_2020202020202020",
    "suspended": "run_20261130T010000006_5555555555555555",
    "abandoned_torn": "run_20261130T010000007_dead0dead0dead0d",
}


def _line(run_id: str, seq: int, kind: str, payload: dict[str, Any]) -> bytes:
    record = {
        "run_id": run_id,
        "seq": seq,
        "time": f"2026-11-30T01:00:{seq:02d}.{seq:06d}Z",
        "type": kind,
        "payload": payload,
    }
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def capped_run(run_id: str, final_output_bytes: int) -> bytes:
    """A finished run of 14 events, ~300 KB, as gridctl's persist package writes it.

    Six tool calls whose outputs are capped at 64 KiB carry it past 256 KiB;
    its ``run_completed`` holds an output of ``final_output_bytes`` (longer
    than any fixed tail window).
    """
    lines = [_line(run_id, 1, "run_started", {"skill": "report", "input": {"q": "quarter"}})]
    seq = 2
    for number in range(6):
        call = f"call_{number:016x}"
        node = f"tool:fetch#{number + 1}"
        lines.append(
            _line(run_id, seq, "tool_call", {"call_id": call, "node_id": node, "name": "fetch"})
        )
        output = "o" * (40 * 1024)
        lines.append(
            _line(
                run_id, seq + 1, "tool_result", {"call_id": call, "node_id": node, "output": output}
            )
        )
        seq += 2
    final = {"status": "ok", "output": "r" * final_output_bytes, "truncated": True}
    lines.append(_line(run_id, seq, "run_completed", final))
    return b"".join(lines)


def suspended_run(run_id: str) -> bytes:
    """A run that stopped to wait on its approval (gridctl's ``suspended``)."""
    return b"".join(
        [
            _line(run_id, 1, "run_started", {"skill": "deploy"}),
            _line(run_id, 2, "node_enter", {"node_id": "approval:deploy#1"}),
            _line(
                run_id,
                3,
                "approval_request",
                {"approval_id": "appr_1", "prompt": "Deploy to production?"},
            ),
            _line(run_id, 4, "run_completed", {"status": "suspended"}),
        ]
    )


def abandoned_torn_run(run_id: str) -> bytes:
    """runtop's writer on this host, dead (no lock held) half-way through a line."""
    started = {"skill": "research", "writer": "runtop", "host": socket.gethostname(), "pid": 1}
    return b"".join(
        [
            _line(run_id, 1, "run_started", started),
            _line(run_id, 2, "llm_chunk", {"index": 0, "delta": "thinking"}),
            _line(run_id, 3, "tool_call", {"call_id": "call_1", "name": "search"})[:30],
        ]
    )


def bom_run(run_id: str) -> bytes:
    return BOM + b"".join(
        [
            _line(run_id, 1, "run_started", {"skill": "windows"}),
            _line(run_id, 2, "llm_chunk", {"index": 0, "delta": "hi"}),
            _line(run_id, 3, "run_completed", {"status": "ok", "output": "done"}),
        ]
    )


def write_fixture_ledgers(directory: Path) -> dict[str, Path]:
    """The shared sample ledgers and one per bug, in ``directory``; by name."""
    directory.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    # A checkout's files are as new as the checkout, so their times say nothing:
    # the samples were last written an hour ago, which makes the torn one stale.
    written = time.time() - 3600
    for sample in sorted(FIXTURES.glob("*.jsonl")):
        target = directory / sample.name
        shutil.copyfile(sample, target)
        target.chmod(0o600)
        os.utime(target, (written, written))
        paths[f"sample_{sample.stem[13:22]}"] = target
    contents = {
        "capped_65k": capped_run(IDS["capped_65k"], 65_000),
        "capped_3m": capped_run(IDS["capped_3m"], 3_000_000),
        "bom": bom_run(IDS["bom"]),
        "empty": b"",
        "blank": b"\n  \n\n",
        "suspended": suspended_run(IDS["suspended"]),
        "abandoned_torn": abandoned_torn_run(IDS["abandoned_torn"]),
    }
    for name, data in contents.items():
        path = directory / f"{IDS[name]}.jsonl"
        path.write_bytes(data)
        paths[name] = path
    return paths


EXPECTED: dict[str, dict[str, Any]] = {
    "capped_65k": {
        "status": "succeeded",
        "event_count": 14,
        "partial": True,
        "damaged_lines": None,
    },
    "capped_3m": {"status": "succeeded", "event_count": 14, "partial": True, "damaged_lines": None},
    "bom": {"status": "succeeded", "event_count": 3, "damaged_lines": 0, "skill": "windows"},
    "empty": {"status": "unknown", "event_count": 0, "damaged_lines": 0},
    "blank": {"status": "unknown", "event_count": 0, "damaged_lines": 0},
    "suspended": {"status": "suspended", "pending_approval": "appr_1", "event_count": 4},
    "abandoned_torn": {"status": "abandoned", "event_count": 2, "damaged_lines": 1},
    "sample_143000012": {"status": "succeeded", "event_count": 22, "damaged_lines": 0},
    # Its approval timed out on 29 November, unanswered.
    "sample_143000052": {"status": "stale", "event_count": 3},
    "sample_143000058": {"status": "stale", "event_count": 3, "damaged_lines": 0},
    "sample_143000063": {"status": "succeeded", "damaged_lines": 1},
}
"""What a correct reader says of each (``pending_approval`` by its id)."""
