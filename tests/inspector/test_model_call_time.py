"""A model call's time is one figure, from its request to its answer, in every view.

Its node is entered when the request goes out, its ``llm_call`` written when the
answer came, and the node left a moment (or, for a writer that tidies up, a while)
later. The timeline's number, the models' screen (``M``), ``runtop stats --by model``
and the call's conversation all say request-to-answer, as a tool call's views all say
its ``tool_call`` to its ``tool_result``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector.call_stats import CallTally, RunModelCalls, add_nodes, call_stats
from inspector.timeline import Timeline
from inspector.timeline_nodes import NodeKind
from ledger_reader import LedgerItem, RunEvent, decode_line, iter_events
from tests.conftest import REPO

pytestmark = pytest.mark.timeout(60)

RUN = "run_20261128T150000000_cccc3333cccc3333"


Record = tuple[str, str, dict[str, Any]]
"""Seconds past 15:00 (``SS.fff``), the event's type, its payload."""


def encoded(records: list[Record]) -> list[bytes]:
    """The run's ledger lines, one per record, numbered from 1."""
    return [
        json.dumps(
            {
                "run_id": RUN,
                "seq": seq,
                "time": f"2026-11-28T15:00:{at}000Z",
                "type": kind,
                "payload": payload,
            }
        ).encode()
        for seq, (at, kind, payload) in enumerate(records, 1)
    ]


def ledger_lines() -> list[bytes]:
    """A run with one model call: sent at 1.000 s, answered at 1.860 s, its node left at
    3.200 s (the writer's exit says 2.2 s)."""
    records: list[Record] = [
        ("00.000", "run_started", {"skill": "s", "agent": "a", "input": "go"}),
        ("01.000", "node_enter", {"node_id": "llm:plan#1", "node_name": "plan"}),
        (
            "01.860",
            "llm_call",
            {"node_id": "llm:plan#1", "model": "m-one", "prompt_tokens": 10, "output_tokens": 2},
        ),
        (
            "03.200",
            "node_exit",
            {"node_id": "llm:plan#1", "duration_micros": 2_200_000, "success": True},
        ),
        ("03.300", "run_completed", {"status": "ok", "output": "done"}),
    ]
    return encoded(records)


def items() -> list[LedgerItem]:
    return [item for line in ledger_lines() if (item := decode_line(line)) is not None]


def test_the_timeline_and_the_models_fold_say_request_to_answer() -> None:
    timeline = Timeline(RUN)
    timeline.extend(items())
    (node,) = [node for node in timeline.nodes() if node.kind is NodeKind.MODEL]
    assert node.duration == pytest.approx(0.86)
    assert node.called == node.start
    assert node.end == pytest.approx(node.start + 2.2)  # the node's span: the bar

    folded = RunModelCalls()
    events: list[RunEvent] = list(iter_events(items()))
    for event in events:
        folded.add(event)
    tallies: dict[str, CallTally] = {}
    add_nodes(tallies, RUN, timeline.nodes(), NodeKind.MODEL)
    (from_nodes,) = call_stats(tallies)
    (from_events,) = call_stats(folded.tallies)
    assert from_nodes.median == from_events.median == pytest.approx(0.86)


def test_stats_by_model_says_request_to_answer(tmp_path: Path) -> None:
    (tmp_path / f"{RUN}.jsonl").write_bytes(b"\n".join(ledger_lines()) + b"\n")
    answer = subprocess.run(
        [sys.executable, "-m", "tui.cli", "stats", str(tmp_path), "--by", "model", "--json"],
        capture_output=True,
        text=True,
        env={"RUNTOP_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
        cwd=REPO,
        timeout=30,
        check=True,
    )
    (row,) = json.loads(answer.stdout)
    assert row["median_seconds"] == pytest.approx(0.86)


async def test_the_calls_conversation_says_request_to_answer(tmp_path: Path) -> None:
    from inspector import LedgerDirectorySource, RunKey, RunStore
    from tui.model_call import model_call_near

    (tmp_path / f"{RUN}.jsonl").write_bytes(b"\n".join(ledger_lines()) + b"\n")
    key = RunKey("runs", RUN)
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(tmp_path, name="runs"))
        for _ in range(500):
            if store.get(key) is not None and await store.event_count(key) == 5:
                break
            await asyncio.sleep(0.01)
        events = await store.events(key, 0, await store.event_count(key))
        for position in (1, 2, 3):  # the call found from its enter, its llm_call, its exit
            found = await model_call_near(store, key, events[position], position)
            assert found is not None, events[position].type
            assert found.timing.seconds == pytest.approx(0.86), events[position].type


def test_a_call_canceled_while_it_streamed_counts_what_it_spent_not_as_a_call() -> None:
    """The demo's summarizer, canceled: its run's totals said 53.2k tokens $0.0465, the
    models' screen and ``stats --by model`` left the call's 52k tokens out (walk finding)."""
    records: list[Record] = [
        ("00.000", "run_started", {"skill": "s", "agent": "a", "input": "go"}),
        ("01.000", "node_enter", {"node_id": "llm:m#1", "node_name": "m"}),
        ("04.990", "cancel_requested", {"reason": "runaway", "requested_by": "runtop"}),
        (
            "05.000",
            "llm_call",
            {
                "node_id": "llm:m#1",
                "model": "m-one",
                "prompt_tokens": 52_000,
                "output_tokens": 440,
                "cost_usd": 0.0434,
                "status": "cancelled",
            },
        ),
        ("05.001", "node_exit", {"node_id": "llm:m#1", "success": False}),
        ("05.002", "run_completed", {"status": "cancelled", "reason": "user"}),
    ]
    lines = encoded(records)
    read = [item for line in lines if (item := decode_line(line)) is not None]
    timeline = Timeline(RUN)
    timeline.extend(read)
    tallies: dict[str, CallTally] = {}
    add_nodes(tallies, RUN, timeline.nodes(), NodeKind.MODEL)
    folded = RunModelCalls()
    for event in iter_events(read):
        folded.add(event)
    for (stats,) in (call_stats(tallies), call_stats(folded.tallies)):
        assert (stats.name, stats.calls, stats.median) == ("m-one", 0, None)
        assert (stats.totals.prompt_tokens, stats.totals.output_tokens) == (52_000, 440)
        assert stats.totals.cost_usd == pytest.approx(0.0434)
