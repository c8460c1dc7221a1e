"""A model call stopped by a cancel reads ``canceled`` in every view: the event list, the
runs screen's preview, the timeline, and ``runtop show`` (its events, raw, its timeline
and its JSON). Its ``node_exit`` said ``error`` in the event list and ``show``, and the
timeline's JSON ``cancelled``; the ledger's own ``cancelled`` is only read."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.tui_support import loaded, open_run, sample_app, settle
from tui.cli import main
from tui.widgets.event_list import EventList
from tui.widgets.run_preview import RunPreview

pytestmark = pytest.mark.timeout(60)

CANCELED = "run_20261128T143000045_1f2e3d4c5b6a7980"
"""The sample whose model call a user canceled mid-answer (its exit: ``success: false``)."""


def show(capsys: pytest.CaptureFixture[str], fixtures: Path, *options: str) -> str:
    assert main(["show", CANCELED, "--from", str(fixtures), *options]) == 0
    return capsys.readouterr().out


def test_show_says_canceled(fixtures: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for options in ((), ("--raw",)):
        said = show(capsys, fixtures, *options)
        assert re.search(r"exit llm:default#1 canceled in", said), said
        assert "error" not in said
    timeline = show(capsys, fixtures, "--timeline")
    assert re.search(r"default\s+2\.0s canceled", timeline), timeline
    nodes = json.loads(show(capsys, fixtures, "--timeline", "--json"))["nodes"]
    assert [node["outcome"] for node in nodes] == ["canceled"]


async def test_the_app_says_canceled(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        rows.select_key(next(run.key for run in rows.rows if run.run_id == CANCELED))
        preview = app.screen.query_one(RunPreview)
        await settle(pilot, lambda: "exit" in str(preview.render()), "the preview")
        assert "exit llm:default#1 canceled" in str(preview.render())
        screen = await open_run(pilot, CANCELED)
        events = screen.query_one(EventList)

        def lines() -> str:
            return "\n".join(
                "".join(segment.text for segment in events.render_line(y))
                for y in range(len(events.entries()))
            )

        await settle(pilot, lambda: "exit llm:default#1" in lines(), "the exit")
        assert "exit llm:default#1 canceled in 2.0s" in lines()
        assert " error" not in lines()


def test_an_approval_answered_no_exits_denied_as_its_timeline_says() -> None:
    """A budget's question denied: its node's exit read ``error`` in the event list and
    ``show`` while the timeline said ``denied`` (walk finding)."""
    from ledger_reader import decode_line
    from tui.text.events import describe

    record = {
        "run_id": CANCELED,
        "seq": 9,
        "time": "2026-11-28T14:30:10.000000Z",
        "type": "node_exit",
        "payload": {"node_id": "approval:budget#1", "success": False, "duration_micros": 6_400_000},
    }
    exit = decode_line(json.dumps(record).encode())
    assert exit is not None
    assert describe(exit) == "exit approval:budget#1 denied in 6.4s"
    assert describe(exit, after_cancel=True) == "exit approval:budget#1 canceled in 6.4s"
    record["payload"] = {"node_id": "tool:shell#1", "success": False}
    failed = decode_line(json.dumps(record).encode())
    assert failed is not None
    assert describe(failed) == "exit tool:shell#1 error"
