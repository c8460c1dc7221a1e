"""The attach API says a parent run's totals with its child runs' (``total``), as ``runtop
ls --json`` does, beside its own figures: on every page of the listing (a child listed on
another page, or filtered out, still counted) and in the run's own answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.family_runs import (
    CHILD_COST,
    CHILD_TOKENS,
    GRANDCHILD_COST,
    GRANDCHILD_TOKENS,
    PARENT_COST,
    PARENT_TOKENS,
    Parent,
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
