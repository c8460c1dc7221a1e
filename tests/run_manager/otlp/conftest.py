"""A real ``runtop serve`` receiving OTLP over HTTP and gRPC, for the exporters' tests."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from run_manager.server.tokens import token_path
from tests.conftest import REPO


@dataclass(frozen=True)
class OtlpServer:
    """Where a ``runtop serve --otlp-grpc 0`` listens, and what reaches it."""

    url: str
    """The attach API's and OTLP/HTTP's base URL."""
    grpc: str
    """OTLP/gRPC's ``host:port``."""
    token: str
    runs: Path
    """Its ledger directory."""
    env: dict[str, str]
    """The environment to run ``runtop`` commands against it."""


@pytest.fixture
def otlp_server(tmp_path: Path) -> Iterator[OtlpServer]:
    with served(tmp_path) as server:
        yield server


@contextlib.contextmanager
def served(tmp_path: Path) -> Iterator[OtlpServer]:
    """A ``runtop serve --otlp-grpc 0`` writing into ``tmp_path``, stopped after."""
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    env.pop("RUNTOP_TOKEN", None)
    runs = tmp_path / "runs"
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0", "--otlp-grpc", "0"]
    command += ["--ledger-dir", str(runs)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    assert process.stderr is not None
    try:
        first = process.stderr.readline()
        assert first.startswith("runtop serve: http://127.0.0.1:"), first
        url = first.split()[2].rstrip(",")
        grpc = ""
        while not grpc:
            line = process.stderr.readline()
            assert line, "runtop serve said no OTLP/gRPC address"
            if line.strip().startswith("OTLP/gRPC:"):
                grpc = line.split()[1]
        port = int(url.rsplit(":", 1)[1])
        token = token_path("127.0.0.1", port, tmp_path / "home").read_text().strip()
        yield OtlpServer(url, grpc, token, runs, env)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(20)
        process.stderr.close()
