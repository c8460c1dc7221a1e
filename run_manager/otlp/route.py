"""``POST /v1/traces``: the OTLP/HTTP endpoint of ``runtop serve``.

Mounted beside the attach API, behind the same middlewares (bearer
token, read-only, errors as ``{"error": ...}``): nothing of a body is read
before its token is checked. A body must be ``application/x-protobuf`` or
``application/json`` and optionally ``Content-Encoding: gzip`` or ``deflate``
(415 otherwise, before a byte is read); it is read and inflated up to
:data:`MAX_OTLP_BODY` (413 past it) in time (408: :data:`BODY_TIMEOUT` and the
pauses of :mod:`run_manager.otlp.request_body`), a slice at a time, and is answered with
an ``ExportTraceServiceResponse`` in its own encoding (400 when it cannot be
decoded). Spans without usable ids are reported in ``partial_success``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Final

import msgspec
from aiohttp import web

from run_manager.otlp.export import take_export
from run_manager.otlp.ingest import LedgerWriteFailed, OtlpIngest
from run_manager.otlp.request_body import READ_GAP, BodyRefused, read_body
from run_manager.otlp.spans import (
    RequestTooLarge,
    UndecodableRequest,
    decode_json,
    decode_protobuf,
    response_body,
)

OTLP_PREFIX: Final = "/v1/"
"""Where the route is mounted: exporters post to ``<endpoint>/v1/traces``."""
MAX_OTLP_BODY: Final = 64 * 1024 * 1024
"""Bytes an export request may hold, inflated: the OpenTelemetry SDK's exporter sends up to
64 MiB (a batch of 512 spans with their messages)."""
BODY_TIMEOUT: Final = 15.0
"""Seconds a body may take to arrive whole (and be inflated), as on the attach API: an export
of 64 MiB earns a second more for each MiB received (``request_body.PACE``)."""

LARGE_BODY: Final = 1024 * 1024
"""Bytes from which a body counts as large (or one sent without a length)."""
MAX_LARGE_BODIES: Final = 4
"""Large bodies read, decoded and written at once; more are answered 503 with
``Retry-After`` (exporters retry it): each holds up to 64 MiB and what it decodes to."""
RETRY_AFTER: Final = "1"

_PROTOBUF: Final = "application/x-protobuf"
_JSON: Final = "application/json"


class _Refused(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


def _refuse(status: int, message: str) -> _Refused:
    return _Refused(status, message)


class OtlpRoute:
    """The handler of ``POST /v1/traces`` for one :class:`OtlpIngest`."""

    def __init__(
        self,
        ingest: OtlpIngest,
        *,
        max_body: int = MAX_OTLP_BODY,
        body_timeout: float = BODY_TIMEOUT,
        read_gap: float = READ_GAP,
        max_large_bodies: int = MAX_LARGE_BODIES,
    ) -> None:
        self.ingest = ingest
        self.max_body = max_body
        self.max_large_bodies = max_large_bodies
        self.large_bodies = asyncio.Semaphore(max_large_bodies)
        self.body_timeout = body_timeout
        self.read_gap = read_gap

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
                headers=refused.headers,
            )

    async def _traces(self, request: web.Request) -> web.Response:
        content_type = request.content_type
        if content_type not in (_PROTOBUF, _JSON):
            raise _refuse(415, f"OTLP bodies are {_PROTOBUF} or {_JSON}, not {content_type!r}")
        protobuf = content_type == _PROTOBUF
        if protobuf and not _protobuf_available():
            raise _refuse(415, "protobuf bodies need runtop-agents[otlp] on the server; send JSON")
        length = request.content_length
        if length is not None and length < LARGE_BODY:
            return await self._export(request, protobuf)
        if self.large_bodies.locked():
            raise _Refused(
                503,
                f"{self.max_large_bodies} large exports are being taken already; retry shortly",
                {"Retry-After": RETRY_AFTER},
            )
        async with self.large_bodies:
            return await self._export(request, protobuf)

    async def _export(self, request: web.Request, protobuf: bool) -> web.Response:
        try:
            body = await read_body(
                request,
                max_bytes=self.max_body,
                time_limit=self.body_timeout,
                read_gap=self.read_gap,
            )
        except BodyRefused as refused:
            raise _refuse(refused.status, refused.message) from None
        try:
            result = await take_export(
                self.ingest, decode_protobuf if protobuf else decode_json, body
            )
        except RequestTooLarge as error:
            raise _refuse(413, str(error)) from error
        except UndecodableRequest as error:
            raise _refuse(400, str(error)) from error
        except LedgerWriteFailed as error:
            # 503: OTLP exporters retry it (they do not retry a 500); what was not written
            # is taken again then, what was is counted as sent twice.
            raise _refuse(503, str(error)) from error
        return web.Response(
            body=response_body(protobuf, result.rejected, result.reason),
            content_type=request.content_type,
        )


def _protobuf_available() -> bool:
    try:
        import opentelemetry.proto.collector.trace.v1.trace_service_pb2  # noqa: F401
    except ImportError:
        return False
    return True
