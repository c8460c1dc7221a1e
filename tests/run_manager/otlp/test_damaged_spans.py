"""A damaged span costs only itself, in every encoding: its neighbours are written.

Each request holds a whole agent run and one damaged span of another trace: a
string that is not UTF-8 in protobuf, a value nested 5,000 deep (protobuf and
JSON), a lone surrogate in JSON (kept, as U+FFFD). They go to a real ``runtop
serve`` over OTLP/HTTP and OTLP/gRPC; before, each made its whole request a 400
(or ``INVALID_ARGUMENT``) and the run was lost.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest

from tests.run_manager.otlp.conftest import OtlpServer
from tests.run_manager.otlp.test_grpc_ingest import export, protobuf
from tests.run_manager.otlp.test_ingest import TRACE, agent_run, ledgers, request, span, types

grpc = pytest.importorskip("grpc")
pytestmark = pytest.mark.timeout(60)

OTHER_TRACE = "6c000000000000000000000000000001"
DEPTH = 5000
MARK = "MARKMARKMARKMARK"


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def damaged_tool(**attributes: Any) -> dict[str, Any]:
    return span(
        "b000000000000001",
        f"execute_tool {MARK}",
        0.1,
        0.2,
        trace=OTHER_TRACE,
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="lookup",
        **attributes,
    )


def protobuf_not_utf8() -> bytes:
    """A tool span whose name holds bytes that are not UTF-8 (a cut emoji), beside a run."""
    body = protobuf(damaged_tool(), *agent_run())
    assert body.count(MARK.encode()) == 1
    return body.replace(MARK.encode(), b"\xf0\x9f\x98" + b"x" * (len(MARK) - 3))


def protobuf_nested_deep() -> bytes:
    """A tool span with an attribute nested :data:`DEPTH` deep (kvlists), beside a run."""
    value = _field(1, b"leaf")  # AnyValue.string_value
    for _ in range(DEPTH):  # AnyValue.kvlist_value > KeyValueList.values > KeyValue
        value = _field(6, _field(1, _field(1, b"k") + _field(2, value)))
    deep = _field(9, _field(1, b"deep") + _field(2, value))  # Span.attributes
    body = protobuf(damaged_tool(), *agent_run())
    # The damaged span's bytes end where its name's field is found; lengths are re-made
    # by re-encoding the spans list around it.
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    message = ExportTraceServiceRequest.FromString(body)
    resource = message.resource_spans[0]
    scope = resource.scope_spans[0]
    spans = [each.SerializeToString() for each in scope.spans]
    spans[0] += deep
    scope_bytes = b"".join(_field(2, each) for each in spans)
    resource_bytes = _field(1, resource.resource.SerializeToString()) + _field(2, scope_bytes)
    return _field(1, resource_bytes)


def json_lone_surrogate() -> bytes:
    return request(damaged_tool(gen_ai__tool__call__result="sunny \ud83d"), *agent_run())


def json_nested_deep() -> bytes:
    body = json.loads(request(damaged_tool(), *agent_run()))
    placeholder = "DEEP-VALUE-HERE"
    body["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"].append(
        {"key": "deep", "value": placeholder}
    )
    deep = (
        '{"kvlistValue":{"values":[{"key":"k","value":' * DEPTH
        + '{"stringValue":"leaf"}'
        + "}]}}" * DEPTH
    )
    return json.dumps(body).replace(f'"{placeholder}"', deep).encode()


def the_run_is_whole(server: OtlpServer) -> list[dict[str, Any]]:
    runs = ledgers(server.runs)
    [events] = [each for each in runs.values() if each[0]["payload"]["trace_id"] == TRACE]
    assert types(events)[-1] == "run_completed"
    assert types(events).count("tool_call") == 1
    return [each for each in runs.values() if each[0]["payload"]["trace_id"] == OTHER_TRACE]


async def post_http(server: OtlpServer, body: bytes, content_type: str) -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {server.token}", "Content-Type": content_type}
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{server.url}/v1/traces", data=body, headers=headers) as response,
    ):
        return response.status, await response.read()


@pytest.mark.parametrize("damage", [protobuf_not_utf8, protobuf_nested_deep])
@pytest.mark.parametrize("transport", ["http", "grpc"])
async def test_a_damaged_protobuf_span_is_rejected_alone(
    otlp_server: OtlpServer, damage: Any, transport: str
) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    body = damage()
    if transport == "http":
        status, answer = await post_http(otlp_server, body, "application/x-protobuf")
        assert status == 200, answer
    else:
        code, answer = export(otlp_server, body, otlp_server.token)
        assert code == grpc.StatusCode.OK
        assert answer is not None
    partial = ExportTraceServiceResponse.FromString(answer).partial_success
    assert partial.rejected_spans == 1
    assert partial.error_message.startswith("a span cannot be read")
    assert the_run_is_whole(otlp_server) == []


async def test_a_json_span_nested_deep_is_rejected_alone(otlp_server: OtlpServer) -> None:
    status, answer = await post_http(otlp_server, json_nested_deep(), "application/json")
    assert status == 200, answer
    partial = json.loads(answer)["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    assert "nested too deep" in partial["errorMessage"]
    assert the_run_is_whole(otlp_server) == []


async def test_a_json_span_with_a_lone_surrogate_is_kept_with_a_replacement_character(
    otlp_server: OtlpServer,
) -> None:
    status, answer = await post_http(otlp_server, json_lone_surrogate(), "application/json")
    assert (status, answer) == (200, b"{}")
    [other] = the_run_is_whole(otlp_server)
    [result] = [event["payload"] for event in other if event["type"] == "tool_result"]
    assert "sunny \ufffd" in json.dumps(result, ensure_ascii=False)
