"""The remote source against real servers on loopback: restarts, refusals, dead ends."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from aiohttp import web

from inspector import ActionRefused, RemoteSource, RunKey, RunStore
from inspector.attach_client import MAX_RETRY_AFTER, SseParser, retry_after
from ledger_reader import DamagedLine, RunStatus
from run_manager import Manager
from run_manager.server.attach import API_PREFIX, AttachServer
from run_manager.server.tokens import read_token, write_token
from tests.agents import Echo, Sleeper
from tests.inspector.test_sources_contract import run_of, until

pytestmark = pytest.mark.timeout(30)

TOKEN = "remote-token"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    """A manager and its attach server on a fixed port, to stop and start again."""

    def __init__(self, ledgers: Path, port: int, token: str = TOKEN) -> None:
        self.ledgers = ledgers
        self.port = port
        self.token = token

    async def start(self) -> Manager:
        self.manager = Manager(ledger_dir=self.ledgers, agents=[Echo(), Sleeper()])
        server = AttachServer(self.manager, token=self.token)
        root = web.Application()
        root.add_subapp(API_PREFIX, server.app)
        self.runner = web.AppRunner(root, access_log=None, shutdown_timeout=1)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()
        return self.manager

    async def stop(self) -> None:
        await self.runner.cleanup()
        await self.manager.close(grace=2)


def seqs_seen(store: RunStore, key: RunKey) -> list[int]:
    """The seqs the store was handed for a run, in order (duplicates would show twice)."""
    return [item.seq for item in store.recent(key) if not isinstance(item, DamagedLine)]


async def test_a_server_restarted_under_a_client_loses_and_repeats_nothing(
    tmp_path: Path,
) -> None:
    port = free_port()
    server = Server(tmp_path / "runs", port)
    manager = await server.start()
    store = RunStore(flush_interval=0.005)
    source = RemoteSource(f"http://127.0.0.1:{port}", TOKEN, name="remote", backoff_first=0.05)
    store.add_source(source)
    try:
        await until(store, lambda s: any(x.status == "connected" for x in s.sources), "connect")
        first = manager.start(Echo(), "before")
        await first.wait()
        sleeper = manager.start(Sleeper(), "30", detached=True)
        first_key, sleeper_key = RunKey("remote", first.run_id), RunKey("remote", sleeper.run_id)
        await until(
            store, lambda s: (v := run_of(first.run_id)(s)) and v.status == "succeeded", "1"
        )
        await until(store, run_of(sleeper.run_id), "the sleeper")

        await server.stop()  # the sleeper is cancelled while no client is connected
        gone = await until(
            store, lambda s: [x for x in s.sources if x.error and "reconnecting" in x.error], "down"
        )
        assert "cannot be reached" in gone[0].error or "ended the stream" in gone[0].error

        manager = await server.start()
        after = manager.start(Echo(), "after")
        await after.wait()
        after_key = RunKey("remote", after.run_id)
        canceled = await until(
            store,
            lambda s: (v := run_of(sleeper.run_id)(s)) and v.status is RunStatus.CANCELED and v,
            "the sleeper's end, written while the client was away",
        )
        ledger = tmp_path / "runs" / f"{sleeper.run_id}.jsonl"
        assert canceled.event_count == len(ledger.read_bytes().splitlines())
        done = await until(
            store, lambda s: (v := run_of(after.run_id)(s)) and v.status == "succeeded" and v, "3"
        )
        assert done.event_count == 6
        assert source.reconnects >= 1
        for key in (first_key, sleeper_key, after_key):
            seen = seqs_seen(store, key)
            assert seen == list(range(1, len(seen) + 1)), key  # no gap, no repeat
            events = await store.events(key, 0, 100)
            assert [event.seq for event in events] == list(range(1, len(events) + 1))
        assert (
            seqs_seen(store, sleeper_key)[-1] == (await store.events(sleeper_key, 0, 100))[-1].seq
        )
        assert next(s for s in store.snapshot().sources if s.name == "remote").status == "connected"
    finally:
        await store.close()
        await server.stop()


async def test_a_wrong_token_is_said_in_words(tmp_path: Path) -> None:
    port = free_port()
    server = Server(tmp_path / "runs", port)
    await server.start()
    store = RunStore(flush_interval=0.005)
    store.add_source(RemoteSource(f"http://127.0.0.1:{port}", "not-it", name="remote"))
    try:
        refused = await until(store, lambda s: [x for x in s.sources if x.error], "a refusal")
        assert refused[0].error == f"refused: bad token for http://127.0.0.1:{port}"
        assert not refused[0].available
    finally:
        await store.close()
        await server.stop()


async def test_an_unreachable_server_is_retried_and_said(tmp_path: Path) -> None:
    port = free_port()  # nothing listens here
    store = RunStore(flush_interval=0.005)
    store.add_source(RemoteSource(f"http://127.0.0.1:{port}", TOKEN, name="r", backoff_first=0.05))
    try:
        down = await until(store, lambda s: [x for x in s.sources if x.error], "an error")
        assert down[0].error.startswith("reconnecting in 0.05 s:")
        assert "cannot be reached" in down[0].error
        later = await until(
            store, lambda s: [x for x in s.sources if x.error and "0.1 s" in x.error], "backoff"
        )
        assert later
    finally:
        await store.close()


def test_the_token_file_is_private_and_found(tmp_path: Path) -> None:
    path = write_token("127.0.0.1", 8765, "abc", tmp_path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert read_token("127.0.0.1", 8765, tmp_path) == "abc"
    assert read_token("127.0.0.1", 8766, tmp_path) is None


def test_a_loopback_server_s_token_is_found_under_any_loopback_name(tmp_path: Path) -> None:
    write_token("127.0.0.1", 8765, "abc", tmp_path)
    assert read_token("localhost", 8765, tmp_path) == "abc"
    assert read_token("[::1]", 8765, tmp_path) == "abc"
    assert read_token("example.org", 8765, tmp_path) is None


def test_sse_frames_split_anywhere_parse_the_same() -> None:
    stream = (
        b'event: ready\r\ndata: {}\r\n\r\n: keepalive\n\nid: run_a:1\ndata: {"seq":1}\n\n'
        b"id: 2\ndata: a\ndata: b\n\n"
    )
    whole = SseParser().feed(stream)
    assert [(f.event, f.id, f.data) for f in whole] == [
        ("ready", None, b"{}"),
        (None, "run_a:1", b'{"seq":1}'),
        (None, "2", b"a\nb"),
    ]
    for cut in range(1, len(stream)):
        parser = SseParser()
        frames = parser.feed(stream[:cut]) + parser.feed(stream[cut:])
        assert frames == whole, cut


async def test_a_read_only_server_greys_actions_before_they_are_tried(tmp_path: Path) -> None:
    manager = Manager(ledger_dir=tmp_path / "runs")
    server = AttachServer(manager, token=TOKEN, read_only=True)
    root = web.Application()
    root.add_subapp(API_PREFIX, server.app)
    runner = web.AppRunner(root, access_log=None, shutdown_timeout=1)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    store = RunStore(flush_interval=0.005)
    store.add_source(RemoteSource(f"http://127.0.0.1:{port}", TOKEN, name="ro"))
    try:
        handle = manager.start(Sleeper(), "30")
        await until(store, run_of(handle.run_id), "the run")
        key = RunKey("ro", handle.run_id)
        assert store.refusal(key, "cancel") == "the server ro is read-only"
        with pytest.raises(ActionRefused, match="read-only"):
            await store.cancel(key, "no")
        assert manager.get(handle.run_id).status.value == "running"
    finally:
        await store.close()
        await runner.cleanup()
        await manager.close(grace=1)


async def test_a_restarted_server_s_new_token_is_taken_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNTOP_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RUNTOP_TOKEN", raising=False)
    port = free_port()
    server = Server(tmp_path / "runs", port, token="first-token")
    await server.start()
    write_token("127.0.0.1", port, "first-token")
    store = RunStore(flush_interval=0.005)
    store.add_source(RemoteSource(f"http://127.0.0.1:{port}", name="r", backoff_first=0.05))
    try:
        await until(store, lambda s: any(x.status == "connected" for x in s.sources), "connect")
        await server.stop()
        server.token = "second-token"
        manager = await server.start()
        write_token("127.0.0.1", port, "second-token")  # as runtop serve does at start
        handle = manager.start(Echo(), "x")
        done = await until(
            store,
            lambda s: (v := run_of(handle.run_id)(s)) and v.status == "succeeded" and v,
            "run",
        )
        assert done.event_count == 6
        assert next(x for x in store.snapshot().sources if x.name == "r").error is None
    finally:
        await store.close()
        await server.stop()


async def test_a_run_ended_while_away_is_never_shown_live_again(tmp_path: Path) -> None:
    """A walk: attached while a run ran, the server stopped (canceling it), then started.
    The source said "connected" first and the server's replay came after, so for a few
    seconds the canceled run was shown running again. The first update of a reconnection
    now carries the runs as the server has them."""
    port = free_port()
    server = Server(tmp_path / "runs", port)
    manager = await server.start()
    source = RemoteSource(f"http://127.0.0.1:{port}", TOKEN, name="remote", backoff_first=0.05)
    updates = source.updates()
    try:
        while not (await anext(updates)).initial:  # listed: from here on, the stream
            pass
        sleeper = manager.start(Sleeper(), "30", detached=True)
        while True:  # until the sleeper is seen running, its events off the stream
            update = await anext(updates)
            if any(run.run_id == sleeper.run_id for run in update.runs):
                break
        await server.stop()  # the sleeper is canceled as the manager shuts down
        while (await anext(updates)).available:
            pass
        await server.start()
        back = await anext(updates)
        while not back.available:  # reconnecting, retried
            back = await anext(updates)
        assert back.status == "connected"
        said = {run.run_id: run.summary.status for run in back.runs}
        assert said.get(sleeper.run_id) is RunStatus.CANCELED
    finally:
        await updates.aclose()
        await source.close()
        await server.stop()


async def test_the_reconnect_countdown_counts_down(tmp_path: Path) -> None:
    """It said `reconnecting in 8 s` for the whole 8 s: now 3 s, 2 s, 1 s, a second apart."""
    port = free_port()  # nothing listens there
    source = RemoteSource(f"http://127.0.0.1:{port}", TOKEN, name="remote", backoff_first=3)
    updates = source.updates()
    try:
        said = []
        while len(said) < 3:
            update = await anext(updates)
            assert update.error is not None
            assert not update.available
            said.append(str(update.error).split(":")[0])
        assert said == ["reconnecting in 3 s", "reconnecting in 2 s", "reconnecting in 1 s"]
    finally:
        await updates.aclose()
        await source.close()


async def test_a_busy_server_s_retry_after_is_waited_out(tmp_path: Path) -> None:
    """A server that turns the stream away (503, ``Retry-After: 2``) is tried again in 2 s,
    not at the first backoff's 0.05 s: every client it turned away would be back at once."""
    asked: list[str] = []

    async def busy(request: web.Request) -> web.Response:
        asked.append(request.path)
        return web.json_response(
            {"error": "the server is busy"}, status=503, headers={"Retry-After": "2"}
        )

    app = web.Application()
    app.router.add_get(API_PREFIX + "runs/events/stream", busy)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    source = RemoteSource(f"http://127.0.0.1:{port}", TOKEN, name="remote", backoff_first=0.05)
    updates = source.updates()
    try:
        update = await anext(updates)
        assert str(update.error) == "reconnecting in 2 s: the server is busy"
        assert not update.available
        update = await anext(updates)
        assert str(update.error).startswith("reconnecting in 1 s:")
        assert asked == [API_PREFIX + "runs/events/stream"]  # nothing asked meanwhile
    finally:
        await updates.aclose()
        await source.close()
        await runner.cleanup()


def test_retry_after_is_read_as_seconds_or_a_date() -> None:
    assert retry_after("3") == 3
    assert retry_after(None) is None
    assert retry_after("soon") is None
    assert retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10
    assert retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412500.0) == 0
    assert retry_after("86400") == MAX_RETRY_AFTER
