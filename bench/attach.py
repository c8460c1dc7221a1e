"""The attach API's figures: SSE throughput, record-to-client latency, 100 clients at once.

    .venv/bin/python bench/attach.py [--repeats 5]

The server is a separate process (``runtop serve``'s code: a Manager writing
ledgers and an AttachServer on loopback) running agents defined here; the
clients run in this process. Every figure is the median of ``--repeats``.

- throughput: one client on the global stream while one run records events
  as fast as it can; events decoded per second at the client. Also the
  history of that run served from its ledger (``/runs/{id}/events``).
- latency: from the event's recorded ``time`` to its decoding at the
  client, for a run recording 1,000 events/s.
- 100 clients: 20 runs at 100 events/s each (2,000 events/s) followed by 0
  and then 100 clients on the global stream; how long the runs took (their
  pace is fixed, so a slower server would stretch them) and the latency the
  clients saw (each chunk's first and last event).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TOKEN = "bench-token"


# -- the server process -----------------------------------------------------------------


class Firehose:
    """Records ``input`` model chunks as fast as it can."""

    name = "firehose"

    async def run(self, input: str) -> str:
        from run_manager import model_call

        count = int(input)
        async with model_call("m") as model:
            for number in range(count):
                model.chunk(f"token {number} of a streamed answer, about sixty bytes long")
                if number % 1000 == 999:
                    await asyncio.sleep(0)  # let the server write what was recorded
        return "done"


class Paced:
    """Records ``count`` chunks, one every ``interval`` seconds: ``"count,interval"``."""

    name = "paced"

    async def run(self, input: str) -> str:
        from run_manager import model_call

        count, interval = input.split(",")
        step = float(interval)
        loop = asyncio.get_running_loop()
        start = loop.time()
        async with model_call("m") as model:
            for number in range(int(count)):
                model.chunk(f"token {number} of a streamed answer, about sixty bytes long")
                # Keep to the schedule (not sleep-after-work), so lateness shows as lateness.
                delay = start + (number + 1) * step - loop.time()
                await asyncio.sleep(max(0.0, delay))
        return "done"


def serve(port: int, ledgers: str) -> None:
    from aiohttp import web

    from run_manager import Manager
    from run_manager.server.attach import API_PREFIX, AttachServer

    async def main() -> None:
        manager = Manager(ledger_dir=ledgers, agents=[Firehose(), Paced()], retained_runs=1000)
        server = AttachServer(manager, token=TOKEN)
        root = web.Application()
        root.add_subapp(API_PREFIX, server.app)
        runner = web.AppRunner(root, access_log=None, shutdown_timeout=1)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        print("ready", flush=True)
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await stop.wait()
        await runner.cleanup()
        await manager.close(grace=1)

    asyncio.run(main())


# -- the clients ------------------------------------------------------------------------


class Server:
    def __init__(self) -> None:
        self.ledgers = tempfile.mkdtemp(prefix="runtop-bench-attach-")
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(self.port), self.ledgers],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready"
        self.url = f"http://127.0.0.1:{self.port}/api/agent/"

    def start(self, skill: str, input: str) -> str:
        request = urllib.request.Request(
            self.url + "runs",
            data=json.dumps({"skill_name": skill, "input": input}).encode(),
            headers={"Authorization": f"Bearer {TOKEN}"},
            method="POST",
        )
        with urllib.request.urlopen(request) as response:
            return str(json.load(response)["run_id"])

    def run_info(self, run_id: str) -> dict[str, object]:
        request = urllib.request.Request(
            self.url + f"runs/{run_id}", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        with urllib.request.urlopen(request) as response:
            info: dict[str, object] = json.load(response)["run"]
            return info

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(10)
        assert self.process.stdout is not None
        self.process.stdout.close()
        import shutil

        shutil.rmtree(self.ledgers, ignore_errors=True)


def _lateness(data: bytes) -> float | None:
    """Seconds from an event's recorded time to now (``None``: not an event)."""
    from ledger_reader import DamagedLine, decode_line

    event = decode_line(data)
    if event is None or isinstance(event, DamagedLine):
        return None
    moment = datetime.fromisoformat(event.time.replace("Z", "+00:00"))
    return time.time() - moment.timestamp()


async def follow_global(
    server: Server, until: int, *, ready: asyncio.Event, latencies: list[float] | None = None
) -> tuple[int, float]:
    """Decode events from the global stream until ``until`` have come; (count, seconds)."""
    import aiohttp

    from inspector.attach_client import SseParser
    from ledger_reader import decode_line

    headers = {"Authorization": f"Bearer {TOKEN}"}
    count = 0
    first = 0.0
    parser = SseParser()
    async with (
        aiohttp.ClientSession(headers=headers) as session,
        session.get(server.url + "runs/events/stream") as response,
    ):
        async for chunk in response.content.iter_any():
            for frame in parser.feed(chunk):
                if frame.event == "ready":
                    ready.set()
                    continue
                if frame.event is not None:
                    continue
                decode_line(frame.data)
                late = _lateness(frame.data)
                if latencies is not None and late is not None:
                    latencies.append(late)
                if count == 0:
                    first = time.perf_counter()
                count += 1
            if count >= until:
                break
    return count, time.perf_counter() - first


async def light_follower(
    server: Server,
    stop: asyncio.Event,
    ready: asyncio.Event,
    latencies: list[float],
    restarts: list[int],
) -> int:
    """One of many clients: reads every byte, times each chunk's first and last event.

    Turned away (``503``, the server's loop running late), it comes back when told to.
    """
    import aiohttp

    headers = {"Authorization": f"Bearer {TOKEN}"}
    received = 0
    async with aiohttp.ClientSession(headers=headers) as session:
        response = await session.get(server.url + "runs/events/stream")
        while response.status == 503:
            response.release()
            await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
            response = await session.get(server.url + "runs/events/stream")
        ready.set()
        async for chunk in response.content.iter_any():
            received += len(chunk)
            first = chunk.find(b"data: {")
            last = chunk.rfind(b"data: {")
            restarts[0] += chunk.count(b"event: stream_restarted")
            for start in {first, last}:
                end = chunk.find(b"\n", start) if start >= 0 else -1
                late = _lateness(chunk[start + 6 : end]) if end > 0 else None
                if late is not None:
                    latencies.append(late)
            if stop.is_set():
                break
        response.release()
    return received


async def until_ended(server: Server, run_id: str) -> dict[str, object]:
    """Ask the server (another process) until the run has ended; its summary."""
    while True:
        info = await asyncio.to_thread(server.run_info, run_id)
        if info["status"] != "running":
            return info
        await asyncio.sleep(0.1)


async def throughput(server: Server, events: int) -> tuple[float, float]:
    ready = asyncio.Event()
    follower = asyncio.create_task(follow_global(server, events, ready=ready))
    await ready.wait()
    run_id = await asyncio.to_thread(server.start, "firehose", str(events))
    count, seconds = await follower
    live = count / seconds
    # The same run's history from its ledger, through the per-run stream.
    import aiohttp

    from inspector.attach_client import SseParser
    from ledger_reader import decode_line

    await until_ended(server, run_id)
    parser = SseParser()
    count = 0
    started = time.perf_counter()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        aiohttp.ClientSession(headers=headers) as session,
        session.get(server.url + f"runs/{run_id}/events") as response,
    ):
        async for chunk in response.content.iter_any():
            for frame in parser.feed(chunk):
                decode_line(frame.data)
                count += 1
    history = count / (time.perf_counter() - started)
    return live, history


async def latency(server: Server, count: int, interval: float) -> list[float]:
    ready = asyncio.Event()
    latencies: list[float] = []
    follower = asyncio.create_task(
        follow_global(server, count + 4, ready=ready, latencies=latencies)
    )
    await ready.wait()
    await asyncio.to_thread(server.start, "paced", f"{count},{interval}")
    await follower
    return latencies


async def many_clients(
    server: Server, clients: int, runs: int, per_run: int
) -> tuple[float, list[float]]:
    """Start ``runs`` paced runs with ``clients`` followers; (slowest run's seconds, latencies)."""
    stop = asyncio.Event()
    latencies: list[float] = []
    restarts = [0]
    readies = [asyncio.Event() for _ in range(clients)]
    followers = [
        asyncio.create_task(light_follower(server, stop, ready, latencies, restarts))
        for ready in readies
    ]
    for ready in readies:
        await ready.wait()
    await asyncio.sleep(0.2)
    ids = [await asyncio.to_thread(server.start, "paced", f"{per_run},0.01") for _ in range(runs)]
    took = []
    for run_id in ids:
        info = await until_ended(server, run_id)
        start = datetime.fromisoformat(str(info["started_at"]).replace("Z", "+00:00"))
        end = datetime.fromisoformat(str(info["completed_at"]).replace("Z", "+00:00"))
        took.append((end - start).total_seconds())
    stop.set()
    await asyncio.sleep(0.5)
    for follower in followers:
        follower.cancel()
    for outcome in await asyncio.gather(*followers, return_exceptions=True):
        if isinstance(outcome, Exception):
            raise outcome
    if restarts[0]:
        print(f"  ({restarts[0]} stream_restarted: clients fell behind)")
    return max(took), latencies


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]), sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--events", type=int, default=200_000)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; server in its own process, clients here")

    lives, histories, p50s, p99s = [], [], [], []
    alone, crowded, crowd_p50, crowd_p99 = [], [], [], []
    for _ in range(args.repeats):
        server = Server()
        try:
            live, history = asyncio.run(throughput(server, args.events))
            lives.append(live)
            histories.append(history)
            seen = asyncio.run(latency(server, 3000, 0.001))
            p50s.append(percentile(seen, 0.5) * 1000)
            p99s.append(percentile(seen, 0.99) * 1000)
            slowest, _ = asyncio.run(many_clients(server, 0, 20, 500))
            alone.append(slowest)
            slowest, seen = asyncio.run(many_clients(server, 100, 20, 500))
            crowded.append(slowest)
            crowd_p50.append(percentile(seen, 0.5) * 1000)
            crowd_p99.append(percentile(seen, 0.99) * 1000)
        finally:
            server.stop()
    median = statistics.median
    print(
        f"one SSE stream, live (global stream while recording): {median(lives):,.0f} events/s "
        f"(runs: {', '.join(f'{x:,.0f}' for x in lives)}; target >= 50,000)"
    )
    print(f"one SSE stream, a recorded run's history: {median(histories):,.0f} events/s")
    print(
        f"record -> client latency at 1,000 events/s: p50 {median(p50s):.2f} ms, "
        f"p99 {median(p99s):.2f} ms (targets 5 / 50 ms)"
    )
    print(
        f"20 runs x 500 events at 100/s each (5.0 s by the clock): slowest run took "
        f"{median(alone):.2f} s with no client, {median(crowded):.2f} s with 100 clients "
        f"following; their latency p50 {median(crowd_p50):.1f} ms, p99 {median(crowd_p99):.1f} ms"
    )


if __name__ == "__main__":
    main()
