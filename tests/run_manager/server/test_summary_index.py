"""The attach server's run book folds a published batch at once, and ends where one by one would."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest

from ledger_reader import RunEvent
from ledger_reader.events import (
    ApprovalRequest,
    ApprovalRequestPayload,
    ApprovalResponse,
    ApprovalResponsePayload,
    CancelRequested,
    CancelRequestedPayload,
    ErrorEvent,
    ErrorPayload,
    LlmCall,
    LlmCallPayload,
    NodeEnter,
    NodeEnterPayload,
    NodeExit,
    NodeExitPayload,
    RunCompleted,
    RunCompletedPayload,
    RunStarted,
    RunStartedPayload,
    UnknownEvent,
)
from run_manager import Manager
from run_manager.server.summary_index import SummaryIndex

RUN = "run_20261201T000000000_0123456789abcdef"


def run_events(run_id: str = RUN) -> list[RunEvent]:
    """A run as the OTLP ingest writes one: started, a model call, a generic span, an end."""
    moment = "2026-12-01T00:00:0{}.000000Z"
    kinds: list[tuple[type[Any], Any]] = [
        (RunStarted, RunStartedPayload(agent="weather", skill="weather", writer="otlp")),
        (NodeEnter, NodeEnterPayload(node_id="llm:gpt-5#1")),
        (LlmCall, LlmCallPayload(prompt_tokens=120, output_tokens=30, cost_usd=0.25)),
        (ErrorEvent, ErrorPayload(message="rate limited", node_id="llm:gpt-5#1")),
        (NodeExit, NodeExitPayload(node_id="llm:gpt-5#1", success=False)),
        (LlmCall, LlmCallPayload(prompt_tokens=7, output_tokens=3)),
        (RunCompleted, RunCompletedPayload(status="ok", output="sunny")),
    ]
    events: list[RunEvent] = []
    for seq, (kind, payload) in enumerate(kinds, start=1):
        events.append(kind(run_id=run_id, seq=seq, time=moment.format(seq), payload=payload))
    generic = UnknownEvent(
        run_id=run_id, seq=0, time=moment.format(0), type="otel_span", payload={"name": "x"}
    )
    events.insert(3, generic)
    for seq, event in enumerate(events, start=1):
        event.seq = seq
    return events


def booked_state(index: SummaryIndex, run_id: str = RUN) -> dict[str, Any]:
    booked = index.runs[run_id]
    return {
        "summary": msgspec.to_builtins(booked.summary()),
        "counted": booked.counted,
        "finished": run_id in index._finished,
    }


def one_by_one(batches: list[list[RunEvent]]) -> dict[str, Any]:
    index = SummaryIndex(Manager())
    for batch in batches:
        for event in batch:
            index.add(event)
    return booked_state(index)


def at_once(batches: list[list[RunEvent]]) -> dict[str, Any]:
    index = SummaryIndex(Manager())
    for batch in batches:
        index.add_many(batch)
    return booked_state(index)


def _reseq(events: list[RunEvent], seqs: list[int]) -> list[RunEvent]:
    for event, seq in zip(events, seqs, strict=True):
        event.seq = seq
    return events


@pytest.mark.parametrize(
    "split",
    [
        pytest.param(lambda e: [e], id="the whole run in one batch"),
        pytest.param(lambda e: [e[:3], e[3:6], e[6:]], id="in three batches"),
        pytest.param(lambda e: [[event] for event in e], id="one event a batch"),
        pytest.param(
            lambda e: [e[:2], _reseq(e[2:5], [4, 5, 6]), _reseq(e[5:], [7, 8, 9])],
            id="a gap in seq",
        ),
        pytest.param(
            lambda e: [e[:2], _reseq(e[2:5], [2, 3, 4]), _reseq(e[5:], [5, 6, 7])],
            id="a repeated seq",
        ),
        pytest.param(lambda e: [[*e[:3], e[-1], *e[3:-1]]], id="ended in the middle of a batch"),
        pytest.param(lambda e: [e, e[2:4]], id="lines after the end"),
        pytest.param(lambda e: [e[:4] + run_events("run_other")[4:]], id="another run's events"),
    ],
)
def test_a_batch_folds_to_what_one_by_one_folds(split: Any) -> None:
    first = one_by_one(split(run_events()))
    second = at_once(split(run_events()))
    assert second == first
    assert first["summary"]["event_count"] >= 4  # the fold saw the events at all


def test_a_whole_run_in_one_batch_is_counted_and_finished() -> None:
    state = at_once([run_events()])
    summary = state["summary"]
    assert summary["status"] == "succeeded"
    assert summary["event_count"] == 8
    assert summary["last_seq"] == 8
    assert summary["warnings"] == []
    assert summary["error"] == "rate limited"
    assert summary["agent"] == "weather"
    assert summary["last_event_at"] == "2026-12-01T00:00:07.000000Z"
    summary = state["summary"]
    assert summary["prompt_tokens"] + summary["output_tokens"] == 160
    assert summary["cost_usd"] == pytest.approx(0.25)
    assert state["finished"]


def test_a_gap_in_a_batch_is_warned_about_as_one_by_one_does() -> None:
    events = run_events()
    state = at_once([events[:2], _reseq(events[2:], [5, 6, 7, 8, 9, 10])])
    assert state["summary"]["warnings"] == ["seq gap: 2 then 5"]


@pytest.mark.parametrize("directory", [".", "/", "runs", "/tmp/../srv//runs/", "~"])
def test_a_runs_ledger_path_is_the_one_pathlib_makes(directory: str) -> None:
    # The index joins the directory and the name itself (a path object per run cost more than
    # folding the run); it must say exactly what os.fspath(ledger_dir / name) says.
    manager = Manager()
    manager.ledger_dir = Path(directory)
    index = SummaryIndex(manager)
    for run_id in (RUN, "run_x/../y"):  # the second is no run id: pathlib decides
        assert index._ledger_path(run_id) == os.fspath(Path(directory) / f"{run_id}.jsonl")
    index.add_many(run_events())
    assert index.runs[RUN].path == os.fspath(Path(directory) / f"{RUN}.jsonl")


def _random_event(chooser: Any, seq: int) -> RunEvent:
    node = f"node:{chooser.choice('ab')}#1"
    kinds: list[tuple[type[Any], Any]] = [
        (NodeEnter, NodeEnterPayload(node_id=node)),
        (NodeExit, NodeExitPayload(node_id=node)),
        (LlmCall, LlmCallPayload(prompt_tokens=chooser.randrange(5), cost_usd=0.5)),
        (ErrorEvent, ErrorPayload(message=f"failed {seq}")),
        (ApprovalRequest, ApprovalRequestPayload(approval_id=chooser.choice(["x", "y", None]))),
        (ApprovalResponse, ApprovalResponsePayload(approval_id=chooser.choice(["x", None]))),
        (CancelRequested, CancelRequestedPayload()),
    ]
    kind, payload = chooser.choice(kinds)
    moment = chooser.choice(["", f"2026-12-01T00:00:{seq % 60:02d}.000000Z"])  # some say none
    if chooser.random() < 0.15:
        return UnknownEvent(run_id=RUN, seq=seq, time=moment, type="otel_span", payload={})
    return kind(run_id=RUN, seq=seq, time=moment, payload=payload)  # type: ignore[no-any-return]


@pytest.mark.parametrize("seed", range(40))
def test_random_batches_fold_to_what_one_by_one_folds(seed: int) -> None:
    # A batch applies only the events that change more than the count, the last one with a
    # time, and none of its nodes when it ends the run: whatever the mix (nodes left open,
    # events without a time, approvals, a cancel, an end with or without a time), the run
    # book must say what folding each event says.
    chooser = random.Random(seed)
    count = chooser.randrange(2, 30)
    events: list[RunEvent] = [
        RunStarted(
            run_id=RUN,
            seq=1,
            time="2026-12-01T00:00:00.000000Z",
            payload=RunStartedPayload(agent="a", writer="otlp"),
        ),
        *(_random_event(chooser, seq) for seq in range(2, count + 1)),
    ]
    if chooser.random() < 0.7:
        moment = chooser.choice(["", "2026-12-01T00:01:00.000000Z"])
        status = chooser.choice(["ok", "error", "suspended"])
        payload = RunCompletedPayload(status=status)
        events.append(RunCompleted(run_id=RUN, seq=count + 1, time=moment, payload=payload))
    cut = chooser.randrange(1, len(events))
    for batches in ([events], [events[:cut], events[cut:]]):
        assert at_once(batches) == one_by_one(batches)
