"""``runtop show --timeline`` of a run that stopped writing says what ``ls`` says of it.

The torn sample (a model call entered, its text torn off, no writer) was
listed as ``? stale 0.3s`` by ``runtop ls``, while its timeline was headed
``running``, said ``wall 0.1s`` and drew its model call ``no end``, as if
it were still going. The app's timeline already ended it where it stopped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui.cli import main

pytestmark = pytest.mark.timeout(30)

TORN = "run_20261128T143000058_5e6f708192a3b4c5"
"""The sample whose writer is gone with its model call open."""
SUSPENDED_APPROVAL = "run_20261128T143000052_a0b1c2d3e4f50617"
"""The sample that stopped writing while waiting on an approval."""


def test_a_stale_run_s_timeline_is_stale_and_ends_where_it_stopped(
    capsys: pytest.CaptureFixture[str], fixtures: Path
) -> None:
    ledger = str(fixtures / f"{TORN}.jsonl")
    assert main(["ls", ledger]) == 0
    listed = capsys.readouterr().out.splitlines()[1].split()
    assert listed[:2] == ["?", "stale"]
    assert main(["show", ledger, "--timeline"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [TORN, "research", "stale"]
    assert lines[1].startswith(f"wall {listed[-2]} · model 0.2s")  # ls's duration: 0.3s
    assert "running" not in "\n".join(lines)
    assert "no end" not in "\n".join(lines)
    assert "never exited: the run stopped writing" in "\n".join(lines)


@pytest.mark.parametrize("run_id", [TORN, SUSPENDED_APPROVAL])
def test_no_node_of_a_stale_run_is_running_in_json(
    capsys: pytest.CaptureFixture[str], fixtures: Path, run_id: str
) -> None:
    assert main(["show", str(fixtures / f"{run_id}.jsonl"), "--timeline", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    outcomes = {node["id"]: node["outcome"] for node in document["nodes"]}
    assert outcomes
    assert set(outcomes.values()) == {"unfinished"}, outcomes
    assert document["summary"]["in_flight"] == 0
    assert all(node["end"] is not None for node in document["nodes"])
