"""``runtop serve`` as a real process, and ``runtop ls|show|cancel`` pointed at it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, runs_listed

pytestmark = pytest.mark.timeout(60)

AGENTS = """
import asyncio

from run_manager import tool_call


class Slow:
    name = "slow"

    async def run(self, input: str) -> str:
        async with tool_call("wait", {"for": input}) as call:
            await asyncio.sleep(float(input))
            call.output = "waited"
        return "done"


def agents():
    return [Slow()]
"""


def runtop(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=30,
        check=False,
    )


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], subprocess.Popen[str]]]:
    (tmp_path / "my_agents.py").write_text(AGENTS)
    env = {
        **os.environ,
        "RUNTOP_HOME": str(tmp_path / "home"),
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}",
    }
    env.pop("RUNTOP_TOKEN", None)
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0"]
    command += ["--agents", "my_agents:agents", "--ledger-dir", str(tmp_path / "runs")]
    process = subprocess.Popen(
        command,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith("runtop serve: http://127.0.0.1:"), first
    url = first.split()[2].rstrip(",")
    try:
        yield url, env, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(10)
        process.stderr.close()


def post(url: str, path: str, body: dict[str, object], token: str) -> dict[str, object]:
    request = urllib.request.Request(
        f"{url}/api/agent/{path}",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer: dict[str, object] = json.load(response)
        return answer


def test_serve_then_ls_show_and_cancel_by_url(
    server: tuple[str, dict[str, str], subprocess.Popen[str]], tmp_path: Path
) -> None:
    url, env, process = server
    port = url.rsplit(":", 1)[1]
    token_file = tmp_path / "home" / "tokens" / f"127.0.0.1_{port}"
    assert token_file.stat().st_mode & 0o777 == 0o600
    token = token_file.read_text().strip()
    empty = runtop("ls", url.replace("127.0.0.1", "localhost"), env=env)  # found by either name
    assert empty.returncode == 0, empty.stderr
    assert f"no runs yet on {url.replace('127.0.0.1', 'localhost')}" in empty.stderr
    quick = str(post(url, "runs", {"skill_name": "slow", "input": "0.01"}, token)["run_id"])
    slow = str(post(url, "runs", {"skill_name": "slow", "input": "30"}, token)["run_id"])

    by_id: dict[str, dict[str, object]] = {}
    for _ in range(50):  # until the quick run has finished (it takes 10 ms)
        listed = runtop("ls", url, "--json", env=env)  # the token is found in its file
        assert listed.returncode == 0, listed.stderr
        by_id = {run["run_id"]: run for run in runs_listed(listed.stdout)}
        if by_id.get(quick, {}).get("status") == "succeeded":
            break
    assert by_id[quick]["status"] == "succeeded"
    assert by_id[slow]["status"] == "running"

    shown = runtop("show", quick, "--from", url, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "⚙ wait ✔" in shown.stdout  # the call with its result, one line
    assert "■ run succeeded: done" in shown.stdout

    canceled = runtop("cancel", slow, "--from", url, "--reason", "enough", env=env)
    assert canceled.returncode == 0, canceled.stderr
    assert f"cancel requested: {slow}" in canceled.stdout
    followed = runtop("show", slow, "--from", url, "--follow", "--json", env=env)
    last = json.loads(followed.stdout.splitlines()[-1])
    assert last["type"] == "run_completed"
    assert last["payload"]["status"] == "cancelled"  # LEDGER.md spells it so

    again = runtop("cancel", slow, "--from", url, env=env)
    assert again.returncode == 1
    assert "already ended" in again.stderr
    wrong = runtop("ls", url, "--token", "nope", env=env)
    assert wrong.returncode == 1
    assert f"refused: bad token for {url}" in wrong.stderr

    process.send_signal(signal.SIGTERM)
    assert process.wait(10) == 0
    assert token_file.read_text().strip() == token  # kept for the next start on this port
    gone = runtop("ls", url, env=env)
    assert gone.returncode == 1
    assert "cannot be reached" in gone.stderr


def test_serve_refuses_a_bad_agents_spec(tmp_path: Path) -> None:
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path)}
    failed = runtop("serve", "--port", "0", "--agents", "nowhere_at_all:x", env=env)
    assert failed.returncode == 2  # a mistake in the command line
    assert "cannot import nowhere_at_all" in failed.stderr


def test_a_servers_run_by_a_part_of_its_id_and_replayed_from_it(
    server: tuple[str, dict[str, str], subprocess.Popen[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tui.commands.replay import fetch_runs

    url, env, _ = server
    port = url.rsplit(":", 1)[1]
    token = (tmp_path / "home" / "tokens" / f"127.0.0.1_{port}").read_text().strip()
    quick = str(post(url, "runs", {"skill_name": "slow", "input": "0.01"}, token)["run_id"])
    for _ in range(50):  # until it has finished (it takes 10 ms)
        listed = runs_listed(runtop("ls", "--from", url, "--json", env=env).stdout)
        if listed and listed[0]["status"] == "succeeded":
            break
    shown = runtop("show", quick[-8:], "--from", url, env=env)  # the end the app shows
    assert shown.returncode == 0, shown.stderr
    assert "■ run succeeded: done" in shown.stdout
    missing = runtop("cancel", "ffffffff", "--from", url, env=env)
    assert missing.returncode == 1
    assert f"no ledger for run ffffffff on {url}" in missing.stderr

    monkeypatch.setenv("RUNTOP_HOME", env["RUNTOP_HOME"])  # where its token is found
    fetched = tmp_path / "fetched"
    fetched.mkdir()
    [ledger] = asyncio.run(fetch_runs(url, None, fetched))
    assert ledger == fetched / f"{quick}.jsonl"
    events = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert events[0]["type"] == "run_started"
    assert events[-1]["type"] == "run_completed"
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
