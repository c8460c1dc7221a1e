"""The attach API (ATTACH_API.md) over aiohttp: list, watch, start, cancel, resume, approve.

Mount it into an application's own aiohttp app::

    server = AttachServer(manager, token=make_token())
    app.add_subapp("/api/agent/", server.app)

or run it alone with :func:`run_manager.server.standalone.serve` (``runtop
serve``). Every endpoint needs the bearer token; a read-only server
refuses every ``POST``. This module holds the routes; live events reach
SSE streams through one shared :class:`~run_manager.server.frame_ring.FrameRing`,
framed by :mod:`run_manager.server.sse`, and histories are read from the runs'
ledgers as written (:mod:`run_manager.server.history`), so a stream costs the
runs nothing it does not read.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Final

import msgspec
from aiohttp import web

from ledger_reader import (
    RunEvent,
    RunSummary,
    is_valid_run_id,
    timespan,
)
from ledger_reader.head_tail import writer_gone
from ledger_reader.liveness import live_writer
from run_manager.errors import RunNotFound, RunNotResumable
from run_manager.manager import Manager
from run_manager.otlp.ingest import READ_ONLY_REASON as OTLP_REFUSAL
from run_manager.otlp.ingest import WRITER as OTLP_WRITER
from run_manager.otlp.request_body import (
    BodyRefused,
    close_after_answer,
    end_connection,
    read_body,
)
from run_manager.run import ApprovalNotFound, Status
from run_manager.server.frame_ring import FrameRing
from run_manager.server.history import LedgerUnreadable, RunHistory
from run_manager.server.sse import SSE_HEADERS, damaged_frame, sse_frame
from run_manager.server.summary_index import MAX_FINISHED, IndexedRun, SummaryIndex
from run_manager.server.tokens import make_token

log = logging.getLogger(__name__)

API_PREFIX: Final = "/api/agent/"
MAX_BODY: Final = 256 * 1024
"""Bytes a request body may hold: inputs are capped at 64 KiB in the ledger anyway."""
BODY_TIMEOUT: Final = 15.0
"""Seconds a request body may take to arrive whole."""
DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 500
RUN_EVENTS_LIMIT: Final = 10_000
"""Events ``GET /runs/{run_id}`` returns at most; the SSE endpoint serves the rest."""
PACE_PER_STREAM: Final = 0.0002
"""Seconds a stream lets events gather after a write, for each stream open (see _pace)."""
MAX_PACE: Final = 0.25
KEEPALIVE: Final = 15.0
"""Seconds of quiet after which a stream sends a comment, so dead peers are noticed."""
_encoder: Final = msgspec.json.Encoder()


def _error(status: int, message: str) -> web.Response:
    return web.Response(
        status=status,
        body=_encoder.encode({"error": message}),
        content_type="application/json",
    )


class _ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, body=_encoder.encode(data), content_type="application/json")


def _wire_summary(booked: IndexedRun, summary: RunSummary | None = None) -> dict[str, Any]:
    """A run's summary as the API names it (no server paths, no warnings list).

    ``tokens`` and ``cost_usd`` are ``null`` where they were not counted from every
    event (a ledger found at start-up, read by head and tail), or where no model call
    said them: null, never a 0 that reads as free.
    """
    summary = summary if summary is not None else booked.summary()
    wire = msgspec.to_builtins(summary)
    wire.pop("path", None)
    wire.pop("warnings", None)
    said_tokens = summary.prompt_tokens is not None or summary.output_tokens is not None
    wire["tokens"] = booked.tokens if booked.counted and said_tokens else None
    said_cost = summary.cost_usd is not None
    wire["cost_usd"] = round(booked.cost_usd, 6) if booked.counted and said_cost else None
    return wire  # type: ignore[no-any-return]


def _since(value: str) -> float:
    """``5m``/``1h``/``7d`` back from now, or an RFC 3339 time, as POSIX seconds."""
    try:
        return timespan.since(value, time.time())
    except timespan.BadTimeSpan as error:
        raise _ApiError(400, f"since: {error}") from None


class AttachServer:
    """The attach API for one :class:`Manager`.

    Args:
        manager: whose runs are served and acted on.
        token: the bearer token every request must carry.
        read_only: refuse every ``POST`` with 403.
        feed: how far a live stream may fall behind (a default one is made).
        max_body: bytes a request body may hold.
        body_timeout: seconds a request body may take to arrive (then 408).
        max_finished_runs: finished runs kept listable; older ones are forgotten
            here (their ledgers stay where they are).
    """

    def __init__(
        self,
        manager: Manager,
        *,
        token: str,
        read_only: bool = False,
        feed: FrameRing | None = None,
        max_body: int = MAX_BODY,
        keepalive: float = KEEPALIVE,
        body_timeout: float = BODY_TIMEOUT,
        max_finished_runs: int = MAX_FINISHED,
    ) -> None:
        if not token:
            raise ValueError("an empty token would let anyone in")
        self.manager = manager
        self.read_only = read_only
        self.max_body = max_body
        self.keepalive = keepalive
        self.body_timeout = body_timeout
        self._token = token.encode()
        self.feed = feed or FrameRing()
        self.book = SummaryIndex(manager, max_finished=max_finished_runs)
        self.history = RunHistory(manager.hub)
        self._streams: set[asyncio.Task[Any]] = set()
        manager.hub.add_batch_listener(self._published)
        # A sub-application's own client_max_size is not used: bodies are read by _body.
        self.app = web.Application(middlewares=[self.json_errors, self._authorize])
        self.app.router.add_get("/runs", self.list_runs)
        self.app.router.add_post("/runs", self.start_run)
        self.app.router.add_get("/runs/events/stream", self.stream_all)
        self.app.router.add_get("/runs/{run_id}", self.get_run)
        self.app.router.add_get("/runs/{run_id}/events", self.run_events)
        self.app.router.add_post("/runs/{run_id}/cancel", self.cancel_run)
        self.app.router.add_post("/runs/{run_id}/resume", self.resume_run)
        self.app.router.add_post("/runs/{run_id}/approve", self.approve_run)
        self.app.on_startup.append(self._on_startup)
        self.app.on_shutdown.append(self._on_shutdown)

    def _published(self, events: Sequence[RunEvent], lines: Sequence[bytes]) -> None:
        self.book.add_many(events)
        self.feed.add_many(events, lines)

    async def _on_startup(self, app: web.Application) -> None:
        found, errors = await asyncio.to_thread(self.book.scan_directory)
        self.book.merge(found)
        for error in errors:
            log.warning("ledger directory: %s", error)

    async def _on_shutdown(self, app: web.Application) -> None:
        await self.close()

    async def close(self) -> None:
        """End every stream (clients reconnect elsewhere or later) and release the ledgers."""
        self.feed.close()
        self.manager.hub.remove_batch_listener(self._published)
        if self._streams:
            await asyncio.wait(list(self._streams), timeout=5)
        self.history.close()

    # -- middleware ---------------------------------------------------------------

    @web.middleware
    async def json_errors(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Every failure as ``{"error": ...}`` with its status; never a stack trace.

        An answer given before the request's body was read whole (a refused token, a
        body too big or too slow) is sent, and then the connection is closed: the rest
        of the body is never read, nor inflated.
        """
        response = await self._answer(request, handler)
        if close_after_answer(request, response):
            await end_connection(request, response)
        return response

    async def _answer(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        try:
            return await handler(request)
        except _ApiError as error:
            return _error(error.status, error.message)
        except BodyRefused as refused:
            return _error(refused.status, refused.message)
        except web.HTTPException as error:
            if error.status < 400:
                raise
            return _error(error.status, error.reason)
        except asyncio.CancelledError:
            raise
        except ConnectionResetError:
            # The client went away (before its stream's headers, say): nobody to answer, and
            # nothing wrong here. aiohttp drops this answer quietly when it cannot send it.
            return web.Response(status=499)
        except Exception:
            log.exception("attach API: %s %s failed", request.method, request.path)
            return _error(500, "internal error (the server's log has the details)")

    @web.middleware
    async def _authorize(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        header = request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given:
            response = _error(401, "a bearer token is required (Authorization: Bearer <token>)")
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        # A header's bytes that are not UTF-8 arrive as surrogates: "replace" never raises.
        if not hmac.compare_digest(given.strip().encode("utf-8", "replace"), self._token):
            response = _error(401, "wrong token")
            response.headers["WWW-Authenticate"] = 'Bearer error="invalid_token"'
            return response
        if request.method == "POST" and self.read_only:
            return _error(403, "this server is read-only")
        if "run_id" in request.match_info and not is_valid_run_id(request.match_info["run_id"]):
            return _error(400, "not a run id")
        return await handler(request)

    # -- reading ------------------------------------------------------------------

    def _booked(self, run_id: str) -> IndexedRun:
        booked = self.book.get(run_id)
        if booked is None:
            raise _ApiError(404, f"no run {run_id}")
        return booked

    async def list_runs(self, request: web.Request) -> web.Response:
        query = request.query
        limit = _int(query.get("limit"), DEFAULT_LIMIT, "limit")
        if not 1 <= limit <= MAX_LIMIT:
            raise _ApiError(400, f"limit must be 1 to {MAX_LIMIT}")
        statuses = {s for s in query.get("status", "").split(",") if s}
        skill = query.get("skill")
        parent = query.get("parent")
        since = _since(query["since"]) if "since" in query else None
        runs = self.book.newest_first()
        cursor = query.get("cursor")
        if cursor:
            place = next((i for i, (run_id, _) in enumerate(runs) if run_id == cursor), None)
            if place is None:
                raise _ApiError(400, f"cursor: no run {cursor!r}")
            runs = runs[place + 1 :]
        page: list[dict[str, Any]] = []
        last: str | None = None
        more = False
        for run_id, booked in runs:
            if since is not None and booked.started < since:
                break  # newest first: every later run is older still
            summary = booked.summary()
            if statuses and summary.status.value not in statuses:
                continue
            if skill and skill not in {summary.skill, summary.agent}:
                continue
            if parent and summary.parent_run_id != parent:
                continue
            if len(page) == limit:
                more = True
                break
            page.append(_wire_summary(booked, summary))
            last = run_id
        # read_only is runtop's extension: a client greys its actions before trying one.
        return _json(
            {"runs": page, "next_cursor": last if more else None, "read_only": self.read_only}
        )

    async def get_run(self, request: web.Request) -> web.StreamResponse:
        """The run and its first events, written as they are read: never whole in memory."""
        run_id = request.match_info["run_id"]
        booked = self._booked(run_id)
        await self._check_ledger(booked)
        response = web.StreamResponse()
        response.content_type = "application/json"
        await response.prepare(request)
        await response.write(b'{"run":%s,"events":[' % _encoder.encode(_wire_summary(booked)))
        read = 0
        separator = b""
        events: list[bytes] = []
        try:
            async for line, head in self.history.lines(run_id, booked.path, 0, RUN_EVENTS_LIMIT):
                read += 1
                if head is not None:
                    events.append(line)
                if len(events) >= 256:
                    await response.write(separator + b",".join(events))
                    separator = b","
                    events.clear()
        except LedgerUnreadable:
            # Removed while read: the answer's headers are out, so it is cut off where it
            # stands (the client sees a broken answer, never a short one taken for whole).
            request.protocol.force_close()
            return response
        truncated = b"true" if read >= RUN_EVENTS_LIMIT else b"false"
        tail = (separator + b",".join(events)) if events else b""
        await response.write(tail + b'],"events_truncated":%s}' % truncated)
        await response.write_eof()
        return response

    async def _check_ledger(self, booked: IndexedRun) -> None:
        """A 410 while one can still be answered (before a streamed answer starts)."""
        if booked.path is not None:
            try:
                os.stat(booked.path)  # microseconds: not worth a thread
            except OSError as error:
                raise _ApiError(410, str(LedgerUnreadable.of(error))) from None

    async def run_events(self, request: web.Request) -> web.StreamResponse:
        """A run's events as SSE: history, then (``follow=1``) live until the run ends.

        Extensions: ``start``/``stop`` serve lines by position (0-based) and close.
        """
        run_id = request.match_info["run_id"]
        booked = self._booked(run_id)
        query = request.query
        follow = query.get("follow", "") in {"1", "true", "yes"}
        after = _int(request.headers.get("Last-Event-ID"), 0, "Last-Event-ID")
        await self._check_ledger(booked)
        response = web.StreamResponse(headers=SSE_HEADERS)
        await response.prepare(request)
        if "start" in query or "stop" in query:
            start = _int(query.get("start"), 0, "start")
            stop = _int(query.get("stop"), start + RUN_EVENTS_LIMIT, "stop")
            await self._write_range(response, run_id, booked, start, stop)
            await response.write_eof()
            return response
        async with self._stream(response):
            await self._follow_run(response, run_id, booked, after, follow)
        return response

    @contextlib.asynccontextmanager
    async def _stream(self, response: web.StreamResponse) -> AsyncIterator[None]:
        """A stream :meth:`close` waits for; ended cleanly, or quietly if the peer left."""
        task = asyncio.current_task()
        assert task is not None
        self._streams.add(task)
        try:
            yield
        except ConnectionResetError:
            return
        finally:
            self._streams.discard(task)
        with contextlib.suppress(ConnectionResetError):
            await response.write_eof()

    async def _follow_run(
        self,
        response: web.StreamResponse,
        run_id: str,
        booked: IndexedRun,
        after: int,
        follow: bool,
    ) -> None:
        feed = self.feed
        while True:
            # Both before the history: nothing lands in between unseen, and a run that ends
            # while the history is sent still has its last events followed from the feed.
            cursor = feed.head
            live = self._live(run_id, booked)
            ended = False
            # A live run the feed holds from `after` on (a follower reconnecting, most
            # often) is sent from the feed alone: no ledger read, no decoding, no thread.
            held = feed.reaches_back(run_id, after) if follow and live else None
            if held is not None:
                cursor = held
            else:
                try:
                    async for frames, last_seq, saw_end in self.history.frames_after(
                        run_id, booked.path, after, torn_tail=writer_gone(booked.summary())
                    ):
                        await response.write(frames)
                        after = max(after, last_seq)
                        ended = ended or saw_end
                except LedgerUnreadable as error:  # removed while streamed: said in the stream
                    await response.write(_unreadable_frame(error))
                    return
                if ended or not follow or not live:
                    return
            while not feed.closed:
                found = feed.run_frames_after(run_id, cursor, after)
                if found is None:
                    break  # fell behind the feed: read the ledger again from where it got to
                reached, frames, last_seq, saw_end = found
                if reached == cursor:
                    await self._quiet(response, cursor)
                    continue
                cursor = reached
                if frames:
                    await response.write(frames)
                    after = last_seq
                    if saw_end:
                        return
                    await self._pace()
            if feed.closed:
                return
            if booked.path is None:
                await response.write(sse_frame(None, b"{}", "stream_restarted"))
                after = 0

    async def _pace(self) -> None:
        """After a write, let events gather a moment before the next: longer with more streams.

        Each event wakes every stream; with hundreds of them, waking once per event
        would take the loop from the runs that make the events. A stream that waits
        ``PACE_PER_STREAM`` per open stream (at most ``MAX_PACE``) sends the same
        events in fewer, larger writes.
        """
        pause = min(MAX_PACE, PACE_PER_STREAM * len(self._streams))
        if pause >= 0.001:
            await asyncio.sleep(pause)

    async def _quiet(self, response: web.StreamResponse, cursor: int) -> None:
        """Wait for the feed; on a long quiet, a comment line shows the peer is still there."""
        try:
            async with asyncio.timeout(self.keepalive):
                await self.feed.wait(cursor)
        except TimeoutError:
            await response.write(b": keepalive\n\n")

    def _live(self, run_id: str, booked: IndexedRun) -> bool:
        try:
            return self.manager.get(run_id).status is Status.RUNNING
        except RunNotFound:
            return booked.frozen is None and booked.summary().status.is_live

    async def stream_all(self, request: web.Request) -> web.StreamResponse:
        """Every run's events as they are recorded; ``Last-Event-ID: run_id:seq`` picks up."""
        feed = self.feed
        response = web.StreamResponse(headers=SSE_HEADERS)
        await response.prepare(request)
        async with self._stream(response):
            cursor = feed.head
            resumed = request.headers.get("Last-Event-ID", "")
            preface = sse_frame(None, b"{}", "ready")
            if resumed:
                run_id, _, seq = resumed.rpartition(":")
                found = feed.number_of(run_id, int(seq)) if seq.isdigit() else None
                if found is None:
                    preface += sse_frame(None, b"{}", "stream_restarted")
                else:
                    cursor = found
            await response.write(preface)
            while not feed.closed:
                batch = feed.frames_after(cursor)
                if batch is None:
                    cursor = feed.head
                    await response.write(sse_frame(None, b"{}", "stream_restarted"))
                    continue
                cursor, frames = batch
                if not frames:
                    await self._quiet(response, cursor)
                    continue
                await response.write(b"".join(frames))
                await self._pace()
        return response

    # -- histories ----------------------------------------------------------------

    async def _write_range(
        self, response: web.StreamResponse, run_id: str, booked: IndexedRun, start: int, stop: int
    ) -> None:
        frames: list[bytes] = []
        try:
            async for line, head in self.history.lines(run_id, booked.path, start, stop):
                if head is None:
                    frames.append(damaged_frame(-1, "not a ledger event", line))
                else:
                    frames.append(sse_frame(head.seq, line))
                if len(frames) >= 4096:
                    await response.write(b"".join(frames))
                    frames.clear()
        except LedgerUnreadable as error:
            frames.append(_unreadable_frame(error))
        if frames:
            await response.write(b"".join(frames))

    # -- acting -------------------------------------------------------------------

    async def _body(self, request: web.Request) -> dict[str, Any]:
        raw = await read_body(request, max_bytes=self.max_body, time_limit=self.body_timeout)
        if not raw.strip():
            return {}
        try:
            body = msgspec.json.decode(raw)
        except msgspec.DecodeError as error:
            raise _ApiError(400, f"the body is not JSON: {error}") from None
        except UnicodeDecodeError:
            raise _ApiError(400, "the body is not UTF-8") from None
        except RecursionError:
            raise _ApiError(400, "the body is nested too deeply") from None
        if not isinstance(body, dict):
            raise _ApiError(400, "the body must be a JSON object")
        return body

    async def start_run(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        name = body.get("skill_name")
        if not isinstance(name, str) or not name:
            raise _ApiError(400, "skill_name is required")
        agent = self.manager.agents.get(name)
        if agent is None:
            registered = ", ".join(sorted(self.manager.agents)) or "none"
            raise _ApiError(
                404, f"no agent named {name!r} is registered here (registered: {registered})"
            )
        value = body.get("input", {})
        starter = self.manager.stream if callable(getattr(agent, "run_stream", None)) else None
        handle = (starter or self.manager.start)(agent, value, detached=True)
        started = handle.info().started_at
        return _json({"run_id": handle.run_id, "started_at": _rfc3339(started)}, 201)

    def _refuse_otlp(self, booked: IndexedRun) -> None:
        """A run sent over OpenTelemetry runs elsewhere: nothing here can stop or re-issue it."""
        if booked.summary().writer == OTLP_WRITER:
            raise _ApiError(409, OTLP_REFUSAL)

    async def _refuse_elsewhere(self, booked: IndexedRun, doing: str) -> None:
        """A run another process writes (a second manager on this directory) is theirs to act on.

        Judged as ``runtop ls`` judges it: by the writer's lock on the ledger.
        """
        self._refuse_otlp(booked)
        if booked.path is None:
            return
        summary = booked.summary()
        writer = await asyncio.to_thread(
            live_writer, booked.path, pid=summary.pid, host=summary.host
        )
        if writer is not None:
            raise _ApiError(409, f"the run is live in another process ({writer}): {doing} it there")

    async def cancel_run(self, request: web.Request) -> web.Response:
        run_id = request.match_info["run_id"]
        body = await self._body(request)
        reason = _optional_str(body, "reason")
        try:
            handle = self.manager.get(run_id)
        except RunNotFound:
            await self._refuse_elsewhere(self._booked(run_id), "cancel")
            raise _ApiError(409, "the run already ended") from None
        if handle.status is not Status.RUNNING:
            raise _ApiError(409, f"the run already ended ({handle.status.value})")
        handle.cancel(reason, source=_optional_str(body, "source") or "api")
        return _json({"run_id": run_id, "status": "cancel_requested"}, 202)

    async def resume_run(self, request: web.Request) -> web.Response:
        run_id = request.match_info["run_id"]
        body = await self._body(request)
        if body.get("from_step"):
            raise _ApiError(400, "runtop re-issues a run from its input; it cannot start mid-run")
        booked = self._booked(run_id)
        self._refuse_otlp(booked)
        try:
            handle = self.manager.resume(run_id)
        except RunNotFound:
            raise _ApiError(404, f"no run {run_id}") from None
        except RunNotResumable as error:
            raise _ApiError(409, str(error)) from None
        summary = booked.summary()
        return _json(
            {
                "run_id": run_id,
                "from_node_id": None,
                "replay": False,
                "last_seq": summary.last_seq,
                "pending_approval": None,
                "started": True,
                "new_run_id": handle.run_id,
            }
        )

    async def approve_run(self, request: web.Request) -> web.Response:
        run_id = request.match_info["run_id"]
        body = await self._body(request)
        approved = body.get("approved")
        if not isinstance(approved, bool):
            raise _ApiError(400, "approved (true or false) is required")
        approval_id = _optional_str(body, "approval_id")
        try:
            decided = self.manager.approve(
                run_id,
                approval_id,
                approved,
                _optional_str(body, "reason"),
                source=_optional_str(body, "source") or "api",
            )
        except RunNotFound:
            await self._refuse_elsewhere(self._booked(run_id), "approve")
            raise _ApiError(409, "the run already ended") from None
        except ApprovalNotFound as error:
            raise _ApiError(409, str(error)) from None
        return _json(
            {"run_id": run_id, "approval_id": decided.approval_id, "approved": decided.approved}
        )


def _unreadable_frame(error: LedgerUnreadable) -> bytes:
    """The last frame of a stream whose ledger went away under it (ATTACH_API.md)."""
    return sse_frame(None, _encoder.encode({"error": str(error)}), "ledger_unreadable")


def _int(value: str | None, default: int, name: str) -> int:
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise _ApiError(400, f"{name} must be a whole number") from None


def _optional_str(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _ApiError(400, f"{key} must be a string")
    return value


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


__all__ = ["API_PREFIX", "MAX_BODY", "AttachServer", "make_token"]
