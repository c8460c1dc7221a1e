"""OTLP ingest's figures: spans per second into ledgers, and export-to-client latency.

    .venv/bin/python bench/otlp.py [--repeats 5] [--peer CHECKOUT] [--scratch DIR]

The server is a real ``runtop serve`` process on loopback, writing ledgers
into a temporary directory; the exporters and the client run in this
process. Every figure is the median of ``--repeats``.

- ingest: export requests of 512 spans each (the OpenTelemetry SDK's batch
  size), protobuf, as PydanticAI's instrumentation makes them: per run one
  ``invoke_agent`` span, four ``chat`` spans with token counts and four
  ``execute_tool`` spans with arguments and results. Four connections
  post them at once; spans per second from the first request to the last
  answer, every span written to a ledger by then. Then the same for
  OpenInference spans, as openinference-instrumentation-langchain makes
  them for a LangGraph agent: per run the graph's root ``CHAIN`` span with
  its input and output, four ``LLM`` spans with the model, token counts and
  the conversation flattened (a user message in, a tool call out) and four
  ``TOOL`` spans with their input and a ``ToolMessage`` as output. Beside it, in the same
  run, two floors: decoding the same requests in this process, no writing;
  and creating as many ledger files (one per run) with as many bytes, no
  decoding. The ledger directories are removed only after the last run:
  ext4 here scans past inodes freed in the last minutes when it allocates
  one, so deleting one run's 6,720 files slows the next run's creations
  (a server's ledger directory does not lose thousands of files a minute);
  runs of the bench less than five minutes apart slow each other's for the
  same reason.
  They are made under ``--scratch`` (default ``bench/data/otlp``), not
  ``/tmp``: every test run on this shared machine deletes its ``tmp_path``
  there, and a file created in ``/tmp`` took 1.7-1.9 ms against 0.08-0.13
  ms beside the repository in the same minute.
- with ``--peer CHECKOUT``, each repeat also runs that checkout's ``runtop
  serve`` on the same requests, GenAI and OpenInference, in turns (each goes
  first every other repeat), so two versions are compared in the same minutes
  (each pair's ratio printed).
- beside each rate, the server process's CPU time per span while it
  ingested (from ``/proc``), user and system apart: steadier than the wall
  clock on a shared machine, where the server gets only part of a core.
  The system share is mostly creating and writing the ledger files and
  swings with the disk's recent past; compare versions by the user share.
- latency: the OpenTelemetry SDK's own exporter (``OTLPSpanExporter`` with a
  ``SimpleSpanProcessor``, so a span is sent when it ends) against a client
  following the server's global SSE stream, as the TUI attached to it does:
  from ``span.end()`` to the span's ``tool_call`` decoded at the client,
  p50 and p99 over 300 spans. (The batching processor a service would use
  adds its own ``schedule_delay``, 5 s by default.)

Measured 2026-12-06 (``--repeats 5 --peer`` the code before this round, 70067e1,
in turns; load average 3.6 falling to 1.0, decoding floor 215,000 spans/s, file
creation floor 235,000): GenAI 28,400 spans/s (before 26,115), OpenInference
23,175 (before 23,655), OpenLLMetry 19,650 (before 19,055); server CPU a span
31.9 / 39.7 / 44.3 us (before 30.9 / 37.4 / 43.8). A second run at load 4.6-6.2
(decoding floor 70,000) made 9,524 / 8,977 / 9,939 (before 9,324 / 11,962 /
10,163): the machine, not the code. Earlier, 2026-12-04: OpenInference 28,408,
GenAI 32,120 at load 1.9-2.8.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, NamedTuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SPANS_PER_REQUEST = 512
REQUESTS = 120
CONNECTIONS = 4
LATENCY_SPANS = 300


class Server:
    """``runtop serve`` in a process of its own, with a fresh ledger directory."""

    def __init__(self, scratch: Path, repo: Path = REPO) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="otlp-", dir=scratch))
        env = {**os.environ, "RUNTOP_HOME": str(self.home / "home"), "PYTHONPATH": str(repo)}
        command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0"]
        command += ["--ledger-dir", str(self.home / "runs")]
        # Started in the checkout: ``python -m`` puts the working directory first on the
        # path, before PYTHONPATH, so started elsewhere a peer would run this checkout's code.
        self.process = subprocess.Popen(
            command, stderr=subprocess.PIPE, text=True, env=env, cwd=repo
        )
        assert self.process.stderr is not None
        first = self.process.stderr.readline()
        self.url = first.split()[2].rstrip(",")
        port = int(self.url.rsplit(":", 1)[1])
        from run_manager.server.tokens import token_path

        self.token = token_path("127.0.0.1", port, self.home / "home").read_text().strip()

    def cpu_seconds(self) -> tuple[float, float]:
        """User and system CPU the server process has used so far (Linux ``/proc``)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rpartition(")")[2].split()
        tick = os.sysconf("SC_CLK_TCK")
        return int(fields[11]) / tick, int(fields[12]) / tick

    def ledger_lines(self) -> int:
        return sum(path.read_bytes().count(b"\n") for path in (self.home / "runs").glob("*.jsonl"))

    def ledger_sizes(self) -> list[int]:
        return [path.stat().st_size for path in (self.home / "runs").glob("*.jsonl")]

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(20)
        assert self.process.stderr is not None
        self.process.stderr.close()


RunSpans = Callable[[bytes, int], list[Any]]
"""One run's spans of a family: its trace id and the time it begins; ``RUN_SPANS`` of them."""

RUN_SPANS: Final = 9
RUN_LINES: Final = 2 + 4 * 3 + 4 * 4
"""The ledger lines a run of four model calls and four tool calls makes: ``run_started``
and ``run_completed``; ``node_enter``, ``llm_call`` and ``node_exit`` a call; ``node_enter``,
``tool_call``, ``tool_result`` and ``node_exit`` a tool call."""


def span(
    trace_id: bytes,
    span_id: bytes,
    parent_id: bytes,
    name: str,
    start: int,
    end: int,
    attributes: dict[str, str | int],
) -> Any:
    """A span in OTLP's protobuf, its attributes strings and integers."""
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    made = Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent_id,
        name=name,
        start_time_unix_nano=start,
        end_time_unix_nano=end,
    )
    for key, value in attributes.items():
        said = AnyValue(int_value=value) if isinstance(value, int) else AnyValue(string_value=value)
        made.attributes.append(KeyValue(key=key, value=said))
    return made


def requests_of(run_spans: RunSpans, count: int) -> tuple[list[bytes], int]:
    """``count`` export requests of runs ``run_spans`` makes, each as many whole runs as fit
    in ``SPANS_PER_REQUEST``, and the ledger lines they make."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

    now = time.time_ns()
    bodies: list[bytes] = []
    lines = 0
    for _ in range(count):
        request = ExportTraceServiceRequest()
        resource = request.resource_spans.add()
        service = KeyValue(key="service.name", value=AnyValue(string_value="bench"))
        resource.resource.attributes.append(service)
        spans = resource.scope_spans.add().spans
        while len(spans) + RUN_SPANS <= SPANS_PER_REQUEST:
            spans.extend(run_spans(secrets.token_bytes(16), now))
            lines += RUN_LINES
        bodies.append(request.SerializeToString())
    return bodies, lines


def genai_run(trace_id: bytes, now: int) -> list[Any]:
    """A PydanticAI agent's run in the GenAI conventions: its ``invoke_agent`` span, four
    ``chat`` spans with token counts, four ``execute_tool`` spans with arguments and
    results."""
    agent_id = secrets.token_bytes(8)
    spans = []
    for step in range(4):
        at = now + step * 1000
        spans.append(
            span(
                trace_id,
                secrets.token_bytes(8),
                agent_id,
                "chat gpt-5",
                at,
                at + 500,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-5",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.usage.input_tokens": 812,
                    "gen_ai.usage.output_tokens": 41,
                },
            )
        )
        spans.append(
            span(
                trace_id,
                secrets.token_bytes(8),
                agent_id,
                "execute_tool search",
                at + 600,
                at + 900,
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "search",
                    "gen_ai.tool.call.id": f"call_{secrets.token_hex(8)}",
                    "gen_ai.tool.call.arguments": '{"q": "textual datatable"}',
                    "gen_ai.tool.call.result": "DataTable: rows, columns, cursor",
                },
            )
        )
    spans.append(
        span(
            trace_id,
            agent_id,
            b"",
            "invoke_agent researcher",
            now,
            now + 5000,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "researcher",
            },
        )
    )
    return spans


def openinference_run(trace_id: bytes, now: int) -> list[Any]:
    """A LangGraph agent's run as openinference-instrumentation-langchain makes it: the
    graph's root ``CHAIN`` span with its input and output, four ``LLM`` spans with the
    model, token counts and the conversation flattened (a user message in, a tool call
    out), four ``TOOL`` spans with their input and a ``ToolMessage`` as output."""
    root_id = secrets.token_bytes(8)
    output = "llm.output_messages.0.message.tool_calls.0.tool_call"
    spans = []
    for step in range(4):
        at = now + step * 1000
        call_id = f"call_{secrets.token_hex(8)}"
        spans.append(
            span(
                trace_id,
                secrets.token_bytes(8),
                root_id,
                "ChatOpenAI",
                at,
                at + 500,
                {
                    "openinference.span.kind": "LLM",
                    "llm.model_name": "gpt-5",
                    "llm.provider": "openai",
                    "llm.token_count.prompt": 812,
                    "llm.token_count.completion": 41,
                    "llm.input_messages.0.message.role": "user",
                    "llm.input_messages.0.message.content": "textual datatable",
                    "llm.output_messages.0.message.role": "assistant",
                    f"{output}.id": call_id,
                    f"{output}.function.name": "search",
                    f"{output}.function.arguments": '{"q": "textual datatable"}',
                },
            )
        )
        result = (
            '{"type": "tool", "data": {"content": "DataTable: rows, columns, cursor", '
            f'"tool_call_id": "{call_id}"}}}}'
        )
        spans.append(
            span(
                trace_id,
                secrets.token_bytes(8),
                root_id,
                "search",
                at + 600,
                at + 900,
                {
                    "openinference.span.kind": "TOOL",
                    "tool.name": "search",
                    "input.value": "textual datatable",
                    "output.value": result,
                },
            )
        )
    spans.append(
        span(
            trace_id,
            root_id,
            b"",
            "researcher",
            now,
            now + 5000,
            {
                "openinference.span.kind": "CHAIN",
                "input.value": '{"messages": [["user", "How do I page a DataTable?"]]}',
                "output.value": (
                    '{"messages": [{"type": "ai", "data": {"content": "Use the cursor."}}]}'
                ),
            },
        )
    )
    return spans


def openllmetry_run(trace_id: bytes, now: int) -> list[Any]:
    """An OpenAI SDK loop's run as ``traceloop-sdk`` traces it: its ``agent`` span, four
    ``chat`` spans of the OpenAI instrumentation with GenAI messages and token counts, four
    ``tool`` spans with the call's wrapped arguments and its output."""
    agent_id = secrets.token_bytes(8)
    asked = '[{"role": "user", "parts": [{"type": "text", "content": "textual datatable"}]}]'
    spans = []
    for step in range(4):
        at = now + step * 1000
        answered = (
            '[{"role": "assistant", "parts": [{"type": "tool_call", "id": '
            f'"call_{secrets.token_hex(8)}", "name": "search", '
            '"arguments": {"q": "textual datatable"}}]}]'
        )
        spans.append(
            span(
                trace_id,
                secrets.token_bytes(8),
                agent_id,
                "openai.chat",
                at,
                at + 500,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.agent.name": "researcher",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "gpt-5",
                    "gen_ai.input.messages": asked,
                    "gen_ai.output.messages": answered,
                    "gen_ai.usage.input_tokens": 812,
                    "gen_ai.usage.output_tokens": 41,
                },
            )
        )
        spans.append(
            span(
                trace_id,
                secrets.token_bytes(8),
                agent_id,
                "search.tool",
                at + 600,
                at + 900,
                {
                    "traceloop.span.kind": "tool",
                    "traceloop.entity.name": "search",
                    "gen_ai.tool.name": "search",
                    "traceloop.entity.input": '{"args": [], "kwargs": {"q": "textual datatable"}}',
                    "traceloop.entity.output": '"DataTable: rows, columns, cursor"',
                },
            )
        )
    spans.append(
        span(
            trace_id,
            agent_id,
            b"",
            "researcher.agent",
            now,
            now + 5000,
            {
                "traceloop.span.kind": "agent",
                "traceloop.entity.name": "researcher",
                "gen_ai.agent.name": "researcher",
                "traceloop.entity.input": '{"args": ["textual datatable"]}',
                "traceloop.entity.output": '"Use the cursor."',
            },
        )
    )
    return spans


FAMILIES: Final[dict[str, RunSpans]] = {
    "GenAI": genai_run,
    "OpenInference": openinference_run,
    "OpenLLMetry": openllmetry_run,
}
"""Each family's runs."""


async def post_all(server: Server, bodies: list[bytes]) -> float:
    import aiohttp

    headers = {
        "Authorization": f"Bearer {server.token}",
        "Content-Type": "application/x-protobuf",
    }
    queue = list(reversed(bodies))
    connector = aiohttp.TCPConnector(limit=CONNECTIONS)

    async def sender(session: aiohttp.ClientSession) -> None:
        while queue:
            body = queue.pop()
            async with session.post(f"{server.url}/v1/traces", data=body) as response:
                await response.read()
                assert response.status == 200, response.status

    async with aiohttp.ClientSession(headers=headers, connector=connector) as session:
        began = time.perf_counter()
        await asyncio.gather(*(sender(session) for _ in range(CONNECTIONS)))
        return time.perf_counter() - began


def decode_floor(bodies: list[bytes]) -> float:
    """Spans per second decoding the same requests here (protobuf to spans, nothing written)."""
    from run_manager.otlp.spans import decode_protobuf

    began = time.perf_counter()
    spans = sum(len(decode_protobuf(body).spans) for body in bodies)
    return spans / (time.perf_counter() - began)


def create_floor(scratch: Path, sizes: list[int]) -> float:
    """Seconds to create ledger files of these sizes in a fresh directory, one write each."""
    directory = Path(tempfile.mkdtemp(prefix="files-", dir=scratch))
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
    began = time.perf_counter()
    for number, size in enumerate(sizes):
        fd = os.open(directory / f"run_20261201T000000000_{number:016x}.jsonl", flags, 0o600)
        try:
            os.write(fd, b"x" * size)
        finally:
            os.close(fd)
    return time.perf_counter() - began


class Ingested(NamedTuple):
    """One server's run of the ingest."""

    rate: float
    """Spans per second, from the first request to the last answer."""
    user: float
    system: float
    """The server's CPU microseconds per span while it ingested, in user space and in the
    kernel (mostly creating and writing the ledger files: on this shared machine the
    kernel's share swings with what the disk has been through, the user share far less)."""
    sizes: list[int]


def ingest_once(scratch: Path, bodies: list[bytes], lines: int, repo: Path = REPO) -> Ingested:
    """The requests posted to a fresh server of ``repo``, every span written by the end."""
    server = Server(scratch, repo)
    try:
        user_before, system_before = server.cpu_seconds()
        elapsed = asyncio.run(post_all(server, bodies))
        user, system = server.cpu_seconds()
        written = server.ledger_lines()
        assert written == lines, f"{written} ledger lines, expected {lines}"
        sizes = server.ledger_sizes()
    finally:
        server.stop()
    spans = len(bodies) * (SPANS_PER_REQUEST // RUN_SPANS * RUN_SPANS)
    return Ingested(
        spans / elapsed,
        (user - user_before) / spans * 1e6,
        (system - system_before) / spans * 1e6,
        sizes,
    )


def latency_once(scratch: Path) -> list[float]:
    """Seconds from ``span.end()`` (the real exporter) to the event at an SSE client."""
    import aiohttp
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from inspector.attach_client import SseParser
    from ledger_reader import ToolCall, decode_line

    server = Server(scratch)
    ended: dict[str, float] = {}
    arrived: dict[str, float] = {}
    ready = threading.Event()
    done = threading.Event()

    async def follow() -> None:
        parser = SseParser()
        headers = {"Authorization": f"Bearer {server.token}"}
        async with (
            aiohttp.ClientSession(headers=headers) as session,
            session.get(f"{server.url}/api/agent/runs/events/stream") as response,
        ):
            async for chunk in response.content.iter_any():
                now = time.perf_counter()
                for frame in parser.feed(chunk):
                    if frame.event == "ready":
                        ready.set()
                        continue
                    event = decode_line(frame.data)
                    if isinstance(event, ToolCall) and event.payload.call_id:
                        arrived[event.payload.call_id] = now
                if len(arrived) >= LATENCY_SPANS:
                    done.set()
                    return

    follower = threading.Thread(target=lambda: asyncio.run(follow()), daemon=True)
    follower.start()
    ready.wait(10)
    exporter = OTLPSpanExporter(
        endpoint=f"{server.url}/v1/traces", headers={"Authorization": f"Bearer {server.token}"}
    )
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")
    try:
        for number in range(LATENCY_SPANS):
            call_id = f"call_{number:016x}"
            span = tracer.start_span(
                "execute_tool search",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "search",
                    "gen_ai.tool.call.id": call_id,
                    "gen_ai.tool.call.arguments": '{"q": "textual"}',
                    "gen_ai.tool.call.result": "found",
                },
            )
            ended[call_id] = time.perf_counter()
            span.end()  # SimpleSpanProcessor: exported now, on this thread
            time.sleep(0.005)
        done.wait(10)
    finally:
        provider.shutdown()
        server.stop()
    return [arrived[key] - ended[key] for key in ended if key in arrived]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--peer", type=Path, help="another checkout to run alternately")
    parser.add_argument("--scratch", type=Path, default=REPO / "bench" / "data" / "otlp")
    args = parser.parse_args()
    args.scratch.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="runtop-bench-otlp-", dir=args.scratch))
    try:
        measure(args.repeats, scratch, args.peer)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _runs(rates: list[float]) -> str:
    return ", ".join(f"{rate:,.0f}" for rate in rates)


def _cpu(runs: list[Ingested]) -> str:
    total = statistics.median(run.user + run.system for run in runs)
    user = statistics.median(run.user for run in runs)
    system = statistics.median(run.system for run in runs)
    each = ", ".join(f"{run.user:.1f}+{run.system:.1f}" for run in runs)
    return f"{total:.1f} us (user {user:.1f}, system {system:.1f}; runs user+system {each})"


def measure(repeats: int, scratch: Path, peer: Path | None) -> None:
    mine: dict[str, list[Ingested]] = {family: [] for family in FAMILIES}
    peers: dict[str, list[Ingested]] = {family: [] for family in FAMILIES}
    floors: list[float] = []
    creates: list[float] = []
    for repeat in range(repeats):
        for family, requests in FAMILIES.items():
            bodies, lines = requests_of(requests, REQUESTS)
            if peer is not None and repeat % 2:  # each goes first in turn: neither always second
                peers[family].append(ingest_once(scratch, bodies, lines, peer))
            mine[family].append(ingest_once(scratch, bodies, lines))
            if peer is not None and not repeat % 2:
                peers[family].append(ingest_once(scratch, bodies, lines, peer))
        bodies, _ = requests_of(genai_run, REQUESTS)
        spans = len(bodies) * (SPANS_PER_REQUEST // RUN_SPANS * RUN_SPANS)
        floors.append(decode_floor(bodies))
        creates.append(spans / create_floor(scratch, mine["GenAI"][-1].sizes))
    size = len(bodies[0])
    per_request = SPANS_PER_REQUEST // RUN_SPANS * RUN_SPANS
    print(
        f"OTLP ingest over loopback into ledgers, {REQUESTS} requests of "
        f"{per_request} spans ({size / 1024:.0f} KiB each for GenAI), "
        f"{CONNECTIONS} connections; target >= 20,000 spans/s each family"
    )
    for family in FAMILIES:
        rates = [run.rate for run in mine[family]]
        print(
            f"  {family}: {statistics.median(rates):,.0f} spans/s (runs {_runs(rates)}); "
            f"the server's CPU per span (HTTP and decoding included) {_cpu(mine[family])}"
        )
        if peer is not None:
            peer_rates = [run.rate for run in peers[family]]
            pairs = zip(rates, peer_rates, strict=True)
            print(
                f"    peer {peer}, the same requests in turns: "
                f"{statistics.median(peer_rates):,.0f} spans/s (runs {_runs(peer_rates)}); "
                f"CPU per span {_cpu(peers[family])}; this checkout's rate / the peer's, "
                f"pair by pair: {', '.join(f'{a / b:.2f}' for a, b in pairs)}"
            )
    print(f"  floor, decoding the GenAI requests only: {statistics.median(floors):,.0f} spans/s")
    print(
        f"  floor, creating their ledger files only ({len(bodies) * per_request // RUN_SPANS} "
        f"files, same sizes): {statistics.median(creates):,.0f} spans/s (runs {_runs(creates)})"
    )
    p50s: list[float] = []
    p99s: list[float] = []
    for _ in range(repeats):
        latencies = latency_once(scratch)
        p50s.append(percentile(latencies, 0.5) * 1000)
        p99s.append(percentile(latencies, 0.99) * 1000)
    print(
        f"export to an attached client (real exporter, SimpleSpanProcessor): "
        f"p50 {statistics.median(p50s):.2f} ms, p99 {statistics.median(p99s):.2f} ms "
        f"(p50s {', '.join(f'{value:.2f}' for value in p50s)})"
    )


if __name__ == "__main__":
    main()
