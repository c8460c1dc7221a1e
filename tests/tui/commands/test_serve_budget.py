"""``runtop serve --budget``: every run started over HTTP has the budget, asks through the
attach API and stops at its limit; a real server on loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, runs_listed
from tests.tui.commands.test_serve import post as post_to
from tests.tui.commands.test_serve import runtop

pytestmark = pytest.mark.timeout(60)

AGENTS = """
from tests.budget_agents import Spender


def agents():
    return [Spender()]
"""

Server = tuple[str, str, dict[str, str]]
"""The server's URL, its token, and the environment its clients run in."""


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[[str], Server]]:
    (tmp_path / "my_agents.py").write_text(AGENTS)
    env = {
        **os.environ,
        "RUNTOP_HOME": str(tmp_path / "home"),
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}",
    }
    env.pop("RUNTOP_TOKEN", None)
    started: list[subprocess.Popen[str]] = []

    def start(budget: str) -> Server:
        command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0", "--budget", budget]
        command += ["--agents", "my_agents:agents", "--ledger-dir", str(tmp_path / "runs")]
        process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
        started.append(process)
        assert process.stderr is not None
        banner = [process.stderr.readline() for _ in range(5)]
        assert banner[0].startswith("runtop serve: http://127.0.0.1:"), banner
        assert banner[4].startswith("  budget, each run's: $1.00"), banner
        url = banner[0].split()[2].rstrip(",")
        port = url.rsplit(":", 1)[1]
        token = (tmp_path / "home" / "tokens" / f"127.0.0.1_{port}").read_text().strip()
        return url, token, env

    try:
        yield start
    finally:
        for process in started:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(10)
            if process.stderr is not None:
                process.stderr.close()


def post(server: Server, path: str, body: dict[str, object]) -> dict[str, Any]:
    url, token, _ = server
    return post_to(url, path, body, token)


def listed(server: Server, run_id: str) -> dict[str, Any]:
    """The run as ``runtop ls URL --json`` says it."""
    url, _, env = server
    done = runtop("ls", url, "--json", env=env)
    assert done.returncode == 0, done.stderr
    runs: list[dict[str, Any]] = runs_listed(done.stdout)
    return next(run for run in runs if run["run_id"] == run_id)


def waiting_for(
    server: Server, run_id: str, wanted: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        run = listed(server, run_id)
        if wanted(run):
            return run
        assert time.monotonic() < deadline, run
        time.sleep(0.05)


def question(run: dict[str, Any]) -> str | None:
    pending = run.get("pending_approval")
    return pending["prompt"] if pending else None


def test_runs_started_over_http_ask_go_on_ask_again_and_stop_when_denied(
    serve: Callable[[str], Server],
) -> None:
    server = serve("cost=1.00")
    run_id = str(post(server, "runs", {"skill_name": "spender", "input": "go"})["run_id"])
    run = waiting_for(server, run_id, lambda run: question(run) is not None)
    assert run["status"] == "awaiting_approval"
    assert question(run) == "budget: $0.80 of $1.00 spent; continue?"
    assert run["budget"]["state"] == "asking"
    assert (run["budget"]["cost_usd"], run["budget"]["spent"]["cost_usd"]) == (1.0, 0.8)
    post(server, f"runs/{run_id}/approve", {"approved": True})
    run = waiting_for(server, run_id, lambda run: (question(run) or "").startswith("budget: $1.6"))
    assert question(run) == "budget: $1.60 of $2.00 spent; continue?"
    post(server, f"runs/{run_id}/approve", {"approved": False, "reason": "enough"})
    run = waiting_for(server, run_id, lambda run: run["status"] == "canceled")
    assert run["error"] == "canceled: budget: $1.60 of $2.00 spent; not approved: enough"
    assert (run["budget"]["state"], run["budget"]["cost_usd"]) == ("denied", 2.0)


def test_a_budget_given_with_a_run_is_its_budget_and_a_wrong_one_is_refused(
    serve: Callable[[str], Server],
) -> None:
    server = serve("cost=1.00")
    given = {"model_calls": 2, "ask_at": None}
    body: dict[str, object] = {"skill_name": "spender", "input": "go", "budget": given}
    run_id = str(post(server, "runs", body)["run_id"])
    run = waiting_for(server, run_id, lambda run: run["status"] == "canceled")
    assert run["error"] == "canceled: budget: 2 of 2 model calls spent"
    for wrong, said in (
        ({"cost": 1}, "budget: 'cost' is not a limit"),
        ({"tokens": -5}, "budget: tokens must be a number above 0"),
        ("cost=1", "budget must be an object"),
        ({"cost_usd": 1, "ask_timeout": 0}, "budget: ask_timeout must be a number of seconds"),
    ):
        with pytest.raises(urllib.error.HTTPError) as refused:
            post(server, "runs", {"skill_name": "spender", "budget": wrong})
        assert refused.value.code == 400
        assert said in json.load(refused.value)["error"]


def test_a_run_started_over_http_stops_at_its_limit(serve: Callable[[str], Server]) -> None:
    server = serve("cost=1.00,ask=off")
    run_id = str(post(server, "runs", {"skill_name": "spender", "input": "go"})["run_id"])
    run = waiting_for(server, run_id, lambda run: run["status"] == "canceled")
    assert run["error"] == "canceled: budget: $1.00 of $1.00 spent"
    assert run["budget"]["spent"]["model_calls"] == 5
    assert run["pending_approval"] is None


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("cots=1", "'cots' is not a limit (did you mean cost?)"),
        ("tokens=many", "'many' is not a count"),
        ("cost=1,ask=1.5", "ask_at must be between 0 and 1"),
    ],
)
def test_a_budget_mistyped_is_said_and_nothing_starts(
    tmp_path: Path, given: str, said: str
) -> None:
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path)}
    failed = runtop("serve", "--port", "0", "--budget", given, env=env)
    assert failed.returncode == 2
    assert f"runtop: --budget {given}: " in failed.stderr
    assert said in failed.stderr


def test_the_banner_says_each_runs_budget_then_when_it_asks(tmp_path: Path) -> None:
    """The banner read ``budget: $1.00, asks at 80% a run``: a run's share said last,
    after the question, as if a run were asked at 80%."""
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path)}
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0"]
    command += ["--budget", "cost=1.00,tokens=200k,wait=10m", "--ledger-dir", str(tmp_path / "r")]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    try:
        assert process.stderr is not None
        banner = [process.stderr.readline() for _ in range(5)]
        said = "  budget, each run's: $1.00, 200k tokens, asks at 80%, waits 10m00s for an answer"
        assert said + " (--budget)\n" in banner, banner
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(10)
        if process.stderr is not None:
            process.stderr.close()
