"""Run summaries and status, as LEDGER.md's table derives them, on real files."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger_reader import (
    LineAssembler,
    PendingApproval,
    RunStatus,
    RunSummary,
    SummaryBuilder,
    judge_liveness,
    summarize_ledger,
)
from ledger_reader.block_fold import fold_block
from ledger_reader.head_tail import HEAD_BYTES, WHOLE_FILE_BYTES
from tests.conftest import LINE_EPOCH, RUN_ID, completed, line, started

WRITTEN = LINE_EPOCH.timestamp() + 5
"""Just after the conftest's lines were written, by their own times."""


def test_sample_ledgers(fixtures: Path) -> None:
    old = time.time() - 3600
    for path in fixtures.iterdir():
        os.utime(path, (old, old))
    by_prefix = {
        path.name[:29]: summarize_ledger(path) for path in sorted(fixtures.glob("*.jsonl"))
    }
    research = by_prefix["run_20261128T143000012_4f1a9c"]
    assert (research.status, research.event_count, research.skill) == (
        RunStatus.SUCCEEDED,
        22,
        "research",
    )
    deploy = by_prefix["run_20261128T143000031_9c8b7a"]
    assert deploy.status == RunStatus.FAILED
    assert deploy.error == "tool shell failed: timed out waiting for the condition"
    cancelled = by_prefix["run_20261128T143000045_1f2e3d"]
    assert (cancelled.status, cancelled.agent) == (RunStatus.CANCELED, "summarizer")
    assert not cancelled.cancel_requested  # asked for, and the run did stop
    waiting = by_prefix["run_20261128T143000052_a0b1c2"]
    # Asked on 28 November with a 24 h timeout: no writer waits on it now.
    assert waiting.status == RunStatus.STALE
    assert waiting.pending_approval is not None
    assert waiting.pending_approval.approval_id == "ap_7e6d5c4b3a291807"
    torn = by_prefix["run_20261128T143000058_5e6f70"]
    assert torn.status == RunStatus.STALE  # another writer, quiet for an hour
    assert (torn.event_count, torn.damaged_lines) == (3, 0)  # the torn line is not damage
    damaged = by_prefix["run_20261128T143000063_c5b4a3"]
    assert (damaged.status, damaged.damaged_lines, damaged.event_count) == (
        RunStatus.SUCCEEDED,
        1,
        3,
    )


def test_an_approval_is_waited_on_until_its_deadline_then_quiet_time_judges() -> None:
    asked = "2026-11-28T14:30:30.000000Z"
    at = 1795876230.0  # that moment
    summary = RunSummary(
        run_id=RUN_ID,
        status=RunStatus.AWAITING_APPROVAL,
        pending_approval=PendingApproval(
            approval_id="ap_1", requested_at=asked, timeout_seconds=86400
        ),
    )

    def judged(now: float, quiet: float) -> RunStatus:
        return judge_liveness(summary, mtime=now - quiet, lock_held=None, now=now)

    waiting = RunStatus.AWAITING_APPROVAL
    assert judged(at + 3600, quiet=3600) is waiting  # quiet, but within the timeout
    assert judged(at + 86000, quiet=86000) is waiting
    assert judged(at + 86400 + 3600, quiet=3600) is RunStatus.STALE  # past the deadline
    assert judged(at + 86400 + 3600, quiet=10) is waiting  # a file written just now
    assert judged(at + 86400 * 3, quiet=60) is waiting  # a checkout's new file, a while
    assert judged(at + 86400 * 3, quiet=301) is RunStatus.STALE


def test_fresh_unfinished_run_of_another_writer_is_running(
    write_ledger: Callable[..., Path],
) -> None:
    path = write_ledger(started(), line(2, "node_enter", {"node_id": "tool:search#1"}))
    summary = summarize_ledger(path, now=WRITTEN, stale_after=300)
    assert summary.status == RunStatus.RUNNING
    assert summary.current_node == "tool:search#1"
    assert summarize_ledger(path, now=time.time() + 301, stale_after=300).status == RunStatus.STALE


def test_gap_repeat_and_foreign_run_id_are_flagged_and_kept(
    write_ledger: Callable[..., Path],
) -> None:
    path = write_ledger(
        started(),
        line(2, "llm_chunk", {"delta": "a"}),
        line(5, "llm_chunk", {"delta": "b"}),
        line(5, "llm_chunk", {"delta": "c"}),
        line(6, "llm_chunk", {"delta": "d"}, run_id="run_someone_else"),
        completed(7),
    )
    summary = summarize_ledger(path)
    assert summary.event_count == 7
    assert summary.status == RunStatus.SUCCEEDED
    assert summary.warnings == [
        "seq gap: 2 then 5",
        "seq repeat: 5 then 5",
        "seq 6: run_id 'run_someone_else' differs from the file's",
    ]


def test_cancel_in_progress_and_pending_approval(write_ledger: Callable[..., Path]) -> None:
    path = write_ledger(
        started(),
        line(2, "approval_request", {"approval_id": "ap_1", "prompt": "ok?"}),
        line(3, "approval_response", {"approval_id": "ap_1", "approved": True}),
        line(4, "cancel_requested", {"reason": "slow", "source": "tui"}),
    )
    summary = summarize_ledger(path, now=WRITTEN)
    assert summary.status == RunStatus.RUNNING
    assert summary.pending_approval is None
    assert summary.cancel_requested


def test_large_ledger_is_summarised_from_head_and_tail(tmp_path: Path) -> None:
    path = tmp_path / f"{RUN_ID}.jsonl"
    count = 0
    with path.open("wb") as handle:
        handle.write(started(parent_run_id="run_parent"))
        seq = 1
        while handle.tell() < WHOLE_FILE_BYTES + 4 * HEAD_BYTES:
            seq += 1
            handle.write(line(seq, "llm_chunk", {"delta": "x" * 200}))
        middle = handle.tell()
        handle.write(b"damage in the middle\n")
        for _ in range(1000):
            seq += 1
            handle.write(line(seq, "llm_chunk", {"delta": "y" * 100}))
        seq += 1
        handle.write(completed(seq, status="error", error="boom"))
        count = seq
    assert middle > HEAD_BYTES
    summary = summarize_ledger(path)
    assert summary.partial
    assert summary.event_count == count
    assert summary.status == RunStatus.FAILED
    assert summary.error == "boom"
    assert summary.parent_run_id == "run_parent"
    assert summary.warnings == []


def test_killed_runtop_writer_is_abandoned(
    held_ledger: tuple[Path, subprocess.Popen[str]],
) -> None:
    path, writer = held_ledger
    assert summarize_ledger(path).status == RunStatus.RUNNING
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=10)
    assert summarize_ledger(path).status == RunStatus.ABANDONED


def test_lock_probe_never_holds_the_writer_up(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(line(1, "run_started", {"writer": "runtop"}))
    summarize_ledger(path)
    fd = os.open(path, os.O_WRONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the probe let go
    finally:
        os.close(fd)


def _fold_every_line(data: bytes) -> RunSummary:
    builder = SummaryBuilder(RUN_ID)
    for found in LineAssembler().feed(data):
        builder.add_item(found.item)
    return builder.summary()


def _fold_fast(data: bytes) -> RunSummary:
    builder = SummaryBuilder(RUN_ID)
    fold_block(data, 0, builder)
    return builder.summary()


_STEPS = st.sampled_from(
    ["tool", "chunk", "error", "ask", "answer", "cancel", "blank", "damage", "gap", "open"]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_STEPS, max_size=30), st.sampled_from([None, "ok", "error", "cancelled"]))
def test_fast_fold_agrees_with_folding_every_line(steps: list[str], ending: str | None) -> None:
    """The summary path that decodes only what it needs says what decoding everything says."""
    out = [started()]
    seq = 1
    for number, step in enumerate(steps):
        seq += 1
        if step == "tool":
            node = f"tool:t#{number}"
            out += [line(seq, "node_enter", {"node_id": node}), line(seq + 1, "tool_call", {})]
            out += [line(seq + 2, "node_exit", {"node_id": node})]
            seq += 2
        elif step == "chunk":
            out.append(line(seq, "llm_chunk", {"delta": "x"}))
        elif step == "error":
            out.append(line(seq, "error", {"message": f"failure {number}"}))
        elif step == "ask":
            out.append(line(seq, "approval_request", {"approval_id": f"ap_{number}"}))
        elif step == "answer":
            out.append(line(seq, "approval_response", {"approval_id": f"ap_{number - 1}"}))
        elif step == "cancel":
            out.append(line(seq, "cancel_requested", {"reason": "r"}))
        elif step == "blank":
            out.append(b"\n")
            seq -= 1
        elif step == "damage":
            out.append(b"{not json\n")
            seq -= 1
        elif step == "gap":
            seq += 3
            out.append(line(seq, "llm_chunk", {"delta": "after a gap"}))
        else:
            out.append(line(seq, "node_enter", {"node_id": f"llm:m#{number}"}))
    if ending is not None:
        out.append(completed(seq + 1, status=ending))
    data = b"".join(out)
    assert _fold_fast(data) == _fold_every_line(data)


def test_a_run_updated_names_the_run_and_says_who_it_was_for(
    write_ledger: Callable[..., Path],
) -> None:
    """An OTLP run opened by its children is named by its own span, arriving last, in a
    ``run_updated``: every fold of the run says the later name, input and session."""
    path = write_ledger(
        started(agent="weather-service", skill="weather-service", session_id="s-1"),
        line(2, "node_enter", {"node_id": "llm:gpt#1"}),
        line(3, "node_exit", {"node_id": "llm:gpt#1"}),
        line(4, "run_updated", {"agent": "weather", "skill": "weather", "input": "Paris?"}),
        line(5, "run_updated", {"user_id": "u-2", "tags": ["corpus"], "service": "svc"}),
        completed(6),
    )
    summary = summarize_ledger(path)
    said = (summary.agent, summary.skill, summary.input, summary.session_id, summary.user_id)
    assert said == ("weather", "weather", "Paris?", "s-1", "u-2")
    assert (summary.tags, summary.service) == (["corpus"], "svc")
    builder = SummaryBuilder()
    fold_block(path.read_bytes(), 0, builder, final=True)  # the fast block fold alike
    assert builder.summary().agent == "weather"


def test_a_run_updated_in_the_tail_of_a_large_ledger_is_read(tmp_path: Path) -> None:
    path = tmp_path / f"{RUN_ID}.jsonl"
    with path.open("wb") as handle:
        handle.write(started(agent="svc"))
        seq = 1
        while handle.tell() < WHOLE_FILE_BYTES + 4 * HEAD_BYTES:
            seq += 1
            handle.write(line(seq, "llm_chunk", {"delta": "x" * 200}))
        handle.write(line(seq + 1, "run_updated", {"agent": "weather", "input": "Paris?"}))
        handle.write(completed(seq + 2))
    summary = summarize_ledger(path)
    assert summary.partial
    assert (summary.agent, summary.input) == ("weather", "Paris?")


def test_a_just_copied_ledger_of_an_old_unfinished_run_is_stale(
    write_ledger: Callable[..., Path],
) -> None:
    """Written a moment ago (a copy, a checkout), its last event a week old: not running."""
    path = write_ledger(started(), line(2, "node_enter", {"node_id": "tool:search#1"}))
    assert summarize_ledger(path).status == RunStatus.STALE
    # its writer's clock may be off by up to the stale limit
    assert summarize_ledger(path, now=WRITTEN + 2 * 300 - 10).status == RunStatus.RUNNING
    assert summarize_ledger(path, now=WRITTEN + 2 * 300 + 10).status == RunStatus.STALE
