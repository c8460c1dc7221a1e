"""A coding agent's sessions are told apart by name: a project's sessions share its name
and their agent's (at 80 columns every one read ``spotter-4te…``), their first prompts
differ, and the name says the prompt first."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.session_source import SessionSource
from ledger_reader import RunStatus, RunSummary
from tests.tui.test_runs_table_layout import table_lines
from tests.tui_support import loaded
from tui.app import make_app
from tui.commands.runs_table import runs_table
from tui.settings import Settings
from tui.text import run_name

pytestmark = pytest.mark.timeout(60)

HOME = Path(__file__).parent.parent / "sessions_home"


def session(prompt: object, writer: str = "claude-code") -> RunSummary:
    return RunSummary(
        run_id="ae4a77f8",
        status=RunStatus.IDLE,
        skill="spotter-4te",
        agent=writer,
        writer=writer,
        input=prompt,
    )


def test_a_sessions_name_says_its_prompt_first() -> None:
    asked = session("\n  Work on bead spotter-4te.\x1b[2J Run bd show\nmore lines")
    assert (
        run_name(asked) == "Work on bead spotter-4te.␛[2J Run bd show · spotter-4te / claude-code"
    )
    assert run_name(asked, 12) == "Work on bea…"
    assert run_name(asked, 48) == "Work on bead spotte… · spotter-4te / claude-code"


@pytest.mark.parametrize("prompt", [None, "", "  \n ", {"text": "a dict"}])
def test_without_a_prompt_the_name_is_the_skill_and_agent(prompt: object) -> None:
    assert run_name(session(prompt)) == "spotter-4te / claude-code"


def test_a_runtop_run_is_named_by_its_skill_and_agent_alone() -> None:
    run = RunSummary(run_id="r", status=RunStatus.SUCCEEDED, skill="triage", input="a question")
    assert run_name(run) == "triage"


def test_ls_at_80_columns_tells_the_sessions_apart() -> None:
    summaries = [session("Search hex.pm for the latest"), session("Work on bead spotter-4te")]
    lines = runs_table(summaries, width=80).plain.splitlines()[1:]
    assert "Search hex" in lines[0], lines
    assert "Work on be" in lines[1], lines


async def test_the_runs_table_at_80x24_tells_a_projects_sessions_apart() -> None:
    project = HOME / ".claude" / "projects" / "-home-USER-projects-spotter-worktrees-spotter-4te"
    app = make_app(Settings(flush_interval=0.01), [SessionSource([project])])
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 2)  # a session and its sub-agent
        lines = table_lines(app)
        assert any("Search hex" in line for line in lines), lines  # the sub-agent's task
        assert any("Work on be" in line for line in lines), lines  # the session's prompt
        assert not any("spotter-4te…" in line for line in lines), lines
