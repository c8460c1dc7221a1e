"""A large protobuf request is decoded span by span (no single call holds the interpreter
for the whole body while the event loop's clients wait: bench/server_load.py measures
what they wait): the same spans as decoded whole, a damaged span rejected alone, a broken
request still a 400."""

from __future__ import annotations

from typing import Any

import pytest

from run_manager.otlp import spans as module
from run_manager.otlp.spans import Decoded, UndecodableRequest, decode_protobuf
from tests.run_manager.otlp.test_damaged_spans import protobuf_nested_deep, protobuf_not_utf8
from tests.run_manager.otlp.test_grpc_ingest import protobuf
from tests.run_manager.otlp.test_ingest import agent_run

pytest.importorskip("opentelemetry.proto")
pytestmark = pytest.mark.timeout(60)


def both_ways(body: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[Decoded, Decoded]:
    whole = decode_protobuf(body)
    monkeypatch.setattr(module, "PIECEWISE", 0)
    piecewise = decode_protobuf(body)
    monkeypatch.undo()
    return whole, piecewise


@pytest.mark.parametrize(
    "body",
    [lambda: protobuf(*agent_run()), protobuf_not_utf8, protobuf_nested_deep],
    ids=["whole", "not-utf8", "nested-deep"],
)
def test_span_by_span_reads_what_decoding_whole_reads(
    body: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole, piecewise = both_ways(body(), monkeypatch)
    assert piecewise.spans == whole.spans
    assert len(piecewise.spans) == 3  # the run's three spans, whatever else was damaged
    assert piecewise.rejected == whole.rejected
    assert piecewise.reason.startswith("a span cannot be read") == bool(whole.rejected)


def test_a_broken_large_request_is_no_request(monkeypatch: pytest.MonkeyPatch) -> None:
    body = protobuf(*agent_run())
    monkeypatch.setattr(module, "PIECEWISE", 0)
    with pytest.raises(UndecodableRequest, match="not an OTLP protobuf export request"):
        decode_protobuf(body[:-7])  # cut inside a span: its length runs past the end
