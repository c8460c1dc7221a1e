"""OTLP/gRPC: the ``TraceService/Export`` method of ``runtop serve --otlp-grpc [PORT]``.

Several SDKs and collectors export over gRPC by default (port 4317). The
method takes the same bearer token as the HTTP route, as ``authorization``
metadata (``Bearer <token>``), and is answered ``UNAUTHENTICATED`` from the
metadata alone: the request's message is never read for a caller without
it. An accepted request is the same protobuf the HTTP route decodes (taken
as bytes and decoded by :func:`run_manager.otlp.spans.decode_protobuf`),
into the same :class:`~run_manager.otlp.ingest.OtlpIngest`, under the same
size limit (``grpc.max_receive_message_length``, which gRPC checks on the
message once decompressed), answered with the same ``partial_success``.

Needs ``grpcio`` and ``opentelemetry-proto`` (the ``otlp`` extra).
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final

import grpc
from grpc import aio

from run_manager.otlp.export import take_export
from run_manager.otlp.ingest import LedgerWriteFailed, OtlpIngest
from run_manager.otlp.route import MAX_OTLP_BODY
from run_manager.otlp.spans import UndecodableRequest, decode_protobuf, response_body

SERVICE: Final = "opentelemetry.proto.collector.trace.v1.TraceService"
EXPORT: Final = f"/{SERVICE}/Export"
DEFAULT_PORT: Final = 4317
"""OTLP/gRPC's port."""
HANDSHAKE_TIMEOUT: Final = 5.0
"""Seconds a connection has to finish gRPC's handshake (HTTP/2's preface and settings):
gRPC's own default is 120 s, for which an idle socket holds an open file."""
IDLE_TIMEOUT: Final = 60.0
"""Seconds a connection may stay with no call before it is closed (exporters reconnect)."""
MAX_CONNECTIONS: Final = 1024
"""Connections held at once; more are closed as they come."""
MAX_EXPORTS: Final = 8
"""Export calls in progress at once; more are answered ``RESOURCE_EXHAUSTED``, which
exporters retry. Each holds its request, up to 64 MiB, and what it decodes to."""


class _Authorize(aio.ServerInterceptor):  # type: ignore[misc]
    """Refuse a call without the server's token before anything of its message is read."""

    def __init__(self, token: str) -> None:
        self._expected = f"Bearer {token}".encode()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        given = b""
        for key, value in handler_call_details.invocation_metadata or ():
            if key == "authorization":
                given = value.encode("utf-8", "replace") if isinstance(value, str) else value
                break
        if hmac.compare_digest(given, self._expected):
            return await continuation(handler_call_details)
        # A stream handler: it answers without waiting for the request's message.
        return grpc.stream_unary_rpc_method_handler(_refuse)


async def _refuse(requests: AsyncIterator[bytes], context: aio.ServicerContext) -> bytes:
    await context.abort(grpc.StatusCode.UNAUTHENTICATED, "a missing or wrong bearer token")
    return b""  # not reached: abort raises


class _TraceService:
    def __init__(self, ingest: OtlpIngest) -> None:
        self.ingest = ingest

    async def export(self, body: bytes, context: aio.ServicerContext) -> bytes:
        try:
            result = await take_export(self.ingest, decode_protobuf, body)
        except UndecodableRequest as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except LedgerWriteFailed as error:
            # UNAVAILABLE: OTLP exporters retry it, and nothing was kept.
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(error))
        return response_body(True, result.rejected, result.reason)


async def start_grpc(
    ingest: OtlpIngest,
    token: str,
    host: str,
    port: int,
    *,
    max_message: int = MAX_OTLP_BODY,
    max_connections: int = MAX_CONNECTIONS,
    handshake_timeout: float = HANDSHAKE_TIMEOUT,
    idle_timeout: float = IDLE_TIMEOUT,
) -> tuple[aio.Server, int]:
    """Serve ``TraceService/Export`` on ``host:port`` (0 picks one) on the running loop (the
    hub's, as :meth:`OtlpIngest.ingest` wants); the server and the port it is bound to.

    No peer can hold more than its share of the server: a connection that does not
    finish the handshake within ``handshake_timeout`` seconds, or makes no call for
    ``idle_timeout``, is closed; at most ``max_connections`` are held and
    :data:`MAX_EXPORTS` calls run at once.

    Raises:
        OSError: the port cannot be bound.
    """
    service = _TraceService(ingest)
    handler = grpc.method_handlers_generic_handler(
        SERVICE,
        # No (de)serializers: the message arrives as bytes, decoded as the HTTP route does.
        {"Export": grpc.unary_unary_rpc_method_handler(service.export)},
    )
    options: list[tuple[str, Any]] = [
        ("grpc.max_receive_message_length", max_message),
        ("grpc.so_reuseport", 0),
        ("grpc.server_handshake_timeout_ms", int(handshake_timeout * 1000)),
        # A peer that sends nothing gets past the (transport's) handshake; it never
        # acknowledges the server's HTTP/2 settings, which closes it after this.
        ("grpc.http2.settings_timeout", int(handshake_timeout * 1000)),
        ("grpc.max_connection_idle_ms", int(idle_timeout * 1000)),
        ("grpc.max_allowed_incoming_connections", max_connections),
    ]
    server = aio.server(
        interceptors=[_Authorize(token)],
        handlers=[handler],
        options=options,
        maximum_concurrent_rpcs=MAX_EXPORTS,
    )
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError as error:
        raise OSError(f"cannot listen on {address} for OTLP/gRPC: {error}") from error
    if not bound:
        raise OSError(f"cannot listen on {address} for OTLP/gRPC")
    await server.start()
    return server, bound
