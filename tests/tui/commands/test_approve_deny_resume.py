"""``runtop approve``, ``deny`` and ``resume``: through a ledger directory's control files
and through a server's attach API, refused as the app refuses, who answered recorded.

Real run managers follow the directory, a real ``runtop serve`` listens on loopback, and
each command runs as its own process, as a user types it.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ledger_reader import ApprovalRequest, RunStarted
from run_manager import Manager
from tests.agents import Gatekeeper
from tests.conftest import REPO, runs_listed

pytestmark = pytest.mark.timeout(60)


def runtop(*args: str, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "RUNTOP_HOME": str(home), **env}
    environ.pop("RUNTOP_TOKEN", None)
    if "RUNTOP_USER" not in env:
        environ.pop("RUNTOP_USER", None)
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        capture_output=True,
        text=True,
        env=environ,
        cwd=REPO,
        timeout=30,
        check=False,
    )


def ledger(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def waiting(manager: Manager, input: str) -> str:
    """A gatekeeper's run, once it waits on its question."""
    handle = manager.start(Gatekeeper(), input)
    async for item in manager.hub.subscribe(handle.run_id):
        if isinstance(item, ApprovalRequest):
            return handle.run_id
    raise AssertionError("the run ended without asking")


async def test_approve_and_deny_by_control_file_record_who_answered(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    async with Manager(ledger_dir=runs) as manager:
        first, second = await waiting(manager, "ship"), await waiting(manager, "drop")
        approved = await asyncio.to_thread(
            runtop, "approve", first[-8:], "--from", str(runs), "--user", "ada", home=tmp_path
        )
        assert approved.returncode == 0, approved.stderr
        assert approved.stdout.startswith(f"approved: {first}: may I ship?"), approved.stdout
        denied = await asyncio.to_thread(
            runtop, "deny", second, "--from", str(runs), "--reason", "not today",
            home=tmp_path, RUNTOP_USER="grace",
        )  # fmt: skip
        assert denied.returncode == 0, denied.stderr
        assert await asyncio.wait_for(manager.get(first).result(), 30) == "approved"
        assert await asyncio.wait_for(manager.get(second).result(), 30) == "denied: not today"
    answers = {}
    for run_id in (first, second):
        [answer] = [e for e in ledger(runs / f"{run_id}.jsonl") if e["type"] == "approval_response"]
        answers[run_id] = answer["payload"]
    assert answers[first]["approved"] is True
    assert (answers[first]["answered_by"], answers[first]["source"]) == ("ada", "runtop")
    assert answers[second]["approved"] is False
    assert (answers[second]["answered_by"], answers[second]["reason"]) == ("grace", "not today")
    assert not list((runs / ".control").iterdir())  # each request taken and removed


async def test_resume_by_control_file_starts_a_new_run_from_the_recorded_input(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    async with Manager(ledger_dir=runs, agents=[Gatekeeper()]) as manager:
        run_id = await waiting(manager, "ship")
        manager.approve(run_id, None, approved=True)
        await manager.get(run_id).result()
        done = await asyncio.to_thread(runtop, "resume", run_id, "--from", str(runs), home=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"resume requested: {run_id}"), done.stdout
        async for item in manager.hub.subscribe():
            if isinstance(item, RunStarted) and item.payload.resumed_from == run_id:
                assert item.payload.input == "ship"
                break


async def app_refusal(fixtures: Path, run_id: str, action: str) -> str | None:
    """What the app says beside a greyed key on ``run_id``, read from a directory."""
    from inspector import LedgerDirectorySource, RunKey, RunStore

    async with RunStore() as store:
        store.add_source(LedgerDirectorySource(fixtures, name="dir"))
        changes = store.changes()
        while store.get(RunKey("dir", run_id)) is None:
            await anext(changes)
        return store.refusal(RunKey("dir", run_id), action)  # type: ignore[arg-type]


@pytest.mark.parametrize(("command", "action"), [("approve", "approve"), ("deny", "approve"),
                                                 ("resume", "resume")])  # fmt: skip
def test_every_run_the_app_refuses_is_refused_in_the_apps_words(
    tmp_path: Path, fixtures: Path, command: str, action: str
) -> None:
    """Not waiting, stale, another writer's: the words beside the app's greyed key, and no
    control file; a run the app would act on (a runtop writer's ended run, resumed) gets
    its request."""
    run_ids = sorted(path.stem for path in fixtures.glob("*.jsonl"))
    allowed = []
    for run_id in run_ids:
        said = asyncio.run(app_refusal(fixtures, run_id, action))
        answer = runtop(command, run_id[-8:], "--from", str(fixtures), home=tmp_path)
        if said is None:
            assert answer.returncode == 0, answer.stderr
            allowed.append(f"{run_id}.{action}")
            continue
        assert answer.returncode == 1, answer.stdout
        assert answer.stderr.strip() == f"runtop: cannot {command} {run_id}: {said}"
    assert len(allowed) < len(run_ids)
    control = fixtures / ".control"
    written = sorted(path.name for path in control.iterdir()) if control.exists() else []
    assert written == allowed


AGENTS = """
from tests.agents import Gatekeeper


def agents():
    return [Gatekeeper()]
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    (tmp_path / "served_agents.py").write_text(AGENTS)
    env = {
        **os.environ,
        "RUNTOP_HOME": str(tmp_path / "home"),
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}",
    }
    env.pop("RUNTOP_TOKEN", None)
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0"]
    command += ["--agents", "served_agents:agents", "--ledger-dir", str(tmp_path / "runs")]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith("runtop serve: http://127.0.0.1:"), first
    try:
        yield first.split()[2].rstrip(","), env
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(10)
        process.stderr.close()


def listed(url: str, home: Path) -> dict[str, dict[str, Any]]:
    answer = runtop("ls", url, "--json", home=home)
    assert answer.returncode == 0, answer.stderr
    return {run["run_id"]: run for run in runs_listed(answer.stdout)}


def started(url: str, home: Path, input: str) -> str:
    """A gatekeeper's run started over HTTP, once it waits on its question."""
    port = url.rsplit(":", 1)[1]
    token = (home / "tokens" / f"127.0.0.1_{port}").read_text().strip()
    request = urllib.request.Request(
        f"{url}/api/agent/runs",
        data=json.dumps({"skill_name": "gatekeeper", "input": input}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        run_id = str(json.load(response)["run_id"])
    while listed(url, home)[run_id]["status"] != "awaiting_approval":
        pass
    return run_id


def test_approve_deny_and_resume_over_http(
    server: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, _ = server
    home = tmp_path / "home"
    first, second = started(url, home, "ship"), started(url, home, "drop")

    approved = runtop("approve", first[-8:], "--from", url, "--user", "ada", home=home)
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.startswith(f"approved: {first}: may I ship?"), approved.stdout
    denied = runtop("deny", second, "--from", url, "--reason", "no", home=home, RUNTOP_USER="bo")
    assert denied.returncode == 0, denied.stderr
    while {listed(url, home)[r]["status"] for r in (first, second)} != {"succeeded"}:
        pass

    runs = tmp_path / "runs"
    answers = {
        run_id: next(
            e for e in ledger(runs / f"{run_id}.jsonl") if e["type"] == "approval_response"
        )
        for run_id in (first, second)
    }
    assert answers[first]["payload"]["answered_by"] == "ada"
    assert (answers[second]["payload"]["answered_by"], answers[second]["payload"]["reason"]) == (
        "bo",
        "no",
    )
    # The same refusal, in the app's words, as over a directory: it waits on nothing now.
    again = runtop("approve", first, "--from", url, home=home)
    assert again.returncode == 1
    assert again.stderr.strip() == (
        f"runtop: cannot approve {first}: the run is not waiting on an approval"
    )

    resumed = runtop("resume", second[-8:], "--from", url, home=home)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith(f"resumed: {second} as run_"), resumed.stdout
    new = resumed.stdout.split(" as ")[1].strip()
    assert listed(url, home)[new]["status"] in {"running", "awaiting_approval"}


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("command", ["approve", "deny", "resume", "stats"])
def test_a_place_typed_wrong_is_said_in_words_with_a_non_zero_exit(
    server: tuple[str, dict[str, str]], tmp_path: Path, command: str
) -> None:
    """Each says what was wrong, once, and exits 1: ``stats`` went on to say ``no model
    calls found``; a server's address with a path said only ``Not Found``; a ``--from``
    folder that is not there said only that no ledger was found in it."""
    url, _ = server
    home = tmp_path / "home"
    run = [] if command == "stats" else ["7b3d8a60"]
    where = [] if command == "stats" else ["--from"]
    cases = {
        f"http://127.0.0.1:{closed_port()}": "cannot be reached: connection refused",
        f"{url}/runs": f"{url}/runs answered HTTP 404 Not Found to /api/agent/runs (give the "
        "server's own address, http://HOST:PORT, without a path)",
        str(tmp_path / "rnus"): f"{tmp_path / 'rnus'}: no such directory"
        if command != "stats"
        else f"{tmp_path / 'rnus'}: no such file or directory",
    }
    if command != "stats":
        cases[url] = f"no ledger for run 7b3d8a60 on {url}"
    for place, said in cases.items():
        answer = runtop(command, *run, *where, place, home=home)
        assert answer.returncode == 1, answer
        (line,) = answer.stderr.splitlines()
        assert said in line, line
        assert answer.stdout == ""
