"""Hostile clients against ``runtop serve``: what they cost the server and its runs.

    .venv/bin/python bench/probe_server.py [--repeats 3] [--only bombs,storm,history]

The server is ``runtop serve`` as a real process on loopback; the clients run
in this process. Every figure is the median of ``--repeats`` (each repeat a
fresh server), and each line says the target it is held to.

- bombs: four clients without a token each POST a 1 GiB gzip bomb (1 MiB
  sent) at once, two to ``/v1/traces`` and two to ``/api/agent/runs``; the
  server's CPU time over the bombs, and the slowest of the answers a client
  with the token got (one ``GET /api/agent/runs`` every 20 ms) meanwhile.
  Target: < 0.5 s of CPU, < 100 ms waits.
- storm: a run records events at its own pace (a tool call every 10 ms)
  alone, then again while 600 clients follow it and keep reconnecting (all
  connect at once; each reads for 1-3 s, drops the connection without a
  word, and comes back at once, half of them with ``Last-Event-ID``: some
  300 reconnects a second); the run's events per second in each case, from its
  ledger's times, and the server's RSS before the storm and after it.
  Target: >= 80 % of the rate alone; RSS within 20 MB of before.
- history: a finished run of 2.5 MB; five rounds of 1,000 reads of its
  history (``/runs/{id}/events``, 100 at a time); the server's RSS before,
  its peak, and after. Target: RSS after within 20 MB of before.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

MIB = 1024 * 1024
HOLD = (1.0, 3.0)
"""Seconds a follower in the storm reads before it drops the connection and comes back."""
AGENTS = '''
import asyncio

from run_manager import tool_call


class Ticker:
    """A tool call every 10 ms, ``input`` of them: a run with a pace of its own."""

    name = "ticker"

    async def run(self, input: str) -> str:
        for number in range(int(input)):
            async with tool_call("tick", {"number": number}) as call:
                call.output = number
            await asyncio.sleep(0.01)
        return "done"


class Talker:
    """``input`` tool calls of about 500 bytes each, as fast as it can: a big history."""

    name = "talker"

    async def run(self, input: str) -> str:
        for number in range(int(input)):
            async with tool_call("say", {"number": number, "text": "x" * 200}) as call:
                call.output = "y" * 200
            if number % 100 == 0:
                await asyncio.sleep(0)
        return "done"


def agents():
    return [Ticker(), Talker()]
'''


# -- the server ---------------------------------------------------------------------------


class Served:
    """``runtop serve`` in a process of its own, with the agents above."""

    def __init__(self, home: Path, options: list[str] | None = None, code: Path = REPO) -> None:
        (home / "agents_for_probe.py").write_text(AGENTS)
        env = {
            **os.environ,
            "RUNTOP_HOME": str(home / "home"),
            "PYTHONPATH": f"{home}{os.pathsep}{code}",
        }
        profile = os.environ.get("PROBE_PROFILE")  # a file: the server runs under cProfile
        command = [sys.executable, *(["-m", "cProfile", "-o", profile] if profile else [])]
        command += ["-m", "tui.cli", "serve", "--port", "0"]
        command += ["--agents", "agents_for_probe:agents", "--ledger-dir", str(home / "runs")]
        command += options or []
        self.ledger_dir = home / "runs"
        # The server's log goes to a file: a pipe nobody reads would stop the server once full.
        self.log = home / "serve.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                command, stderr=log, stdout=subprocess.DEVNULL, text=True, env=env, cwd=code
            )
        deadline = time.monotonic() + 30
        first = ""
        while not first.endswith("\n"):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"runtop serve did not start: {self.log.read_text()}")
            time.sleep(0.05)
            first = self.log.read_text().partition("\n")[0] + (
                "\n" if "\n" in self.log.read_text() else ""
            )
        if not first.startswith("runtop serve: http://"):
            raise RuntimeError(f"runtop serve did not start: {first}")
        host, port = first.split()[2].rstrip(",").removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        [token_file] = (home / "home" / "tokens").iterdir()
        self.token = token_file.read_text().strip()

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        for text in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if text.startswith("VmRSS:"):
                return int(text.split()[1]) / 1024
        raise RuntimeError("no VmRSS")

    def tracebacks(self) -> int:
        """Tracebacks the server has written to its log."""
        return self.log.read_text().count("Traceback (most recent call last)")

    def stop(self) -> None:
        self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.communicate(timeout=20)
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()

    def request(self, method: str, path: str, body: bytes = b"", headers: str = "") -> bytes:
        return (
            f"{method} {path} HTTP/1.1\r\nHost: probe\r\nAuthorization: Bearer {self.token}\r\n"
            f"Content-Length: {len(body)}\r\n{headers}\r\n"
        ).encode() + body

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = b"" if body is None else json.dumps(body).encode()
        reader, writer = await asyncio.open_connection(self.host, self.port)
        writer.write(self.request(method, path, data, "Connection: close\r\n"))
        answer = await reader.read()
        writer.close()
        head, _, payload = answer.partition(b"\r\n\r\n")
        return int(head.split()[1]), json.loads(payload) if payload.startswith(b"{") else None

    async def status(self, run_id: str) -> str:
        """The run's status as the server's run list has it (no ledger read)."""
        _, listed = await self.call("GET", "/api/agent/runs?limit=500")
        [run] = [run for run in listed["runs"] if run["run_id"] == run_id]
        return str(run["status"])

    async def ended(self, run_id: str) -> None:
        """Return once the run has ended (asked five times a second)."""
        status = "running"
        while status == "running":
            await asyncio.sleep(0.2)
            status = await self.status(run_id)


@contextlib.contextmanager
def served(options: list[str] | None = None, code: Path = REPO) -> Iterator[Served]:
    """A server of the checkout ``code`` (another one: its code before a change, say)."""
    with tempfile.TemporaryDirectory(prefix="runtop-probe-") as temporary:
        server = Served(Path(temporary), options, code)
        try:
            yield server
        finally:
            server.stop()


# -- bombs --------------------------------------------------------------------------------


def gzip_bomb(mib: int) -> bytes:
    """``mib`` MiB of zeros gzipped (a MiB compresses to the same bytes after a full flush)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(MIB)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    end = compressor.flush()[:-8] + struct.pack("<II", crc, (mib * MIB) & 0xFFFFFFFF)
    return first + again * (mib - 1) + end


async def throw_bomb(server: Served, path: str, bomb: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: probe\r\nContent-Type: application/json\r\n"
        f"Content-Encoding: gzip\r\nContent-Length: {len(bomb)}\r\n\r\n".encode()
    )

    async def send() -> None:
        with contextlib.suppress(OSError):
            for start in range(0, len(bomb), 65536):
                writer.write(bomb[start : start + 65536])
                await writer.drain()

    sending = asyncio.create_task(send())
    answer = b""
    with contextlib.suppress(OSError, TimeoutError):
        async with asyncio.timeout(30):
            while chunk := await reader.read(65536):
                answer += chunk
    sending.cancel()
    writer.close()
    return answer


async def bombs_once(bomb: bytes) -> tuple[float, float]:
    with served() as server:
        await server.call("GET", "/api/agent/runs")
        stop = asyncio.Event()
        waits: list[float] = []

        async def lister() -> None:
            while not stop.is_set():
                began = time.perf_counter()
                status, _ = await server.call("GET", "/api/agent/runs")
                waits.append(time.perf_counter() - began)
                assert status == 200
                await asyncio.sleep(0.02)

        before = server.cpu()
        listing = asyncio.create_task(lister())
        paths = ["/v1/traces", "/api/agent/runs"] * 2
        await asyncio.gather(*(throw_bomb(server, path, bomb) for path in paths))
        await asyncio.sleep(1.0)  # whatever the server still does after the answers
        stop.set()
        await listing
        return server.cpu() - before, max(waits)


# -- a storm of followers -----------------------------------------------------------------


def run_rate(ledger: Path) -> float:
    """Events per second of a run, from its ledger's first and last event times."""
    events = [json.loads(text) for text in ledger.read_text().splitlines() if text]
    first = datetime.fromisoformat(events[0]["time"].replace("Z", "+00:00"))
    last = datetime.fromisoformat(events[-1]["time"].replace("Z", "+00:00"))
    return len(events) / (last - first).total_seconds()


async def follower(server: Served, run_id: str, stop: asyncio.Event, seed: int) -> tuple[int, int]:
    """Follows the run, drops the connection after a while, and comes back, until ``stop``.

    Returns its reconnects and how many of them were turned away (``503``): such a
    client waits out its read as it would a stream, an impatient client's pace.
    """
    chooser = random.Random(seed)
    reconnects = turned_away = 0
    while not stop.is_set():
        resume = f"Last-Event-ID: {chooser.randint(1, 50)}\r\n" if chooser.random() < 0.5 else ""
        try:
            reader, writer = await asyncio.open_connection(server.host, server.port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.write(
            server.request("GET", f"/api/agent/runs/{run_id}/events?follow=1", b"", resume)
        )
        with contextlib.suppress(OSError, TimeoutError):
            async with asyncio.timeout(chooser.uniform(*HOLD)):
                if (await reader.read(65536)).startswith(b"HTTP/1.1 503"):
                    turned_away += 1
                while await reader.read(65536):
                    pass
        writer.transport.abort()  # gone without a goodbye, as a killed client goes
        reconnects += 1
    return reconnects, turned_away


async def ticker_rate(
    server: Served, ticks: int, clients: int
) -> tuple[float, int, int, float, float]:
    """The run's events per second, the reconnects (and of them turned away), and the
    server's and the clients' CPU seconds: both share the machine's cores."""
    server_cpu, clients_cpu = server.cpu(), time.process_time()
    status, started = await server.call(
        "POST", "/api/agent/runs", {"skill_name": "ticker", "input": str(ticks)}
    )
    assert status == 201, started
    run_id = started["run_id"]
    stop = asyncio.Event()
    followers = [
        asyncio.create_task(follower(server, run_id, stop, seed)) for seed in range(clients)
    ]
    await server.ended(run_id)
    stop.set()
    counts = await asyncio.gather(*followers)
    return (
        run_rate(server.ledger_dir / f"{run_id}.jsonl"),
        sum(reconnects for reconnects, _ in counts),
        sum(turned_away for _, turned_away in counts),
        server.cpu() - server_cpu,
        time.process_time() - clients_cpu,
    )


async def storm_once(clients: int) -> tuple[float, ...]:
    with served() as server:
        await ticker_rate(server, 100, 0)  # warm up
        alone, _, _, _, _ = await ticker_rate(server, 400, 0)
        before = server.rss_mb()
        stormed, reconnects, away, server_cpu, clients_cpu = await ticker_rate(server, 400, clients)
        await asyncio.sleep(1.0)
        after = server.rss_mb()
        tracebacks = server.tracebacks()
        return (
            alone,
            stormed,
            before,
            after,
            reconnects,
            away,
            tracebacks,
            server_cpu / reconnects * 1000,
            clients_cpu / reconnects * 1000,
            os.getloadavg()[0],
        )


# -- history reads ------------------------------------------------------------------------


async def read_history(server: Served, run_id: str) -> int:
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(server.request("GET", f"/api/agent/runs/{run_id}/events", b""))
    size = 0
    while chunk := await reader.read(65536):
        size += len(chunk)
        if chunk.endswith(b"0\r\n\r\n"):  # the chunked body's end
            break
    writer.close()
    return size


async def history_once(rounds: int, reads: int, at_once: int) -> tuple[float, float, float, int]:
    with served() as server:
        status, started = await server.call(
            "POST", "/api/agent/runs", {"skill_name": "talker", "input": "2500"}
        )
        assert status == 201
        run_id = started["run_id"]
        await server.ended(run_id)
        size = (server.ledger_dir / f"{run_id}.jsonl").stat().st_size
        await read_history(server, run_id)
        before = server.rss_mb()
        peak = before
        gate = asyncio.Semaphore(at_once)

        async def one() -> None:
            nonlocal peak
            async with gate:
                await read_history(server, run_id)
                peak = max(peak, server.rss_mb())

        for _ in range(rounds):
            await asyncio.gather(*(one() for _ in range(reads)))
        await asyncio.sleep(1.0)
        return before, peak, server.rss_mb(), size


# -- main ---------------------------------------------------------------------------------


def median(values: list[float]) -> float:
    return statistics.median(values)


def report(name: str, runs: list[tuple[Any, ...]], line: Callable[..., str]) -> None:
    columns = list(zip(*runs, strict=True))
    print(f"{name}: " + line(*(median([float(v) for v in column]) for column in columns)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="bombs,storm,history")
    parser.add_argument("--clients", type=int, default=600)
    options = parser.parse_args()
    chosen = set(options.only.split(","))
    print(f"runtop serve probe, {datetime.now():%Y-%m-%d %H:%M}, medians of {options.repeats}")
    if "bombs" in chosen:
        bomb = gzip_bomb(1024)
        runs = [asyncio.run(bombs_once(bomb)) for _ in range(options.repeats)]
        report(
            "4 unauthenticated 1 GiB gzip bombs",
            runs,
            lambda cpu, wait: (
                f"server CPU {cpu:.2f} s (target < 0.5), "
                f"slowest other client {wait * 1000:.0f} ms (target < 100)"
            ),
        )
    if "storm" in chosen:
        runs = [asyncio.run(storm_once(options.clients)) for _ in range(options.repeats)]
        report(
            f"a run followed by {options.clients} reconnecting clients",
            runs,
            lambda alone, stormed, before, after, reconnects, away, traced, cpu, clients, load: (
                f"{stormed:.0f} events/s vs {alone:.0f} alone = {stormed / alone:.0%} "
                f"(target >= 80%); {reconnects:.0f} reconnects ({away:.0f} turned away), "
                f"{traced:.0f} tracebacks logged; server RSS {before:.0f} MB before, "
                f"{after:.0f} MB after (target within 20 MB); CPU a reconnect: server "
                f"{cpu:.2f} ms, clients {clients:.2f} ms; load {load:.1f}"
            ),
        )
    if "history" in chosen:
        runs = [asyncio.run(history_once(5, 1000, 100)) for _ in range(options.repeats)]
        report(
            "5 rounds of 1,000 history reads, 100 at a time",
            runs,
            lambda before, peak, after, size: (
                f"of a {size / MIB:.1f} MB run: server RSS {before:.0f} MB before, "
                f"peak {peak:.0f} MB, {after:.0f} MB after (target within 20 MB of before)"
            ),
        )


if __name__ == "__main__":
    main()
