"""Ledgers for the timeline's tests: a run with parallel tool calls and a child run.

Written by the stdlib as an independent writer would, at fixed times, so
snapshots of them never change.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

BASE = datetime(2026, 11, 28, 14, 20, tzinfo=UTC)
PARENT = "run_20261128T142000000_a11a11a11a11a11a"
CHILD = "run_20261128T142006000_c4114c4114c4114c"


class LedgerWriter:
    """One run's lines, each at a time given in seconds from :data:`BASE`."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.lines: list[bytes] = []

    def add(self, at: float, kind: str, **payload: Any) -> LedgerWriter:
        moment = (BASE + timedelta(seconds=at)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        record = {
            "run_id": self.run_id,
            "seq": len(self.lines) + 1,
            "time": moment,
            "type": kind,
            "payload": payload,
        }
        self.lines.append(json.dumps(record, separators=(",", ":")).encode() + b"\n")
        return self

    def model(self, at: float, until: float, number: int, prompt: int, output: int) -> None:
        node = f"llm:default#{number}"
        self.add(at, "node_enter", node_id=node, node_name="default")
        self.add(at + 0.1, "llm_chunk", index=number, delta="Thinking about it. ", node_id=node)
        self.add(
            until,
            "llm_call",
            model="claude-sonnet",
            provider="anthropic",
            prompt_tokens=prompt,
            output_tokens=output,
            cost_usd=round((prompt * 3 + output * 15) / 1_000_000, 6),
            node_id=node,
        )
        self.add(until, "node_exit", node_id=node, success=True)

    def tool_start(self, at: float, name: str, number: int, arguments: Any) -> None:
        node = f"tool:{name}#{number}"
        self.add(at, "node_enter", node_id=node, node_name=name)
        self.add(
            at,
            "tool_call",
            call_id=f"call_{name}_{number}",
            node_id=node,
            name=name,
            arguments=arguments,
        )

    def tool_end(
        self, at: float, name: str, number: int, output: str, *, error: bool = False
    ) -> None:
        node = f"tool:{name}#{number}"
        self.add(
            at,
            "tool_result",
            call_id=f"call_{name}_{number}",
            node_id=node,
            output=output,
            is_error=error,
        )
        self.add(at, "node_exit", node_id=node, success=not error)

    def write(self, directory: Path) -> Path:
        path = directory / f"{self.run_id}.jsonl"
        path.write_bytes(b"".join(self.lines))
        return path


def parent_run() -> LedgerWriter:
    """A research run: a model call, three searches at once (one fails), an approval,
    a step holding a fetch, a last model call; its child run starts at 6 s."""
    run = LedgerWriter(PARENT)
    run.add(
        0,
        "run_started",
        skill="research",
        agent="researcher",
        input={"q": "tui waterfalls"},
        writer="runtop",
    )
    run.model(0.2, 2.4, 1, 812, 41)
    run.tool_start(2.5, "web_search", 1, {"q": "textual waterfall"})
    run.tool_start(2.6, "web_search", 2, {"q": "trace viewer terminal"})
    run.tool_start(2.7, "read_page", 1, {"url": "https://example.com/[bold]x"})
    run.tool_end(4.1, "web_search", 1, "3 results")
    run.tool_end(4.9, "read_page", 1, "timed out", error=True)
    run.tool_end(5.6, "web_search", 2, "5 results")
    run.add(5.8, "node_enter", node_id="step:summarise#1", node_name="summarise")
    run.tool_start(6.0, "fetch", 1, {"url": "https://example.com"})
    run.tool_end(7.5, "fetch", 1, "<html>")
    run.add(7.6, "node_exit", node_id="step:summarise#1", success=True)
    run.add(8.0, "node_enter", node_id="approval:publish#1", node_name="publish")
    run.add(8.0, "approval_request", approval_id="ap_1", prompt="Publish the summary?")
    run.add(
        11.0, "approval_response", approval_id="ap_1", approved=True, reason="fine", source="tui"
    )
    run.add(11.0, "node_exit", node_id="approval:publish#1", success=True)
    run.model(11.2, 14.8, 2, 1930, 388)
    run.add(15.0, "run_completed", status="ok", output={"answer": "done"})
    return run


def child_run() -> LedgerWriter:
    run = LedgerWriter(CHILD)
    run.add(
        6.0,
        "run_started",
        skill="summarize",
        agent="summarizer",
        parent_run_id=PARENT,
        writer="runtop",
    )
    run.model(6.1, 9.4, 1, 400, 120)
    run.add(9.5, "run_completed", status="ok", output="short")
    return run


def write_runs(directory: Path) -> Path:
    """The parent and its child, aged an hour so that liveness reads the same every run."""
    directory.mkdir(parents=True, exist_ok=True)
    path = parent_run().write(directory)
    child_run().write(directory)
    old = datetime.now(UTC).timestamp() - 3600
    for ledger in directory.iterdir():
        os.utime(ledger, (old, old))
    return path


FROZEN = (BASE + timedelta(minutes=5)).timestamp()
"""Five minutes after the runs: what the app's frozen clock says."""
