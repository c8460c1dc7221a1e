"""Coding agents' sessions replayed as every reader reads them: a run per session (its
sub-agent's too, under its own id), with the events ``runtop show`` prints."""

from __future__ import annotations

from pathlib import Path

from inspector import ReplaySource, RunStore
from ledger_reader import ToolCall
from ledger_reader.sessions import find_sessions, read_session
from tests.inspector.test_sources_contract import until
from tui.commands.replay import replay_files

HOME = Path(__file__).parent.parent / "sessions_home"


async def test_a_replay_plays_every_session_as_its_run() -> None:
    files = replay_files([str(HOME / ".claude"), str(HOME / ".codex"), str(HOME / ".gemini")])
    assert sorted(map(str, files)) == sorted(find_sessions(HOME))
    expected = {}
    for path in files:
        session = read_session(str(path))
        expected[session.run_id] = session.summary()
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(ReplaySource(list(files), speed=0))
        runs = await until(
            store, lambda s: len(s.runs) == len(expected) and s.runs, "every session played"
        )
        runs = await until(
            store,
            lambda s: (
                all(run.event_count == expected[run.key.run_id].event_count for run in s.runs)
                and s.runs
            ),
            "every event played",
        )
    for run in runs:
        summary = expected[run.key.run_id]
        assert run.summary.agent == summary.agent
        assert run.summary.model == summary.model
        assert run.summary.prompt_tokens == summary.prompt_tokens
        assert run.summary.parent_run_id == summary.parent_run_id
        assert run.tool_calls == sum(
            isinstance(item, ToolCall) for item in read_session(summary.path or "").items
        )
