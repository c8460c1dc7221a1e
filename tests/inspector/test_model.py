"""The view a summary and its extras freeze into: every field where it belongs."""

from __future__ import annotations

import pytest

from inspector.model import RunExtras, RunKey, make_view
from ledger_reader import RunStatus, RunSummary, RunTotals
from ledger_reader.events import ToolCall, ToolCallPayload
from ledger_reader.summary import PendingApproval

pytestmark = pytest.mark.timeout(10)


def test_every_field_of_a_view_comes_from_the_right_place() -> None:
    """A view is built positionally and reads most fields from its summary when asked."""
    approval = PendingApproval(approval_id="ap-1", prompt="ship it?")
    summary = RunSummary(
        run_id="run-1",
        path="/ledgers/run-1.jsonl",
        status=RunStatus.AWAITING_APPROVAL,
        skill="deploy",
        agent="deployer",
        started_at="2026-11-29T06:00:00Z",
        completed_at="2026-11-29T06:00:10Z",
        last_event_at="2026-11-29T06:00:05Z",
        event_count=42,
        damaged_lines=3,
        warnings=["line 7 is damaged"],
        parent_run_id="run-0",
        resumed_from="run-00",
        pending_approval=approval,
        cancel_requested=True,
        current_node="plan",
        error="boom",
        writer="gridctl",
        input={"goal": "ship"},
    )
    extras = RunExtras(
        error_count=5,
        tool_calls=6,
        tool_errors=4,
        totals=RunTotals(prompt_tokens=8, output_tokens=9, cost_usd=0.25),
    )
    extras.add(ToolCall(seq=1, run_id="run-1", payload=ToolCallPayload(call_id="c", name="grep")))
    key = RunKey("here", "run-1")

    view = make_view(key, summary, extras, detailed=False, recorded=True)

    assert {name: getattr(view, name) for name in EXPECTED} == EXPECTED
    assert view.key == key
    assert view.doing == "cancelling…"  # a cancel in progress says so first


EXPECTED = {
    "status": RunStatus.AWAITING_APPROVAL,
    "skill": "deploy",
    "agent": "deployer",
    "started_at": 1795932000.0,
    "ended_at": 1795932010.0,
    "last_event_at": 1795932005.0,
    "event_count": 42,
    "damaged_lines": 3,
    "warnings": ("line 7 is damaged",),
    "parent_run_id": "run-0",
    "resumed_from": "run-00",
    "pending_approval": PendingApproval(approval_id="ap-1", prompt="ship it?"),
    "cancel_requested": True,
    "current_node": "plan",
    "current_tool": "grep",
    "error": "boom",
    "error_count": 5,
    "tool_calls": 7,
    "tool_errors": 4,
    "prompt_tokens": 8,
    "output_tokens": 9,
    "cost_usd": 0.25,
    "input": {"goal": "ship"},
    "writer": "gridctl",
    "path": "/ledgers/run-1.jsonl",
    "detailed": False,
    "recorded": True,
    "run_id": "run-1",
    "source": "here",
    "live": True,
}
"""Every value distinct from the others of its type: a field read from the wrong place fails."""


def test_a_run_with_no_extras_counts_nothing_and_an_ended_run_does_nothing_now() -> None:
    summary = RunSummary(
        run_id="run-2",
        status=RunStatus.SUCCEEDED,
        started_at="2026-11-29T06:00:00.123456789+01:00",
        cancel_requested=True,
        current_node="plan",
    )
    view = make_view(RunKey("here", "run-2"), summary, None, detailed=True)
    assert view.started_at == pytest.approx(1795928400.123456)
    assert view.ended_at is None
    assert (view.tool_calls, view.prompt_tokens, view.cost_usd) == (0, 0, 0.0)
    assert (view.cancel_requested, view.current_node, view.current_tool) == (False, None, None)
    assert view.doing == ""
