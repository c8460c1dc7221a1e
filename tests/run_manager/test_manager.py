"""The run manager with real agents, real ledgers and real concurrency."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import threading
from pathlib import Path

import pytest

from ledger_reader import ApprovalRequest, RunStatus, ledger_lock_held, summarize_ledger
from run_manager import (
    ApprovalNotFound,
    CancelToken,
    Content,
    Manager,
    RunCanceled,
    RunFailed,
    RunNotFound,
    RunNotResumable,
    Status,
    ToolCallEvent,
    current_run_id,
)
from tests.agents import (
    Echo,
    Failing,
    Gatekeeper,
    Sleeper,
    Streamer,
    WhoAmI,
    counting_worker,
)

pytestmark = pytest.mark.timeout(30)


def ledger_lines(path: Path | None) -> list[dict[str, object]]:
    assert path is not None
    return [json.loads(line) for line in path.read_text().splitlines()]


def types_of(path: Path | None) -> list[object]:
    return [line["type"] for line in ledger_lines(path)]


async def test_a_run_has_an_id_a_result_and_a_ledger(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path / "runs") as manager:
        handle = manager.start(Echo(), "hi")
        assert handle.run_id.startswith("run_")
        first = ledger_lines(handle.info().ledger_path)[0]  # written before any work
        assert first["type"] == "run_started"
        assert await handle.result() == "HI"
        info = handle.info()
    assert info.status is Status.SUCCEEDED
    lines = ledger_lines(info.ledger_path)
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    started = lines[0]["payload"]
    assert isinstance(started, dict)
    assert started["agent"] == "echo"
    assert started["writer"] == "runtop"
    assert started["input"] == "hi"
    assert started["pid"] == os.getpid()
    assert types_of(info.ledger_path) == [
        "run_started",
        "node_enter",
        "tool_call",
        "tool_result",
        "node_exit",
        "run_completed",
    ]
    assert info.ledger_path is not None
    assert stat.S_IMODE(info.ledger_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(info.ledger_path.parent.stat().st_mode) == 0o700
    assert summarize_ledger(info.ledger_path).status == RunStatus.SUCCEEDED


async def test_the_lock_is_held_while_the_run_lives(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        agent = Sleeper()
        handle = manager.start(agent, "30")
        await agent.started.wait()
        path = handle.info().ledger_path
        assert path is not None
        assert ledger_lock_held(path) is True
        assert summarize_ledger(path).status == RunStatus.RUNNING
        handle.cancel("enough")
        await handle.wait()
        assert ledger_lock_held(path) is False
        assert summarize_ledger(path).status == RunStatus.CANCELED


async def test_cancel_twice_and_after_the_end(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(Sleeper(), "30")
        assert handle.cancel("first") is True
        assert handle.cancel("second") is False
        info = await handle.wait()
        assert info.status is Status.CANCELED
        assert handle.cancel("after") is False
        assert manager.cancel(handle.run_id) is False
        with pytest.raises(RunCanceled, match="canceled: first"):
            await handle.result()
    lines = ledger_lines(info.ledger_path)
    assert [line["type"] for line in lines].count("cancel_requested") == 1
    assert lines[-1]["payload"] == {
        "status": "cancelled",
        "error": "canceled: first",
        "reason": "user",
    }


async def test_a_cancel_without_a_reason_says_none_was_given(tmp_path: Path) -> None:
    """Not ``canceled: user``: the kind's word read as the reason in every table."""
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(Sleeper(), "30")
        assert handle.cancel() is True
        info = await handle.wait()
        with pytest.raises(RunCanceled, match=r"^canceled: no reason given$"):
            await handle.result()
    lines = ledger_lines(info.ledger_path)
    asked = [line["payload"] for line in lines if line["type"] == "cancel_requested"]
    assert asked == [{"reason": "no reason given", "source": "api"}]
    assert lines[-1]["payload"] == {
        "status": "cancelled",
        "error": "canceled: no reason given",
        "reason": "user",  # the kind stays the ledger's word
    }
    assert summarize_ledger(info.ledger_path).error == "canceled: no reason given"


async def test_unknown_ids() -> None:
    async with Manager() as manager:
        with pytest.raises(RunNotFound):
            manager.get("run_nope")
        with pytest.raises(RunNotFound):
            manager.cancel("run_nope")
        with pytest.raises(RunNotFound):
            manager.approve("run_nope", None, True)
        with pytest.raises(RunNotFound):
            manager.resume("run_nope")


async def test_failure_is_recorded() -> None:
    async with Manager() as manager:
        handle = manager.start(Failing(), "x")
        with pytest.raises(RunFailed, match="cannot do x"):
            await handle.result()
        assert handle.status is Status.FAILED


async def test_finished_runs_are_evicted_oldest_first() -> None:
    async with Manager(retained_runs=3) as manager:
        ids = []
        for number in range(5):
            handle = manager.start(Echo(), str(number))
            await handle.wait()
            ids.append(handle.run_id)
        assert [info.run_id for info in manager.list()] == ids[:1:-1]
        with pytest.raises(RunNotFound):
            manager.get(ids[0])
        assert manager.get(ids[2]).status is Status.SUCCEEDED
    async with Manager(retained_runs=0) as forgetful:
        handle = forgetful.start(Echo(), "x")
        await handle.wait()
        assert forgetful.list() == []
        assert await handle.result() == "X"  # the handle still answers


async def test_list_active_and_cancel_all() -> None:
    async with Manager() as manager:
        done = manager.start(Echo(), "a")
        await done.wait()
        agents = [Sleeper() for _ in range(3)]
        sleepers = [manager.start(agent, "30") for agent in agents]
        await started(*agents)
        assert {info.run_id for info in manager.active()} == {h.run_id for h in sleepers}
        assert len(manager.list()) == 4
        assert manager.cancel_all("closing time") == 3
        assert manager.cancel_all() == 0
        for handle in sleepers:
            assert (await handle.wait()).status is Status.CANCELED
        assert manager.active() == []


async def test_a_run_dies_with_its_caller_unless_detached(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        handles: dict[str, object] = {}

        agents = Sleeper(), Sleeper()

        async def caller() -> None:
            handles["attached"] = manager.start(agents[0], "30")
            handles["detached"] = manager.start(agents[1], "0.2", detached=True)
            await asyncio.sleep(30)  # the caller's own work: cancelled below

        task = asyncio.create_task(caller())
        await started(*agents)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        attached = handles["attached"]
        detached = handles["detached"]
        assert isinstance(attached, type(manager.get(attached.run_id)))  # type: ignore[attr-defined]
        info = await attached.wait()  # type: ignore[attr-defined]
        assert info.status is Status.CANCELED
        assert ledger_lines(info.ledger_path)[-1]["payload"]["reason"] == "parent"  # type: ignore[index]
        assert await detached.result() == "rested"  # type: ignore[attr-defined]


async def test_timeout_cancels_with_reason_timeout(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.start(Sleeper(), "30", timeout=0.05)
        info = await handle.wait()
    assert info.status is Status.CANCELED
    assert info.cancel_reason == "timeout"
    last = ledger_lines(info.ledger_path)[-1]["payload"]
    assert last == {"status": "cancelled", "error": "canceled: timeout", "reason": "timeout"}


async def test_current_run_id_and_parents() -> None:
    assert current_run_id() is None
    async with Manager() as manager:
        handle = manager.start(WhoAmI(), "")
        assert await handle.result() == handle.run_id

        class Parent:
            name = "parent"

            async def run(self, input: str) -> str:
                child = manager.start(WhoAmI(), "")
                await child.wait()
                return child.info().parent_run_id or ""

        parent = manager.start(Parent(), "")
        assert await parent.result() == parent.run_id


async def test_streamed_run(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        handle = manager.stream(Streamer(), "q")
        events = handle.events()
        assert events is not None
        assert await handle.result() == "Hello, world"
        seen = [event async for event in events]
        assert seen[1] == Content("Hello, ")
        assert isinstance(seen[2], ToolCallEvent)
        kinds = types_of(handle.info().ledger_path)
    assert kinds == [
        "run_started",
        "node_enter",  # llm:default#1
        "reasoning_chunk",
        "llm_chunk",
        "node_exit",  # the model call ends where the tool call starts
        "node_enter",
        "tool_call",
        "tool_result",
        "node_exit",
        "node_enter",
        "llm_chunk",
        "llm_call",
        "node_exit",
        "run_completed",
    ]
    plain = Manager()
    handle = plain.start(Echo(), "x")
    assert handle.events() is None
    await handle.wait()


async def test_stream_errors_fail_the_run() -> None:
    async with Manager() as manager:
        failing = manager.stream(Streamer(), "fail")
        with pytest.raises(RunFailed, match="the model refused"):
            await failing.result()
        not_streaming = manager.stream(Echo(), "x")
        with pytest.raises(RunFailed, match="cannot stream"):
            await not_streaming.result()


async def test_synchronous_agent_runs_in_a_thread_and_stops_at_its_token(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        counted = manager.start(counting_worker, "3")
        assert await counted.result() == "counted 3"
        assert types_of(counted.info().ledger_path).count("tool_call") == 3

        worker = StubbornWorker()
        stubborn = manager.start(worker, "")
        await asyncio.to_thread(worker.entered.wait, 10)
        assert stubborn.cancel("stop") is True
        assert await asyncio.to_thread(worker.told.wait, 10)  # the token says so in its thread
        # The thread goes on with what it does, cancel or not: cancelling, not canceled.
        info = stubborn.info()
        assert info.status is Status.RUNNING
        assert info.cancel_requested
        assert types_of(info.ledger_path)[-1] == "cancel_requested"
        worker.release.set()
        assert (await stubborn.wait()).status is Status.CANCELED
        assert types_of(info.ledger_path)[-1] == "run_completed"


async def started(*agents: Sleeper) -> None:
    """Wait until each agent's run is under way (inside the agent's code)."""
    async with asyncio.timeout(10):
        for agent in agents:
            await agent.started.wait()


class StubbornWorker:
    """A synchronous agent busy with something a cancel cannot interrupt, until released:
    it sees the cancel on its token at once, but stops only when the test lets it."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.told = threading.Event()
        self.release = threading.Event()

    def __call__(self, input: str, token: CancelToken) -> str:
        self.entered.set()
        if token.wait(10):
            self.told.set()
        self.release.wait(10)
        token.raise_if_cancelled()
        return "finished"


async def approval_requested(manager: Manager, run_id: str) -> str:
    """Wait, through the hub, for the run's approval request; its id."""
    async for item in manager.hub.subscribe(run_id):
        if isinstance(item, ApprovalRequest):
            assert item.payload.approval_id is not None
            return item.payload.approval_id
    raise AssertionError("the run ended without asking")


async def test_approval_gate(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        yes = manager.start(Gatekeeper(), "deploy")
        await approval_requested(manager, yes.run_id)
        path = yes.info().ledger_path
        assert summarize_ledger(path).status == RunStatus.AWAITING_APPROVAL  # type: ignore[arg-type]
        with pytest.raises(ApprovalNotFound):
            manager.approve(yes.run_id, "ap_wrong", True)
        manager.approve(yes.run_id, None, True, "looks fine", source="tui")
        assert await yes.result() == "approved"
        response = next(line for line in ledger_lines(path) if line["type"] == "approval_response")
        payload = response["payload"]
        assert isinstance(payload, dict)
        assert payload["approval_id"].startswith("ap_")
        assert (payload["approved"], payload["reason"], payload["source"]) == (
            True,
            "looks fine",
            "tui",
        )
        no = manager.start(Gatekeeper(), "drop the table")
        await approval_requested(manager, no.run_id)
        manager.approve(no.run_id, no.info().pending_approvals[0], False, "no way")
        assert await no.result() == "denied: no way"


async def test_resume_a_retained_run_and_one_from_disk(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        first = manager.start(Echo(), "again")
        await first.wait()
        again = manager.resume(first.run_id)
        assert await again.result() == "AGAIN"
        assert again.info().resumed_from == first.run_id
        live = manager.start(Sleeper(), "30")
        with pytest.raises(RunNotResumable, match="still running"):
            manager.resume(live.run_id)
        live.cancel()
    # A new process knows the run only from its ledger.
    async with Manager(ledger_dir=tmp_path, agents=[Echo()]) as later:
        revived = later.resume(first.run_id)
        assert await revived.result() == "AGAIN"
        started = ledger_lines(revived.info().ledger_path)[0]["payload"]
        assert started["resumed_from"] == first.run_id  # type: ignore[index]
    async with Manager(ledger_dir=tmp_path) as stranger:
        with pytest.raises(RunNotResumable, match="not registered"):
            stranger.resume(first.run_id)


async def test_a_streamed_run_resumes_streamed(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path, agents=[Streamer()]) as manager:
        first = manager.stream(Streamer(), "q")
        await first.wait()
        again = manager.resume(first.run_id)
        assert again.events() is not None
        assert await again.result() == "Hello, world"
        assert "llm_chunk" in types_of(again.info().ledger_path)


# -- what a model call was sent and answered ------------------------------------------------


class Asker:
    """A plain agent asking its model through ``model_call``, its answer streamed."""

    name = "asker"

    async def run(self, input: str) -> str:
        from run_manager import model_call

        asked = [{"role": "user", "content": input}]
        async with model_call("m-1", provider="p", messages=asked) as model:
            await asyncio.sleep(0.05)
            model.chunk("Forty-")
            model.chunk("two.")
            model.usage(prompt_tokens=5, output_tokens=2)
        return "Forty-two."


def llm_calls(directory: Path) -> list[dict[str, object]]:
    (ledger,) = directory.glob("*.jsonl")
    events = [json.loads(line) for line in ledger.read_text().splitlines()]
    return [event["payload"] for event in events if event["type"] == "llm_call"]


async def test_a_model_call_records_what_it_was_sent_and_what_it_streamed(
    tmp_path: Path,
) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        assert await manager.start(Asker(), "What is six times seven?").result() == "Forty-two."
    (call,) = llm_calls(tmp_path)
    assert call["messages"] == [{"role": "user", "content": "What is six times seven?"}]
    assert call["response"] == [
        {"role": "assistant", "content": [{"type": "text", "text": "Forty-two."}]}
    ]
    assert isinstance(call["first_token_micros"], int)
    assert call["first_token_micros"] >= 50_000


@pytest.mark.parametrize("switch", ["argument", "environment"])
async def test_record_content_off_leaves_the_conversation_out(
    tmp_path: Path, switch: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui.demo import Researcher

    if switch == "environment":
        monkeypatch.setenv("RUNTOP_RECORD_CONTENT", "0")
    async with Manager(ledger_dir=tmp_path, record_content=switch != "argument") as manager:
        await manager.start(Asker(), "What is six times seven?").result()
        await manager.stream(Researcher(0.01), "inotify limits").result()
    for ledger in tmp_path.glob("*.jsonl"):
        text = ledger.read_text()
        assert '"llm_call"' in text
        assert '"messages"' not in text
        assert '"response"' not in text
        assert "six times seven" not in text.split('"llm_call"', 1)[1]


async def test_the_demo_researcher_says_what_each_model_call_was_sent(tmp_path: Path) -> None:
    from ledger_reader.messages import TOOL_RESULT, conversation
    from tui.demo import Researcher

    async with Manager(ledger_dir=tmp_path) as manager:
        await manager.stream(Researcher(0.01), "inotify limits").result()
    first, second = llm_calls(tmp_path)
    assert first["model"] == second["model"] == "claude-sonnet"
    assert "inotify limits" in conversation(first["messages"])[-1].text
    results = [
        part.name
        for message in conversation(second["messages"])
        for part in message.parts
        if part.kind == TOOL_RESULT
    ]
    assert results == ["web_search", "read_page"]
    assert "inotify" in conversation(second["response"])[0].text.lower()


@pytest.mark.parametrize("shape", ["many messages", "one long string"])
async def test_a_long_conversation_keeps_its_newest_messages_under_the_cap(
    tmp_path: Path, shape: str
) -> None:
    from run_manager import model_call

    if shape == "many messages":
        sent: object = [{"role": "user", "content": f"{n} " + "x" * 2_000} for n in range(100)]
    else:
        sent = "y" * 300_000

    class Talker:
        name = "talker"

        async def run(self, input: str) -> str:
            async with model_call("m-1", messages=sent) as model:
                model.response = [{"role": "assistant", "content": "z" * 300_000}]
            return "ok"

    async with Manager(ledger_dir=tmp_path) as manager:
        await manager.start(Talker(), "talk").result()
    (ledger,) = tmp_path.glob("*.jsonl")
    line = next(text for text in ledger.read_text().splitlines() if '"llm_call"' in text)
    assert len(line.encode()) < 3 * 66 * 1024  # messages and response capped, each
    (call,) = llm_calls(tmp_path)
    assert call["truncated"] is True
    if shape == "many messages":
        assert isinstance(call["messages"], list)
        assert call["messages"][-1]["content"].startswith("99 ")
        assert 10 < len(call["messages"]) < 100
