"""A parent run's tokens and cost include its child runs' (and theirs), beside its own:
``runtop ls``, ``ls --json`` and ``show``, on the ledgers of a real manager's runs."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, runs_listed
from tests.family_runs import (
    CHILD_COST,
    FAMILY_COST,
    FAMILY_TOKENS,
    PARENT_COST,
    PARENT_TOKENS,
    family,
)

pytestmark = pytest.mark.timeout(60)


def runtop(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "RUNTOP_HOME": str(home)},
        cwd=REPO,
        timeout=30,
        check=True,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    ledgers = tmp_path_factory.mktemp("family")
    return ledgers, asyncio.run(family(ledgers))


def test_ls_json_gives_each_run_its_total_beside_its_own(
    runs: tuple[Path, str], tmp_path: Path
) -> None:
    ledgers, parent = runs
    listed = {
        run["run_id"]: run
        for run in runs_listed(runtop("ls", str(ledgers), "--json", home=tmp_path).stdout)
    }
    assert len(listed) == 4
    assert listed[parent]["cost_usd"] == PARENT_COST  # its own, as before
    assert listed[parent]["prompt_tokens"] + listed[parent]["output_tokens"] == PARENT_TOKENS
    total = listed[parent]["total"]
    assert total["cost_usd"] == pytest.approx(FAMILY_COST)
    assert total["prompt_tokens"] + total["output_tokens"] == FAMILY_TOKENS
    middle = next(run for run in listed.values() if run["agent"] == "middle")
    assert middle["total"]["cost_usd"] == pytest.approx(
        CHILD_COST + (FAMILY_COST - PARENT_COST - 2 * CHILD_COST)
    )
    leaf = next(
        run for run in listed.values() if run["agent"] == "leaf" and run["parent_run_id"] == parent
    )
    assert leaf["total"]["cost_usd"] == leaf["cost_usd"]  # no child runs: its own


def test_ls_and_show_say_the_total_and_the_own(runs: tuple[Path, str], tmp_path: Path) -> None:
    ledgers, parent = runs
    table = runtop("ls", str(ledgers), home=tmp_path).stdout.splitlines()
    row = next(line for line in table if parent in line)
    assert f"Σ{FAMILY_TOKENS}  ${FAMILY_COST:.4f}" in row
    assert row.endswith(f"with its child runs; own {PARENT_TOKENS} tokens ${PARENT_COST:.4f}")
    # A filter that hides the children still counts them in the parent's total.
    only = runtop("ls", str(ledgers), "--filter", "agent:parent", home=tmp_path).stdout
    assert f"Σ{FAMILY_TOKENS}" in only
    shown = runtop("show", parent[-8:], "--from", str(ledgers), home=tmp_path).stdout
    assert shown.splitlines()[-1].strip() == (
        f"{FAMILY_TOKENS} tokens ${FAMILY_COST:.4f} with its child runs "
        f"(own {PARENT_TOKENS} tokens ${PARENT_COST:.4f})"
    )
