"""A span that cannot be read is rejected alone: its neighbours are written, the answer says so."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from run_manager.otlp.ingest import OtlpIngest
from run_manager.otlp.spans import decode_json, decode_protobuf
from tests.run_manager.otlp.test_ingest import (
    AUTH,
    TRACE,
    agent_run,
    ledgers,
    post,
    request,
    server,  # noqa: F401 (the fixture)
    span,
    types,
)

DEEP = "[" * 2000 + "]" * 2000
"""JSON nested deeper than Python recurses."""
OTHER_TRACE = "6c000000000000000000000000000001"


def poisoned() -> list[dict[str, object]]:
    """A well-formed run, and in the same request a tool span of another trace whose
    arguments are nested 2,000 deep."""
    bad = span(
        "b000000000000001",
        "execute_tool deep",
        0.1,
        0.2,
        trace=OTHER_TRACE,
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="deep",
        gen_ai__tool__call__arguments=DEEP,
    )
    return [bad, *agent_run()]


def test_a_span_nested_too_deep_is_rejected_and_its_neighbours_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="run_manager.otlp.ingest"):
        result = OtlpIngest(tmp_path).ingest(decode_json(request(*poisoned())))
    assert (result.accepted, result.rejected) == (3, 1)
    assert "nested too deep" in result.reason
    [events] = ledgers(tmp_path).values()
    assert events[0]["payload"]["trace_id"] == TRACE
    assert types(events)[-1] == "run_completed"
    assert [record.levelname for record in caplog.records] == ["WARNING"]  # once a request


def test_a_span_rejected_takes_back_what_it_began_to_write(tmp_path: Path) -> None:
    """In a run of its own trace, beside spans that are written: its node is not left open."""
    chat, tool, agent = agent_run()
    for attribute in tool["attributes"]:
        if attribute["key"] == "gen_ai.tool.call.arguments":
            attribute["value"] = {"stringValue": DEEP}
    result = OtlpIngest(tmp_path).ingest(decode_json(request(chat, tool, agent)))
    assert result.rejected == 1
    [events] = ledgers(tmp_path).values()
    assert "tool_call" not in types(events)
    assert types(events).count("node_enter") == types(events).count("node_exit") == 1
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))


def test_a_protobuf_span_nested_too_deep_is_rejected_alone(tmp_path: Path) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

    message = ExportTraceServiceRequest()
    spans = message.resource_spans.add().scope_spans.add().spans
    for number, arguments in enumerate([DEEP, '{"city": "Paris"}'], start=1):
        each = spans.add(
            trace_id=bytes.fromhex(f"{number:032x}"),
            span_id=bytes.fromhex(f"{number:016x}"),
            name="execute_tool get_weather",
            start_time_unix_nano=1_796_000_000_000_000_000,
            end_time_unix_nano=1_796_000_000_100_000_000,
        )
        for key, value in [
            ("gen_ai.operation.name", "execute_tool"),
            ("gen_ai.tool.call.arguments", arguments),
        ]:
            each.attributes.append(KeyValue(key=key, value=AnyValue(string_value=value)))
    result = OtlpIngest(tmp_path).ingest(decode_protobuf(message.SerializeToString()))
    assert (result.accepted, result.rejected) == (1, 1)
    [events] = ledgers(tmp_path).values()
    [called] = [event["payload"] for event in events if event["type"] == "tool_call"]
    assert called["arguments"] == {"city": "Paris"}


async def test_the_server_answers_partial_success_not_500(server: tuple[str, Path]) -> None:  # noqa: F811
    url, runs = server
    status, answer = await post(
        url, request(*poisoned()), {**AUTH, "Content-Type": "application/json"}
    )
    assert status == 200
    partial = json.loads(answer)["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    assert "nested too deep" in partial["errorMessage"]
    [events] = ledgers(runs).values()
    assert types(events)[-1] == "run_completed"
