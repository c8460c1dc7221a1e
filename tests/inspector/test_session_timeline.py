"""Coding agents' real sessions on a timeline: a node per model call and per tool call,
none noted as malformed (tests/sessions_home/README.md says where each file came from)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.timeline import NodeKind, Timeline
from ledger_reader import LlmCall, ToolCall
from ledger_reader.sessions import find_sessions, read_session

HOME = Path(__file__).parent.parent / "sessions_home"
SESSIONS = sorted(find_sessions(HOME))


@pytest.mark.parametrize("path", SESSIONS, ids=lambda path: Path(path).name)
def test_a_session_has_a_node_per_call_and_no_notes(path: str) -> None:
    session = read_session(path)
    timeline = Timeline(session.run_id)
    for item in session.items:
        timeline.add(item)
    nodes = list(timeline.nodes())
    models = [node for node in nodes if node.kind is NodeKind.MODEL]
    tools = [node for node in nodes if node.kind is NodeKind.TOOL]
    assert len(models) == sum(isinstance(item, LlmCall) for item in session.items)
    assert len(tools) == sum(isinstance(item, ToolCall) for item in session.items)
    noted = [(node.name, node.notes) for node in nodes if node.notes]
    assert noted == [] or all(
        notes == ("never exited: the run stopped writing",) for _, notes in noted
    )  # the cut-short session's last command


def test_the_home_holds_every_agent() -> None:
    assert {Path(path).suffix for path in SESSIONS} == {".jsonl", ".json"}
    assert len(SESSIONS) == 13
