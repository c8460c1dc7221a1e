"""A client of the attach API (ATTACH_API.md): runs, events, streams and actions over HTTP.

Used by the remote source and by ``runtop ls|show|cancel URL``. Failures
are typed and say what happened in words: the server cannot be reached,
the token was refused, the server is read-only, the run is unknown.
"""

from __future__ import annotations

import errno
import os
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from types import TracebackType
from typing import Any, Final
from urllib.parse import urlsplit

import aiohttp
import msgspec

from inspector.source import ACTED_BY, ActionRefused, SourceError
from ledger_reader import DamagedLine, LedgerItem, RunStatus, RunSummary, decode_line
from run_manager.server.tokens import read_token

API_PATH: Final = "/api/agent/"
PAGE: Final = 500
CONNECT_TIMEOUT: Final = 5.0
MAX_RETRY_AFTER: Final = 300.0
"""Seconds of a server's ``Retry-After`` honoured at most: a wrong clock or a typo does not
park the client for a day."""


class ServerUnreachable(SourceError):
    """No answer from the server (refused, reset, timed out)."""


class TokenRefused(SourceError):
    """The server said 401: no token, or the wrong one."""


class ServerError(SourceError):
    """The server answered with an error; ``status`` is the HTTP status.

    ``retry_after`` is the seconds its ``Retry-After`` asked the client to wait before it
    comes back (a busy server's ``503``), or ``None``.
    """

    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """The seconds a ``Retry-After`` header asks for (delay-seconds or an HTTP date), or
    ``None`` when there is none or it cannot be read; at most ``MAX_RETRY_AFTER``."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = max(0.0, when.timestamp() - (time.time() if now is None else now))
    return min(seconds, MAX_RETRY_AFTER)


class ServerReadOnly(ActionRefused):
    """The server refuses every action (``--read-only``)."""


@dataclass(frozen=True, slots=True)
class SseFrame:
    """One Server-Sent Events frame."""

    event: str | None
    id: str | None
    data: bytes


class SseParser:
    """Splits a byte stream into SSE frames (the parts runtop needs: event, id, data)."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[SseFrame]:
        buffer = self._buffer + chunk
        if b"\r" in buffer:
            split_pair = buffer.endswith(b"\r")  # its \n may come with the next chunk
            buffer = buffer[:-1] if split_pair else buffer
            buffer = buffer.replace(b"\r\n", b"\n") + (b"\r" if split_pair else b"")
        end = buffer.rfind(b"\n\n")
        if end < 0:
            self._buffer = buffer
            return []
        complete, self._buffer = buffer[:end], buffer[end + 2 :]
        frames: list[SseFrame] = []
        for block in complete.split(b"\n\n"):
            event = frame_id = None
            data: list[bytes] = []
            for line in block.split(b"\n"):
                if not line or line.startswith(b":"):
                    continue
                field, _, value = line.partition(b":")
                if value.startswith(b" "):
                    value = value[1:]
                if field == b"data":
                    data.append(value)
                elif field == b"event":
                    event = value.decode("utf-8", "replace")
                elif field == b"id":
                    frame_id = value.decode("utf-8", "replace")
            if data or event is not None:
                frames.append(SseFrame(event, frame_id, b"\n".join(data)))
        return frames


class _Damaged(msgspec.Struct):
    offset: int = -1
    length: int = 0
    reason: str = "damaged line"
    recovered: msgspec.Raw | None = None


_damaged_decoder: Final = msgspec.json.Decoder(_Damaged)
_summary_fields: Final = frozenset(RunSummary.__struct_fields__)


def item_of(frame: SseFrame) -> LedgerItem | None:
    """The ledger item a per-run or global frame carries (``None`` for control frames)."""
    if frame.event == "damaged":
        try:
            damaged = _damaged_decoder.decode(frame.data)
        except msgspec.DecodeError:
            damaged = _Damaged()
        recovered = decode_line(bytes(damaged.recovered)) if damaged.recovered else None
        return DamagedLine(
            offset=damaged.offset,
            length=damaged.length,
            reason=damaged.reason,
            recovered=recovered if not isinstance(recovered, DamagedLine) else None,
        )
    if frame.event is not None:
        return None
    return decode_line(frame.data)


def summary_of(wire: dict[str, Any]) -> RunSummary:
    """A RunSummary from the API's JSON, tolerant of fields and statuses it does not know."""
    known = {key: value for key, value in wire.items() if key in _summary_fields}
    status = known.get("status")
    if status not in RunStatus._value2member_map_:
        known["status"] = _foreign_status(str(status))
    known.pop("warnings", None)
    try:
        return msgspec.convert(known, RunSummary, strict=False)
    except msgspec.ValidationError:
        run_id = str(wire.get("run_id", ""))
        return RunSummary(run_id=run_id, warnings=["the server sent an unreadable summary"])


def _foreign_status(status: str) -> str:
    """gridctl's words for the states runtop names otherwise."""
    lowered = status.lower()
    if lowered in {"completed", "complete", "success", "ok", "done"}:
        return RunStatus.SUCCEEDED.value
    if lowered in {"error", "errored"}:
        return RunStatus.FAILED.value
    if lowered in {"cancelled", "aborted"}:
        return RunStatus.CANCELED.value
    if lowered in {"waiting", "pending_approval", "awaiting"}:
        return RunStatus.AWAITING_APPROVAL.value
    return RunStatus.RUNNING.value


def split_url(url: str) -> tuple[str, str, int]:
    """The API base (ending ``/api/agent/``), host and port of a server URL."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError(f"{url!r} is not an http:// or https:// URL")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = parts.path.rstrip("/")
    if not path.endswith(API_PATH.rstrip("/")):
        path += API_PATH.rstrip("/")
    return f"{parts.scheme}://{parts.netloc}{path}/", parts.hostname, port


def find_token(url: str, given: str | None = None) -> str | None:
    """The token to use: ``given``, else ``RUNTOP_TOKEN``, else the one its server wrote here."""
    if given:
        return given
    if os.environ.get("RUNTOP_TOKEN"):
        return os.environ["RUNTOP_TOKEN"]
    _, host, port = split_url(url)
    return read_token(host, port)


class AttachClient:
    """Talks to one attach server.

    Args:
        url: the server (``http://127.0.0.1:8765``; the API path is added).
        token: the bearer token (see :func:`find_token`).
    """

    def __init__(self, url: str, token: str | None) -> None:
        self.url = url
        self.base, self.host, self.port = split_url(url)
        self.token = token
        self.read_only = False
        """The server said it refuses every action (runtop's ``read_only`` extension)."""
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
            self._session = aiohttp.ClientSession(
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT),
            )
        return self._session

    async def use_token(self, token: str) -> None:
        """Send ``token`` from now on."""
        await self.close()
        self.token = token

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> AttachClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- plumbing -------------------------------------------------------------------

    async def _request(
        self, method: str, path: str, *, json: Any = None, params: dict[str, str] | None = None
    ) -> Any:
        try:
            async with self.session.request(
                method,
                self.base + path,
                json=json,
                params=params,
                timeout=aiohttp.ClientTimeout(total=30, sock_connect=CONNECT_TIMEOUT),
            ) as response:
                body = await response.read()
                if response.status >= 400:
                    raise self._failure(response.status, body, response.headers, path)
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            raise ServerUnreachable(f"{self.url} cannot be reached: {_reason(error)}") from None
        try:
            return msgspec.json.decode(body)
        except msgspec.DecodeError:
            raise ServerError(response.status, self._foreign(response.status, path)) from None

    def _foreign(self, status: int, path: str) -> str:
        """What a server that does not speak the attach API is told: named so, not a status."""
        return (
            f"{self.url} is not a runtop server (nor one with the attach API): it answered "
            f"HTTP {status} to {API_PATH}{path}, not the API's JSON"
        )

    def _failure(
        self, status: int, body: bytes, headers: Mapping[str, str], path: str
    ) -> SourceError:
        try:
            message = str(msgspec.json.decode(body).get("error", ""))
        except (msgspec.DecodeError, AttributeError):
            message = ""
        if not message:  # the attach API says every error as {"error": ...}
            return ServerError(
                status, self._foreign(status, path), retry_after(headers.get("Retry-After"))
            )
        if message == _phrase(status):
            # The server's words are only its status's (an address with a path, answered by
            # the server's catch-all): say what was asked where, not a bare "Not Found".
            hint = (
                " (give the server's own address, http://HOST:PORT, without a path)"
                if status == 404
                else ""
            )
            message = f"{self.url} answered HTTP {status} {message} to {API_PATH}{path}{hint}"
        if status == 401:
            if not self.token:
                return TokenRefused(
                    f"refused: {self.url} wants a token (give --token or RUNTOP_TOKEN)"
                )
            return TokenRefused(f"refused: bad token for {self.url}")
        return ServerError(status, message, retry_after(headers.get("Retry-After")))

    async def frames(
        self, path: str, *, params: dict[str, str] | None = None, last_event_id: str | None = None
    ) -> AsyncIterator[list[SseFrame]]:
        """An SSE endpoint's frames, in the batches they arrive in, until the server ends it."""
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        parser = SseParser()
        try:
            async with self.session.get(
                self.base + path,
                params=params,
                headers=headers,
                timeout=aiohttp.ClientTimeout(
                    total=None, sock_connect=CONNECT_TIMEOUT, sock_read=60
                ),
            ) as response:
                if response.status >= 400:
                    body = await response.read()
                    raise self._failure(response.status, body, response.headers, path)
                async for chunk in response.content.iter_any():
                    frames = parser.feed(chunk)
                    if frames:
                        yield frames
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            raise ServerUnreachable(f"{self.url} cannot be reached: {_reason(error)}") from None

    # -- the API --------------------------------------------------------------------

    async def runs(self, **filters: str) -> list[RunSummary]:
        """Every run the server lists (all pages), newest first."""
        found: list[RunSummary] = []
        cursor: str | None = None
        while True:
            params = {**filters, "limit": str(PAGE)}
            if cursor:
                params["cursor"] = cursor
            page = await self._request("GET", "runs", params=params)
            self.read_only = page.get("read_only") is True
            found.extend(summary_of(run) for run in page.get("runs", []))
            cursor = page.get("next_cursor")
            if not cursor:
                return found

    async def run(self, run_id: str) -> tuple[RunSummary, list[LedgerItem]]:
        body = await self._request("GET", f"runs/{run_id}")
        events = [decode_line(msgspec.json.encode(event)) for event in body.get("events", [])]
        return summary_of(body.get("run", {})), [item for item in events if item is not None]

    async def events(
        self, run_id: str, *, after: int = 0, start: int | None = None, stop: int | None = None
    ) -> list[LedgerItem]:
        """A run's events after seq ``after``, or lines ``start``..``stop`` by position."""
        params = {}
        if start is not None:
            params = {"start": str(start), "stop": str(stop if stop is not None else start)}
        items: list[LedgerItem] = []
        last = str(after) if after else None
        async for frames in self.frames(f"runs/{run_id}/events", params=params, last_event_id=last):
            for frame in frames:
                item = item_of(frame)
                if item is not None:
                    items.append(item)
        return items

    async def cancel(self, run_id: str, reason: str | None, *, by: str | None = None) -> None:
        body = {"reason": reason, "source": ACTED_BY, "requested_by": by}
        await self._act(f"runs/{run_id}/cancel", body)

    async def resume(self, run_id: str) -> str:
        # One key for this request, however often it is sent: a retry starts no second run.
        body = await self._act(f"runs/{run_id}/resume", {"idempotency_key": uuid.uuid4().hex})
        return str(body.get("new_run_id") or body.get("run_id"))

    async def approve(
        self,
        run_id: str,
        approval_id: str | None,
        approved: bool,
        reason: str | None,
        *,
        by: str | None = None,
    ) -> None:
        body = {"approved": approved, "reason": reason, "source": ACTED_BY, "answered_by": by}
        if approval_id:
            body["approval_id"] = approval_id
        await self._act(f"runs/{run_id}/approve", body)

    async def _act(self, path: str, body: dict[str, Any]) -> Any:
        try:
            return await self._request("POST", path, json=body)
        except ServerError as error:
            if error.status == 403:
                raise ServerReadOnly(f"{self.host}:{self.port} is read-only") from None
            if error.status in {404, 409, 400}:
                raise ActionRefused(str(error)) from None
            raise


def _phrase(status: int) -> str:
    """HTTP's own words for ``status`` (``Not Found``), or nothing for a status it has none
    for."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _reason(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "timed out"
    if isinstance(error, aiohttp.ClientConnectorError):
        if error.os_error.errno == errno.ECONNREFUSED:
            return "connection refused (is the server running?)"
        return str(error.os_error.strerror or error.os_error)
    if isinstance(error, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError):
        return "the server went away"
    text = str(error)
    return text or type(error).__name__
