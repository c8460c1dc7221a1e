"""A failed deploy and the run that resumed it, as ledgers with fixed times.

The comparison's tests read them: the resumed run is faster, cheaper,
calls ``shell`` as often (for less time), adds ``http_get`` (twice, in
parallel), and succeeds where the first one failed.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

FIRST = "run_20261128T150000000_aaaa1111aaaa1111"
RESUMED = "run_20261128T150500000_bbbb2222bbbb2222"

FIRST_START = datetime(2026, 11, 28, 15, 0, 0, tzinfo=UTC)
RESUMED_START = datetime(2026, 11, 28, 15, 5, 0, tzinfo=UTC)

FROZEN_AFTER = 1795878000.0
"""2026-11-28T15:00:00Z plus 25 minutes: after both runs, for a frozen clock."""


class LedgerLines:
    """Lines of one run, each at a number of seconds after its start."""

    def __init__(self, run_id: str, start: datetime) -> None:
        self.run_id = run_id
        self.start = start
        self.lines: list[bytes] = []

    def add(self, at: float, kind: str, **payload: Any) -> LedgerLines:
        moment = self.start + timedelta(seconds=at)
        record = {
            "run_id": self.run_id,
            "seq": len(self.lines) + 1,
            "time": moment.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z",
            "type": kind,
            "payload": payload,
        }
        self.lines.append(json.dumps(record, separators=(",", ":")).encode() + b"\n")
        return self

    def tool(
        self, at: float, took: float, name: str, number: int, output: str, *, error: bool = False
    ) -> LedgerLines:
        node, call = f"tool:{name}#{number}", f"call_{name}{number:04d}{self.run_id[-8:]}"
        self.add(at, "node_enter", node_id=node, node_name=name)
        self.add(at, "tool_call", call_id=call, node_id=node, name=name, arguments={"n": number})
        self.add(
            at + took, "tool_result", call_id=call, node_id=node, output=output, is_error=error
        )
        return self.add(
            at + took, "node_exit", node_id=node, duration_micros=int(took * 1e6), success=not error
        )

    def model(self, at: float, took: float, prompt: int, output: int, cost: float) -> LedgerLines:
        node = f"llm:plan#{len(self.lines)}"
        self.add(at, "node_enter", node_id=node, node_name="plan")
        self.add(
            at + took,
            "llm_call",
            model="claude-sonnet",
            provider="anthropic",
            prompt_tokens=prompt,
            output_tokens=output,
            cost_usd=cost,
        )
        return self.add(
            at + took, "node_exit", node_id=node, duration_micros=int(took * 1e6), success=True
        )

    def data(self) -> bytes:
        return b"".join(self.lines)


def first_run() -> LedgerLines:
    """The deploy that failed: its rollout check timed out after 30 s."""
    run = LedgerLines(FIRST, FIRST_START)
    run.add(0, "run_started", skill="deploy", agent="deployer", input="billing")
    run.model(0.1, 2.0, 1200, 80, 0.0060)
    run.tool(2.2, 0.4, "shell", 1, "deployment.apps/billing configured")
    run.tool(2.7, 30.0, "shell", 2, "timed out waiting for the condition", error=True)
    run.add(32.8, "error", message="tool shell failed: timed out waiting for the condition")
    return run.add(
        32.9, "run_completed", status="error", error="timed out waiting for the condition"
    )


def resumed_run() -> LedgerLines:
    """The same deploy resumed: it checks two endpoints at once and succeeds."""
    run = LedgerLines(RESUMED, RESUMED_START)
    run.add(0, "run_started", skill="deploy", agent="deployer", input="billing", resumed_from=FIRST)
    run.model(0.1, 1.5, 1250, 60, 0.0050)
    run.tool(1.7, 0.4, "shell", 1, "deployment.apps/billing configured")
    run.tool(2.2, 6.0, "shell", 2, "rollout complete")
    run.add(8.3, "node_enter", node_id="tool:http_get#1", node_name="http_get")
    run.add(8.3, "tool_call", call_id="call_h1", node_id="tool:http_get#1", name="http_get")
    run.add(8.3, "node_enter", node_id="tool:http_get#2", node_name="http_get")
    run.add(8.3, "tool_call", call_id="call_h2", node_id="tool:http_get#2", name="http_get")
    run.add(8.5, "tool_result", call_id="call_h2", node_id="tool:http_get#2", output="200")
    run.add(8.5, "node_exit", node_id="tool:http_get#2", duration_micros=200_000, success=True)
    run.add(8.6, "tool_result", call_id="call_h1", node_id="tool:http_get#1", output="200")
    run.add(8.6, "node_exit", node_id="tool:http_get#1", duration_micros=300_000, success=True)
    return run.add(8.9, "run_completed", status="ok", output="deployed")


def write_pair(directory: Path) -> tuple[Path, Path]:
    """Both ledgers in ``directory``, their mtimes set (both runs ended: no status hangs on it)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for run in (first_run(), resumed_run()):
        path = directory / f"{run.run_id}.jsonl"
        path.write_bytes(run.data())
        path.chmod(0o600)
        old = FIRST_START.timestamp() + 3600
        os.utime(path, (old, old))
        paths.append(path)
    return paths[0], paths[1]
