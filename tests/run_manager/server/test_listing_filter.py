"""``GET runs?filter=``: the attach API's listing reads the app's filter language (one
parser), numbers included, and names a term it cannot take with a 400."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents import Echo, Stepper
from tests.run_manager.server.test_attach_api import served

pytestmark = pytest.mark.timeout(30)


async def test_the_listing_keeps_the_runs_the_filter_passes(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        stepper = Stepper()
        stepper.open_all()
        spent = s.manager.start(stepper, "https://example.org")
        quiet = s.manager.start(Echo(), "x")
        await spent.wait()
        await quiet.wait()

        async def listed(text: str) -> list[str]:
            status, body = await s.get("runs", params={"filter": text})
            assert status == 200, body
            return [run["run_id"] for run in body["runs"]]

        assert await listed("cost:>0.1") == [spent.run_id]
        assert await listed("cost:0.2..0.3 tokens:>=100 calls:1 model:m-*") == [spent.run_id]
        assert await listed("calls:0") == [quiet.run_id]
        assert await listed("-cost:>0.1 status:ok skill:echo") == [quiet.run_id]
        assert await listed("events:<7 duration:<1m") == [quiet.run_id]
        assert await listed("cost:>1") == []
        _, body = await s.get("runs", params={"filter": "calls:0", "limit": "1"})
        assert [run["model_calls"] for run in body["runs"]] == [0]


async def test_a_wrong_term_is_a_400_that_names_it(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        for text, said in [
            ("cost:>cheap", "cost:>cheap: 'cheap' is not a number"),
            ("colour:red", "unknown field colour"),
            ("has:boom", "has: is not answered by the server"),
            ("source:ledgers", "source: is not answered by the server"),
            ('"open', "a quote is not closed"),
        ]:
            status, body = await s.get("runs", params={"filter": text})
            assert status == 400, text
            assert said in body["error"], (text, body)
