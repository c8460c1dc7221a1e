"""One rule for a run's time, and a clock that goes back said in the run's warnings.

A run lasts from its start to its last event, never less than nothing; its
events keep the times the writer gave them, and when those go back (a clock
stepped back, or jumped ahead two hours and back) the summary says where.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger_reader.budgets import spent_of
from ledger_reader.events import parse_time
from ledger_reader.head_tail import HEAD_BYTES, WHOLE_FILE_BYTES, summarize_ledger
from ledger_reader.timespan import ClockCheck, clock_warning, elapsed, offset_in_run
from tests.conftest import RUN_ID, completed, line, started

pytestmark = pytest.mark.timeout(30)

T0 = "2026-11-29T06:45:00Z"


def at(clock: str) -> str:
    return f"2026-11-29T{clock}Z"


def run_started(when: str) -> bytes:
    return line(1, "run_started", {"skill": "research"}, time=when)


def ledger(tmp_path: Path, *times: str) -> Path:
    """A run whose events carry ``times`` in order: started, a tool call's events, completed."""
    tool = [
        ("node_enter", {"node_id": "tool:a#1", "node_name": "a"}),
        ("tool_call", {"call_id": "c1", "node_id": "tool:a#1", "name": "a", "arguments": {}}),
        ("tool_result", {"call_id": "c1", "node_id": "tool:a#1", "output": "x"}),
        ("node_exit", {"node_id": "tool:a#1", "success": True}),
    ]
    middle = [line(n, *tool[(n - 2) % len(tool)]) for n in range(2, len(times))]
    lines = [started(), *middle, completed(len(times))]
    stamped = [
        raw.replace(raw[raw.index(b'"time":"') + 8 : raw.index(b'","type"')], when.encode())
        for raw, when in zip(lines, times, strict=True)
    ]
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / f"{RUN_ID}.jsonl"
    path.write_bytes(b"".join(stamped))
    return path


def test_a_duration_or_an_offset_is_never_negative() -> None:
    assert elapsed(100.0, 94.0) == 0.0
    assert elapsed(100.0, 106.5) == 6.5
    assert elapsed(None, 5.0) is None
    assert offset_in_run(96.4, 100.0) == pytest.approx(-3.6)  # as written: before the start
    assert offset_in_run(103.0, 100.0) == 3.0


def test_a_clock_going_back_is_said_with_its_seq() -> None:
    check = ClockCheck()
    assert check.see(at("06:45:10"), 11) is None
    assert check.see(at("06:45:05"), 12) == "clock went back 5.0s at seq 12"
    assert check.see(at("08:45:05.5"), 13) is None  # ahead: a long wait looks the same
    assert (
        check.see(at("06:45:06"), 14) == "clock went back 1h59m at seq 14"
    )  # 1h59m59.5s, as a clock counts


def test_events_a_moment_out_of_order_are_not_a_clock_going_back() -> None:
    check = ClockCheck()
    assert check.see(at("06:45:10.900"), 1) is None
    assert check.see(at("06:45:10.100"), 2) is None
    assert check.see(at("06:45:09.950"), 3) is None
    assert check.see("2026-11-29T08:45:09+02:00", 4) is None  # 06:45:09 again, another way
    assert check.see("2026-11-29T08:44:59+02:00", 5) == "clock went back 10s at seq 5"


def test_a_warning_and_a_budget_write_spans_as_every_screen_does() -> None:
    # one rounding of durations (issue 39): no second way with spaces or other rounding
    assert [clock_warning(s, 3) for s in (5, 1.5, 59.6, 200, 7200, 3599.597)] == [
        "clock went back 5.0s at seq 3",
        "clock went back 1.5s at seq 3",
        "clock went back 59s at seq 3",
        "clock went back 3m20s at seq 3",
        "clock went back 2h00m at seq 3",
        "clock went back 59m59s at seq 3",
    ]
    assert spent_of("seconds", 48.4, 600) == "48s of 10m00s"
    assert spent_of("seconds", 9.96, 600) == "10s of 10m00s"


def test_a_clock_stepped_back_is_a_warning_and_the_run_lasted_nothing(tmp_path: Path) -> None:
    path = ledger(tmp_path, T0, at("06:45:01"), at("06:45:02"), at("05:45:00.403"), at("05:45:06"))
    summary = summarize_ledger(path)
    assert summary.warnings == ["clock went back 1h00m at seq 4"]
    assert summary.duration() == 0.0  # from its first event to its last, never negative


def test_a_clock_that_jumped_ahead_and_back_keeps_first_to_last(tmp_path: Path) -> None:
    path = ledger(tmp_path, T0, at("06:45:05"), at("08:45:06"), at("08:45:08"), at("06:45:20"))
    summary = summarize_ledger(path)
    assert summary.warnings == ["clock went back 1h59m at seq 5"]
    assert summary.duration() == 20.0


def test_a_live_run_lasts_until_now_and_never_less_than_nothing(tmp_path: Path) -> None:
    path = tmp_path / f"{RUN_ID}.jsonl"
    path.write_bytes(run_started(T0) + line(2, "error", {"message": "m"}, time=at("06:45:02")))
    summary = summarize_ledger(path, now=parse_time(at("06:45:03")).timestamp())
    assert summary.status.is_live
    assert summary.duration(now=summary.started + 30) == 30.0
    assert summary.duration(now=summary.started - 30) == 0.0  # its writer's clock is ahead


def test_a_big_ledger_folded_in_blocks_flags_its_clock_too(tmp_path: Path) -> None:
    """Past the size read whole, the head is folded a block at a time, at C speed."""
    path = tmp_path / f"{RUN_ID}.jsonl"
    with path.open("wb") as handle:
        handle.write(run_started(T0))
        seq = 1
        while handle.tell() < HEAD_BYTES // 2:
            seq += 1
            handle.write(line(seq, "llm_chunk", {"delta": "x" * 200}, time=at("06:45:10")))
        back = seq + 1
        handle.write(line(back, "llm_chunk", {"delta": "y"}, time=at("06:45:03")))
        seq = back
        while handle.tell() < WHOLE_FILE_BYTES + 4 * HEAD_BYTES:
            seq += 1
            handle.write(line(seq, "llm_chunk", {"delta": "x" * 200}, time=at("06:45:04")))
        handle.write(line(seq + 1, "run_completed", {"status": "ok"}, time=at("06:45:30")))
    summary = summarize_ledger(path)
    assert summary.partial
    assert summary.warnings == [f"clock went back 7.0s at seq {back}"]
    assert summary.duration() == 30.0
