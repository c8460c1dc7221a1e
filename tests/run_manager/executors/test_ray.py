"""Runs executed on Ray workers of a local cluster: same handle, ledger, cancel and approvals."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from ledger_reader import ApprovalRequest, RunPlaced, RunStatus, ToolCall, summarize_ledger
from run_manager import Manager, RunCanceled, RunFailed, Status
from run_manager.executors.ray import BuiltInWorker, RayExecutor
from run_manager.manager import CLOSE_MARGIN
from tests.agents import Echo, Failing, Gatekeeper, Streamer, counting_worker
from tests.conftest import REPO
from tests.ray_agents import Chatty, Holder, Stubborn, WorkerPid

# One xdist group: the tests share one local cluster, started once in one worker.
pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.usefixtures("ray_cluster"),
    pytest.mark.xdist_group("ray"),
]


def ledger_lines(path: Path | None) -> list[dict[str, Any]]:
    assert path is not None
    return [json.loads(line) for line in path.read_text().splitlines()]


def types_of(path: Path | None) -> list[str]:
    return [line["type"] for line in ledger_lines(path)]


async def ready_executor() -> RayExecutor:
    """An executor whose hosts are up, so that a test's clock starts with its run."""
    executor = RayExecutor()
    assert len(await executor.placements()) == executor.hosts
    return executor


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[Manager]:
    async with Manager(ledger_dir=tmp_path / "runs", executor=await ready_executor()) as manager:
        yield manager


async def placed(manager: Manager, run_id: str) -> dict[str, Any]:
    """Wait, through the hub, for the run to land on a worker; where it landed."""
    async for item in manager.hub.subscribe(run_id):
        if isinstance(item, RunPlaced):
            return {name: getattr(item.payload, name) for name in ("pid", "node_id", "worker_id")}
    raise AssertionError("the run ended before it was placed")


async def tool_called(manager: Manager, run_id: str) -> None:
    async for item in manager.hub.subscribe(run_id):
        if isinstance(item, ToolCall):
            return
    raise AssertionError("the run ended without calling a tool")


async def test_runs_execute_in_workers_and_write_the_same_ledger(
    manager: Manager, tmp_path: Path
) -> None:
    handle = manager.start(WorkerPid(), "who")
    worker_pid = int(await handle.result())
    assert worker_pid != os.getpid()
    lines = ledger_lines(handle.info().ledger_path)
    started, where = lines[0], lines[1]
    assert started["payload"]["executor"] == "ray"
    assert started["payload"]["pid"] == os.getpid()  # the manager wrote it
    assert where["type"] == "run_placed"
    assert where["payload"]["pid"] == worker_pid
    assert where["payload"]["node_id"]
    assert where["payload"]["worker_id"]
    tool = next(line for line in lines if line["type"] == "tool_result")
    assert tool["payload"]["output"] == str(worker_pid)
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))

    # The same agent in process writes the same events, less the placement.
    async with Manager(ledger_dir=tmp_path / "local") as local:
        here = local.start(Echo(), "x")
        await here.result()
        there = manager.start(Echo(), "x")
        assert await there.result() == "X"
        remote_types = types_of(there.info().ledger_path)
        assert remote_types.pop(1) == "run_placed"
        assert remote_types == types_of(here.info().ledger_path)


async def test_streamed_text_and_tool_calls_are_recorded_in_order(
    manager: Manager, tmp_path: Path
) -> None:
    handle = manager.stream(Streamer(), "q")
    assert await handle.result() == "Hello, world"
    events = handle.events()
    assert events is not None
    seen = [type(event).__name__ async for event in events]
    assert seen == ["Thinking", "Content", "ToolCallEvent", "ToolCallEvent", "Content", "Complete"]
    async with Manager(ledger_dir=tmp_path / "local") as local:
        here = local.stream(Streamer(), "q")
        await here.result()
        remote_types = types_of(handle.info().ledger_path)
        assert remote_types.pop(1) == "run_placed"
        assert remote_types == types_of(here.info().ledger_path)

    failing = manager.stream(Streamer(), "fail")
    with pytest.raises(RunFailed, match="the model refused"):
        await failing.result()

    many = manager.start(Chatty(), "3000")
    assert await many.result() == "done"
    lines = ledger_lines(many.info().ledger_path)
    chunks = [line["payload"] for line in lines if line["type"] == "llm_chunk"]
    assert [chunk["delta"] for chunk in chunks] == [f"chunk {n} " for n in range(3000)]
    assert [chunk["index"] for chunk in chunks] == list(range(3000))
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))


async def test_a_failing_agent_fails_the_run_with_its_message(manager: Manager) -> None:
    handle = manager.start(Failing(), "the impossible")
    with pytest.raises(RunFailed, match="cannot do the impossible"):
        await handle.result()
    assert types_of(handle.info().ledger_path)[-2:] == ["error", "run_completed"]


async def test_a_synchronous_agent_records_from_its_thread_in_the_worker(
    manager: Manager,
) -> None:
    handle = manager.start(counting_worker, "3")
    assert await handle.result() == "counted 3"
    types = types_of(handle.info().ledger_path)
    assert types.count("tool_call") == 3
    assert types.count("tool_result") == 3


async def test_cancel_reaches_the_coroutine_in_its_worker(manager: Manager, tmp_path: Path) -> None:
    marker = tmp_path / "holder"
    handle = manager.start(Holder(), str(marker))
    await tool_called(manager, handle.run_id)
    assert handle.cancel("enough")
    with pytest.raises(RunCanceled, match="enough"):
        await handle.result()
    pid, stopped_by = marker.read_text().split(" ", 1)
    assert int(pid) != os.getpid()
    assert stopped_by == "CancelledError('enough',)"
    lines = ledger_lines(handle.info().ledger_path)
    assert [line["type"] for line in lines][-4:] == [
        "cancel_requested",
        "tool_result",  # recorded by the agent's tool_call block as it unwound, in the worker
        "node_exit",
        "run_completed",
    ]
    assert lines[-3]["payload"]["is_error"] is True
    assert lines[-1]["payload"] == {
        "status": "cancelled",
        "error": "canceled: enough",
        "reason": "user",
    }


async def test_a_timeout_cancels_the_worker_coroutine(manager: Manager, tmp_path: Path) -> None:
    marker = tmp_path / "holder"
    # Long enough for the run to reach its worker on a busy machine (a cancel that
    # arrives first stops it before it starts, and then no finally runs).
    handle = manager.start(Holder(), str(marker), timeout=2.0)
    with pytest.raises(RunCanceled, match="timeout"):
        await handle.result()
    assert "CancelledError('timeout',)" in marker.read_text()
    assert ledger_lines(handle.info().ledger_path)[-1]["payload"]["reason"] == "timeout"


async def test_a_worker_killed_mid_run_fails_the_run_within_seconds(
    manager: Manager, tmp_path: Path
) -> None:
    handle = manager.start(Holder(), str(tmp_path / "never"))
    where = await placed(manager, handle.run_id)
    await tool_called(manager, handle.run_id)
    os.kill(where["pid"], signal.SIGKILL)
    killed = time.monotonic()
    info = await asyncio.wait_for(handle.wait(), 15)
    assert time.monotonic() - killed < 10
    assert info.status is Status.FAILED
    assert info.error is not None
    assert "worker running this run died" in info.error
    assert f"pid {where['pid']}" in info.error
    assert summarize_ledger(info.ledger_path).status == RunStatus.FAILED  # type: ignore[arg-type]
    # The host comes back for later runs.
    again = manager.start(WorkerPid(), "again")
    assert int(await asyncio.wait_for(again.result(), 30)) != where["pid"]


async def test_close_cancels_live_runs_within_its_grace(tmp_path: Path) -> None:
    manager = Manager(ledger_dir=tmp_path / "runs", executor=await ready_executor())
    markers = [tmp_path / f"holder{n}" for n in range(3)]
    handles = [manager.start(Holder(), str(marker), detached=True) for marker in markers]
    for handle in handles:
        await tool_called(manager, handle.run_id)
    began = time.monotonic()
    await manager.close(grace=5)
    assert time.monotonic() - began < 5
    for handle, marker in zip(handles, markers, strict=True):
        assert handle.status is Status.CANCELED
        assert "CancelledError" in marker.read_text()
        assert ledger_lines(handle.info().ledger_path)[-1]["payload"]["reason"] == "shutdown"


async def test_approvals_cross_the_process_boundary(manager: Manager) -> None:
    yes = manager.start(Gatekeeper(), "deploy")
    no = manager.start(Gatekeeper(), "drop the table")
    for handle in (yes, no):
        async for item in manager.hub.subscribe(handle.run_id):
            if isinstance(item, ApprovalRequest):
                break
    assert yes.info().pending_approvals
    path = yes.info().ledger_path
    assert summarize_ledger(path).status == RunStatus.AWAITING_APPROVAL  # type: ignore[arg-type]
    manager.approve(yes.run_id, None, True, "looks fine", source="tui")
    manager.approve(no.run_id, None, False, "not today", source="tui")
    assert await yes.result() == "approved"
    assert await no.result() == "denied: not today"
    response = next(line for line in ledger_lines(path) if line["type"] == "approval_response")
    assert response["payload"]["source"] == "tui"
    assert response["payload"]["approved"] is True


async def test_cancel_while_waiting_on_an_approval(manager: Manager) -> None:
    handle = manager.start(Gatekeeper(), "deploy")
    async for item in manager.hub.subscribe(handle.run_id):
        if isinstance(item, ApprovalRequest):
            break
    handle.cancel("changed my mind")
    with pytest.raises(RunCanceled, match="changed my mind"):
        await handle.result()
    assert handle.info().pending_approvals == ()


async def test_a_framework_agent_built_in_its_worker_records_as_in_process(
    manager: Manager, tmp_path: Path
) -> None:
    """A PydanticAI agent (offline TestModel) cannot be pickled: it is built in its worker."""
    pytest.importorskip("pydantic_ai")
    from tests.run_manager.adapters.test_pydantic_ai import weather_agent

    agent = BuiltInWorker(weather_agent, name="weather")
    there = manager.start(agent, "What's the weather in Paris?")
    output = await there.result()
    assert json.loads(output) == {"get_weather": "sunny in a"}
    async with Manager(ledger_dir=tmp_path / "local") as local:
        here = local.start(agent, "What's the weather in Paris?")
        assert await here.result() == output
    remote_types = types_of(there.info().ledger_path)
    assert remote_types.pop(1) == "run_placed"
    assert remote_types == types_of(here.info().ledger_path)
    lines = ledger_lines(there.info().ledger_path)
    assert lines[0]["payload"]["agent"] == "weather"
    tool = next(line for line in lines if line["type"] == "tool_call")
    assert tool["payload"]["arguments"] == {"city": "a"}


async def test_an_agent_the_workers_cannot_import_fails_its_run_saying_why(
    manager: Manager, tmp_path: Path
) -> None:
    (tmp_path / "only_here.py").write_text(
        "class OnlyHere:\n    name = 'only_here'\n\n    async def run(self, input):\n"
        "        return input\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        from only_here import OnlyHere  # type: ignore[import-not-found]

        handle = manager.start(OnlyHere(), "x")
        info = await handle.wait()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("only_here", None)
    assert info.status is Status.FAILED
    assert info.error is not None
    assert "No module named 'only_here'" in info.error
    assert "\x1b" not in info.error


async def test_close_returns_within_its_grace_when_an_agent_swallows_cancel(
    tmp_path: Path,
) -> None:
    manager = Manager(ledger_dir=tmp_path / "runs", executor=await ready_executor())
    handle = manager.start(Stubborn(), "x", detached=True)
    where = await placed(manager, handle.run_id)
    began = time.monotonic()
    closed = await manager.close(grace=1)
    assert time.monotonic() - began < 1 + CLOSE_MARGIN + 1
    assert closed.left == (handle.run_id,)
    assert handle.status is Status.CANCELED
    assert ledger_lines(handle.info().ledger_path)[-1]["payload"]["reason"] == "shutdown"
    # Closing the executor stopped its hosts: the stubborn agent's process is gone.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(where["pid"], 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError(f"the host process {where['pid']} outlived close()")


@contextlib.contextmanager
def serving_on_ray(tmp_path: Path, *ray: str) -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    """``runtop serve --ray [ADDRESS]`` in its own process, once it listens: (process, URL,
    token). Its output up to then must say the runs execute on Ray."""
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    env.pop("RUNTOP_TOKEN", None)
    env.pop("RAY_ADDRESS", None)
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0", "--ray", *ray]
    command += ["--agents", "tests.ray_agents:serve_agents", "--ledger-dir", str(tmp_path / "runs")]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    assert process.stderr is not None
    try:
        said = []
        for line in process.stderr:
            said.append(line)
            if line.startswith("runtop serve: http://"):
                break
        assert any("runs execute on Ray, 2 hosts" in line for line in said), said
        url = said[-1].split()[2].rstrip(",")
        token = (tmp_path / "home" / "tokens" / f"127.0.0.1_{url.rsplit(':', 1)[1]}").read_text()
        yield process, url, token.strip()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        process.stderr.close()


def test_serve_with_ray_runs_and_cancels_on_the_cluster(tmp_path: Path) -> None:
    """``runtop serve --ray ADDRESS``: started over HTTP, executed on a worker, cancelled by URL."""
    import ray

    with serving_on_ray(tmp_path, ray.get_runtime_context().gcs_address) as (process, url, token):
        marker = tmp_path / "holder"
        quick = post(url, "runs", {"skill_name": "worker_pid", "input": "x"}, token)
        held = post(url, "runs", {"skill_name": "holder", "input": str(marker)}, token)
        runs = tmp_path / "runs"
        lines = wait_for_lines(runs / f"{quick['run_id']}.jsonl", "run_completed")
        assert lines[0]["payload"]["executor"] == "ray"
        assert lines[0]["payload"]["pid"] == process.pid
        assert lines[1]["payload"]["pid"] not in (process.pid, os.getpid())
        assert lines[-1]["payload"]["output"] == str(lines[1]["payload"]["pid"])
        wait_for_lines(runs / f"{held['run_id']}.jsonl", "tool_call")
        env = {**os.environ, "RUNTOP_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
        canceled = subprocess.run(
            [sys.executable, "-m", "tui.cli", "cancel", str(held["run_id"]), "--from", url],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=30,
            check=False,
        )
        assert canceled.returncode == 0, canceled.stderr
        last = wait_for_lines(runs / f"{held['run_id']}.jsonl", "run_completed")[-1]
        assert last["payload"]["status"] == "cancelled"
        assert "CancelledError" in marker.read_text()
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0


@pytest.mark.timeout(150)
def test_serve_with_ray_and_no_address_starts_a_cluster_that_stays_up(tmp_path: Path) -> None:
    """``runtop serve --ray``: a local cluster of its own, alive until the server stops.

    Ray ties a local cluster's processes to the thread that started it; started from
    a thread that ended, they were killed at once: the server hung, then Ray ended it
    (exit 1, 'Failed to connect to GCS within 60 seconds') before it ever listened.
    """
    with serving_on_ray(tmp_path) as (process, url, token):
        time.sleep(1)  # the thread that connected has long ended
        ran = post(url, "runs", {"skill_name": "worker_pid", "input": "x"}, token)
        lines = wait_for_lines(tmp_path / "runs" / f"{ran['run_id']}.jsonl", "run_completed")
        assert lines[-1]["payload"]["status"] == "ok"
        assert lines[-1]["payload"]["output"] == str(lines[1]["payload"]["pid"])
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
        assert process.stderr is not None
        said = process.stderr.read()
        assert "runtop serve: stopped" in said
        assert "Traceback" not in said, said
        assert "Exception in thread" not in said, said


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


def wait_for_lines(path: Path, kind: str, seconds: float = 30) -> list[dict[str, Any]]:
    """The ledger's lines once one of type ``kind`` is there (a file another process writes)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            lines = ledger_lines(path)
            if any(line["type"] == kind for line in lines):
                return lines
        time.sleep(0.05)
    raise AssertionError(f"no {kind} in {path} after {seconds} s")


def test_a_cluster_that_does_not_answer_fails_runs_and_lets_the_process_exit(
    tmp_path: Path,
) -> None:
    """``ray.init`` keeps trying a dead address for minutes: runs fail after the timeout."""
    probe = textwrap.dedent(
        f"""
        import asyncio
        from run_manager import Manager
        from run_manager.executors.ray import RayExecutor
        from tests.ray_agents import WorkerPid

        async def main():
            executor = RayExecutor("127.0.0.1:9", connect_timeout=1)
            async with Manager(ledger_dir={str(tmp_path)!r}, executor=executor) as manager:
                info = await manager.start(WorkerPid(), "x").wait()
                print(info.status.value, info.error)

        asyncio.run(main())
        """
    )
    began = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=50,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "failed no answer from Ray at 127.0.0.1:9 within 1 s"
    assert time.monotonic() - began < 30
