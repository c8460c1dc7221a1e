"""The attach API (ATTACH_API.md) over aiohttp: list, watch, start, cancel, resume, approve.

Mount it into an application's own aiohttp app::

    server = AttachServer(manager, token=make_token())
    app.add_subapp("/api/agent/", server.app)

or run it alone with :func:`run_manager.server.standalone.serve` (``runtop
serve``). Every endpoint needs the bearer token; a read-only server
refuses every ``POST``. This module holds the routes that list and act on runs
and checks every request; the routes that stream runs' events are
:class:`~run_manager.server.streams.RunStreams`'s.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Final

import msgspec
from aiohttp import web

from ledger_reader import RunEvent, is_valid_run_id, timespan
from ledger_reader.liveness import live_writer
from ledger_reader.run_filter import FilterError, RunFilter, summary_fields
from run_manager.budget import BadBudget, Budget
from run_manager.errors import RunNotFound, RunNotResumable
from run_manager.manager import Manager
from run_manager.otlp.ingest import READ_ONLY_REASON as OTLP_REFUSAL
from run_manager.otlp.ingest import WRITER as OTLP_WRITER
from run_manager.otlp.request_body import (
    READ_GAP,
    BodyRefused,
    close_after_answer,
    end_connection,
    read_body,
)
from run_manager.run import ApprovalNotFound, Status
from run_manager.server.answers import (
    ApiError,
    Families,
    as_listed,
    booked_run,
    error_response,
    json_response,
    whole_number,
    wire_summary,
)
from run_manager.server.frame_ring import FrameRing
from run_manager.server.history import RunHistory
from run_manager.server.streams import KEEPALIVE, RunStreams
from run_manager.server.summary_index import MAX_FINISHED, IndexedRun, SummaryIndex
from run_manager.server.tokens import make_token

log = logging.getLogger(__name__)

API_PREFIX: Final = "/api/agent/"
"""Where ``runtop serve`` mounts the API, and where its clients look for it."""
MAX_BODY: Final = 256 * 1024
"""Bytes a request body may hold: inputs are capped at 64 KiB in the ledger anyway."""
BODY_TIMEOUT: Final = 15.0
"""Seconds a request body may take to arrive whole."""
RESUME_KEYS_KEPT: Final = 4096
"""Resume requests' idempotency keys remembered, the oldest forgotten first."""
DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 500


def _since(value: str) -> float:
    """``5m``/``1h``/``7d`` back from now, or an RFC 3339 time, as POSIX seconds."""
    try:
        return timespan.since(value, time.time())
    except timespan.BadTimeSpan as error:
        raise ApiError(400, f"since: {error}") from None


UNANSWERED_TERMS: Final = ("has", "source")
"""Terms of the filter language a server cannot answer: ``has:`` searches the files of the
runs a watcher lists, ``source:`` names a source as the watcher does."""


def _run_filter(text: str) -> RunFilter:
    """``?filter=``, in the language of the app's ``/`` (docs/filters.md); a term that is
    wrong, or one only a watcher can answer, is a 400 that names it."""
    try:
        run_filter = RunFilter.parse(text)
    except FilterError as error:
        raise ApiError(400, f"filter: {error}") from None
    said = {term.field for term in run_filter.terms}
    if run_filter.phrases:
        said.add("has")
    for field in UNANSWERED_TERMS:
        if field in said:
            raise ApiError(400, f"filter: {field}: is not answered by the server, only by runtop")
    return run_filter


class AttachServer:
    """The attach API for one :class:`Manager`.

    Args:
        manager: whose runs are served and acted on.
        token: the bearer token every request must carry.
        read_only: refuse every ``POST`` with 403.
        feed: how far a live stream may fall behind (a default one is made).
        max_body: bytes a request body may hold.
        body_timeout: seconds a request body may take to arrive (then 408).
        read_gap: seconds a request body may go without a byte arriving (then 408).
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
        read_gap: float = READ_GAP,
        max_finished_runs: int = MAX_FINISHED,
    ) -> None:
        if not token:
            raise ValueError("an empty token would let anyone in")
        self.manager = manager
        """Whose runs are served and acted on."""
        self.read_only = read_only
        """Every ``POST`` is refused with 403."""
        self.max_body = max_body
        """Bytes a request body may hold."""
        self.keepalive = keepalive
        """Seconds between the comments that keep an idle stream open."""
        self.body_timeout = body_timeout
        """Seconds a request body may take to arrive whole."""
        self.read_gap = read_gap
        """Seconds a request body may go without a byte arriving."""
        self._token = token.encode()
        self.feed = feed or FrameRing()
        self.book = SummaryIndex(manager, max_finished=max_finished_runs)
        self.history = RunHistory(manager.hub)
        self._resumed: OrderedDict[tuple[str, str], str] = OrderedDict()
        """The run each resume request's idempotency key started."""
        self.streams = RunStreams(manager, self.book, self.feed, self.history, keepalive=keepalive)
        manager.hub.add_batch_listener(self._published)
        # A sub-application's own client_max_size is not used: bodies are read by _body.
        self.app = web.Application(middlewares=[self.json_errors, self._authorize])
        """The API's aiohttp application: mount it at :data:`API_PREFIX`."""
        self.app.router.add_get("/runs", self.list_runs)
        self.app.router.add_post("/runs", self.start_run)
        self.app.router.add_get("/runs/events/stream", self.streams.stream_all)
        self.app.router.add_get("/runs/{run_id}", self.streams.get_run)
        self.app.router.add_get("/runs/{run_id}/events", self.streams.run_events)
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
        await self.streams.close()
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
        except ApiError as error:
            return error_response(error.status, error.message)
        except BodyRefused as refused:
            return error_response(refused.status, refused.message)
        except web.HTTPException as error:
            if error.status < 400:
                raise
            return error_response(error.status, error.reason)
        except asyncio.CancelledError:
            raise
        except ConnectionResetError:
            # The client went away (before its stream's headers, say): nobody to answer, and
            # nothing wrong here. aiohttp drops this answer quietly when it cannot send it.
            return web.Response(status=499)
        except Exception:
            log.exception("attach API: %s %s failed", request.method, request.path)
            return error_response(500, "internal error (the server's log has the details)")

    @web.middleware
    async def _authorize(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        header = request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given:
            response = error_response(
                401, "a bearer token is required (Authorization: Bearer <token>)"
            )
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        # A header's bytes that are not UTF-8 arrive as surrogates: "replace" never raises.
        if not hmac.compare_digest(given.strip().encode("utf-8", "replace"), self._token):
            response = error_response(401, "wrong token")
            response.headers["WWW-Authenticate"] = 'Bearer error="invalid_token"'
            return response
        if request.method == "POST" and self.read_only:
            return error_response(403, "this server is read-only")
        if "run_id" in request.match_info and not is_valid_run_id(request.match_info["run_id"]):
            return error_response(400, "not a run id")
        return await handler(request)

    # -- reading ------------------------------------------------------------------

    def _booked(self, run_id: str) -> IndexedRun:
        return booked_run(self.book, run_id)

    async def list_runs(self, request: web.Request) -> web.Response:
        """``GET runs``: a page of run summaries, newest first.

        Filtered by ``status`` (comma-separated), ``skill``, ``parent``, ``since``
        (``5m``, ``1h``, ``7d`` or an RFC 3339 time) and ``filter`` (the app's filter
        language: :mod:`ledger_reader.run_filter`); ``limit`` (1 to 500, default 50)
        runs a page, the next page from ``cursor``, the ``next_cursor`` of this one.
        """
        query = request.query
        limit = whole_number(query.get("limit"), DEFAULT_LIMIT, "limit")
        if not 1 <= limit <= MAX_LIMIT:
            raise ApiError(400, f"limit must be 1 to {MAX_LIMIT}")
        statuses = {s for s in query.get("status", "").split(",") if s}
        skill = query.get("skill")
        parent = query.get("parent")
        since = _since(query["since"]) if "since" in query else None
        run_filter = _run_filter(query["filter"]) if query.get("filter", "").strip() else None
        fields = summary_fields() if run_filter is not None else {}
        runs = self.book.newest_first()
        cursor = query.get("cursor")
        if cursor:
            place = next((i for i, (run_id, _) in enumerate(runs) if run_id == cursor), None)
            if place is None:
                raise ApiError(400, f"cursor: no run {cursor!r}")
            runs = runs[place + 1 :]
        families = Families(self.book)  # a child on another page, or filtered out, too
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
            if run_filter is not None and not run_filter.passes(as_listed(booked, summary), fields):
                continue
            if len(page) == limit:
                more = True
                break
            page.append(wire_summary(booked, summary, total=families.total(run_id)))
            last = run_id
        # read_only is runtop's extension: a client greys its actions before trying one.
        return json_response(
            {"runs": page, "next_cursor": last if more else None, "read_only": self.read_only}
        )

    # -- acting -------------------------------------------------------------------

    async def _body(self, request: web.Request) -> dict[str, Any]:
        raw = await read_body(
            request, max_bytes=self.max_body, time_limit=self.body_timeout, read_gap=self.read_gap
        )
        if not raw.strip():
            return {}
        try:
            body = msgspec.json.decode(raw)
        except msgspec.DecodeError as error:
            raise ApiError(400, f"the body is not JSON: {error}") from None
        except UnicodeDecodeError:
            raise ApiError(400, "the body is not UTF-8") from None
        except RecursionError:
            raise ApiError(400, "the body is nested too deeply") from None
        if not isinstance(body, dict):
            raise ApiError(400, "the body must be a JSON object")
        return body

    async def start_run(self, request: web.Request) -> web.Response:
        """``POST runs`` ``{"skill_name": ..., "input": ..., "budget"?: {...}}``: start a
        registered agent, with the server's budget unless the body gives one.

        Answers 201 with the new ``run_id``; 404 names the registered agents when
        ``skill_name`` is none of them; 400 says what is wrong with a budget. The run
        outlives the request (detached).
        """
        body = await self._body(request)
        name = body.get("skill_name")
        if not isinstance(name, str) or not name:
            raise ApiError(400, "skill_name is required")
        agent = self.manager.agents.get(name)
        if agent is None:
            registered = ", ".join(sorted(self.manager.agents)) or "none"
            raise ApiError(
                404, f"no agent named {name!r} is registered here (registered: {registered})"
            )
        value = body.get("input", {})
        budget = _budget_of(body.get("budget"))
        starter = self.manager.stream if callable(getattr(agent, "run_stream", None)) else None
        handle = (starter or self.manager.start)(agent, value, detached=True, budget=budget)
        started = handle.info().started_at
        return json_response({"run_id": handle.run_id, "started_at": _rfc3339(started)}, 201)

    def _refuse_otlp(self, booked: IndexedRun) -> None:
        """A run sent over OpenTelemetry runs elsewhere: nothing here can stop or re-issue it."""
        if booked.summary().writer == OTLP_WRITER:
            raise ApiError(409, OTLP_REFUSAL)

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
            raise ApiError(409, f"the run is live in another process ({writer}): {doing} it there")

    async def cancel_run(self, request: web.Request) -> web.Response:
        """``POST runs/{run_id}/cancel`` ``{"reason": ..., "source": ...}``: ask a live run to stop.

        Answers 202 at once (the run ends as ``canceled`` once it has stopped), or 409
        with why not: it already ended, or another process or OpenTelemetry runs it.
        """
        run_id = request.match_info["run_id"]
        body = await self._body(request)
        reason = _optional_str(body, "reason")
        try:
            handle = self.manager.get(run_id)
        except RunNotFound:
            await self._refuse_elsewhere(self._booked(run_id), "cancel")
            raise ApiError(409, "the run already ended") from None
        if handle.status is not Status.RUNNING:
            raise ApiError(409, f"the run already ended ({handle.status.value})")
        handle.cancel(
            reason,
            source=_optional_str(body, "source") or "api",
            requested_by=_optional_str(body, "requested_by"),
        )
        return json_response({"run_id": run_id, "status": "cancel_requested"}, 202)

    async def resume_run(self, request: web.Request) -> web.Response:
        """``POST runs/{run_id}/resume``: re-issue a finished run with its recorded input.

        The new run's id is ``new_run_id``; 409 says why a run cannot be re-issued. A
        request that carries an idempotency key (the ``Idempotency-Key`` header, or
        ``idempotency_key`` in the body) and comes again, retried, is answered with the
        run the first one started (for :data:`RESUME_KEYS_KEPT` keys), not another.
        """
        run_id = request.match_info["run_id"]
        body = await self._body(request)
        if body.get("from_step"):
            raise ApiError(400, "runtop re-issues a run from its input; it cannot start mid-run")
        key = request.headers.get("Idempotency-Key") or _optional_str(body, "idempotency_key")
        booked = self._booked(run_id)
        self._refuse_otlp(booked)
        started = self._resumed.get((run_id, key)) if key else None
        if started is None:
            try:
                started = self.manager.resume(run_id).run_id
            except RunNotFound:
                raise ApiError(404, f"no run {run_id}") from None
            except RunNotResumable as error:
                raise ApiError(409, str(error)) from None
            if key:
                self._resumed[(run_id, key)] = started
                while len(self._resumed) > RESUME_KEYS_KEPT:
                    self._resumed.popitem(last=False)
        summary = booked.summary()
        return json_response(
            {
                "run_id": run_id,
                "from_node_id": None,
                "replay": False,
                "last_seq": summary.last_seq,
                "pending_approval": None,
                "started": True,
                "new_run_id": started,
            }
        )

    async def approve_run(self, request: web.Request) -> web.Response:
        """``POST runs/{run_id}/approve`` ``{"approved": ..., "approval_id": ..., "reason": ...}``.

        Decides a gate the run waits on, as :meth:`Manager.approve` does: without
        ``approval_id``, its only one. 409 when there is no such gate or run.
        """
        run_id = request.match_info["run_id"]
        body = await self._body(request)
        approved = body.get("approved")
        if not isinstance(approved, bool):
            raise ApiError(400, "approved (true or false) is required")
        approval_id = _optional_str(body, "approval_id")
        try:
            decided = self.manager.approve(
                run_id,
                approval_id,
                approved,
                _optional_str(body, "reason"),
                source=_optional_str(body, "source") or "api",
                answered_by=_optional_str(body, "answered_by"),
            )
        except RunNotFound:
            await self._refuse_elsewhere(self._booked(run_id), "approve")
            raise ApiError(409, "the run already ended") from None
        except ApprovalNotFound as error:
            raise ApiError(409, str(error)) from None
        return json_response(
            {"run_id": run_id, "approval_id": decided.approval_id, "approved": decided.approved}
        )


def _optional_str(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ApiError(400, f"{key} must be a string")
    return value


def _budget_of(given: Any) -> Budget | None:
    """A run's budget as a request gives it: ``{"cost_usd": 1.0, "tokens": 200000,
    "ask_at": 0.8}`` (``run_started.budget``'s fields; ``ask_at`` 0.8 unless said);
    ``None`` for none given (the server's applies)."""
    if given is None:
        return None
    if not isinstance(given, dict):
        raise ApiError(400, 'budget must be an object like {"cost_usd": 1.0}')
    unknown = sorted(set(given) - set(Budget.__dataclass_fields__))
    if unknown:
        raise ApiError(400, f"budget: {', '.join(map(repr, unknown))} is not a limit")
    try:
        return Budget(**given)
    except (BadBudget, TypeError) as error:
        raise ApiError(400, f"budget: {error}") from None


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


__all__ = ["API_PREFIX", "MAX_BODY", "AttachServer", "make_token"]
