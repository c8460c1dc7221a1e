"""Replay a recording of the corpus into a running ``runtop serve``, paced as it ran.

Its spans are stretched to last ``--over`` seconds from now (a new trace each time,
so every replay is a run of its own) and each is sent when it ends, one OTLP/HTTP
request a span, the root last: as ``SimpleSpanProcessor`` exports a long agent.
For watching a run arrive in the app, by hand or in tmux::

    runtop serve --port 8765 --ledger-dir /tmp/replayed &
    runtop http://127.0.0.1:8765 &
    .venv/bin/python tests/run_manager/otlp/corpus/replay.py langgraph http://127.0.0.1:8765

The token is the server's (``--token``, else found as ``runtop`` clients find it).
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).parent


def spans_of(name: str) -> list[tuple[bytes, bytes, bytes]]:
    """The recording's spans, each as (resource, scope, span) in protobuf."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    data = (HERE / f"{name}.pb").read_bytes()
    found: list[tuple[bytes, bytes, bytes]] = []
    at = 0
    while at < len(data):
        (size,) = struct.unpack(">I", data[at : at + 4])
        request = ExportTraceServiceRequest()
        request.ParseFromString(data[at + 4 : at + 4 + size])
        at += 4 + size
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    found.append(
                        (
                            resource.resource.SerializeToString(),
                            scope.scope.SerializeToString(),
                            span.SerializeToString(),
                        )
                    )
    return found


def replay(name: str, url: str, token: str, over: float, trace: bytes) -> None:
    """Send the recording's spans to ``url`` as they end, stretched over ``over`` seconds
    from now, as the trace ``trace``."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    spans = []
    for resource, scope, data in spans_of(name):
        span = Span()
        span.ParseFromString(data)
        span.trace_id = trace
        spans.append((resource, scope, span))
    first = min(span.start_time_unix_nano for _, _, span in spans)
    last = max(span.end_time_unix_nano for _, _, span in spans)
    scale = over * 1e9 / max(last - first, 1)
    now = time.time_ns()
    for _, _, span in spans:
        span.start_time_unix_nano = now + int((span.start_time_unix_nano - first) * scale)
        span.end_time_unix_nano = now + int((span.end_time_unix_nano - first) * scale)
        for event in span.events:  # an exception's time, within its span's
            event.time_unix_nano = now + int((event.time_unix_nano - first) * scale)
    spans.sort(key=lambda each: each[2].end_time_unix_nano)
    for resource, scope, span in spans:
        wait = (span.end_time_unix_nano - time.time_ns()) / 1e9
        if wait > 0:
            time.sleep(wait)
        request = ExportTraceServiceRequest()
        into = request.resource_spans.add()
        into.resource.ParseFromString(resource)
        kept = into.scope_spans.add()
        kept.scope.ParseFromString(scope)
        kept.spans.add().CopyFrom(span)
        posted = urllib.request.Request(
            f"{url.rstrip('/')}/v1/traces",
            data=request.SerializeToString(),
            headers={
                "Content-Type": "application/x-protobuf",
                "Authorization": f"Bearer {token}",
            },
        )
        with urllib.request.urlopen(posted, timeout=20) as answer:
            answer.read()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "name", help="a recording: " + ", ".join(sorted(p.stem for p in HERE.glob("*.pb")))
    )
    parser.add_argument("url", help="the server's URL (http://127.0.0.1:8765)")
    parser.add_argument("--token", help="the server's token (else found as runtop finds it)")
    parser.add_argument("--over", type=float, default=10.0, help="seconds the run lasts")
    args = parser.parse_args(argv)
    token = args.token
    if token is None:
        from inspector.attach_client import find_token

        token = find_token(args.url, None)
    if not token:
        parser.error("no token found for that server: give --token")
    trace = os.urandom(16)
    print(f"trace {trace.hex()}", file=sys.stderr, flush=True)  # its run's id ends with it
    replay(args.name, args.url, token, args.over, trace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
