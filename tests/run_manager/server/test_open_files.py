"""No crowd of idle connections takes a ``runtop serve`` from its other clients.

The server runs as a real process under a lowered open-file limit (soft and
hard, so it cannot raise it), and real sockets connect to its gRPC port
without a word, more of them than it may open files. Its attach API must go on
answering at once, gRPC must close the idle peers after its handshake timeout,
and the log must say each kind of failure once, never with a traceback.
"""

from __future__ import annotations

import asyncio
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from run_manager.server.failure_log import FailureLog
from run_manager.server.open_files import grpc_connection_cap, raise_open_file_limit
from run_manager.server.tokens import token_path
from tests.conftest import REPO

pytestmark = pytest.mark.timeout(60)

OPEN_FILES = 512
IDLE_PEERS = 700


def _limit_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))


@pytest.fixture
def limited_server(tmp_path: Path) -> Iterator[tuple[str, int, str, subprocess.Popen[str]]]:
    """``runtop serve --otlp-grpc 0`` allowed :data:`OPEN_FILES` open files: its URL, gRPC
    port, token and process."""
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    env.pop("RUNTOP_TOKEN", None)
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0", "--otlp-grpc", "0"]
    command += ["--ledger-dir", str(tmp_path / "runs")]
    process = subprocess.Popen(
        command,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
        preexec_fn=_limit_open_files,
    )
    assert process.stderr is not None
    try:
        banner = [process.stderr.readline()]
        while "gRPC" not in banner[-1]:
            assert banner[-1], f"runtop serve said no OTLP/gRPC address: {banner}"
            banner.append(process.stderr.readline())
        url = next(word for word in banner[0].split() if word.startswith("http://")).rstrip(",")
        address = re.search(r"127\.0\.0\.1:(\d+)", banner[-1].split("gRPC", 1)[1])
        assert address, banner
        grpc_port = int(address[1])
        port = int(url.rsplit(":", 1)[1])
        token = token_path("127.0.0.1", port, tmp_path / "home").read_text().strip()
        yield url, grpc_port, token, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(20)
        process.stderr.close()


def _idle_peers(port: int, count: int) -> list[socket.socket]:
    peers = []
    for _ in range(count):
        peer = socket.create_connection(("127.0.0.1", port), timeout=5)
        peers.append(peer)
    return peers


async def test_idle_grpc_peers_beyond_the_open_file_limit_leave_the_api_answering(
    limited_server: tuple[str, int, str, subprocess.Popen[str]],
) -> None:
    url, grpc_port, token, process = limited_server
    peers = await asyncio.to_thread(_idle_peers, grpc_port, IDLE_PEERS)
    try:
        headers = {"Authorization": f"Bearer {token}"}
        timeout = aiohttp.ClientTimeout(total=5)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            for _ in range(5):
                started = time.monotonic()
                async with session.get(f"{url}/api/agent/runs", headers=headers) as response:
                    assert response.status == 200
                    await response.read()
                assert time.monotonic() - started < 1.0
                # A new connection each time: the listening socket itself must accept.
                await session.close()
                session = aiohttp.ClientSession(timeout=timeout)
            await session.close()

        def closed_by_the_server() -> int:
            closed = 0
            for peer in peers:
                peer.settimeout(0.0)
                try:
                    while peer.recv(4096):  # what gRPC said first (its settings), then its end
                        pass
                    closed += 1
                except BlockingIOError:
                    pass
                except ConnectionError:
                    closed += 1
            return closed

        # The handshake timeout (5 s) ends the peers gRPC held; those past its cap
        # were closed as they came.
        deadline = time.monotonic() + 15
        while closed_by_the_server() < IDLE_PEERS and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.5)  # sockets closed by a peer: nothing to wait on but time
        assert closed_by_the_server() == IDLE_PEERS
    finally:
        for peer in peers:
            peer.close()
    process.send_signal(signal.SIGTERM)
    _, said = process.communicate(timeout=20)
    assert "Traceback" not in said
    assert len(said.splitlines()) < 40, said[-3000:]


def test_the_soft_limit_is_raised_to_the_hard_one(tmp_path: Path) -> None:
    code = (
        "import resource\n"
        "from run_manager.server.open_files import raise_open_file_limit\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, 4096))\n"
        "print(raise_open_file_limit(), resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n"
    )
    said = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    ).stdout.split()
    assert said == ["4096", "4096"]
    assert grpc_connection_cap(4096) == 1024
    assert raise_open_file_limit() >= 1024


def test_a_failure_of_one_kind_is_logged_once_an_interval_and_a_peers_without_traceback() -> None:
    import logging

    log_filter = FailureLog(interval=60)
    logger = logging.getLogger("runtop-test-failures")
    logger.propagate = False
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger.addHandler(Keep())
    logger.addFilter(log_filter)
    for _ in range(1000):
        try:
            raise ConnectionResetError("Connection lost")
        except ConnectionResetError:
            logger.exception("Error handling request")
    try:
        raise ValueError("broken")
    except ValueError:
        logger.exception("Error handling request")
    assert len(records) == 2
    assert records[0].exc_info is None
    assert "ConnectionResetError: Connection lost" in records[0].getMessage()
    assert records[1].exc_info is not None  # a failure of ours keeps its traceback
    log_filter.interval = 0
    logger.error("Error handling request", exc_info=ConnectionResetError("again"))
    assert "(and 999 more like it" in records[-1].getMessage()
