"""Running the attach server alone (``runtop serve``): bind, write the token, stop in order."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from aiohttp import web

from run_manager.manager import Manager
from run_manager.otlp.ingest import OtlpIngest
from run_manager.otlp.request_body import READ_GAP
from run_manager.otlp.route import BODY_TIMEOUT as OTLP_BODY_TIMEOUT
from run_manager.otlp.route import OTLP_PREFIX, OtlpRoute
from run_manager.server.attach import API_PREFIX, BODY_TIMEOUT, MAX_BODY, AttachServer
from run_manager.server.failure_log import failure_log
from run_manager.server.open_files import grpc_connection_cap, raise_open_file_limit
from run_manager.server.retention import Retention, keep_bounded
from run_manager.server.tokens import make_token, write_token

IDLE_TIMEOUT: Final = 15.0
"""Seconds a connection may stay open without sending a whole request's headers."""


async def serve(
    manager: Manager,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    read_only: bool = False,
    home: Path | None = None,
    ready: Callable[[str, Path], None] | None = None,
    stop: asyncio.Event | None = None,
    finish_runs: bool = False,
    grace: float = 10.0,
    idle_timeout: float = IDLE_TIMEOUT,
    body_timeout: float | None = None,
    read_gap: float = READ_GAP,
    otlp_grpc_port: int | None = None,
    otlp_grpc_ready: Callable[[str], None] | None = None,
    mounts: Mapping[str, web.Application] | None = None,
    retention: Retention | None = None,
    every_trace: bool = False,
) -> None:
    """Serve the attach API until ``stop`` is set (or the task is cancelled).

    The token is written, 0600, where :func:`run_manager.server.tokens.token_path`
    says, and ``ready(url, token_file)`` is called once the port is bound. The file
    stays when the server stops: ``runtop serve`` takes the token up again at its next
    start on the port, so clients elsewhere that were given it keep working.
    On the way out, streams end first; then live runs are cancelled, or with
    ``finish_runs`` given ``grace`` seconds to finish. ``body_timeout`` replaces
    both routes' own (15 s, and an export a second more a MiB), ``read_gap`` the
    seconds a body may go without a byte (5 s). With ``otlp_grpc_port``,
    OTLP/gRPC is received there too (:mod:`run_manager.otlp.grpc_service`), into the
    same ingest, and ``otlp_grpc_ready(address)`` is called once it is bound, before
    ``ready``. ``mounts`` are more applications served beside the API, each at its
    prefix (``runtop serve --web`` mounts the app's page at ``/web``): they answer for
    themselves, the token included.
    ``retention`` keeps the ledger directory bounded (:mod:`run_manager.server.retention`;
    ``None``: its defaults). Only traces with an agent, a model call or a tool call are
    runs; ``every_trace`` makes every trace one.
    """
    token = token or make_token()
    open_files = raise_open_file_limit()
    server = AttachServer(
        manager,
        token=token,
        read_only=read_only,
        body_timeout=body_timeout or BODY_TIMEOUT,
        read_gap=read_gap,
    )
    root = web.Application(client_max_size=MAX_BODY, middlewares=[server.json_errors])
    root.add_subapp(API_PREFIX, server.app)
    ingest: OtlpIngest | None = None
    if manager.ledger_dir is not None:  # OTLP/HTTP: POST /v1/traces, behind the same token
        ingest = OtlpIngest(manager.ledger_dir, manager.hub, every_trace=every_trace)
        middlewares = [server.json_errors, server._authorize]
        otlp = OtlpRoute(ingest, body_timeout=body_timeout or OTLP_BODY_TIMEOUT, read_gap=read_gap)
        root.add_subapp(OTLP_PREFIX, otlp.app(middlewares))
    for prefix, mounted in (mounts or {}).items():
        # A bare /web, as typed (first: the mounted application would answer it 404).
        root.router.add_get(prefix.rstrip("/"), _slash_added)
        root.add_subapp(prefix, mounted)
    # aiohttp's keep-alive timer starts when a connection opens and again after each
    # response, and closes a connection still waiting for a request's whole headers:
    # one timeout for idle peers and for headers sent slowly or half-way.
    # Bodies are inflated by the routes, after the token, within bounds
    # (run_manager.otlp.request_body), never by aiohttp as they arrive; and a
    # body left unread by an early answer is not read after it (no lingering):
    # the connection closes.
    runner = web.AppRunner(
        root,
        handle_signals=False,
        access_log=None,
        shutdown_timeout=5,
        keepalive_timeout=idle_timeout,
        auto_decompress=False,
        lingering_time=0,
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    written: Path | None = None
    grpc_server: Any = None
    pruning: asyncio.Task[None] | None = None
    with failure_log():  # one line per kind of failure a crowd of clients causes
        try:
            await site.start()
            if otlp_grpc_port is not None and ingest is not None:
                from run_manager.otlp.grpc_service import start_grpc

                grpc_server, grpc_port = await start_grpc(
                    ingest,
                    token,
                    host,
                    otlp_grpc_port,
                    max_connections=grpc_connection_cap(open_files),
                )
                if otlp_grpc_ready is not None:
                    otlp_grpc_ready(f"{host}:{grpc_port}")
            if manager.ledger_dir is not None:
                pruning = asyncio.create_task(
                    keep_bounded(manager.ledger_dir, retention or Retention())
                )
            bound_port = _bound_port(runner) or port
            written = write_token(host, bound_port, token, home)
            if ready is not None:
                ready(_url(host, bound_port), written)
            await (stop or asyncio.Event()).wait()
        finally:
            if pruning is not None:
                pruning.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pruning
            if grpc_server is not None:
                await grpc_server.stop(grace=1.0)
            await runner.cleanup()
            if finish_runs:
                await manager.close(cancel_running=False, grace=grace)
            await manager.close(cancel_running=True, grace=grace)


async def _slash_added(request: web.Request) -> web.StreamResponse:
    """A mounted application's bare prefix, sent on to its root (``/web`` to ``/web/``)."""
    raise web.HTTPPermanentRedirect(f"{request.path}/")


def _bound_port(runner: web.AppRunner) -> int | None:
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return None


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


__all__ = ["serve"]
