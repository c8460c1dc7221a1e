"""The attach API (ATTACH_API.md) over aiohttp: list, watch, start, cancel, resume, approve.

Mount it into an application's own aiohttp app::

    server = AttachServer(manager, token=make_token())
    app.add_subapp("/api/agent/", server.app)

or run it alone with :func:`serve` (``runtop serve``). Every endpoint
needs the bearer token; a read-only server refuses every ``POST``. Live
events reach SSE streams through one shared :class:`~run_manager.feed.Feed`,
and histories are read from the runs' ledgers as written, so a stream
costs the runs nothing it does not read.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import msgspec
from aiohttp import web

from ledger_reader import (
    MAX_LINE_BYTES,
    DamagedLine,
    LedgerError,
    LedgerFile,
    RunEvent,
    RunSummary,
    decode_line,
    encode_event,
    is_valid_run_id,
    parse_time,
)
from run_manager.feed import Feed
from run_manager.manager import Manager, RunNotFound, RunNotResumable
from run_manager.run import ApprovalNotFound, Status
from run_manager.runbook import BookedRun, RunBook
from run_manager.tokens import write_token

log = logging.getLogger(__name__)

API_PREFIX: Final = "/api/agent/"
MAX_BODY: Final = 256 * 1024
"""Bytes a request body may hold: inputs are capped at 64 KiB in the ledger anyway."""
DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 500
RUN_EVENTS_LIMIT: Final = 10_000
"""Events ``GET /runs/{run_id}`` returns at most; the SSE endpoint serves the rest."""
KEEPALIVE: Final = 15.0
"""Seconds of quiet after which a stream sends a comment, so dead peers are noticed."""
OPEN_LEDGERS: Final = 64
SSE_HEADERS: Final = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}


class _Head(msgspec.Struct):
    """The part of a ledger line a stream needs to label it."""

    seq: int = 0
    type: str = ""


_head_decoder: Final = msgspec.json.Decoder(_Head)
_encoder: Final = msgspec.json.Encoder()


def make_token() -> str:
    """A fresh bearer token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


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


def _wire_summary(booked: BookedRun, summary: RunSummary | None = None) -> dict[str, Any]:
    """A run's summary as the API names it (no server paths, no warnings list).

    ``tokens`` and ``cost_usd`` are ``null`` where they were not counted from every
    event (a ledger found at start-up, read by head and tail).
    """
    wire = msgspec.to_builtins(summary if summary is not None else booked.summary())
    wire.pop("path", None)
    wire.pop("warnings", None)
    wire["tokens"] = booked.tokens if booked.counted else None
    wire["cost_usd"] = round(booked.cost_usd, 6) if booked.counted else None
    return wire  # type: ignore[no-any-return]


_SINCE: Final = re.compile(r"(\d+)([smhd])")
_UNIT: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _since(value: str) -> float:
    """``5m``/``1h``/``7d`` back from now, or an RFC 3339 time, as POSIX seconds."""
    match = _SINCE.fullmatch(value.strip())
    if match:
        return time.time() - int(match[1]) * _UNIT[match[2]]
    parsed = parse_time(value)
    if parsed is None:
        raise _ApiError(400, f"since: {value!r} is neither a time nor a span like 5m, 1h or 7d")
    return parsed.timestamp()


def _sse(frame_id: str | int | None, data: bytes, event: str | None = None) -> bytes:
    parts = []
    if event is not None:
        parts.append(b"event: %s\n" % event.encode())
    if frame_id is not None:
        parts.append(b"id: %s\n" % str(frame_id).encode())
    parts.append(b"data: %s\n\n" % data)
    return b"".join(parts)


def _damaged_frame(offset: int, reason: str, raw: bytes) -> bytes:
    """A ledger line that is not an event: said so, with any event it ended in (LEDGER.md)."""
    data: dict[str, Any] = {"offset": offset, "length": len(raw), "reason": reason}
    if len(raw) <= MAX_LINE_BYTES:
        item = decode_line(raw, max(offset, 0))
        if isinstance(item, DamagedLine):
            data["reason"] = item.reason
            if item.recovered is not None:
                data["recovered"] = msgspec.Raw(encode_event(item.recovered)[:-1])
    return _sse(None, _encoder.encode(data), "damaged")


def _head_of(line: bytes) -> _Head | None:
    """The seq and type of a ledger line, or ``None`` for a damaged one."""
    if len(line) > MAX_LINE_BYTES:
        return None
    try:
        return _head_decoder.decode(line)
    except msgspec.DecodeError:
        return None


def _line_frame(line: bytes, offset: int) -> tuple[bytes, _Head | None]:
    """One ledger line as a per-run frame (``id: <seq>``), or a damaged-line frame."""
    head = _head_of(line)
    if head is None:
        too_long = len(line) > MAX_LINE_BYTES
        reason = f"line of {len(line)} bytes is over the limit" if too_long else "not an event"
        return _damaged_frame(offset, reason, line), None
    return _sse(head.seq, line), head


class AttachServer:
    """The attach API for one :class:`Manager`.

    Args:
        manager: whose runs are served and acted on.
        token: the bearer token every request must carry.
        read_only: refuse every ``POST`` with 403.
        feed: how far a live stream may fall behind (a default one is made).
        max_body: bytes a request body may hold.
    """

    def __init__(
        self,
        manager: Manager,
        *,
        token: str,
        read_only: bool = False,
        feed: Feed | None = None,
        max_body: int = MAX_BODY,
        keepalive: float = KEEPALIVE,
    ) -> None:
        if not token:
            raise ValueError("an empty token would let anyone in")
        self.manager = manager
        self.read_only = read_only
        self.max_body = max_body
        self.keepalive = keepalive
        self._token = token.encode()
        self.feed = feed or Feed()
        self.book = RunBook(manager)
        self._ledgers: OrderedDict[str, LedgerFile] = OrderedDict()
        self._ledgers_lock = threading.Lock()
        self._streams: set[asyncio.Task[Any]] = set()
        manager.hub.add_listener(self._published)
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

    def _published(self, event: RunEvent, line: bytes) -> None:
        self.book.add(event)
        self.feed.add(event, line)

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
        self.manager.hub.remove_listener(self._published)
        if self._streams:
            await asyncio.wait(list(self._streams), timeout=5)
        for ledger in self._ledgers.values():
            ledger.close()
        self._ledgers.clear()

    # -- middleware ---------------------------------------------------------------

    @web.middleware
    async def json_errors(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Every failure as ``{"error": ...}`` with its status; never a stack trace."""
        try:
            return await handler(request)
        except _ApiError as error:
            return _error(error.status, error.message)
        except web.HTTPException as error:
            if error.status < 400:
                raise
            return _error(error.status, error.reason)
        except (asyncio.CancelledError, ConnectionResetError):
            raise
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
        if not hmac.compare_digest(given.strip().encode(), self._token):
            response = _error(401, "wrong token")
            response.headers["WWW-Authenticate"] = 'Bearer error="invalid_token"'
            return response
        if request.method == "POST" and self.read_only:
            return _error(403, "this server is read-only")
        if "run_id" in request.match_info and not is_valid_run_id(request.match_info["run_id"]):
            return _error(400, "not a run id")
        return await handler(request)

    # -- reading ------------------------------------------------------------------

    def _booked(self, run_id: str) -> BookedRun:
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

    async def get_run(self, request: web.Request) -> web.Response:
        run_id = request.match_info["run_id"]
        booked = self._booked(run_id)
        lines = [line async for line in self._history(run_id, booked, 0, RUN_EVENTS_LIMIT)]
        events = [line for line, head in lines if head is not None]
        body = b'{"run":%s,"events":[%s],"events_truncated":%s}' % (
            _encoder.encode(_wire_summary(booked)),
            b",".join(events),
            b"true" if len(lines) >= RUN_EVENTS_LIMIT else b"false",
        )
        return web.Response(body=body, content_type="application/json")

    async def run_events(self, request: web.Request) -> web.StreamResponse:
        """A run's events as SSE: history, then (``follow=1``) live until the run ends.

        Extensions: ``start``/``stop`` serve lines by position (0-based) and close.
        """
        run_id = request.match_info["run_id"]
        booked = self._booked(run_id)
        query = request.query
        follow = query.get("follow", "") in {"1", "true", "yes"}
        after = _int(request.headers.get("Last-Event-ID"), 0, "Last-Event-ID")
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
        self, response: web.StreamResponse, run_id: str, booked: BookedRun, after: int, follow: bool
    ) -> None:
        feed = self.feed
        while True:
            # Both before the history: nothing lands in between unseen, and a run that ends
            # while the history is sent still has its last events followed from the feed.
            cursor = feed.head
            live = self._live(run_id, booked)
            ended = False
            async for frames, last_seq, saw_end in self._history_frames(run_id, booked, after):
                await response.write(frames)
                after = max(after, last_seq)
                ended = ended or saw_end
            if ended or not follow or not live:
                return
            while not feed.closed:
                entries = feed.after(cursor)
                if entries is None:
                    break  # fell behind the feed: read the ledger again from where it got to
                if not entries:
                    await self._quiet(response, cursor)
                    continue
                cursor = entries[-1].number
                mine = [e for e in entries if e.run_id == run_id and e.seq > after]
                if mine:
                    await response.write(b"".join(_sse(e.seq, e.line) for e in mine))
                    after = mine[-1].seq
                    if any(e.type == "run_completed" for e in mine):
                        return
            if feed.closed:
                return
            if booked.path is None:
                await response.write(_sse(None, b"{}", "stream_restarted"))
                after = 0

    async def _quiet(self, response: web.StreamResponse, cursor: int) -> None:
        """Wait for the feed; on a long quiet, a comment line shows the peer is still there."""
        try:
            async with asyncio.timeout(self.keepalive):
                await self.feed.wait(cursor)
        except TimeoutError:
            await response.write(b": keepalive\n\n")

    def _live(self, run_id: str, booked: BookedRun) -> bool:
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
            preface = _sse(None, b"{}", "ready")
            if resumed:
                run_id, _, seq = resumed.rpartition(":")
                found = feed.number_of(run_id, int(seq)) if seq.isdigit() else None
                if found is None:
                    preface += _sse(None, b"{}", "stream_restarted")
                else:
                    cursor = found
            await response.write(preface)
            while not feed.closed:
                batch = feed.frames_after(cursor)
                if batch is None:
                    cursor = feed.head
                    await response.write(_sse(None, b"{}", "stream_restarted"))
                    continue
                cursor, frames = batch
                if not frames:
                    await self._quiet(response, cursor)
                    continue
                await response.write(b"".join(frames))
        return response

    # -- histories ----------------------------------------------------------------

    async def _history_frames(
        self, run_id: str, booked: BookedRun, after: int
    ) -> AsyncIterator[tuple[bytes, int, bool]]:
        """The run's events after seq ``after`` as frames, in batches: (frames, last seq, ended)."""
        if booked.path is None:
            _, events = self.manager.hub.history(run_id)
            chosen = [event for event in events if event.seq > after]
            if chosen:
                frames = b"".join(_sse(e.seq, encode_event(e)[:-1]) for e in chosen)
                ended = chosen[-1].type == "run_completed"
                yield frames, chosen[-1].seq, ended
            return
        reader = _LedgerReader(booked.path)
        try:
            if not await asyncio.to_thread(reader.seek_after, after):
                return
            while True:
                batch = await asyncio.to_thread(reader.read)
                if batch is None:
                    return
                yield batch
        finally:
            reader.close()

    async def _history(
        self, run_id: str, booked: BookedRun, start: int, stop: int
    ) -> AsyncIterator[tuple[bytes, _Head | None]]:
        """Lines ``start``..``stop`` of the run, each with its head (``None``: damaged)."""
        if booked.path is None:
            dropped, events = self.manager.hub.history(run_id)
            for event in events[max(0, start - dropped) : max(0, stop - dropped)]:
                yield encode_event(event)[:-1], _Head(event.seq, event.type)
            return
        lines = await asyncio.to_thread(self._read_lines, booked.path, start, stop)
        for line in lines:
            if line.strip():
                yield line, _head_of(line)

    def _read_lines(self, path: str, start: int, stop: int) -> list[bytes]:
        with self._ledgers_lock:  # requests read in threads; the open ledgers are shared
            return self._read_lines_locked(path, start, stop)

    def _read_lines_locked(self, path: str, start: int, stop: int) -> list[bytes]:
        ledger = self._ledgers.get(path)
        if ledger is None:
            try:
                ledger = LedgerFile(path)
            except LedgerError as error:
                raise _ApiError(410, f"the run's ledger cannot be read: {error}") from error
            self._ledgers[path] = ledger
            while len(self._ledgers) > OPEN_LEDGERS:
                self._ledgers.popitem(last=False)[1].close()
        self._ledgers.move_to_end(path)
        ledger.poll()
        ledger.start_indexing()
        ledger.wait_indexed()
        return ledger.raw_lines(start, stop)

    async def _write_range(
        self, response: web.StreamResponse, run_id: str, booked: BookedRun, start: int, stop: int
    ) -> None:
        frames: list[bytes] = []
        async for line, head in self._history(run_id, booked, start, stop):
            if head is None:
                frames.append(_damaged_frame(-1, "not a ledger event", line))
            else:
                frames.append(_sse(head.seq, line))
            if len(frames) >= 4096:
                await response.write(b"".join(frames))
                frames.clear()
        if frames:
            await response.write(b"".join(frames))

    # -- acting -------------------------------------------------------------------

    async def _body(self, request: web.Request) -> dict[str, Any]:
        too_big = _ApiError(413, f"the request body is over {self.max_body} bytes")
        if request.content_length is not None and request.content_length > self.max_body:
            raise too_big
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.content.iter_chunked(64 * 1024):
            size += len(chunk)
            if size > self.max_body:  # a chunked body says no length up front
                raise too_big
            chunks.append(chunk)
        raw = b"".join(chunks)
        if not raw.strip():
            return {}
        try:
            body = msgspec.json.decode(raw)
        except msgspec.DecodeError as error:
            raise _ApiError(400, f"the body is not JSON: {error}") from None
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
            raise _ApiError(404, f"no agent named {name!r} is registered here")
        value = body.get("input", {})
        starter = self.manager.stream if callable(getattr(agent, "run_stream", None)) else None
        handle = (starter or self.manager.start)(agent, value, detached=True)
        started = handle.info().started_at
        return _json({"run_id": handle.run_id, "started_at": _rfc3339(started)}, 201)

    async def cancel_run(self, request: web.Request) -> web.Response:
        run_id = request.match_info["run_id"]
        body = await self._body(request)
        reason = _optional_str(body, "reason")
        try:
            handle = self.manager.get(run_id)
        except RunNotFound:
            self._booked(run_id)
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
            self._booked(run_id)
            raise _ApiError(409, "the run already ended") from None
        except ApprovalNotFound as error:
            raise _ApiError(409, str(error)) from None
        return _json(
            {"run_id": run_id, "approval_id": decided.approval_id, "approved": decided.approved}
        )


class _LedgerReader:
    """A ledger read forward in blocks, as SSE frames; for a thread."""

    BLOCK: Final = 1024 * 1024

    def __init__(self, path: str) -> None:
        self.path = path
        self._ledger: LedgerFile | None = None
        self._fd: int | None = None
        self._offset = 0

    def seek_after(self, seq: int) -> bool:
        """Start at the first line after ``seq``; ``False`` if the ledger cannot be read."""
        try:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        if seq > 0:
            try:
                with LedgerFile(self.path) as ledger:
                    found = ledger.offset_of_seq(seq + 1)
            except LedgerError:
                return False
            if found is None:
                return False
            self._offset = found
        return True

    def read(self) -> tuple[bytes, int, bool] | None:
        """The next block's complete lines as frames, the last seq, and whether the run ended."""
        assert self._fd is not None
        data = os.pread(self._fd, self.BLOCK, self._offset)
        end = data.rfind(b"\n")
        if end < 0:
            if len(data) < self.BLOCK:
                return None
            # A line longer than a block: say it is damaged and move past it.
            more = _skip_line(self._fd, self._offset + len(data))
            if more is None:
                return None
            frame = _damaged_frame(self._offset, "line is over the limit", data)
            self._offset = more
            return frame, 0, False
        frames: list[bytes] = []
        last_seq = 0
        ended = False
        position = self._offset
        for line in data[:end].split(b"\n"):
            if line.strip():
                frame, head = _line_frame(line, position)
                frames.append(frame)
                if head is not None:
                    last_seq = head.seq
                    ended = head.type == "run_completed"
            position += len(line) + 1
        self._offset += end + 1
        return b"".join(frames), last_seq, ended

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _skip_line(fd: int, offset: int) -> int | None:
    while True:
        data = os.pread(fd, 1024 * 1024, offset)
        if not data:
            return None
        newline = data.find(b"\n")
        if newline >= 0:
            return offset + newline + 1
        offset += len(data)


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


# -- running alone ------------------------------------------------------------------


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
) -> None:
    """Serve the attach API until ``stop`` is set (or the task is cancelled).

    The token is written, 0600, where :func:`run_manager.tokens.token_path`
    says, and ``ready(url, token_file)`` is called once the port is bound.
    On the way out, streams end first; then live runs are cancelled, or with
    ``finish_runs`` given ``grace`` seconds to finish.
    """
    token = token or make_token()
    server = AttachServer(manager, token=token, read_only=read_only)
    root = web.Application(client_max_size=MAX_BODY, middlewares=[server.json_errors])
    root.add_subapp(API_PREFIX, server.app)
    runner = web.AppRunner(root, handle_signals=False, access_log=None, shutdown_timeout=5)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    written: Path | None = None
    try:
        await site.start()
        bound_port = _bound_port(runner) or port
        written = write_token(host, bound_port, token, home)
        if ready is not None:
            ready(_url(host, bound_port), written)
        await (stop or asyncio.Event()).wait()
    finally:
        await runner.cleanup()
        if finish_runs:
            await manager.close(cancel_running=False, grace=grace)
        await manager.close(cancel_running=True, grace=grace)
        if written is not None:
            with contextlib.suppress(OSError):
                written.unlink()


def _bound_port(runner: web.AppRunner) -> int | None:
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return None


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


__all__ = [
    "API_PREFIX",
    "AttachServer",
    "make_token",
    "serve",
]
