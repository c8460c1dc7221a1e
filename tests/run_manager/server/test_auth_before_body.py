"""``runtop serve`` reads no body before its token, and answers every refusal in JSON.

A client without the token gets its 401 before a byte of its body is read
or inflated, and the connection is closed rather than read to its end: four
gzip bombs of 512 MiB cost the server no inflating. Bodies have a time limit
on every endpoint, encodings the server does not inflate are a JSON 415, and
a token that is not even text is a 401, not a 500.
"""

from __future__ import annotations

import asyncio
import logging
import os
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from run_manager import Manager
from run_manager.server.standalone import serve
from tests.conftest import REPO

pytestmark = pytest.mark.timeout(60)

TOKEN = "s3cret-token"
MIB = 1024 * 1024


def gzip_bomb(mib: int) -> bytes:
    """A gzip body that inflates to ``mib`` MiB of zeros, in about ``mib`` KiB.

    Made of one deflate block of a MiB of zeros repeated: after a full flush the
    compressor starts afresh, so each MiB compresses to the same bytes. Its CRC is
    left 0: no server should inflate it far enough to check.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(MIB)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.flush()[:-8]
    return first + again * (mib - 1) + end + struct.pack("<II", 0, (mib * MIB) & 0xFFFFFFFF)


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process, from ``/proc``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture
def serve_process(tmp_path: Path) -> Iterator[tuple[str, str, subprocess.Popen[str]]]:
    """``runtop serve`` as a real process: its URL, its token and the process."""
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0"]
    command += ["--ledger-dir", str(tmp_path / "runs")]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith("runtop serve: http://127.0.0.1:"), first
    [token_file] = (tmp_path / "home" / "tokens").iterdir()
    try:
        yield first.split()[2].rstrip(","), token_file.read_text().strip(), process
    finally:
        process.terminate()
        process.communicate(timeout=10)


@asynccontextmanager
async def standalone(tmp_path: Path, **options: Any) -> AsyncIterator[tuple[str, int]]:
    """``serve()`` in this process: its URL's host and port."""
    urls: list[str] = []
    bound = asyncio.Event()
    stop = asyncio.Event()
    manager = Manager(ledger_dir=tmp_path / "runs")
    serving = asyncio.create_task(
        serve(
            manager,
            port=0,
            token=TOKEN,
            home=tmp_path / "home",
            ready=lambda url, _: (urls.append(url), bound.set()),
            stop=stop,
            **options,
        )
    )
    try:
        await asyncio.wait_for(bound.wait(), 10)
        host, port = urls[0].removeprefix("http://").split(":")
        yield host, int(port)
    finally:
        stop.set()
        await asyncio.wait_for(serving, 10)


async def exchange(host: str, port: int, request: bytes, *, wait: float = 5.0) -> bytes:
    """Send raw bytes, then read the answer until the server closes or ``wait`` passes."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(request)
    answer = b""
    try:
        async with asyncio.timeout(wait):
            while chunk := await reader.read(65536):
                answer += chunk
                if b"\r\n\r\n" in answer and answer.endswith(b"}"):
                    break
    except TimeoutError:
        pass
    finally:
        writer.close()
    return answer


def post(path: str, headers: str, body: bytes = b"") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n{headers}\r\n"
    ).encode() + body


async def test_gzip_bombs_without_a_token_cost_the_server_no_inflating(
    serve_process: tuple[str, str, subprocess.Popen[str]],
) -> None:
    url, token, process = serve_process
    bomb = gzip_bomb(512)
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    before = cpu_seconds(process.pid)
    async with aiohttp.ClientSession() as session:

        async def throw(path: str) -> tuple[int, Any]:
            async with session.post(url + path, data=bomb, headers=headers) as response:
                return response.status, await response.json()

        paths = ["/v1/traces", "/api/agent/runs", "/v1/traces", "/api/agent/runs"]
        answers = await asyncio.gather(*map(throw, paths))
        took = time.monotonic()
        async with session.get(
            url + "/api/agent/runs", headers={"Authorization": f"Bearer {token}"}
        ) as listed:
            assert listed.status == 200
        waited = time.monotonic() - took
    spent = cpu_seconds(process.pid) - before
    for status, body in answers:
        assert status == 401
        assert "bearer token is required" in body["error"]
    # Inflating 2 GiB of zeros costs seconds of CPU; refusing four requests costs nothing like it.
    assert spent < 0.5, f"the server spent {spent:.2f} s of CPU on four refused bombs"
    assert waited < 2


async def test_an_early_answer_closes_the_connection_instead_of_reading_the_body(
    tmp_path: Path,
) -> None:
    async with standalone(tmp_path) as (host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(
            b"POST /api/agent/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Encoding: gzip\r\nContent-Length: 100000000\r\n\r\n" + gzip_bomb(4)
        )
        answer = b""
        async with asyncio.timeout(5):  # the server closes: no waiting for 100 MB
            while chunk := await reader.read(65536):
                answer += chunk
        writer.close()
    assert answer.startswith(b"HTTP/1.1 401 ")
    assert b"Connection: close" in answer


@pytest.mark.parametrize("path", ["/v1/traces", "/api/agent/runs"])
async def test_a_body_sent_a_byte_at_a_time_gets_408(tmp_path: Path, path: str) -> None:
    async with standalone(tmp_path, body_timeout=0.5) as (host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n".encode()
        )

        async def trickle() -> None:
            for _ in range(1000):
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(0.05)

        sending = asyncio.create_task(trickle())
        try:
            answer = await asyncio.wait_for(reader.read(4096), 5)
        finally:
            sending.cancel()
            writer.close()
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b'"error":"the request body did not arrive within 0.5 s"' in answer


@pytest.mark.parametrize("path", ["/v1/traces", "/api/agent/runs"])
async def test_a_body_that_stops_arriving_gets_408_after_the_read_gap(
    tmp_path: Path, path: str
) -> None:
    async with standalone(tmp_path, body_timeout=30, read_gap=0.3) as (host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{".encode()
        )
        started = time.monotonic()
        try:
            answer = await asyncio.wait_for(reader.read(4096), 10)
        finally:
            writer.close()
        waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b'"error":"no byte of the request body arrived for 0.3 s"' in answer
    assert waited < 5, f"answered after {waited:.1f} s: the total limit, not the gap"


async def test_an_export_trickled_a_byte_a_tick_is_refused_at_the_attach_apis_limit(
    tmp_path: Path,
) -> None:
    """OTLP's limit is the attach API's (plus a second a MiB received): a trickle earns none."""
    async with standalone(tmp_path, body_timeout=1.0, read_gap=0.5) as (host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(
            f"POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n".encode()
        )

        async def trickle() -> None:
            while True:
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(0.1)

        sending = asyncio.create_task(trickle())
        started = time.monotonic()
        try:
            answer = await asyncio.wait_for(reader.read(4096), 10)
        finally:
            sending.cancel()
            writer.close()
        waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"did not arrive within 1 s" in answer
    assert waited < 3


@pytest.mark.parametrize("encoding", ["br", "zstd"])
@pytest.mark.parametrize("path", ["/v1/traces", "/api/agent/runs"])
async def test_an_encoding_not_inflated_here_is_a_json_415(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, path: str, encoding: str
) -> None:
    caplog.set_level(logging.ERROR)
    async with standalone(tmp_path) as (host, port):
        answer = await exchange(
            host,
            port,
            post(
                path,
                f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
                f"Content-Encoding: {encoding}\r\n",
                b"\x8b\x02\x80{}\x03",
            ),
        )
    assert answer.startswith(b"HTTP/1.1 415 "), answer[:200]
    assert b"Content-Type: application/json" in answer
    assert f"content encoding '{encoding}' is not taken".encode() in answer
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_gzip_and_deflate_bodies_are_inflated_after_the_token(tmp_path: Path) -> None:
    body = b'{"skill_name": "nobody"}'
    async with standalone(tmp_path) as (host, port):
        for encoding, packed in [
            ("gzip", zlib.compress(body, wbits=16 + zlib.MAX_WBITS)),
            ("deflate", zlib.compress(body)),
            ("deflate", zlib.compress(body, wbits=-zlib.MAX_WBITS)),
        ]:
            headers = f"Authorization: Bearer {TOKEN}\r\nContent-Encoding: {encoding}\r\n"
            answer = await exchange(host, port, post("/api/agent/runs", headers, packed))
            assert answer.startswith(b"HTTP/1.1 404 "), (encoding, answer[:200])
            assert b"no agent named 'nobody'" in answer
        cut = zlib.compress(body, wbits=16 + zlib.MAX_WBITS)[:-6]
        headers = f"Authorization: Bearer {TOKEN}\r\nContent-Encoding: gzip\r\n"
        answer = await exchange(host, port, post("/api/agent/runs", headers, cut))
        assert answer.startswith(b"HTTP/1.1 400 ")
        assert b"the gzip body is cut short" in answer
        answer = await exchange(host, port, post("/api/agent/runs", headers, gzip_bomb(2)))
        assert answer.startswith(b"HTTP/1.1 413 ")
        assert b"the request body is over 262144 bytes" in answer


@pytest.mark.parametrize(
    "header",
    [b"Authorization: Bearer \xff\r\n", b"Authorization: Bearer \xc3\x28\xa0\r\n"],
    ids=["0xff", "bad utf-8"],
)
async def test_a_token_that_is_not_text_is_a_401(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, header: bytes
) -> None:
    caplog.set_level(logging.ERROR)
    async with standalone(tmp_path) as (host, port):
        for path in (b"/api/agent/runs", b"/v1/traces"):
            answer = await exchange(
                host,
                port,
                b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n" + header + b"\r\n",
            )
            assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]
            assert answer.endswith(b'{"error":"wrong token"}')
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
