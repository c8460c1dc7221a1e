"""``runtop stats --by model|tool|agent``: calls across runs, from ledgers a real manager
wrote, the shipped samples and a real server, with the app's numbers for the same runs."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.family_runs import CHILD_COST, GRANDCHILD_COST, PARENT_COST, family

pytestmark = pytest.mark.timeout(60)


def stats(*args: str, home: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", "stats", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "RUNTOP_HOME": str(home)},
        cwd=REPO,
        timeout=30,
        check=check,
    )


def rows(answer: subprocess.CompletedProcess[str], by: str) -> dict[str, dict[str, Any]]:
    return {row[by]: row for row in json.loads(answer.stdout)}


def test_model_calls_by_model_across_a_family_of_runs(tmp_path: Path) -> None:
    ledgers = tmp_path / "runs"
    asyncio.run(family(ledgers))
    by_model = rows(stats(str(ledgers), "--by", "model", "--json", home=tmp_path), "model")
    assert set(by_model) == {"m-large", "m-small"}
    small = by_model["m-small"]
    assert (small["calls"], small["runs"], small["errors"]) == (3, 3, 0)
    assert small["cost_usd"] == pytest.approx(2 * CHILD_COST + GRANDCHILD_COST)
    assert by_model["m-large"]["cost_usd"] == pytest.approx(PARENT_COST)
    assert small["median_seconds"] is not None
    assert small["p95_seconds"] >= small["median_seconds"]
    table = stats(str(ledgers), home=tmp_path).stdout.splitlines()  # --by model, as text
    assert table[0].split() == [
        "MODEL",
        "CALLS",
        "ERRORS",
        "MEDIAN",
        "P95",
        "TOKENS",
        "COST",
        "RUNS",
    ]
    assert table[1].split()[:2] == ["m-small", "3"]  # the busiest first


def test_columns_no_group_says_are_left_out(fixtures: Path, tmp_path: Path) -> None:
    """A tool's calls say no tokens nor cost: TOKENS and COST went empty down the table
    (walk finding); they go, as ls leaves out a column empty for every run."""
    tools = stats(str(fixtures), "--by", "tool", home=tmp_path).stdout.splitlines()
    assert tools[0].split() == ["TOOL", "CALLS", "ERRORS", "MEDIAN", "P95", "RUNS"]
    assert len(tools) == 4
    models = stats(str(fixtures), "--by", "model", home=tmp_path).stdout.splitlines()
    assert "TOKENS" in models[0].split()
    assert "COST" in models[0].split()


async def app_tool_stats(samples: Path) -> dict[str, tuple[int, int, float | None, float | None]]:
    """What the app's ``t`` says of each tool of ``samples``, once every run is read whole."""
    from inspector import LedgerDirectorySource, RunStore

    async with RunStore() as store:
        store.add_source(LedgerDirectorySource(samples, name="samples"))
        changes = store.changes()
        while sum(tool.count for tool in store.tool_stats()) < 3:
            await anext(changes)
        return {t.name: (t.count, t.errors, t.median, t.p95) for t in store.tool_stats()}


def test_tool_calls_by_tool_say_what_the_apps_t_says(tmp_path: Path, fixtures: Path) -> None:
    by_tool = rows(stats(str(fixtures), "--by", "tool", "--json", home=tmp_path), "tool")
    said = {
        name: (row["calls"], row["errors"], row["median_seconds"], row["p95_seconds"])
        for name, row in by_tool.items()
    }
    app = asyncio.run(app_tool_stats(fixtures))
    assert set(said) == set(app) == {"web_search", "read_page", "shell"}
    for name, (calls, errors, median, p95) in app.items():
        assert said[name][:2] == (calls, errors), name
        assert said[name][2] == pytest.approx(median, abs=0.02), name
        assert said[name][3] == pytest.approx(p95, abs=0.02), name
    assert by_tool["shell"]["errors"] == 1


def test_runs_by_agent_with_a_filter(tmp_path: Path, fixtures: Path) -> None:
    by_agent = rows(stats(str(fixtures), "--by", "agent", "--json", home=tmp_path), "agent")
    assert by_agent["research"]["runs_made"] == 2
    assert by_agent["deploy"]["errors"] == 1  # it failed
    assert by_agent["research"]["cost_usd"] == pytest.approx(0.0102)
    costly = stats(
        str(fixtures), "--by", "agent", "--filter", "cost:>0.001", "--json", home=tmp_path
    )
    assert list(rows(costly, "agent")) == ["research"]
    wrong = stats(str(fixtures), "--filter", "cost:>zz", home=tmp_path, check=False)
    assert wrong.returncode == 2
    assert "cost:>zz" in wrong.stderr
    assert wrong.stdout == ""


AGENTS = """
from run_manager import model_call, tool_call


class Asker:
    name = "asker"

    async def run(self, input: str) -> str:
        async with tool_call("lookup", {"q": input}) as call:
            call.output = "found"
        async with model_call("m-served", provider="p") as model:
            model.usage(prompt_tokens=40, output_tokens=2, cost_usd=0.0007)
        return "ok"


def agents():
    return [Asker()]
"""


def test_a_servers_runs_over_http(tmp_path: Path) -> None:
    (tmp_path / "served_agents.py").write_text(AGENTS)
    home = tmp_path / "home"
    env = {**os.environ, "RUNTOP_HOME": str(home), "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"}
    env.pop("RUNTOP_TOKEN", None)
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0"]
    command += ["--agents", "served_agents:agents", "--ledger-dir", str(tmp_path / "runs")]
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        assert server.stderr is not None
        url = server.stderr.readline().split()[2].rstrip(",")
        token = (home / "tokens" / f"127.0.0.1_{url.rsplit(':', 1)[1]}").read_text().strip()
        for _ in range(2):
            request = urllib.request.Request(
                f"{url}/api/agent/runs",
                data=json.dumps({"skill_name": "asker", "input": "x"}).encode(),
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=10):
                pass
        by_model: dict[str, dict[str, Any]] = {}
        while by_model.get("m-served", {}).get("calls") != 2:
            by_model = rows(stats("--from", url, "--json", home=home), "model")
        assert by_model["m-served"]["cost_usd"] == pytest.approx(0.0014)
        by_tool = rows(stats("--from", url, "--by", "tool", "--json", home=home), "tool")
        assert by_tool["lookup"]["calls"] == 2
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(10)
        if server.stderr is not None:
            server.stderr.close()
