"""A Claude Code sub-agent's run hangs under the ``Task`` call that started it, in the app's
timeline and ``runtop show --timeline``: the call's result names the sub-agent
(``toolUseResult.agentId`` in the 2.1.39 session of tests/sessions_home)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector import RunStore
from inspector.model import RunKey
from inspector.session_source import SessionSource
from inspector.timeline import NodeKind, Outcome, Timeline
from inspector.timeline_fill import fill_timeline
from ledger_reader import ToolResult
from ledger_reader.sessions import read_session
from tests.inspector.test_sources_contract import until
from tui.cli import main

PROJECTS = Path(__file__).parent.parent / "sessions_home" / ".claude" / "projects"
SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
FOLDER = PROJECTS / "-home-USER-projects-spotter-worktrees-spotter-4te"
SUB_AGENT = f"{SESSION}.agent-aac57f5"
TASK_CALL = "toolu_01Hf8v1Za7y4af8VUwSR4CXU"
WARMUP = PROJECTS / "-Users-test_user-agent-sample"


def test_the_task_result_names_the_sub_agent_run() -> None:
    results = [
        item.payload
        for item in read_session(str(FOLDER / f"{SESSION}.jsonl")).items
        if isinstance(item, ToolResult) and item.payload.child_run_id
    ]
    assert [(r.call_id, r.child_run_id) for r in results] == [(TASK_CALL, SUB_AGENT)]
    child = read_session(str(FOLDER / SESSION / "subagents" / "agent-aac57f5.jsonl"))
    assert child.run_id == SUB_AGENT


async def test_the_apps_timeline_nests_the_sub_agent_under_its_task_call() -> None:
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(SessionSource([FOLDER]))
        runs = await until(store, lambda s: len(s.runs) == 2 and s.runs, "both runs read")
        key = next(run.key for run in runs if run.key.run_id == SESSION)
        assert isinstance(key, RunKey)
        timeline = Timeline(SESSION)
        assert [child.run_id for child in store.children(key)] == [SUB_AGENT]
        await fill_timeline(store, key, timeline)
    child = next(node for node in timeline.nodes() if node.kind is NodeKind.CHILD_RUN)
    assert child.run_id == SUB_AGENT
    assert child.parent is not None
    assert child.parent.kind is NodeKind.TOOL
    assert child.parent.call_id == TASK_CALL
    assert child.depth == child.parent.depth + 1


def test_a_child_run_added_before_its_calls_result_moves_under_it() -> None:
    items = read_session(str(FOLDER / f"{SESSION}.jsonl")).items
    cut = next(
        i
        for i, item in enumerate(items)
        if isinstance(item, ToolResult) and item.payload.child_run_id
    )
    timeline = Timeline(SESSION)
    timeline.extend(items[:cut])
    child = timeline.set_child_run(
        SUB_AGENT, "claude-code", timeline.latest or 0.0, None, Outcome.RUNNING
    )
    assert child.parent is None  # the call has not said yet which run it started
    timeline.extend(items[cut:])
    assert child.parent is not None
    assert child.parent.call_id == TASK_CALL
    assert child in timeline.rows()


def test_show_timeline_nests_the_sub_agent_under_its_task_call(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["show", SESSION, "--from", str(FOLDER), "--timeline", "--json"]) == 0
    nodes = json.loads(capsys.readouterr().out)["nodes"]
    child = next(node for node in nodes if node["kind"] == "child_run")
    parent = next(node for node in nodes if node["id"] == child["parent"])
    assert (parent["kind"], parent["call_id"]) == ("tool", TASK_CALL)


def test_a_sub_agent_no_call_names_stays_under_the_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        main(
            [
                "show",
                "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9",
                "--from",
                str(WARMUP),
                "--timeline",
                "--json",
            ]
        )
        == 0
    )
    nodes = json.loads(capsys.readouterr().out)["nodes"]
    children = [node for node in nodes if node["kind"] == "child_run"]
    assert [node["parent"] for node in children] == [None]
