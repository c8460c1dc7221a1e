"""``runtop ls`` and ``runtop show`` read coding agents' sessions (tests/sessions_home) as
runs: one per session and sub-agent, their tokens with the cache's parts and an estimated
cost, and a session's events found by its own id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui.cli import main

HOME = Path(__file__).parent.parent.parent / "sessions_home"
FOLDERS = [HOME / ".claude" / "projects", HOME / ".codex" / "sessions", HOME / ".gemini" / "tmp"]


def test_ls_json_lists_every_session_with_its_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ls", "--json", *map(str, FOLDERS)]) == 0
    runs = {run["run_id"]: run for run in json.loads(capsys.readouterr().out)}
    assert {run["agent"] for run in runs.values()} == {"claude-code", "codex", "gemini-cli"}
    assert len(runs) == 6
    child = runs["ae4a77f8-aedd-4bc1-888f-c94edc91af04.agent-aac57f5"]
    assert child["parent_run_id"] == "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
    for run in runs.values():
        assert run["prompt_tokens"] >= run["cache_read_tokens"] + run["cache_write_tokens"]
        assert run["cost_usd"] > 0
        assert run["cost_estimated"] is True
        assert run["model"]


@pytest.mark.parametrize(
    ("run_id", "folder", "said"),
    [
        ("019b04ae-b1c6-7c72-a134-a4c2de66058c", FOLDERS[1], "apply_patch"),
        ("f0a689a6-b0ac-407f-afcc-4fafa9e14e8a", FOLDERS[2], "run_shell_command"),
        ("ae4a77f8-aedd-4bc1-888f-c94edc91af04.agent-aac57f5", FOLDERS[0], "WebFetch"),
    ],
)
def test_show_finds_a_session_by_its_id(
    capsys: pytest.CaptureFixture[str], run_id: str, folder: Path, said: str
) -> None:
    assert main(["show", run_id, "--from", str(folder)]) == 0
    out = capsys.readouterr().out
    assert said in out
    assert "◆ model" in out


def test_show_json_prints_ledger_events(capsys: pytest.CaptureFixture[str]) -> None:
    session = next(FOLDERS[1].rglob("rollout-*.jsonl"))
    assert main(["show", str(session), "--json"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events[0]["type"] == "run_started"
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    assert {"llm_call", "tool_call", "tool_result"} <= {event["type"] for event in events}
