"""The attach API says a parent run's totals with its child runs' (``total``), as ``runtop
ls --json`` does, beside its own figures: on every page of the listing (a child listed on
another page, or filtered out, still counted) and in the run's own answer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.family_runs import (
    BIG_CHILD,
    BIG_PARENT,
    CHILD_COST,
    CHILD_TOKENS,
    GRANDCHILD_COST,
    GRANDCHILD_TOKENS,
    PARENT_COST,
    PARENT_TOKENS,
    Parent,
    family_with_a_big_ledger,
)
from tests.run_manager.server.test_attach_api import served

pytestmark = pytest.mark.timeout(30)

TOTAL_COST = PARENT_COST + 2 * CHILD_COST + GRANDCHILD_COST
TOTAL_TOKENS = PARENT_TOKENS + 2 * CHILD_TOKENS + GRANDCHILD_TOKENS


def spent(figures: dict[str, Any]) -> tuple[int, float]:
    return figures["prompt_tokens"] + figures["output_tokens"], round(figures["cost_usd"], 6)


async def test_a_parents_total_holds_its_child_runs_on_any_page(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        handle = s.manager.start(Parent(s.manager), "plan")
        await handle.result()
        parent = handle.run_id
        whole = (TOTAL_TOKENS, round(TOTAL_COST, 6))
        pages: list[dict[str, Any]] = []  # a run a page: its child runs on other pages
        cursor: str | None = ""
        while cursor is not None:
            params = {"limit": "1", **({"cursor": cursor} if cursor else {})}
            status, body = await s.get("runs", params=params)
            assert status == 200, body
            pages += body["runs"]
            cursor = body["next_cursor"]
        assert len(pages) == 4
        for run in pages:
            own = (run["tokens"], round(run["cost_usd"], 6))
            if run["run_id"] == parent:
                assert spent(run["total"]) == whole, run
                assert own == (PARENT_TOKENS, PARENT_COST)
            elif run["agent"] == "middle":  # its grandchild's with its own
                wanted = (CHILD_TOKENS + GRANDCHILD_TOKENS, round(CHILD_COST + GRANDCHILD_COST, 6))
                assert spent(run["total"]) == wanted, run
            else:
                assert spent(run["total"]) == own, run
        status, body = await s.get("runs", params={"filter": "agent:parent"})  # alone
        assert [spent(run["total"]) for run in body["runs"]] == [whole]
        async with s.session.get(s.api(f"runs/{parent}")) as response:
            answered = (await response.json())["run"]
        assert spent(answered["total"]) == whole, answered


async def test_a_total_of_runs_found_at_start_up_says_it_is_a_floor(tmp_path: Path) -> None:
    """A ledger the server found when it started is not counted from every event (its
    figures are ``null``): a total with it left its calls out, and said nothing of it."""
    family_with_a_big_ledger(tmp_path / "runs", BIG_CHILD)
    async with served(tmp_path) as s:
        runs: list[dict[str, Any]] = []
        deadline = asyncio.get_running_loop().time() + 10
        while len(runs) < 2:  # found by the scan at start-up, on its own time
            assert asyncio.get_running_loop().time() < deadline, runs
            await asyncio.sleep(0.05)
            status, body = await s.get("runs")
            assert status == 200, body
            runs = body["runs"]
        by_id = {run["run_id"]: run for run in runs}
        assert by_id[BIG_PARENT]["total"]["partial"] is True
        assert by_id[BIG_PARENT]["partial"] is False  # its ledger is small: as ls says it
        handle = s.manager.start(Parent(s.manager), "plan")  # counted as it runs: whole
        await handle.result()
        async with s.session.get(s.api(f"runs/{handle.run_id}")) as response:
            answered = (await response.json())["run"]
        assert spent(answered["total"]) == (TOTAL_TOKENS, round(TOTAL_COST, 6))
        assert answered["total"]["partial"] is False
