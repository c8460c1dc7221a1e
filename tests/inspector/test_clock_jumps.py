"""The table's TIME and the timeline's axis follow the one rule for a run's time.

From its start to its last event, never negative, whatever the writer's clock
did in between: a clock that jumped two hours ahead and back does not make a
20-second run two hours long, and one that stepped back does not make it
negative.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.model import RunKey, make_view
from inspector.timeline import Timeline
from ledger_reader.head_tail import summarize_ledger
from ledger_reader.lines import read_ledger_lines
from tests.ledger_reader.test_clock_jumps import T0, at, ledger

pytestmark = pytest.mark.timeout(30)


def jumped(tmp_path: Path) -> Path:
    """Entered at 5 s, its call and result stamped two hours ahead, ended at 20 s."""
    return ledger(tmp_path, T0, at("06:45:05"), at("08:45:06"), at("08:45:08"), at("06:45:20"))


def stepped_back(tmp_path: Path) -> Path:
    return ledger(tmp_path, T0, at("06:45:01"), at("06:45:02"), at("05:45:00.403"), at("05:45:06"))


def timeline_of(path: Path) -> Timeline:
    timeline = Timeline()
    timeline.extend(line.item for line in read_ledger_lines(path) if line.item is not None)
    return timeline


def test_a_view_lasts_what_its_summary_says(tmp_path: Path) -> None:
    for path, took in ((jumped(tmp_path / "a"), 20.0), (stepped_back(tmp_path / "b"), 0.0)):
        summary = summarize_ledger(path)
        view = make_view(RunKey("here", summary.run_id), summary, None, detailed=True)
        assert view.duration() == took == summary.duration()
        assert any(warning.startswith("clock went back") for warning in view.warnings)


def test_the_timeline_spans_first_to_last_event(tmp_path: Path) -> None:
    timeline = timeline_of(jumped(tmp_path / "a"))
    start, end = timeline.span()
    assert end - start == 20.0
    assert timeline.summary().wall == 20.0
    timeline = timeline_of(stepped_back(tmp_path / "b"))
    start, end = timeline.span()
    assert end == start
    assert timeline.summary().wall == 0.0


def test_timeline_offsets_are_never_negative(tmp_path: Path) -> None:
    nodes = timeline_of(stepped_back(tmp_path)).to_json()
    assert nodes
    for node in nodes:
        assert node["offset"] >= 0
        assert node["end_offset"] is None or node["end_offset"] >= 0
