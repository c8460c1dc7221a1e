"""``POST /v1/traces``: the OTLP/HTTP endpoint of ``runtop serve``.

Mounted beside the attach API, behind the same middlewares (bearer
token, read-only, errors as ``{"error": ...}``). A body is read up to
:data:`MAX_OTLP_BODY` (413 past it, before inflating and after), must be
``application/x-protobuf`` or ``application/json`` (415 otherwise),
optionally ``Content-Encoding: gzip``, and is answered with an
``ExportTraceServiceResponse`` in its own encoding (400 when it cannot be
decoded). Spans without usable ids are reported in ``partial_success``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec
from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError

from run_manager.otlp.ingest import LedgerWriteFailed, OtlpIngest
from run_manager.otlp.spans import (
    RequestTooLarge,
    UndecodableRequest,
    decode_json,
    decode_protobuf,
    inflate,
    response_body,
)

OTLP_PREFIX: Final = "/v1/"
"""Where the route is mounted: exporters post to ``<endpoint>/v1/traces``."""
MAX_OTLP_BODY: Final = 64 * 1024 * 1024
"""Bytes an export request may hold, inflated: the OpenTelemetry SDK's exporter sends up to
64 MiB (a batch of 512 spans with their messages)."""

_PROTOBUF: Final = "application/x-protobuf"
_JSON: Final = "application/json"


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _refuse(status: int, message: str) -> _Refused:
    return _Refused(status, message)


class OtlpRoute:
    """The handler of ``POST /v1/traces`` for one :class:`OtlpIngest`."""

    def __init__(self, ingest: OtlpIngest, *, max_body: int = MAX_OTLP_BODY) -> None:
        self.ingest = ingest
        self.max_body = max_body

    def app(self, middlewares: Sequence[Any] = ()) -> web.Application:
        """A sub-application to mount at ``/v1/``."""
        app = web.Application(middlewares=list(middlewares))
        app.router.add_post("/traces", self.traces)
        return app

    async def traces(self, request: web.Request) -> web.Response:
        try:
            return await self._traces(request)
        except _Refused as refused:
            return web.Response(
                status=refused.status,
                body=msgspec.json.encode({"error": refused.message}),
                content_type="application/json",
            )

    async def _traces(self, request: web.Request) -> web.Response:
        content_type = request.content_type
        if content_type not in (_PROTOBUF, _JSON):
            raise _refuse(415, f"OTLP bodies are {_PROTOBUF} or {_JSON}, not {content_type!r}")
        encoding = request.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding not in ("identity", "gzip", "deflate", ""):
            raise _refuse(415, f"content encoding {encoding!r} is not taken (gzip and deflate are)")
        protobuf = content_type == _PROTOBUF
        if protobuf and not _protobuf_available():
            raise _refuse(415, "protobuf bodies need runtop[otlp] on the server; send JSON")
        body = await self._read(request)
        try:
            # aiohttp inflates a gzipped request body itself as it reads it (the size limit of
            # _read then holds for the inflated bytes); inflate here only what is still gzip.
            # Neither JSON nor protobuf can start with gzip's magic bytes.
            if encoding == "gzip" and body.startswith(b"\x1f\x8b"):
                body = inflate(body)
            decoded = decode_protobuf(body) if protobuf else decode_json(body)
        except RequestTooLarge as error:
            raise _refuse(413, str(error)) from error
        except UndecodableRequest as error:
            raise _refuse(400, str(error)) from error
        try:
            result = self.ingest.ingest(decoded)
        except LedgerWriteFailed as error:
            # 503: OTLP exporters retry it (they do not retry a 500), and nothing was kept.
            raise _refuse(503, str(error)) from error
        return web.Response(
            body=response_body(protobuf, result.rejected, result.reason),
            content_type=content_type,
        )

    async def _read(self, request: web.Request) -> bytes:
        if request.content_length is not None and request.content_length > self.max_body:
            raise _refuse(413, f"the body is over {self.max_body} bytes")
        body = bytearray()
        try:
            async for chunk in request.content.iter_chunked(1 << 16):
                body += chunk
                if len(body) > self.max_body:
                    raise _refuse(413, f"the body is over {self.max_body} bytes")
        except RequestPayloadError as error:  # a gzipped body that does not inflate
            raise _refuse(400, f"the body cannot be read: {error}") from error
        return bytes(body)


def _protobuf_available() -> bool:
    try:
        import opentelemetry.proto.collector.trace.v1.trace_service_pb2  # noqa: F401
    except ImportError:
        return False
    return True
