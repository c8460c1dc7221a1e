"""Two ``runtop serve`` on one ledger directory: a run is acted on only by the one that writes it.

Whether a run is live is judged as ``runtop ls`` judges it, by the writer's
lock on its ledger: server B refuses to resume, cancel or approve a run that
server A is running, and says which process has it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.timeout(60)

AGENTS = """
import asyncio


class Slow:
    name = "slow"

    async def run(self, input: str) -> str:
        await asyncio.sleep(float(input))
        return "done"


def agents():
    return [Slow()]
"""


class Server:
    def __init__(self, tmp_path: Path, name: str, ledger_dir: Path) -> None:
        env = {
            **os.environ,
            "RUNTOP_HOME": str(tmp_path / name),
            "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}",
        }
        command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0"]
        command += ["--agents", "my_agents:agents", "--ledger-dir", str(ledger_dir)]
        self.process = subprocess.Popen(
            command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO
        )
        assert self.process.stderr is not None
        first = self.process.stderr.readline()
        assert first.startswith("runtop serve: http://127.0.0.1:"), first
        self.url = first.split()[2].rstrip(",")
        [token_file] = (tmp_path / name / "tokens").iterdir()
        self.token = token_file.read_text().strip()

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        request = urllib.request.Request(
            f"{self.url}/api/agent/{path}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.communicate(timeout=20)


@pytest.fixture
def two_servers(tmp_path: Path) -> Iterator[tuple[Server, list[Server], Path]]:
    """Server A on ``runs/``; the test starts B there too (``servers`` are stopped at the end)."""
    (tmp_path / "my_agents.py").write_text(AGENTS)
    ledger_dir = tmp_path / "runs"
    first = Server(tmp_path, "a", ledger_dir)
    servers = [first]
    try:
        yield first, servers, ledger_dir
    finally:
        for server in servers:
            server.stop()


def test_a_run_live_in_one_server_is_refused_by_the_other(
    tmp_path: Path, two_servers: tuple[Server, list[Server], Path]
) -> None:
    a, servers, ledger_dir = two_servers
    status, started = a.call("POST", "runs", {"skill_name": "slow", "input": "30"})
    assert status == 201
    run_id = started["run_id"]
    b = Server(tmp_path, "b", ledger_dir)  # finds A's run in the directory as it starts
    servers.append(b)
    deadline = time.monotonic() + 10
    while b.call("GET", f"runs/{run_id}")[0] != 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    said = f"the run is live in another process (pid {a.process.pid} on host {os.uname().nodename})"
    status, answer = b.call("POST", f"runs/{run_id}/resume", {})
    assert status == 409
    assert answer["error"] == (
        f"run {run_id} is still running in another process "
        f"(pid {a.process.pid} on host {os.uname().nodename})"
    )
    status, answer = b.call("POST", f"runs/{run_id}/cancel", {"reason": "from b"})
    assert (status, answer["error"]) == (409, f"{said}: cancel it there")
    status, answer = b.call("POST", f"runs/{run_id}/approve", {"approved": True})
    assert (status, answer["error"]) == (409, f"{said}: approve it there")
    assert [path.name for path in ledger_dir.glob("*.jsonl")] == [f"{run_id}.jsonl"]
    status, _ = a.call("POST", f"runs/{run_id}/cancel", {"reason": "from a"})  # A's to stop
    assert status == 202
    deadline = time.monotonic() + 20
    while a.call("GET", f"runs/{run_id}")[1]["run"]["status"] != "canceled":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    a.stop()
    status, resumed = b.call("POST", f"runs/{run_id}/resume", {})  # over: B may re-issue it
    assert status == 200
    assert resumed["new_run_id"] != run_id
