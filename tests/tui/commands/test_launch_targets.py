"""``runtop FILE``: a ledger named through a symbolic link shows its run (it showed none);
``runtop ~``: a home's ledgers and its coding agents' sessions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from inspector import LedgerDirectorySource
from inspector.session_source import SessionSource
from tests.conftest import SESSIONS_HOME, runs_listed
from tests.tui_support import settle
from tui.app import make_app
from tui.cli import main
from tui.commands.watch import sources_for
from tui.settings import Settings
from tui.widgets.run_table import RunTable

pytestmark = pytest.mark.timeout(60)

SAMPLE = "run_20261128T143000012_4f1a9c2e7b3d8a60"


async def first_run_ids(source: LedgerDirectorySource) -> list[str]:
    updates = source.updates()
    try:
        update = await anext(updates)
        while update.pending:  # read in steps: the first update may not hold them all
            update = await anext(updates)
        return [run.run_id for run in update.runs]
    finally:
        await updates.aclose()  # type: ignore[attr-defined]
        await source.close()


@pytest.mark.parametrize("through", ["the file", "a link to it"])
async def test_a_ledger_file_shows_its_run(fixtures: Path, tmp_path: Path, through: str) -> None:
    ledger = fixtures / f"{SAMPLE}.jsonl"
    named = ledger
    if through == "a link to it":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        named = elsewhere / "latest.jsonl"
        named.symlink_to(ledger)
    [source] = sources_for([named], default=False)
    assert isinstance(source, LedgerDirectorySource)
    assert source.name == named.name  # what the user typed, not the link's target
    assert await first_run_ids(source) == [SAMPLE]


async def test_a_home_shows_its_agents_sessions_as_ls_lists_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``runtop ~`` showed no runs where ``runtop ls ~`` listed the sessions in it: the
    directory's walk leaves session files out, and nothing else read them."""
    home = tmp_path / "home"
    shutil.copytree(SESSIONS_HOME, home)
    assert main(["ls", "--json", str(home)]) == 0
    listed = {run["run_id"] for run in runs_listed(capsys.readouterr().out)}
    ledgers, sessions = sources_for([home], default=False)
    assert isinstance(ledgers, LedgerDirectorySource)
    assert isinstance(sessions, SessionSource)
    assert sessions.name == "home sessions"
    app = make_app(Settings(flush_interval=0.01), [ledgers, sessions])
    async with app.run_test(size=(160, 48)) as pilot:
        rows = app.screen.query_one(RunTable)
        await settle(pilot, lambda: len(rows.rows) == len(listed), "the home's sessions")
        assert {run.run_id for run in rows.rows} == listed
    assert sources_for([tmp_path / "empty"], default=True)[1:] == []  # runs' folder: no more
