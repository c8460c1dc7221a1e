"""``runtop ls --filter`` and the app's ``/`` select the same runs: one parser, and the
same reading of each run (its cost, tokens, model calls, models and duration), whether
the run's figures come from its summary (``ls``) or from the events the store folded
(the app)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.generate import varied_ledgers
from inspector import LedgerDirectorySource
from tests.conftest import FIXTURES, runs_listed
from tests.tui.test_runs_filter_has import filtered
from tests.tui.test_runs_screen_text import shown
from tests.tui_support import loaded
from tui.app import make_app
from tui.cli import main
from tui.settings import Settings

FILTERS = (
    "cost:>0.01 duration:>30s",
    "cost:0.01..0.10",
    "-cost:>0.01",
    "tokens:>=10k",
    "calls:>5",
    "calls:0",
    "events:<10",
    "model:claude-*",
    "-model:gpt-* status:succeeded",
    "duration:<1s",
    "duration:1m..5m",
)


def ls_ids(capsys: pytest.CaptureFixture[str], directory: Path, text: str) -> list[str]:
    assert main(["ls", str(directory), "--json", "--no-cache", f"--filter={text}"]) == 0
    return sorted(run["run_id"] for run in runs_listed(capsys.readouterr().out))


@pytest.mark.timeout(120)
async def test_ls_and_the_apps_filter_select_the_same_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURES, runs)
    varied_ledgers(runs, 90)
    count = len(list(runs.glob("*.jsonl")))
    listed = {text: ls_ids(capsys, runs, text) for text in FILTERS}
    for text in FILTERS:  # each filter tells runs apart: neither none nor all
        assert 0 < len(listed[text]) < count, text
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(runs)])
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, count)
        for text in FILTERS:
            await filtered(app, pilot, text)
            assert sorted(shown(app)) == listed[text], text
