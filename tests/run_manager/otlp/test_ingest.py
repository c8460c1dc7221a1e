"""OTLP ingest: spans into ledgers, over a real ``runtop serve`` on loopback."""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import os
import resource
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from ledger_reader import RunEvent, encode_event, scan_paths
from ledger_reader.events import PAYLOAD_CAP_BYTES
from run_manager import Manager
from run_manager.hub import Hub
from run_manager.otlp.ingest import LedgerWriteFailed, OtlpIngest
from run_manager.otlp.route import MAX_OTLP_BODY
from run_manager.otlp.spans import decode_json
from run_manager.server.attach import AttachServer
from run_manager.server.frame_ring import FrameRing
from run_manager.server.standalone import serve
from run_manager.server.tokens import token_path
from tests.conftest import REPO, runs_listed

TOKEN = "otlp-test-token"
TRACE = "5b8efff798038103d269b633813fc60c"
SPAN_BASE = 1_796_000_000_000_000_000
"""Where :func:`span`'s times count from (2026-11-30, in nanoseconds)."""


def attribute(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        wrapped = {"boolValue": value}
    elif isinstance(value, int):
        wrapped = {"intValue": str(value)}
    elif isinstance(value, float):
        wrapped = {"doubleValue": value}
    else:
        wrapped = {"stringValue": value}
    return {"key": key, "value": wrapped}


def span(
    span_id: str,
    name: str,
    start: float,
    end: float,
    *,
    parent: str = "",
    trace: str = TRACE,
    status: int = 0,
    message: str = "",
    events: list[dict[str, Any]] | None = None,
    **attributes: Any,
) -> dict[str, Any]:
    base = SPAN_BASE
    return {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "startTimeUnixNano": str(base + int(start * 1e9)),
        "endTimeUnixNano": str(base + int(end * 1e9)),
        "attributes": [
            attribute(key.replace("__", "."), value) for key, value in attributes.items()
        ],
        "status": {"code": status, "message": message},
        "events": events or [],
    }


def request(*spans: dict[str, Any]) -> bytes:
    resource = {"attributes": [attribute("service.name", "weather-service")]}
    body = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": list(spans)}]}]}
    return json.dumps(body).encode()


AGENT = "a000000000000001"
CHAT = "c000000000000001"
TOOL = "d000000000000001"


def agent_run() -> list[dict[str, Any]]:
    """An agent run as PydanticAI reports it: a model call, a tool call, the agent's span."""
    return [
        span(
            CHAT,
            "chat gpt-5",
            0.1,
            0.4,
            parent=AGENT,
            gen_ai__operation__name="chat",
            gen_ai__request__model="gpt-5",
            gen_ai__provider__name="openai",
            gen_ai__usage__input_tokens=120,
            gen_ai__usage__output_tokens=30,
        ),
        span(
            TOOL,
            "execute_tool get_weather",
            0.5,
            0.6,
            parent=AGENT,
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="get_weather",
            gen_ai__tool__call__id="call_1",
            gen_ai__tool__call__arguments='{"city": "Paris"}',
            gen_ai__tool__call__result="sunny",
        ),
        span(
            AGENT,
            "invoke_agent weather",
            0.0,
            1.0,
            gen_ai__operation__name="invoke_agent",
            gen_ai__agent__name="weather",
        ),
    ]


def recent(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``spans`` moved to now: a trace whose last span is days old is no longer live."""
    shift = time.time_ns() - SPAN_BASE
    for sent in spans:
        for name in ("startTimeUnixNano", "endTimeUnixNano"):
            sent[name] = str(int(sent[name]) + shift)
    return spans


def ledgers(directory: Path) -> dict[str, list[dict[str, Any]]]:
    found = {}
    for path in sorted(directory.glob("*.jsonl")):
        found[path.stem] = [json.loads(text) for text in path.read_text().splitlines()]
    return found


def types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


# -- spans into runs (no HTTP) -------------------------------------------------------------


def test_an_agent_trace_becomes_one_run(tmp_path: Path) -> None:
    ingest = OtlpIngest(tmp_path)
    result = ingest.ingest(decode_json(request(*agent_run())))
    assert result.accepted == 3
    [(run_id, events)] = ledgers(tmp_path).items()
    assert run_id.endswith("_" + TRACE[16:])
    assert types(events) == [
        "run_started",
        "node_enter",
        "llm_call",
        "node_exit",
        "node_enter",
        "tool_call",
        "tool_result",
        "node_exit",
        "run_completed",
    ]
    started = events[0]["payload"]
    assert (started["agent"], started["writer"], started["trace_id"]) == ("weather", "otlp", TRACE)
    llm = events[2]["payload"]
    assert (llm["model"], llm["provider"], llm["prompt_tokens"], llm["output_tokens"]) == (
        "gpt-5",
        "openai",
        120,
        30,
    )
    assert events[5]["payload"]["arguments"] == {"city": "Paris"}
    assert events[6]["payload"] == {
        "call_id": "call_1",
        "node_id": "tool:get_weather#1",
        "output": "sunny",
        "is_error": False,
    }
    assert events[-1]["payload"]["status"] == "ok"
    assert [event["seq"] for event in events] == list(range(1, 10))


def test_a_span_sent_twice_is_recorded_once(tmp_path: Path) -> None:
    ingest = OtlpIngest(tmp_path)
    body = request(*agent_run())
    ingest.ingest(decode_json(body))
    again = ingest.ingest(decode_json(body))
    assert (again.accepted, again.duplicates) == (0, 3)
    [events] = ledgers(tmp_path).values()
    assert len(events) == 9
    # After a restart the ledger itself says which spans are in.
    restarted = OtlpIngest(tmp_path).ingest(decode_json(body))
    assert (restarted.accepted, restarted.duplicates) == (0, 3)
    assert [len(events) for events in ledgers(tmp_path).values()] == [9]


def test_each_line_is_written_once_published_as_written_and_encoded_as_ledgers_are(
    tmp_path: Path,
) -> None:
    hub = Hub()
    published: list[tuple[list[RunEvent], list[bytes]]] = []
    hub.add_batch_listener(lambda events, lines: published.append((list(events), list(lines))))
    chat, tool, agent = agent_run()
    OtlpIngest(tmp_path, hub).ingest(decode_json(request(chat)))
    [path] = tmp_path.glob("*.jsonl")
    with path.open("ab") as handle:
        handle.write(b'{"run_id": "torn')  # the server died mid-line
    OtlpIngest(tmp_path, hub).ingest(decode_json(request(tool, agent)))  # after a restart
    [(first_events, first_lines), (events, lines)] = published
    assert path.read_bytes().split(b"\n") == [*first_lines, b'{"run_id": "torn', *lines, b""]
    events = first_events + events
    lines = first_lines + lines
    assert [event.seq for event in events] == list(range(1, 11))
    # The agent's span named the run it came after: run_updated, then its end.
    assert types([json.loads(line) for line in lines])[-2:] == ["run_updated", "run_completed"]
    for event, line in zip(events, lines, strict=True):
        assert encode_event(event) == line + b"\n"


def test_a_ledger_gone_on_with_is_read_as_every_reader_reads_it(tmp_path: Path) -> None:
    # A writer that reopened the ledger after a crash appended straight after its torn line:
    # the line is damaged, but the event it ends in is one every reader counts, so the next
    # events follow its seq (read line by line with their own split, they repeated it).
    chat, tool, agent = agent_run()
    OtlpIngest(tmp_path).ingest(decode_json(request(chat)))
    [path] = tmp_path.glob("*.jsonl")
    written = [json.loads(line) for line in path.read_bytes().splitlines()]
    last = written[-1]["seq"]
    kept = {
        "run_id": path.stem,
        "seq": last + 1,
        "time": "2026-11-28T14:30:01Z",
        "type": "otel_span",
        "payload": {"name": "kept", "span_id": "00000000000000aa"},
    }
    with path.open("ab") as handle:
        handle.write(b'{"run_id": "to' + json.dumps(kept).encode() + b"\n")
    OtlpIngest(tmp_path).ingest(decode_json(request(tool, agent)))  # after a restart
    [summary] = scan_paths([tmp_path]).summaries()
    assert summary.warnings == []  # no seq repeated
    assert (summary.status, summary.damaged_lines) == ("succeeded", 1)
    lines = path.read_bytes().splitlines()  # the damaged line holds the kept event
    assert summary.event_count == summary.last_seq == len(lines) > last + 1
    assert json.loads(lines[last + 1])["seq"] == last + 2  # the restart went on after it


@pytest.mark.parametrize(
    "pieces",
    [
        pytest.param([[0, 1, 2]], id="in one request"),
        pytest.param([[1], [0], [2]], id="in pieces out of order"),
        pytest.param([[0, 1, 2], [3]], id="a span after the end"),
        pytest.param([[0], [3, 1, 2]], id="an end and a stray span together"),
    ],
)
async def test_the_run_book_says_what_the_ledger_says(
    tmp_path: Path, pieces: list[list[int]]
) -> None:
    manager = Manager(ledger_dir=tmp_path)
    server = AttachServer(manager, token=TOKEN)
    ingest = OtlpIngest(tmp_path, manager.hub)
    stray = span("e000000000000009", "cache lookup", 0.2, 0.3, parent=AGENT, hit=True)
    spans = [*agent_run(), stray]
    for piece in pieces:
        ingest.ingest(decode_json(request(*[spans[number] for number in piece])))
    scanned = scan_paths([tmp_path])
    [state] = scanned.states.values()
    read = state.summary()
    booked = server.book.get(read.run_id)
    assert booked is not None
    said = booked.summary()
    for name in ("status", "event_count", "last_seq", "completed_at", "last_event_at", "error",
                 "agent", "writer", "trace_id", "current_node", "warnings"):  # fmt: skip
        assert getattr(said, name) == getattr(read, name), name
    assert read.event_count == sum(len(events) for events in ledgers(tmp_path).values())
    assert said.totals.tokens == 150
    await server.close()


@pytest.mark.parametrize("ring_size", [7, 40, 4096])
async def test_the_feed_holds_every_line_once_in_order_however_requests_come(
    tmp_path: Path, ring_size: int
) -> None:
    # The feed keeps each request's lines of a run as the one buffer written and cuts it only
    # when a stream reads: with retries, spans out of order and in pieces, several traces
    # mixed in a request, and streams that attach or reconnect at any place (mid-batch too),
    # each reads every line still held once, in order, as the ledger has it.
    manager = Manager(ledger_dir=tmp_path)
    server = AttachServer(manager, token=TOKEN, feed=FrameRing(max_events=ring_size))
    ingest = OtlpIngest(tmp_path, manager.hub)
    traces = [f"{number:032x}" for number in range(0x5B8E0001, 0x5B8E0004)]
    runs = {trace: [{**piece, "traceId": trace} for piece in agent_run()] for trace in traces}
    requests = [
        [runs[traces[0]][1], runs[traces[1]][0]],  # the later span first, two traces mixed
        [runs[traces[0]][1]],  # a retry
        [runs[traces[0]][0], runs[traces[0]][2], runs[traces[2]][2], runs[traces[1]][1]],
        [runs[traces[1]][2], runs[traces[2]][1], runs[traces[2]][0], runs[traces[1]][2]],
        [*runs[traces[0]], *runs[traces[2]]],  # all again: nothing new
    ]
    feed = server.feed
    cursors: list[int] = []
    for spans in requests:
        cursors.append(feed.head)  # a stream attaching between requests
        ingest.ingest(decode_json(request(*spans)))
    written = {
        (event["run_id"], event["seq"]): line
        for path in tmp_path.glob("*.jsonl")
        for line, event in zip(
            path.read_bytes().splitlines(),
            [json.loads(text) for text in path.read_text().splitlines()],
            strict=True,
        )
    }
    # Each run's 9 lines, and a run_updated where a run was opened before its agent's span.
    assert feed.head == len(written) == 3 * 9 + 2
    held = range(max(feed.oldest - 1, 0), feed.head + 1)
    for cursor in [*cursors, *held]:  # also every place inside a request's lines
        if cursor < feed.oldest - 1:
            assert feed.after(cursor) is None  # fell behind: told to start over
            continue
        entries = feed.after(cursor) or []
        assert [entry.number for entry in entries] == list(range(cursor + 1, feed.head + 1))
        assert [entry.line for entry in entries] == [
            written[(entry.run_id, entry.seq)] for entry in entries
        ]
        _, frames = feed.frames_after(cursor) or (0, [])
        assert frames == [
            b"id: %s:%d\ndata: %s\n\n" % (entry.run_id.encode(), entry.seq, entry.line)
            for entry in entries
        ]
    kept = feed.after(feed.oldest - 1) or []
    assert feed._bytes == sum(len(entry.line) for entry in kept)
    per_run: dict[str, list[int]] = {}
    for entry in kept:
        per_run.setdefault(entry.run_id, []).append(entry.seq)
    for seqs in per_run.values():  # each run's lines once, in the order written
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    await server.close()


def test_spans_out_of_order_and_in_pieces_make_one_live_run(tmp_path: Path) -> None:
    chat, tool, agent = agent_run()
    ingest = OtlpIngest(tmp_path)
    ingest.ingest(decode_json(request(tool)))  # the later span first
    [events] = ledgers(tmp_path).values()
    assert types(events)[-1] == "node_exit"  # live: no run_completed yet
    ingest.ingest(decode_json(request(chat)))
    ingest.ingest(decode_json(request(agent)))
    [events] = ledgers(tmp_path).values()
    assert types(events).count("run_started") == 1
    assert types(events)[-1] == "run_completed"
    # Each event carries its span's own time, never before its run began (the tool's
    # span began it here): the model call that began earlier and came later is at its start.
    llm = next(event for event in events if event["type"] == "llm_call")
    tool_call = next(event for event in events if event["type"] == "tool_call")
    assert llm["time"] == tool_call["time"] == events[0]["time"]
    assert llm["seq"] > tool_call["seq"]
    # The agent's span, arriving last, named the run and ended it.
    [updated] = [event["payload"] for event in events if event["type"] == "run_updated"]
    assert updated["agent"] == "weather"


def helper_agent(span_id: str) -> dict[str, Any]:
    """An agent ``helper`` run by :func:`agent_run`'s tool call: a child run."""
    return span(
        span_id,
        "invoke_agent helper",
        0.65,
        0.9,
        parent=TOOL,
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__name="helper",
    )


def test_a_nested_agent_is_a_child_run(tmp_path: Path) -> None:
    inner = "b000000000000002"
    spans = [
        *agent_run(),
        span(
            "e000000000000003",
            "chat small",
            0.7,
            0.8,
            parent=inner,
            gen_ai__operation__name="chat",
            gen_ai__request__model="small",
        ),
        helper_agent(inner),
    ]
    OtlpIngest(tmp_path).ingest(decode_json(request(*spans)))
    runs = ledgers(tmp_path)
    assert len(runs) == 2
    child_id = next(run_id for run_id in runs if run_id.endswith("_" + inner))
    parent_id = next(run_id for run_id in runs if run_id != child_id)
    child = runs[child_id]
    assert child[0]["payload"]["parent_run_id"] == parent_id
    assert child[0]["payload"]["agent"] == "helper"
    assert types(child) == ["run_started", "node_enter", "llm_call", "node_exit", "run_completed"]
    assert "llm_call" in types(runs[parent_id])


def test_each_run_says_what_its_first_model_call_was_asked(tmp_path: Path) -> None:
    """The input of a run, and of a child run, from the user's words in its first chat."""

    def asked(*messages: tuple[str, str]) -> str:
        return json.dumps(
            [
                {"role": role, "parts": [{"type": "text", "content": text}]}
                for role, text in messages
            ]
        )

    inner = "b000000000000002"
    outer_chat, later_chat, inner_chat = agent_run()[0], agent_run()[0], agent_run()[0]
    outer_chat["attributes"].append(
        attribute(
            "gen_ai.input.messages",
            asked(("system", "be brief"), ("user", "earlier"), ("user", "weather in Paris?")),
        )
    )
    later_chat.update(spanId="c000000000000009", startTimeUnixNano="1796000000450000000")
    later_chat["attributes"].append(attribute("gen_ai.input.messages", asked(("user", "no"))))
    inner_chat.update(spanId="e000000000000003", parentSpanId=inner)
    inner_chat["attributes"].append(attribute("gen_ai.input.messages", asked(("user", "look up"))))
    spans = [
        *agent_run()[1:],
        later_chat,
        inner_chat,
        outer_chat,
        helper_agent(inner),
    ]
    OtlpIngest(tmp_path).ingest(decode_json(request(*spans)))
    runs = ledgers(tmp_path)
    child_id = next(run_id for run_id in runs if run_id.endswith("_" + inner))
    parent_id = next(run_id for run_id in runs if run_id != child_id)
    assert runs[parent_id][0]["payload"]["input"] == "weather in Paris?"
    assert runs[child_id][0]["payload"]["input"] == "look up"


@pytest.mark.parametrize(
    "messages",
    ["not json", "[[[[" * 2000, '{"role": "user"}', '[{"role": "user", "parts": "x"}]', "[]"],
)
def test_input_messages_that_say_nothing_leave_the_input_unknown(
    tmp_path: Path, messages: str
) -> None:
    chat, *rest = agent_run()
    chat["attributes"].append(attribute("gen_ai.input.messages", messages))
    OtlpIngest(tmp_path).ingest(decode_json(request(chat, *rest)))
    [events] = ledgers(tmp_path).values()
    assert "input" not in events[0]["payload"]  # nothing said: not a guess
    assert events[-1]["type"] == "run_completed"


def test_spans_without_genai_attributes_are_kept_and_errors_recorded(tmp_path: Path) -> None:
    exception = {
        "timeUnixNano": "1796000000500000000",
        "name": "exception",
        "attributes": [
            attribute("exception.type", "TimeoutError"),
            attribute("exception.message", "db \x1b[31m slow"),
        ],
    }
    spans = [
        span("f000000000000001", "SELECT users", 0.1, 0.5, parent="f000000000000000",
             db__system="postgresql", status=2, events=[exception]),
        span("f000000000000000", "GET /weather", 0.0, 1.0, status=2, message="upstream failed"),
    ]  # fmt: skip
    OtlpIngest(tmp_path, every_trace=True).ingest(decode_json(request(*spans)))
    [events] = ledgers(tmp_path).values()
    assert events[0]["payload"]["agent"] == "GET /weather"  # no agent: named after its root
    generic = [event for event in events if event["type"] == "otel_span"]
    assert [event["payload"]["name"] for event in generic] == ["GET /weather", "SELECT users"]
    assert generic[1]["payload"]["attributes"] == {"db.system": "postgresql"}
    errors = [event["payload"]["message"] for event in events if event["type"] == "error"]
    assert "TimeoutError: db \x1b[31m slow" in errors
    assert events[-1]["type"] == "run_completed"
    assert events[-1]["payload"] == {"status": "error", "error": "upstream failed"}


def web_request(trace: str, start: float = 0.0) -> list[dict[str, Any]]:
    """A web service's request, traced: no agent, no model call, no tool call."""
    return [
        span("e000000000000001", "SELECT users", start + 0.1, start + 0.2, trace=trace,
             parent="e000000000000000", db__system="postgresql"),
        span("e000000000000000", "GET /users", start, start + 0.3, trace=trace,
             http__request__method="GET"),
    ]  # fmt: skip


def test_a_trace_with_no_agent_model_or_tool_call_is_no_run(tmp_path: Path) -> None:
    """A collector forwarding a web service's traces: one ledger per HTTP request, 115 GB a
    day, unless only agents' traces are runs."""
    ingest = OtlpIngest(tmp_path)
    result = ingest.ingest(decode_json(request(*web_request(TRACE))))
    assert (result.accepted, result.rejected) == (2, 0)  # taken, not refused: no retry
    assert ledgers(tmp_path) == {}
    kept = OtlpIngest(tmp_path / "all", every_trace=True)
    kept.ingest(decode_json(request(*web_request(TRACE))))
    assert len(ledgers(tmp_path / "all")) == 1


@pytest.mark.parametrize("every_trace", [False, True])
def test_runtop_serve_makes_runs_of_agents_traces_or_of_every_trace(
    tmp_path: Path, every_trace: bool
) -> None:
    runs = tmp_path / "runs"
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0", "--ledger-dir", str(runs)]
    command += ["--token", TOKEN, *(["--every-trace"] if every_trace else [])]
    serving = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert serving.stderr is not None
        said = ""
        while "runs from traces:" not in said:
            line = serving.stderr.readline()
            assert line, said
            said += line
        url = said.split("runtop serve: ", 1)[1].split(",", 1)[0].split()[0]

        def export(body: bytes) -> None:
            headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
            sent = urllib.request.Request(f"{url}/v1/traces", data=body, headers=headers)
            with urllib.request.urlopen(sent, timeout=10) as answer:
                assert answer.status == 200

        export(request(*web_request(TRACE)))
        export(request(*agent_run()))
        written = ledgers(runs)
        # The agent's trace is the web trace's too (one trace id): its spans join its run.
        [events] = written.values()
        generic = [e["payload"]["name"] for e in events if e["type"] == "otel_span"]
        assert generic == ["GET /users", "SELECT users"]
        export(request(*web_request("0" * 31 + "9")))  # a web service's trace alone
        assert len(ledgers(runs)) == (2 if every_trace else 1)
        assert ("every trace" in said) == every_trace
    finally:
        serving.terminate()
        serving.communicate(timeout=20)


def test_a_traces_first_spans_are_held_until_an_agents_span_comes(tmp_path: Path) -> None:
    """Spans sent as they end: a tool's HTTP call ends (and is sent) before the tool's own
    span, before anything says the trace is an agent's. It is written when that comes."""
    http = span("f000000000000009", "GET api.weather", 0.52, 0.58, parent=TOOL,
                http__request__method="GET")  # fmt: skip
    ingest = OtlpIngest(tmp_path)
    assert ingest.ingest(decode_json(request(http))).accepted == 1
    assert ledgers(tmp_path) == {}
    assert ingest.ingest(decode_json(request(*agent_run()))).accepted == 3
    [events] = ledgers(tmp_path).values()
    names = [event["payload"].get("name") for event in events if event["type"] == "otel_span"]
    assert names == ["GET api.weather"]  # the held span, in its run
    assert events[-1]["type"] == "run_completed"
    assert ingest.ingest(decode_json(request(http))).duplicates == 1  # a retry: once


def test_creating_an_agent_is_no_run(tmp_path: Path) -> None:
    """AutoGen traces each agent it builds (``create_agent``), in a trace of its own when
    built at start: no run, and in an agent's trace a span kept as it is, not a step."""
    created = span("f000000000000011", "create_agent weather", 0.0, 0.01,
                   trace="0" * 31 + "7", gen_ai__operation__name="create_agent",
                   gen_ai__system="autogen", gen_ai__agent__name="weather")  # fmt: skip
    ingest = OtlpIngest(tmp_path)
    ingest.ingest(decode_json(request(created)))
    assert ledgers(tmp_path) == {}
    inside = span("f000000000000012", "create_agent helper", 0.05, 0.06, parent=AGENT,
                  gen_ai__operation__name="create_agent", gen_ai__agent__name="helper")  # fmt: skip
    ingest.ingest(decode_json(request(inside, *agent_run())))
    [events] = ledgers(tmp_path).values()
    assert [e["payload"]["name"] for e in events if e["type"] == "otel_span"] == [
        "create_agent helper"
    ]
    assert events[0]["payload"]["agent"] == "weather"


def test_a_step_of_an_agent_framework_makes_the_trace_a_run_at_once(tmp_path: Path) -> None:
    """LangGraph's first nodes end, and are sent, seconds before its first model call: the
    run is listed from them (a chain says which convention it follows; HTTP spans do not)."""
    chain = span("f000000000000010", "agent", 0.0, 0.05, parent=AGENT,
                 openinference__span__kind="CHAIN")  # fmt: skip
    ingest = OtlpIngest(tmp_path)
    ingest.ingest(decode_json(request(chain)))
    assert len(ledgers(tmp_path)) == 1


def test_held_spans_are_let_go_after_a_while_and_past_a_bound(tmp_path: Path) -> None:
    from run_manager.otlp import ingest as module

    now = [0.0]
    ingest = OtlpIngest(tmp_path, clock=lambda: now[0])
    ingest.ingest(decode_json(request(*web_request(TRACE))))
    now[0] = module.HOLD_SECONDS + 1
    ingest.ingest(decode_json(request(*web_request("0" * 31 + "2"))))
    assert ingest.let_go == 2  # the first trace, idle too long
    # The first trace's agent comes after all: a run of its own spans only.
    ingest.ingest(decode_json(request(*agent_run())))
    [events] = ledgers(tmp_path).values()
    assert not [event for event in events if event["type"] == "otel_span"]
    crowd = [request(*web_request(f"{n:032x}", start=n)) for n in range(3, module.MAX_HELD_SPANS)]
    for body in crowd[: module.MAX_HELD_SPANS // 2 + 5]:
        ingest.ingest(decode_json(body))
    assert ingest.let_go > 2  # bounded: the oldest held went first
    assert len(ledgers(tmp_path)) == 1


def test_held_spans_survive_a_failed_write(tmp_path: Path) -> None:
    """The held spans were taken by an earlier request: a failed write of the request that
    releases them holds them again, and the retry writes them."""
    http = span("f000000000000009", "GET api.weather", 0.52, 0.58, parent=TOOL,
                http__request__method="GET")  # fmt: skip
    ingest = OtlpIngest(tmp_path / "runs")
    ingest.ingest(decode_json(request(http)))
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (40, limits[1]))  # a disk that is full
    try:
        with pytest.raises(LedgerWriteFailed):
            ingest.ingest(decode_json(request(*agent_run())))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, old_handler)
    ingest.ingest(decode_json(request(*agent_run())))
    [events] = ledgers(tmp_path / "runs").values()
    assert [e["payload"]["name"] for e in events if e["type"] == "otel_span"] == ["GET api.weather"]


def test_a_span_without_ids_is_rejected_not_a_crash(tmp_path: Path) -> None:
    bad = span("zz", "broken", 0, 1)
    decoded = decode_json(request(bad, *agent_run()))
    assert decoded.rejected == 1
    assert OtlpIngest(tmp_path).ingest(decoded).accepted == 3


# -- over HTTP, in process -------------------------------------------------------------------


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[tuple[str, Path]]:
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()
    manager = Manager(ledger_dir=tmp_path / "runs")
    task = asyncio.create_task(
        serve(
            manager,
            port=0,
            token=TOKEN,
            home=tmp_path / "home",
            ready=lambda url, _: ready.set_result(url),
            stop=stop,
        )
    )
    url = await asyncio.wait_for(ready, 10)
    try:
        yield url, tmp_path / "runs"
    finally:
        stop.set()
        await asyncio.wait_for(task, 20)


AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{url}/v1/traces", data=io.BytesIO(body), headers=headers) as response,
    ):
        return response.status, await response.read()


async def test_json_and_gzip_bodies_are_taken(server: tuple[str, Path]) -> None:
    url, runs = server
    headers = {**AUTH, "Content-Type": "application/json"}
    status, answer = await post(url, request(*agent_run()[:1]), headers)
    assert (status, json.loads(answer)) == (200, {})
    gzipped = gzip.compress(request(*agent_run()[1:]))
    status, _ = await post(url, gzipped, {**headers, "Content-Encoding": "gzip"})
    assert status == 200
    [events] = ledgers(runs).values()
    assert types(events)[-1] == "run_completed"
    async with (
        aiohttp.ClientSession(headers=AUTH) as session,
        session.get(f"{url}/api/agent/runs") as response,
    ):
        listed = await response.json()
    [run] = listed["runs"] if isinstance(listed, dict) else listed
    assert run["status"] == "succeeded"


@pytest.mark.parametrize(
    ("headers", "body", "status"),
    [
        ({"Content-Type": "application/json"}, b"{not json", 400),
        ({"Content-Type": "application/json"}, b"[1, 2]", 400),
        ({"Content-Type": "application/json"}, b'{"resourceSpans": 7}', 400),
        pytest.param(
            {"Content-Type": "application/json"},
            b"[" * 200_000 + b"]" * 200_000,
            400,
            id="nested-200000-deep",
        ),
        pytest.param(
            {"Content-Type": "application/json"},
            # Text that is not UTF-8 inside a span becomes U+FFFD (test_damaged_spans.py);
            # bytes that are not UTF-8 where JSON's own structure is are still no request.
            b'\xff\xfe{"resourceSpans": []}',
            400,
            id="not-utf-8",
        ),
        ({"Content-Type": "application/x-protobuf"}, b"\xff\xff\xff\xff", 400),
        ({"Content-Type": "application/json", "Content-Encoding": "gzip"}, b"not gzip", 400),
        ({"Content-Type": "text/plain"}, b"{}", 415),
        ({"Content-Type": "application/json", "Content-Encoding": "zstd-ish"}, b"{}", 415),
    ],
)
async def test_bad_bodies_are_refused_with_a_reason(
    server: tuple[str, Path], headers: dict[str, str], body: bytes, status: int
) -> None:
    url, runs = server
    answer_status, answer = await post(url, body, {**AUTH, **headers})
    assert answer_status == status
    assert json.loads(answer)["error"]
    assert not list(runs.glob("*.jsonl"))


async def test_no_token_is_401_and_too_big_is_413(server: tuple[str, Path]) -> None:
    url, runs = server
    status, _ = await post(url, request(*agent_run()), {"Content-Type": "application/json"})
    assert status == 401
    wrong = {"Authorization": "Bearer nope", "Content-Type": "application/json"}
    status, _ = await post(url, request(*agent_run()), wrong)
    assert status == 401
    huge = b" " * (MAX_OTLP_BODY + 1)
    status, answer = await post(url, huge, {**AUTH, "Content-Type": "application/json"})
    assert status == 413
    assert "over" in json.loads(answer)["error"]
    bomb = gzip.compress(b" " * (65 * 1024 * 1024))
    headers = {**AUTH, "Content-Type": "application/json", "Content-Encoding": "gzip"}
    status, _ = await post(url, bomb, headers)
    assert status == 413
    assert not list(runs.glob("*.jsonl"))


# -- the real exporter, PydanticAI's spans, a real `runtop serve` ------------------------------


@pytest.fixture
def runtop_serve(tmp_path: Path) -> Iterator[tuple[str, str, dict[str, str]]]:
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    env.pop("RUNTOP_TOKEN", None)
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0"]
    command += ["--ledger-dir", str(tmp_path / "runs")]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith("runtop serve: http://127.0.0.1:"), first
    url = first.split()[2].rstrip(",")
    port = int(url.rsplit(":", 1)[1])
    token = token_path("127.0.0.1", port, tmp_path / "home").read_text().strip()
    try:
        yield url, token, env
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(20)
        process.stderr.close()


def runtop(*args: str, env: dict[str, str]) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=30,
        check=True,
    )
    return result.stdout


def test_pydantic_ai_spans_through_the_real_exporter(
    runtop_serve: tuple[str, str, dict[str, str]],
) -> None:
    pytest.importorskip("pydantic_ai")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.test import TestModel

    url, token, env = runtop_serve
    exporter = OTLPSpanExporter(
        endpoint=f"{url}/v1/traces", headers={"Authorization": f"Bearer {token}"}
    )
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    try:
        agent = Agent(TestModel(), name="weather")

        @agent.tool_plain
        async def get_weather(city: str) -> str:
            return f"sunny in {city}"

        result = asyncio.run(agent.run("What's the weather in Paris?"))
        assert provider.force_flush(10_000)
    finally:
        Agent.instrument_all(False)
        provider.shutdown()
    [listed] = runs_listed(runtop("ls", url, "--json", env=env))
    assert listed["agent"] == "weather"
    assert listed["status"] == "succeeded"
    shown = runtop("show", listed["run_id"], "--from", url, "--json", env=env)
    events = [json.loads(text) for text in shown.splitlines()]
    assert events[0]["payload"]["writer"] == "otlp"
    # the user's words of its first model call (`show` said `input null`)
    assert events[0]["payload"]["input"] == "What's the weather in Paris?"
    calls = [event["payload"] for event in events if event["type"] == "llm_call"]
    assert len(calls) == 2
    assert all(call["prompt_tokens"] > 0 and call["output_tokens"] > 0 for call in calls)
    tool_call = next(event["payload"] for event in events if event["type"] == "tool_call")
    assert (tool_call["name"], tool_call["arguments"]) == ("get_weather", {"city": "a"})
    tool_result = next(event["payload"] for event in events if event["type"] == "tool_result")
    assert tool_result["output"] == "sunny in a"
    assert events[-1]["type"] == "run_completed"
    assert events[-1]["payload"]["output"] == result.output


def test_the_inspector_refuses_actions_on_otlp_runs_with_the_reason(tmp_path: Path) -> None:
    from inspector.actions import OTLP_REFUSAL, refusal, run_refusal
    from inspector.ledger_source import LedgerDirectorySource
    from ledger_reader import scan_paths

    chat, tool, _ = recent(agent_run())
    OtlpIngest(tmp_path).ingest(decode_json(request(chat, tool)))  # live: its root is to come
    [state] = scan_paths([tmp_path]).states.values()
    summary = state.summary()
    assert summary.status.is_live
    for action in ("cancel", "resume", "approve"):
        assert run_refusal(action, summary) == OTLP_REFUSAL
        assert refusal(action, summary, LedgerDirectorySource(tmp_path)) == OTLP_REFUSAL


def test_a_trace_never_writes_into_another_writers_ledger(tmp_path: Path) -> None:
    """A runtop run whose id ends in the trace's 16 hex (chance, or a trace id made to match)."""
    theirs = tmp_path / f"run_20261130T000000000_{TRACE[16:]}.jsonl"
    line = {"run_id": theirs.stem, "seq": 1, "time": "2026-11-30T00:00:00Z", "type": "run_started"}
    line["payload"] = {"writer": "runtop", "agent": "mine"}
    theirs.write_text(json.dumps(line) + "\n")
    before = theirs.read_bytes()
    for ingest in (OtlpIngest(tmp_path), OtlpIngest(tmp_path)):  # and again after a restart
        ingest.ingest(decode_json(request(*agent_run())))
    assert theirs.read_bytes() == before
    runs = ledgers(tmp_path)
    assert len(runs) == 2
    [(_, ours)] = [(key, events) for key, events in runs.items() if key != theirs.stem]
    assert ours[0]["payload"]["trace_id"] == TRACE
    assert types(ours).count("tool_call") == 1  # the second ingest found it again: no repeat


def test_hostile_names_and_times_are_cut_not_fatal(tmp_path: Path) -> None:
    spans = [
        span("9000000000000001", "x" * 100_000, 0, 1, parent="9000000000000000",
             gen_ai__operation__name="execute_tool", gen_ai__tool__name="t" * 100_000),
        span("9000000000000000", "root", 0, 1),
    ]  # fmt: skip
    spans[0]["endTimeUnixNano"] = str(10**25)  # JSON can say any number: past the year 9999
    OtlpIngest(tmp_path).ingest(decode_json(request(*spans)))
    [events] = ledgers(tmp_path).values()
    call = next(event for event in events if event["type"] == "tool_call")
    assert len(call["payload"]["name"]) == 256
    assert max(len(json.dumps(event)) for event in events) < 4096
    result = next(event for event in events if event["type"] == "tool_result")
    assert result["time"].startswith("9999-12-31T23:59:59")


def test_tool_arguments_are_kept_as_json_and_cut_at_the_payload_cap(tmp_path: Path) -> None:
    numbers = "[" + ",".join(["1e15"] * 819) + "]"  # 4,096 characters, 18,000 bytes re-encoded
    arguments = {
        "e000000000000001": '{"city": "Paris"}',
        "e000000000000002": numbers,
        "e000000000000003": json.dumps({"text": "é" * 40_000}),  # 80,000 bytes and more
        "e000000000000004": "not json " * 10_000,
    }
    spans = [
        span(span_id, "execute_tool t", 0.1, 0.2, parent=AGENT,
             gen_ai__operation__name="execute_tool", gen_ai__tool__call__arguments=text)
        for span_id, text in arguments.items()
    ]  # fmt: skip
    spans.append(span(AGENT, "invoke_agent a", 0, 1, gen_ai__operation__name="invoke_agent"))
    OtlpIngest(tmp_path).ingest(decode_json(request(*spans)))
    [events] = ledgers(tmp_path).values()
    calls = [event["payload"] for event in events if event["type"] == "tool_call"]
    assert [call.get("truncated") for call in calls] == [None, None, True, True]
    assert calls[0]["arguments"] == {"city": "Paris"}
    assert calls[1]["arguments"] == [1e15] * 819
    assert all(len(call["arguments"].encode()) <= PAYLOAD_CAP_BYTES for call in calls[2:])
    assert calls[2]["arguments"].startswith('{"text":"éé')


async def test_the_server_refuses_to_cancel_or_resume_an_otlp_run(server: tuple[str, Path]) -> None:
    url, _ = server
    status, _ = await post(
        url, request(*agent_run()[:2]), {**AUTH, "Content-Type": "application/json"}
    )
    assert status == 200
    async with aiohttp.ClientSession(headers=AUTH) as session:
        async with session.get(f"{url}/api/agent/runs") as response:
            listed = await response.json()
        [run] = listed["runs"] if isinstance(listed, dict) else listed
        for action in ("cancel", "resume"):
            async with session.post(
                f"{url}/api/agent/runs/{run['run_id']}/{action}", json={}
            ) as answer:
                assert answer.status == 409
                assert (await answer.json())[
                    "error"
                ] == "sent over OpenTelemetry; runtop cannot stop it"


async def test_the_tui_greys_cancel_on_an_otlp_run_and_says_why(tmp_path: Path) -> None:
    from inspector import LedgerDirectorySource
    from inspector.actions import OTLP_REFUSAL
    from tests.tui_support import loaded
    from tui.app import make_app
    from tui.screens.cancel import CancelScreen
    from tui.settings import Settings
    from tui.textual_compat import notices_shown

    chat, tool, _ = recent(agent_run())
    runs = tmp_path / "runs"
    OtlpIngest(runs).ingest(decode_json(request(chat, tool)))  # live: its root is to come
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(runs, name="otlp")])
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 1)
        assert rows.rows[0].status.is_live
        await pilot.press("c")
        assert not isinstance(app.screen, CancelScreen)
        messages = [notification.message for notification in notices_shown(app)]
        assert any(OTLP_REFUSAL in message for message in messages)
        assert app.screen.check_action("run_key", ("cancel",)) is None  # greyed in the footer


# -- a ledger that cannot be written -------------------------------------------------------


def test_a_write_that_fails_keeps_nothing_and_the_retry_records_every_span(
    tmp_path: Path,
) -> None:
    chat, tool, agent = agent_run()
    ingest = OtlpIngest(tmp_path)
    ingest.ingest(decode_json(request(chat)))
    [path] = tmp_path.glob("*.jsonl")
    # A real failure: the ledger's name is taken by a directory, so its open fails.
    path.rename(tmp_path / "aside")
    path.mkdir()
    with pytest.raises(LedgerWriteFailed, match="could not be written"):
        ingest.ingest(decode_json(request(tool, agent)))
    path.rmdir()
    (tmp_path / "aside").rename(path)
    again = ingest.ingest(decode_json(request(tool, agent)))
    assert again.accepted == 2
    [events] = ledgers(tmp_path).values()
    tail = ["node_enter", "tool_call", "tool_result", "node_exit", "run_updated", "run_completed"]
    assert types(events)[-6:] == tail
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))


def test_a_disk_that_fills_mid_request_leaves_no_half_span(tmp_path: Path) -> None:
    chat, tool, agent = agent_run()
    ingest = OtlpIngest(tmp_path)
    ingest.ingest(decode_json(request(chat)))
    [path] = tmp_path.glob("*.jsonl")
    size = path.stat().st_size
    # A real short write: the file size limit lets a few bytes of the next lines land.
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 40, limits[1]))
    try:
        with pytest.raises(LedgerWriteFailed):
            ingest.ingest(decode_json(request(tool, agent)))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, old_handler)
    assert path.stat().st_size == size  # the torn lines were taken back
    again = ingest.ingest(decode_json(request(tool, agent)))
    assert again.accepted == 2
    [events] = ledgers(tmp_path).values()
    assert types(events).count("tool_result") == 1
    assert types(events)[-1] == "run_completed"


def test_a_failed_first_write_leaves_no_ledger_and_the_retry_the_same_run(
    tmp_path: Path,
) -> None:
    """A disk full at a run's first write: no 0-byte ledger, and the exporter's retry is the
    run that the first write would have made, under the same id."""
    OtlpIngest(tmp_path / "whole").ingest(decode_json(request(*agent_run())))
    [wanted] = ledgers(tmp_path / "whole")
    ingest = OtlpIngest(tmp_path / "runs")
    (tmp_path / "runs").mkdir()
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (40, limits[1]))  # a few bytes land, then full
    try:
        with pytest.raises(LedgerWriteFailed):
            ingest.ingest(decode_json(request(*agent_run())))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, old_handler)
    assert list((tmp_path / "runs").iterdir()) == []
    assert ingest.ingest(decode_json(request(*agent_run()))).accepted == 3
    assert list(ledgers(tmp_path / "runs")) == [wanted]


async def test_the_server_answers_a_failed_write_with_503_so_exporters_retry(
    server: tuple[str, Path],
) -> None:
    url, directory = server
    chat, tool, agent = agent_run()
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    status, _ = await post(url, request(chat), headers)
    assert status == 200
    [path] = directory.glob("*.jsonl")
    path.rename(directory / "aside")
    path.mkdir()
    status, body = await post(url, request(tool, agent), headers)
    assert status == 503
    assert b"could not be written" in body
    path.rmdir()
    (directory / "aside").rename(path)
    status, _ = await post(url, request(tool, agent), headers)
    assert status == 200
    [events] = ledgers(directory).values()
    assert types(events)[-1] == "run_completed"


def test_a_span_twice_in_one_request_and_spans_below_a_plain_span_of_a_child_agent(
    tmp_path: Path,
) -> None:
    # Each span's run is looked up once per parent and request: the spans under the child
    # agent's plain span must still go to the child, and a span repeated in the same
    # request is written once and counted as a duplicate.
    inner, step = "b000000000000002", "f000000000000004"
    below_step = [
        span(
            f"e00000000000000{number}",
            "chat small",
            0.71 + number / 100,
            0.72 + number / 100,
            parent=step,
            gen_ai__operation__name="chat",
            gen_ai__request__model="small",
        )
        for number in (1, 2)
    ]
    spans = [
        *agent_run(),
        *below_step,
        span(step, "plan", 0.7, 0.8, parent=inner),
        helper_agent(inner),
    ]
    result = OtlpIngest(tmp_path).ingest(decode_json(request(*spans, below_step[0])))
    assert (result.accepted, result.duplicates) == (len(spans), 1)
    runs = ledgers(tmp_path)
    child = next(events for run_id, events in runs.items() if run_id.endswith("_" + inner))
    assert types(child) == [
        "run_started",
        "otel_span",
        *["node_enter", "llm_call", "node_exit"] * 2,
        "run_completed",
    ]
    assert all(line["payload"].get("node_id") != "llm:small#3" for line in child)
    parent = next(events for run_id, events in runs.items() if not run_id.endswith("_" + inner))
    assert "otel_span" not in types(parent)


def test_protobuf_attributes_of_every_kind_are_read(tmp_path: Path) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValueList

    from run_manager.otlp.spans import decode_protobuf

    export = ExportTraceServiceRequest()
    sent = export.resource_spans.add().scope_spans.add().spans.add()
    sent.trace_id, sent.span_id = bytes.fromhex(TRACE), bytes.fromhex(TOOL)
    values = {
        "text": AnyValue(string_value="sunny"),
        "count": AnyValue(int_value=-3),
        "ratio": AnyValue(double_value=0.5),
        "flag": AnyValue(bool_value=False),
        "raw": AnyValue(bytes_value=b"\x00\xff"),
        "list": AnyValue(array_value=ArrayValue(values=[AnyValue(int_value=1), AnyValue()])),
        "map": AnyValue(
            kvlist_value=KeyValueList(
                values=[{"key": "inner", "value": AnyValue(string_value="x")}]  # type: ignore[list-item]
            )
        ),
        "unset": AnyValue(),
        # Strings and integers are read first, without asking which value is held: their
        # zero values must still come out as what they are.
        "empty": AnyValue(string_value=""),
        "zero": AnyValue(int_value=0),
        "nothing": AnyValue(double_value=0.0),
        "yes": AnyValue(bool_value=True),
    }
    for key, value in values.items():
        sent.attributes.add(key=key, value=value)
    event = sent.events.add(name="exception", time_unix_nano=5)
    event.attributes.add(key="exception.message", value=AnyValue(string_value="bad"))
    [decoded] = decode_protobuf(export.SerializeToString()).spans
    assert decoded.attributes == {
        "text": "sunny",
        "count": -3,
        "ratio": 0.5,
        "flag": False,
        "raw": "00ff",
        "list": [1, None],
        "map": {"inner": "x"},
        "unset": None,
        "empty": "",
        "zero": 0,
        "nothing": 0.0,
        "yes": True,
    }
    assert type(decoded.attributes["flag"]) is bool
    assert type(decoded.attributes["yes"]) is bool
    assert type(decoded.attributes["zero"]) is int
    assert type(decoded.attributes["nothing"]) is float
    assert type(decoded.attributes["count"]) is int
    assert [(e.name, e.time_ns, e.attributes) for e in decoded.events] == [
        ("exception", 5, {"exception.message": "bad"})
    ]


def test_protobuf_spans_without_usable_ids_are_rejected_and_statuses_read() -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from run_manager.otlp.spans import decode_protobuf

    export = ExportTraceServiceRequest()
    spans = export.resource_spans.add().scope_spans.add().spans
    good_trace, good_span = bytes.fromhex(TRACE), bytes.fromhex(TOOL)
    for trace_id, span_id in [
        (bytes(16), good_span),  # all zero: no trace
        (good_trace, bytes(8)),
        (good_trace[:15], good_span),  # too short
        (good_trace, good_span + b"\x01"),  # too long
        (b"", good_span),
    ]:
        spans.add(trace_id=trace_id, span_id=span_id, name="bad")
    failed = spans.add(trace_id=good_trace, span_id=good_span, name="failed")
    failed.status.code, failed.status.message = 2, "upstream failed"
    fine = spans.add(trace_id=good_trace, span_id=bytes.fromhex(CHAT), name="fine")
    fine.status.code, fine.status.message = 1, "all good"
    decoded = decode_protobuf(export.SerializeToString())
    assert decoded.rejected == 5
    assert [(s.name, s.trace_id, s.status_code, s.status_message) for s in decoded.spans] == [
        ("failed", TRACE, 2, "upstream failed"),
        ("fine", TRACE, 1, "all good"),
    ]
