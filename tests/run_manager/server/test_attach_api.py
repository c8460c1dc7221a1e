"""The attach API served for real on loopback, asked with a real HTTP client."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from ledger_reader import RunStatus
from ledger_reader.events import ErrorEvent, ErrorPayload
from run_manager import Manager
from run_manager.server.attach import API_PREFIX, AttachServer
from run_manager.server.frame_ring import FrameRing
from tests.agents import Chatty, Echo, Gatekeeper, Sleeper, Stepper
from tests.run_manager.test_manager import approval_requested

pytestmark = pytest.mark.timeout(30)

TOKEN = "s3cret-token"


@dataclass
class Served:
    url: str
    manager: Manager
    server: AttachServer
    session: aiohttp.ClientSession
    runner: web.AppRunner

    def api(self, path: str) -> str:
        return f"{self.url}{API_PREFIX}{path}"

    async def get(self, path: str, **kwargs: Any) -> tuple[int, Any]:
        async with self.session.get(self.api(path), **kwargs) as response:
            return response.status, await response.json()

    async def post(self, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Any]:
        async with self.session.post(self.api(path), json=body, **kwargs) as response:
            return response.status, await response.json()


@asynccontextmanager
async def served(
    tmp_path: Path, *, read_only: bool = False, **options: Any
) -> AsyncIterator[Served]:
    manager = Manager(ledger_dir=tmp_path / "runs", agents=[Echo(), Sleeper(), Gatekeeper()])
    server = AttachServer(manager, token=TOKEN, read_only=read_only, **options)
    root = web.Application()
    root.add_subapp(API_PREFIX, server.app)
    runner = web.AppRunner(root, access_log=None, shutdown_timeout=2)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with aiohttp.ClientSession(headers=headers) as session:
        try:
            yield Served(f"http://127.0.0.1:{port}", manager, server, session, runner)
        finally:
            await runner.cleanup()
            await manager.close(grace=2)


async def sse_frames(
    response: aiohttp.ClientResponse, count: int | None = None
) -> list[dict[str, str]]:
    """Read SSE frames (``event``, ``id``, ``data``) until ``count`` or the end of the stream."""
    frames: list[dict[str, str]] = []
    frame: dict[str, str] = {}
    async for raw in response.content:
        line = raw.decode().rstrip("\n")
        if not line:
            if frame:
                frames.append(frame)
                frame = {}
                if count is not None and len(frames) >= count:
                    break
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(": ")
        frame[field] = value
    return frames


def events_of(frames: list[dict[str, str]]) -> list[dict[str, Any]]:
    return [json.loads(f["data"]) for f in frames if "event" not in f]


async def test_every_endpoint_wants_the_token(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        handle = s.manager.start(Echo(), "x")
        await handle.wait()
        endpoints = [
            ("GET", "runs"),
            ("GET", f"runs/{handle.run_id}"),
            ("GET", f"runs/{handle.run_id}/events"),
            ("GET", "runs/events/stream"),
            ("POST", "runs"),
            ("POST", f"runs/{handle.run_id}/cancel"),
            ("POST", f"runs/{handle.run_id}/resume"),
            ("POST", f"runs/{handle.run_id}/approve"),
        ]
        async with aiohttp.ClientSession() as bare:
            for method, path in endpoints:
                for headers, said in [
                    ({}, "a bearer token is required"),
                    ({"Authorization": "Bearer wrong"}, "wrong token"),
                    ({"Authorization": f"Basic {TOKEN}"}, "a bearer token is required"),
                ]:
                    async with bare.request(method, s.api(path), headers=headers) as response:
                        assert response.status == 401, (method, path, headers)
                        assert said in (await response.json())["error"]
                        assert "Access-Control-Allow-Origin" not in response.headers
        status, listed = await s.get("runs")
        assert status == 200
        assert [run["run_id"] for run in listed["runs"]] == [handle.run_id]


async def test_listing_pages_and_filters(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        ids = []
        for number in range(7):
            handle = s.manager.start(Echo(), str(number))
            await handle.wait()
            ids.append(handle.run_id)
        gate = s.manager.start(Gatekeeper(), "deploy", detached=True)
        await asyncio.wait_for(approval_requested(s.manager, gate.run_id), 10)
        status, first = await s.get("runs", params={"limit": "3"})
        assert status == 200
        assert [run["run_id"] for run in first["runs"]] == [gate.run_id, *reversed(ids[-2:])]
        status, second = await s.get("runs", params={"limit": "3", "cursor": first["next_cursor"]})
        assert [run["run_id"] for run in second["runs"]] == list(reversed(ids[2:5]))
        status, last = await s.get("runs", params={"limit": "3", "cursor": second["next_cursor"]})
        assert [run["run_id"] for run in last["runs"]] == list(reversed(ids[:2]))
        assert last["next_cursor"] is None
        status, waiting = await s.get("runs", params={"status": "awaiting_approval"})
        assert [run["run_id"] for run in waiting["runs"]] == [gate.run_id]
        assert waiting["runs"][0]["pending_approval"]["approval_id"]
        status, echoes = await s.get("runs", params={"skill": "echo", "since": "5m"})
        assert len(echoes["runs"]) == 7
        assert echoes["runs"][0]["status"] == "succeeded"
        assert echoes["runs"][0]["event_count"] == 6
        status, none = await s.get("runs", params={"since": "2100-01-01T00:00:00Z"})
        assert none["runs"] == []
        for bad in ({"limit": "0"}, {"limit": "501"}, {"limit": "x"}, {"since": "soon"}):
            status, error = await s.get("runs", params=bad)
            assert status == 400, bad
            assert error["error"], bad
        status, error = await s.get("runs", params={"cursor": "run_missing"})
        assert status == 400


async def test_one_run_with_its_events(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        handle = s.manager.start(Echo(), "hello")
        await handle.wait()
        status, body = await s.get(f"runs/{handle.run_id}")
        assert status == 200
        assert body["run"]["status"] == "succeeded"
        assert body["run"]["agent"] == "echo"
        assert "path" not in body["run"]
        assert [event["seq"] for event in body["events"]] == list(range(1, 7))
        assert body["events"][-1]["type"] == "run_completed"
        status, missing = await s.get("runs/run_nope")
        assert (status, missing) == (404, {"error": "no run run_nope"})


async def test_summaries_carry_tokens_and_cost_counted_from_every_event(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        runs = []
        for _ in range(2):
            agent = Stepper()
            agent.open_all()
            runs.append(s.manager.start(agent, "https://example.org"))
        for handle in runs:
            await handle.wait()
        status, body = await s.get(f"runs/{runs[0].run_id}")
        assert status == 200
        assert (body["run"]["tokens"], body["run"]["cost_usd"]) == (120, 0.25)
        status, listed = await s.get("runs")
        assert [(run["tokens"], run["cost_usd"]) for run in listed["runs"]] == [(120, 0.25)] * 2
        # A run whose model calls said no tokens or cost (here: none) says null, never 0.
        quiet = s.manager.start(Echo(), "x")
        await quiet.wait()
        status, body = await s.get(f"runs/{quiet.run_id}")
        assert (body["run"]["tokens"], body["run"]["cost_usd"]) == (None, None)
    # A new server finds these runs in the directory, read by head and tail: not counted.
    async with served(tmp_path) as s:
        status, listed = await s.get("runs")
        assert len(listed["runs"]) == 3
        assert {(run["tokens"], run["cost_usd"]) for run in listed["runs"]} == {(None, None)}


async def test_run_events_history_follow_and_last_event_id(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        done = s.manager.start(Echo(), "a")
        await done.wait()
        async with s.session.get(s.api(f"runs/{done.run_id}/events")) as response:
            assert response.headers["Content-Type"].startswith("text/event-stream")
            frames = await sse_frames(response)
        assert [f["id"] for f in frames] == [str(n) for n in range(1, 7)]
        headers = {"Last-Event-ID": "3"}
        async with s.session.get(s.api(f"runs/{done.run_id}/events"), headers=headers) as response:
            later = await sse_frames(response)
        assert [f["id"] for f in later] == ["4", "5", "6"]
        async with s.session.get(
            s.api(f"runs/{done.run_id}/events"), params={"start": "2", "stop": "4"}
        ) as response:
            ranged = await sse_frames(response)
        assert [f["id"] for f in ranged] == ["3", "4"]

        agent = Sleeper()
        sleeper = s.manager.start(agent, "30", detached=True)
        await asyncio.wait_for(agent.started.wait(), 10)
        url = s.api(f"runs/{sleeper.run_id}/events")
        async with s.session.get(url, params={"follow": "1"}) as response:
            first = await sse_frames(response, 1)
            assert events_of(first)[0]["type"] == "run_started"
            sleeper.cancel("enough")
            rest = await sse_frames(response)  # ends by itself once the run has ended
        types = [event["type"] for event in events_of(rest)]
        assert types[-1] == "run_completed"
        assert "cancel_requested" in types
        seqs = [int(frame["id"]) for frame in first + rest]
        assert seqs == list(range(1, len(seqs) + 1))


async def test_global_stream_resumes_from_last_event_id(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        url = s.api("runs/events/stream")
        async with s.session.get(url) as response:
            ready = await sse_frames(response, 1)
            assert ready == [{"event": "ready", "data": "{}"}]
            handle = s.manager.start(Echo(), "one")
            await handle.wait()
            frames = await sse_frames(response, 6)
        assert [f["id"] for f in frames] == [f"{handle.run_id}:{n}" for n in range(1, 7)]
        # Reconnect from the fourth event: exactly the ones after it, then live ones.
        headers = {"Last-Event-ID": f"{handle.run_id}:4"}
        async with s.session.get(url, headers=headers) as response:
            again = await sse_frames(response, 3)
            assert again[0]["event"] == "ready"
            assert [f["id"] for f in again[1:]] == [f"{handle.run_id}:{n}" for n in range(5, 7)]
        headers = {"Last-Event-ID": "run_unknown:3"}
        async with s.session.get(url, headers=headers) as response:
            told = await sse_frames(response, 2)
        assert [f.get("event") for f in told] == ["ready", "stream_restarted"]


async def test_start_cancel_resume_and_approve(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        status, started = await s.post("runs", {"skill_name": "sleeper", "input": "30"})
        assert status == 201
        assert started["run_id"].startswith("run_")
        run_id = started["run_id"]
        status, unknown = await s.post("runs", {"skill_name": "nobody"})
        assert status == 404
        assert "nobody" in unknown["error"]
        assert "(registered: " in unknown["error"]  # what the caller can ask for instead
        assert "sleeper" in unknown["error"].split("(registered: ")[1]
        status, body = await s.post(f"runs/{run_id}/resume")
        assert status == 409
        assert "still running" in body["error"]
        status, body = await s.post(f"runs/{run_id}/cancel", {"reason": "too slow"})
        assert (status, body) == (202, {"run_id": run_id, "status": "cancel_requested"})
        info = await s.manager.get(run_id).wait()
        assert info.status.value == "canceled"
        assert info.cancel_reason == "too slow"
        status, body = await s.post(f"runs/{run_id}/cancel")
        assert status == 409
        assert "already ended" in body["error"]
        status, body = await s.post("runs/run_missing/cancel")
        assert status == 404
        status, resumed = await s.post(f"runs/{run_id}/resume")
        assert status == 200
        assert resumed["started"] is True
        assert s.manager.get(resumed["new_run_id"]).info().resumed_from == run_id
        s.manager.cancel(resumed["new_run_id"])

        gate = s.manager.start(Gatekeeper(), "ship", detached=True)
        await asyncio.wait_for(approval_requested(s.manager, gate.run_id), 10)
        status, body = await s.post(f"runs/{gate.run_id}/approve", {"approved": "yes"})
        assert status == 400
        status, body = await s.post(f"runs/{gate.run_id}/approve", {"approved": True})
        assert status == 200
        assert body["approved"] is True
        assert body["approval_id"]
        assert await gate.result() == "approved"
        status, body = await s.post(f"runs/{gate.run_id}/approve", {"approved": True})
        assert status == 409


async def test_read_only_refuses_every_post(tmp_path: Path) -> None:
    async with served(tmp_path, read_only=True) as s:
        handle = s.manager.start(Sleeper(), "30", detached=True)
        for path in ["runs", f"runs/{handle.run_id}/cancel", f"runs/{handle.run_id}/resume"]:
            status, body = await s.post(path, {"skill_name": "echo"})
            assert (status, body) == (403, {"error": "this server is read-only"})
        status, body = await s.post(f"runs/{handle.run_id}/approve", {"approved": True})
        assert status == 403
        assert s.manager.get(handle.run_id).status.value == "running"
        status, _ = await s.get("runs")
        assert status == 200
        handle.cancel()


async def test_hostile_run_ids_and_bodies(tmp_path: Path) -> None:
    (tmp_path / "secret.jsonl").write_text('{"run_id":"x","seq":1}\n')
    async with served(tmp_path, max_body=1024) as s:
        for run_id in ["..%2Fsecret", "%2E%2E", "..", "a%00b", "x" * 200, "run%20id"]:
            async with s.session.get(s.api(f"runs/{run_id}/events")) as response:
                assert response.status in {400, 404}, run_id
                body = await response.json()
                assert "secret" not in json.dumps(body)
        status, body = await s.post("runs", {"skill_name": "echo", "input": "x" * 5000})
        assert status == 413
        assert "1024" in body["error"]
        async with s.session.post(s.api("runs"), data=b"{not json") as response:
            assert response.status == 400
            assert "not JSON" in (await response.json())["error"]
        async with s.session.post(s.api("runs"), data=b"[1, 2]") as response:
            assert response.status == 400
        async with s.session.get(s.api("nowhere")) as response:
            assert response.status == 404
            assert (await response.json())["error"]
        assert not s.manager.list()


async def test_a_client_that_falls_behind_is_told_to_start_over(tmp_path: Path) -> None:
    async with served(tmp_path, feed=FrameRing(max_events=64)) as s:
        port = int(s.url.rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        writer.write(
            f"GET {API_PREFIX}runs/events/stream HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {TOKEN}\r\n\r\n".encode()
        )
        await writer.drain()
        await reader.readuntil(b"event: ready")
        # Not reading: the socket fills, the server's writer waits, the feed moves on.
        handle = s.manager.start(Chatty(), "3000")
        await handle.wait()
        seen = b""
        async with asyncio.timeout(10):
            while b"event: stream_restarted" not in seen:
                seen += await reader.read(1 << 16)
        writer.close()
        # The runs went on at their pace: every event is in the ledger.
        _, body = await s.get("runs")
        assert body["runs"][0]["event_count"] > 3000


async def test_shutdown_ends_streams(tmp_path: Path) -> None:
    async with served(tmp_path) as s:
        async with s.session.get(s.api("runs/events/stream")) as response:
            await sse_frames(response, 1)
            await s.server.close()
            rest = await sse_frames(response)  # the stream ends rather than hanging
        assert rest == []


async def test_the_run_book_keeps_only_a_summary_of_a_finished_run(tmp_path: Path) -> None:
    """A summary builder holds ~3.3 KB a run; a long-lived server keeps every run it saw."""
    async with served(tmp_path) as s:
        handle = s.manager.start(Echo(), "hello")
        await handle.wait()
        booked = s.server.book.get(handle.run_id)
        assert booked is not None
        assert booked.builder is None
        assert booked.summary().status is RunStatus.SUCCEEDED
        # A line after the end (a writer's late error, say) is still folded, then frozen again.
        last = booked.summary().last_seq
        late = ErrorEvent(run_id=handle.run_id, seq=last + 1, payload=ErrorPayload(message="late"))
        s.server.book.add(late)
        assert booked.builder is None
        assert booked.summary().last_seq == last + 1
        assert booked.summary().status is RunStatus.SUCCEEDED
        status, body = await s.get(f"runs/{handle.run_id}")
        assert (status, body["run"]["status"]) == (200, "succeeded")
