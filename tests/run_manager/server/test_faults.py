"""``runtop serve`` against bad requests and bad start-up arguments (issue 12, item 4)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from pathlib import Path

import pytest

from run_manager import Manager
from run_manager.server.standalone import serve
from tests.run_manager.server.test_attach_api import served
from tests.tui.commands.test_serve import runtop

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(b"[" * 200_000, "nested too deeply", id="200000 deep"),
        pytest.param(b'{"skill_name": "' + b"\xff\xfe" + b'"}', "not UTF-8", id="bad utf-8"),
        pytest.param(b"\xff" * 10, "not JSON", id="not json"),
    ],
)
async def test_a_bad_body_gets_400_not_a_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, body: bytes, message: str
) -> None:
    caplog.set_level(logging.ERROR)
    async with served(tmp_path) as s:
        async with s.session.post(s.api("runs"), data=body) as response:
            assert response.status == 400
            assert message in (await response.json())["error"]
        status, _ = await s.get("runs")  # and it goes on serving
        assert status == 200
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_a_body_sent_half_way_is_not_waited_on(tmp_path: Path) -> None:
    async with served(tmp_path, body_timeout=0.5) as s:
        host, port = s.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(
            b"POST /api/agent/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token\r\n"
            b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"skill'
        )
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(4096), 5)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 408")
        assert b"did not arrive within 0.5 s" in answer


async def test_idle_and_half_sent_connections_are_closed(tmp_path: Path) -> None:
    urls: list[str] = []
    bound = asyncio.Event()
    stop = asyncio.Event()
    manager = Manager(ledger_dir=tmp_path / "runs")
    serving = asyncio.create_task(
        serve(
            manager,
            port=0,
            home=tmp_path / "home",
            ready=lambda url, _: (urls.append(url), bound.set()),
            stop=stop,
            idle_timeout=0.5,
        )
    )
    try:
        await asyncio.wait_for(bound.wait(), 10)
        host, port = urls[0].removeprefix("http://").split(":")
        idle = await asyncio.open_connection(host, int(port))
        slow = await asyncio.open_connection(host, int(port))
        slow[1].write(b"GET /api/agent/runs HTTP/1.1\r\nHost: x\r\n")  # headers never end
        await slow[1].drain()
        began = time.monotonic()
        for reader, writer in (idle, slow):
            assert await asyncio.wait_for(reader.read(4096), 5) == b""  # closed by the server
            writer.close()
        assert time.monotonic() - began < 3
    finally:
        stop.set()
        await asyncio.wait_for(serving, 10)


def test_serve_refuses_a_ledger_dir_that_is_a_file(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "runs"
    not_a_dir.write_text("hello")
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path / "home")}
    done = runtop("serve", "--port", "0", "--ledger-dir", str(not_a_dir), env=env)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "not a directory" in lines[0]
    assert str(not_a_dir) in lines[0]
    assert not_a_dir.read_text() == "hello"


def test_a_manager_refuses_a_ledger_dir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="not a directory"):
        Manager(ledger_dir=tmp_path / "file")
    with pytest.raises(OSError):  # noqa: PT011 - which error the kernel says varies
        Manager(ledger_dir=tmp_path / "file" / "below")


def test_a_ledger_dir_under_home_is_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    manager = Manager(ledger_dir="~/runs")
    assert manager.ledger_dir == tmp_path / "runs"
    assert (tmp_path / "runs").stat().st_mode & 0o777 == 0o700


__all__ = ["socket"]


async def test_the_summary_index_keeps_live_runs_and_the_newest_finished(tmp_path: Path) -> None:
    from tests.agents import Echo, Sleeper

    async with served(tmp_path, max_finished_runs=5) as s:
        sleeper = Sleeper()
        live = s.manager.start(sleeper, "30")
        await sleeper.started.wait()
        finished = []
        for number in range(12):
            handle = s.manager.start(Echo(), str(number))
            await handle.wait()
            finished.append(handle.run_id)
        kept = set(s.server.book.runs)
        assert kept == {live.run_id, *finished[-5:]}  # the live one is never dropped
        status, body = await s.get("runs?limit=50")
        assert status == 200
        assert {run["run_id"] for run in body["runs"]} == kept
        live.cancel()
        await live.wait()
        assert live.run_id in s.server.book.runs  # it just ended: the newest finished
        assert finished[-5] not in s.server.book.runs


def test_runs_found_at_start_up_keep_the_newest() -> None:
    from ledger_reader import RunSummary
    from run_manager.server.summary_index import IndexedRun, SummaryIndex

    index = SummaryIndex(Manager(), max_finished=3)
    found = []
    for number in [4, 1, 8, 6, 2, 7, 5, 3]:
        summary = RunSummary(run_id=f"run_{number}", path=None)
        found.append((f"run_{number}", IndexedRun(None, float(number), None, frozen=summary)))
    index.merge(found)
    assert set(index.runs) == {"run_6", "run_7", "run_8"}
