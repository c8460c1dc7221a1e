"""The conformance corpus (``corpus/``): spans real instrumentations sent for real agents
(``corpus/record.py`` re-records them), replayed into a real ``runtop serve`` in the
orders exporters send them, over OTLP/HTTP and gRPC. Whatever the order, each agent's
invocation is one run, named after its agent, with its input and output, a model call
per call the scripted model answered, and a tool call and result per call the tool saw.

The orders: as the spans ended (one request a span, the root last: ``SimpleSpanProcessor``,
Phoenix's default), all in one request (``BatchSpanProcessor`` within its delay), and
shuffled across requests of one to four spans (batches cut mid-run, retries, several
processes).
"""

from __future__ import annotations

import hashlib
import json
import random
import struct
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector.timeline import Timeline
from ledger_reader import SummaryBuilder, iter_events, read_lines
from tests.conftest import runs_listed
from tests.run_manager.otlp.conftest import OtlpServer, served
from tests.run_manager.otlp.test_instrumented_agents import runtop

pytest.importorskip("opentelemetry.proto")
grpc = pytest.importorskip("grpc")

CORPUS = Path(__file__).parent / "corpus"
NAMES = sorted(path.stem for path in CORPUS.glob("*.json"))
ORDERS = ("ended", "batched", "shuffled")
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def recorded(name: str) -> list[bytes]:
    """The export requests of one recording, as its exporter sent them."""
    data = (CORPUS / f"{name}.pb").read_bytes()
    found, at = [], 0
    while at < len(data):
        (size,) = struct.unpack(">I", data[at : at + 4])
        found.append(data[at + 4 : at + 4 + size])
        at += 4 + size
    return found


def requests_in(order: str, name: str, trace_id: bytes) -> list[bytes]:
    """The recording's spans, their trace made ``trace_id``, as requests in ``order``."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    spans: list[tuple[Any, Any, Any]] = []  # (resource spans, scope spans, span)
    for body in recorded(name):
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    span.trace_id = trace_id
                    spans.append((resource, scope, span))
    if order == "ended":
        groups = [[each] for each in spans]
    elif order == "batched":
        groups = [spans]
    else:
        rng = random.Random(name)
        rng.shuffle(spans)
        groups = []
        while spans:
            size = rng.randint(1, 4)
            groups.append(spans[:size])
            spans = spans[size:]
    bodies = []
    for group in groups:
        request = ExportTraceServiceRequest()
        for resource, scope, span in group:
            into = request.resource_spans.add()
            into.resource.CopyFrom(resource.resource)
            kept = into.scope_spans.add()
            kept.scope.CopyFrom(scope.scope)
            kept.spans.add().CopyFrom(span)
        bodies.append(request.SerializeToString())
    return bodies


def send(server: OtlpServer, transport: str, body: bytes) -> None:
    if transport == "http":
        posted = urllib.request.Request(
            f"{server.url}/v1/traces",
            data=body,
            headers={
                "Content-Type": "application/x-protobuf",
                "Authorization": f"Bearer {server.token}",
            },
        )
        with urllib.request.urlopen(posted, timeout=20) as answer:
            assert answer.status == 200
        return
    with grpc.insecure_channel(server.grpc) as channel:
        channel.unary_unary(EXPORT)(
            body, metadata=[("authorization", f"Bearer {server.token}")], timeout=20
        )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OtlpServer]:
    with served(tmp_path_factory.mktemp("corpus")) as started:
        yield started


def runs_of(server: OtlpServer, trace_id: str) -> list[list[Any]]:
    """The events of each ledger the server wrote for the trace."""
    found = []
    for path in sorted(server.runs.glob("*.jsonl")):
        with path.open("rb") as file:
            lines = read_lines(file.fileno(), 0, path.stat().st_size)
            events = list(iter_events(line.item for line in lines))
        if events and events[0].payload.trace_id == trace_id:
            found.append(events)
    return found


def payloads(events: list[Any], kind: str) -> list[Any]:
    return [event.payload for event in events if event.type == kind]


def what_the_run_says(events: list[Any]) -> dict[str, Any]:
    """The run as a reader folds it: what ``ls`` lists and ``show`` shows."""
    builder = SummaryBuilder()
    for event in events:
        builder.add(event)
    summary = builder.summary()
    timeline = Timeline()
    timeline.extend(events)
    [completed] = payloads(events, "run_completed")
    output = completed.output
    for update in payloads(events, "run_updated"):
        output = update.output if update.output is not None else output
    events = sorted(events, key=lambda event: event.time)  # as readers order a run's calls
    calls = payloads(events, "llm_call")
    results = {result.call_id: result for result in payloads(events, "tool_result")}
    return {
        "agent": summary.agent,
        "timeline": timeline.name,
        "status": summary.status.value,
        "error": summary.error,
        "input": summary.input,
        "output": output,
        "model_calls": len(calls),
        "tokens": all(call.prompt_tokens and call.output_tokens for call in calls),
        "messages": all(call.messages for call in calls),
        "tool_calls": [
            _tool_call(call, results.get(call.call_id)) for call in payloads(events, "tool_call")
        ],
        "session": summary.session_id,
        "conversation": summary.conversation_id,
        "models named": all(call.model for call in calls),
        "errors said once": _errors_said_once(events),
        "nodes nest": _nodes_nest(events),
    }


def _tool_call(call: Any, result: Any) -> dict[str, Any]:
    """A tool call as the run says it: its output, or that it failed (what a framework
    says of a failure, the error's text or nothing, is its own)."""
    said = {"name": call.name, "arguments": call.arguments}
    if result is not None and result.is_error:
        assert result.output, "a failed tool's result says what failed"
        return {**said, "is_error": True}
    return {**said, "output": result.output if result is not None else None}


def _errors_said_once(events: list[Any]) -> bool:
    """Whether each failure is one ``error`` of its node (or of the run): a span may record
    its exception twice, and each span an exception passes up through records it again."""
    said = [(error.node_id, error.message) for error in payloads(events, "error")]
    return len(said) == len(set(said))


def _nodes_nest(events: list[Any]) -> bool:
    """Whether every node is inside a node of the run, or directly in the run: a reader
    nests them by their spans, whatever order they were written in."""
    entered = payloads(events, "node_enter")
    spans = {node.span_id for node in entered}
    inside = {node.parent_span_id for node in entered} - spans - {None}
    return len(inside) <= 2  # the run's own span and a root wrapping it, which are no nodes


@pytest.mark.parametrize("transport", ["http", "grpc"])
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("name", NAMES)
def test_each_recording_is_one_run_read_whole_in_any_order(
    server: OtlpServer, name: str, order: str, transport: str
) -> None:
    expected = json.loads((CORPUS / f"{name}.json").read_text())
    trace = hashlib.sha256(f"{name}/{order}/{transport}".encode()).digest()[:16]
    for body in requests_in(order, name, trace):
        send(server, transport, body)
    [events] = runs_of(server, trace.hex())
    said = what_the_run_says(events)
    error = said.pop("error")
    assert said == {
        "agent": expected["agent"],
        "timeline": expected["agent"],
        "status": expected.get("status", "succeeded"),
        "input": expected["input"],
        "output": expected["output"],
        "model_calls": expected["model_calls"],
        "tokens": expected["tokens"],
        "messages": expected.get("messages", True),  # unless its spans hold none
        "tool_calls": expected["tool_calls"],
        "session": expected.get("session"),
        # Where the recording knows it (Google ADK's session; PydanticAI makes one up).
        "conversation": expected.get("conversation", said["conversation"]),
        "models named": True,
        "errors said once": True,
        "nodes nest": True,
    }
    if "error" in expected:  # the run failed of its tool's error, and says it
        assert expected["error"] in (error or "")
    elif not any(call.get("is_error") for call in expected["tool_calls"]):
        assert error is None  # nothing failed
    started = events[0].time
    assert all(event.time >= started for event in events), "an event before its run began"


def test_ls_and_show_agree_on_a_run_named_by_its_last_span(server: OtlpServer) -> None:
    """Spans sent as they end: the server's summaries, ``ls`` of the directory and
    ``show`` all say the name and input the root gave last, and who the run was for."""
    trace = hashlib.sha256(b"langgraph/ls-and-show").digest()[:16]
    for body in requests_in("ended", "langgraph", trace):
        send(server, "http", body)
    listed = {
        where: next(
            run
            for run in runs_listed(runtop(server, "ls", where, "--json"))
            if run.get("trace_id") == trace.hex()
        )
        for where in (server.url, str(server.runs))
    }
    for run in listed.values():
        said = (run["agent"], run["input"], run["session_id"], run["user_id"], run["tags"])
        assert said == ("weather", ASKED_LANGGRAPH, "session-7", "user-42", ["corpus"])
        assert run["service"] == "langgraph-service"
    run_id = listed[server.url]["run_id"]
    shown = runtop(server, "show", run_id, "--from", str(server.runs))
    assert "updated named weather" in shown
    assert "session session-7" in shown
    found = runtop(server, "ls", str(server.runs), "--json", "--filter", "session:session-7")
    assert run_id in {run["run_id"] for run in runs_listed(found)}


ASKED_LANGGRAPH = json.loads((CORPUS / "langgraph.json").read_text())["input"]


@pytest.mark.parametrize("name", NAMES)
def test_each_recording_nests_the_same_in_every_order(name: str, tmp_path: Path) -> None:
    """Each node under the node of its parent span, whatever order the spans came in:
    the timeline of the run is the same tree every time."""
    from run_manager.otlp.ingest import OtlpIngest
    from run_manager.otlp.spans import decode_protobuf

    trees = {}
    for order in ORDERS:
        ingest = OtlpIngest(tmp_path / order)
        for body in requests_in(order, name, bytes(range(16))):
            ingest.ingest(decode_protobuf(body))
        [path] = (tmp_path / order).glob("*.jsonl")
        with path.open("rb") as file:
            lines = read_lines(file.fileno(), 0, path.stat().st_size)
            timeline = Timeline()
            timeline.extend(iter_events(line.item for line in lines))
        trees[order] = sorted(
            (node.depth, node.kind.name, node.name, node.parent.name if node.parent else None)
            for node in timeline.rows()
        )
    assert trees["ended"] == trees["batched"] == trees["shuffled"]


@pytest.mark.parametrize("order", ["ended", "shuffled"])
def test_show_lists_no_node_before_the_node_it_is_in(server: OtlpServer, order: str) -> None:
    """``runtop show`` of a directory and of the server: each node's ``enter`` line after
    the ``enter`` of the node its span is inside, though the root's chain came last."""
    trace = hashlib.sha256(f"langgraph/show/{order}".encode()).digest()[:16]
    for body in requests_in(order, "langgraph", trace):
        send(server, "http", body)
    [events] = runs_of(server, trace.hex())
    entered = payloads(events, "node_enter")
    node_of = {node.span_id: node.node_id for node in entered}
    parent_of = {node.node_id: node_of.get(node.parent_span_id) for node in entered}
    run_id = events[0].run_id
    for where in (str(server.runs), server.url):
        shown = runtop(server, "show", run_id, "--from", where)
        listed, tools = [], 0
        for line in shown.splitlines():
            if "→ enter " in line:
                listed.append(line.split("→ enter ")[1])
            elif "⚙ get_weather" in line:  # a tool node's enter, call and result: one line
                tools += 1
                listed.append(f"tool:get_weather#{tools}")
        assert sorted(listed) == sorted(parent_of)
        for at, node in enumerate(listed):
            parent = parent_of[node]
            assert parent is None or listed.index(parent) < at, f"{node} before {parent}"


@pytest.mark.parametrize("name", [name for name in NAMES if name.endswith("_tool_error")])
def test_a_failure_is_said_once_across_restarts(name: str, tmp_path: Path) -> None:
    """A server restarted between each span and the next (each span read by a new ingest,
    which reads the run's ledger back): each failure is still one ``error``."""
    from run_manager.otlp.ingest import OtlpIngest
    from run_manager.otlp.spans import decode_protobuf

    for body in requests_in("ended", name, bytes(range(16))):
        OtlpIngest(tmp_path).ingest(decode_protobuf(body))
    [path] = tmp_path.glob("*.jsonl")
    with path.open("rb") as file:
        lines = read_lines(file.fileno(), 0, path.stat().st_size)
        events = list(iter_events(line.item for line in lines))
    assert payloads(events, "error")
    assert _errors_said_once(events)
