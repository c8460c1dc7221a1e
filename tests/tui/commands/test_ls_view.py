"""``runtop ls --view NAME``: the runs through a view kept in ``$RUNTOP_HOME/views.toml``:
its filter, its sort and its columns; a view there is not, or a file that cannot be read,
named."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.generate import varied_ledgers
from tests.conftest import runs_listed
from tui.cli import main
from tui.views import View, save_view

VIEWS = (
    "[views.dear]\n"
    'filter = "cost:>0.01 duration:>30s"\n'
    'sort = "tokens"\n'
    "reverse = true\n"
    'columns = ["status", "run", "duration", "tokens"]\n'
    "[views.oldest]\n"
    'sort = "started"\n'
    "reverse = false\n"
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("RUNTOP_HOME", str(home))
    monkeypatch.setenv("RUNTOP_NO_CACHE", "1")
    return home


def ids(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["ls", *argv, "--json"]) == 0
    return [run["run_id"] for run in runs_listed(capsys.readouterr().out)]


def test_a_view_filters_sorts_and_picks_the_columns(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "views.toml").write_text(VIEWS)
    runs = tmp_path / "runs"
    varied_ledgers(runs, 40)
    listed = runs_listed(
        capsys.readouterr().out
        if main(["ls", str(runs), "--json", "--filter", "cost:>0.01 duration:>30s"]) == 0
        else "[]"
    )
    by_tokens = sorted(listed, key=lambda run: run["prompt_tokens"] + run["output_tokens"])
    dear = [run["run_id"] for run in reversed(by_tokens)]
    assert len(dear) > 2
    assert ids(capsys, str(runs), "--view", "dear") == dear
    assert ids(capsys, str(runs), "--view", "oldest") == sorted(ids(capsys, str(runs)))
    # --filter narrows the view's filter further
    failed = ids(capsys, str(runs), "--view", "dear", "--filter", "status:failed")
    assert failed
    assert set(failed) < set(dear)
    assert main(["ls", str(runs), "--view", "dear"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["STATUS", "RUN", "ID", "DURATION", "TOKENS", "COST"]
    assert [row.split()[2] for row in table[1:]] == dear


def test_a_view_there_is_not_is_named_with_the_views_there_are(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_view(home / "views.toml", View("dear", "cost:>0.01"))
    assert main(["ls", str(tmp_path), "--view", "cheap"]) == 2
    said = capsys.readouterr().err
    assert "no view 'cheap'" in said
    assert "dear" in said


def test_a_damaged_views_file_is_said_and_ls_without_a_view_still_lists(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "views.toml").write_text("[views.dear\n")
    runs = tmp_path / "runs"
    varied_ledgers(runs, 3)
    assert main(["ls", str(runs), "--view", "dear"]) == 1
    said = capsys.readouterr().err
    assert "views.toml is not TOML" in said, said
    assert len(ids(capsys, str(runs))) == 3
    assert (home / "views.toml").read_text() == "[views.dear\n"
