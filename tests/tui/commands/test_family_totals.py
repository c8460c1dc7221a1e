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
    BIG_CHILD,
    BIG_OWN,
    BIG_PARENT,
    CHILD_COST,
    FAMILY_COST,
    FAMILY_TOKENS,
    PARENT_COST,
    PARENT_TOKENS,
    family,
    family_with_a_big_ledger,
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


@pytest.mark.parametrize("big", [BIG_CHILD, BIG_PARENT], ids=["big child", "big parent"])
def test_a_total_that_left_out_a_big_ledger_s_calls_says_at_least(big: str, tmp_path: Path) -> None:
    """A ledger over 256 KiB is summarised from its head and tail: its own figures are
    not known, and a family total with it counted only the others. It said so nowhere:
    ``Σ110  $0.0100`` read as the whole."""
    ledgers = tmp_path / "runs"
    family_with_a_big_ledger(ledgers, big)
    small = BIG_CHILD if big == BIG_PARENT else BIG_PARENT
    floor_tokens, floor_cost = BIG_OWN[small]
    listed = {
        run["run_id"]: run
        for run in runs_listed(runtop("ls", str(ledgers), "--json", home=tmp_path).stdout)
    }
    total = listed[BIG_PARENT]["total"]
    assert total["partial"] is True
    assert (total["prompt_tokens"] + total["output_tokens"], total["cost_usd"]) == (
        floor_tokens,
        pytest.approx(floor_cost),
    )
    assert listed[small]["total"]["partial"] is (small == BIG_PARENT)
    assert listed[big]["partial"] is True
    row = next(
        line
        for line in runtop("ls", str(ledgers), home=tmp_path).stdout.splitlines()
        if BIG_PARENT in line
    )
    assert f"Σ≥{floor_tokens}  ≥${floor_cost:.4f}" in row, row
    own = "tokens not counted" if big == BIG_PARENT else f"{floor_tokens} tokens ${floor_cost:.4f}"
    assert row.endswith(f"with its child runs; own {own}"), row
    shown = runtop("show", BIG_PARENT, "--from", str(ledgers), home=tmp_path).stdout
    if big == BIG_CHILD:
        assert shown.splitlines()[-1].strip() == (
            f"at least {floor_tokens} tokens ${floor_cost:.4f} with its child runs (own {own})"
        )
    else:  # show read the parent's every line to print it: its own is known, and whole
        assert shown.splitlines()[-1].strip() == (
            "330 tokens $0.0300 with its child runs (own 110 tokens $0.0100)"
        )


def test_a_family_read_whole_is_no_floor(tmp_path: Path) -> None:
    ledgers = tmp_path / "runs"
    family_with_a_big_ledger(ledgers, big="neither")
    listed = runs_listed(runtop("ls", str(ledgers), "--json", home=tmp_path).stdout)
    assert [run["total"]["partial"] for run in listed] == [False, False]
    table = runtop("ls", str(ledgers), home=tmp_path).stdout
    assert "≥" not in table
    assert "Σ330  $0.0300" in table


def test_a_filter_on_cost_reads_the_total_the_table_shows(
    runs: tuple[Path, str], tmp_path: Path
) -> None:
    """The parent's own cost is a cent, its family's more: ``cost:>0.025`` finds it by the
    Σ figure ``ls`` and the app show beside it, as the app's ``/`` does."""
    ledgers, parent = runs
    assert PARENT_COST <= 0.025 < FAMILY_COST  # and no child run's reaches it
    chosen = runs_listed(
        runtop("ls", str(ledgers), "--json", "--filter", "cost:>0.025", home=tmp_path).stdout
    )
    assert [run["run_id"] for run in chosen] == [parent]
    over = runs_listed(
        runtop(
            "ls", str(ledgers), "--json", "--filter", f"tokens:>{PARENT_TOKENS}", home=tmp_path
        ).stdout
    )
    assert parent in [run["run_id"] for run in over]
