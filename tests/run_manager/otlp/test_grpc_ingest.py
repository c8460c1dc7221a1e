"""OTLP/gRPC (``runtop serve --otlp-grpc``): the same token, limits and answers as OTLP/HTTP."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest

from tests.run_manager.otlp.conftest import OtlpServer
from tests.run_manager.otlp.test_ingest import agent_run, ledgers, request, span, types

grpc = pytest.importorskip("grpc")

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


def protobuf(*spans: dict[str, Any]) -> bytes:
    """The request as protobuf (OTLP/JSON's hex ids made bytes)."""
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    body = json.loads(request(*spans))
    for resource in body["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for each in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    each[key] = _base64(each[key])
    message = ParseDict(body, ExportTraceServiceRequest())
    return bytes(message.SerializeToString())


def _base64(hex_id: str) -> str:
    import base64

    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def export(
    server: OtlpServer, body: bytes, token: str | None, **call: Any
) -> tuple[Any, bytes | None]:
    """One ``Export`` call with raw bytes: its status code and answer."""
    metadata = [("authorization", f"Bearer {token}")] if token is not None else []
    with grpc.insecure_channel(
        server.grpc, options=[("grpc.max_send_message_length", 128 * 1024 * 1024)]
    ) as channel:
        method = channel.unary_unary(EXPORT)
        try:
            answer = method(body, metadata=metadata, timeout=20, **call)
        except grpc.RpcError as error:
            return error.code(), None
        return grpc.StatusCode.OK, answer


def test_spans_over_grpc_make_the_same_run(otlp_server: OtlpServer) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    code, answer = export(otlp_server, protobuf(*agent_run()), otlp_server.token)
    assert code == grpc.StatusCode.OK
    assert ExportTraceServiceResponse.FromString(answer).partial_success.rejected_spans == 0
    [events] = ledgers(otlp_server.runs).values()
    assert events[0]["payload"]["agent"] == "weather"
    assert types(events)[-1] == "run_completed"


@pytest.mark.parametrize("token", [None, "wrong", ""])
def test_no_token_or_a_wrong_one_is_unauthenticated(
    otlp_server: OtlpServer, token: str | None
) -> None:
    code, _ = export(otlp_server, protobuf(*agent_run()), token)
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert not list(otlp_server.runs.glob("*.jsonl"))


def test_a_message_over_the_limit_is_refused_compressed_or_not(otlp_server: OtlpServer) -> None:
    big = span(
        "a000000000000009",
        "big",
        0.0,
        1.0,
        blob=" " * (65 * 1024 * 1024),
    )
    body = protobuf(big)
    assert len(gzip.compress(body)) < 1024 * 1024  # a small message that inflates past 64 MiB
    for compression in (None, grpc.Compression.Gzip):
        code, _ = export(otlp_server, body, otlp_server.token, compression=compression)
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert not list(otlp_server.runs.glob("*.jsonl"))


def test_bytes_that_are_not_an_export_request_are_invalid(otlp_server: OtlpServer) -> None:
    code, _ = export(otlp_server, b"\xff\xff\xff\xff", otlp_server.token)
    assert code == grpc.StatusCode.INVALID_ARGUMENT


def test_an_unreadable_span_is_rejected_alone_in_partial_success(
    otlp_server: OtlpServer,
) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    bad = span(
        "b000000000000001",
        "execute_tool deep",
        0.1,
        0.2,
        trace="6c000000000000000000000000000001",
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__call__arguments="[" * 2000 + "]" * 2000,
    )
    code, answer = export(otlp_server, protobuf(bad, *agent_run()), otlp_server.token)
    assert code == grpc.StatusCode.OK
    partial = ExportTraceServiceResponse.FromString(answer).partial_success
    assert partial.rejected_spans == 1
    assert "nested too deep" in partial.error_message
    [events] = ledgers(otlp_server.runs).values()
    assert types(events)[-1] == "run_completed"
