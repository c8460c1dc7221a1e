"""Reading an HTTP request's body within bounds: bytes, inflated bytes and time.

Shared by ``POST /v1/traces`` and the attach API's ``POST`` endpoints (it sits
here, under the attach server, so that both may import it). A body is read
only once the request's token has been checked (the routes call this from
their handlers, behind the bearer middleware), and inflated here, not by
aiohttp, a slice at a time: no more than ``max_bytes`` come out, each slice is
at most :data:`SLICE` bytes so other requests run between slices. Time is
counted two ways: no more than :data:`READ_GAP` seconds between two reads (a
client that stops sending), and in total ``time_limit`` seconds plus one
second for each :data:`PACE` bytes received (a client that trickles: a byte a
second is refused at ``time_limit``, a large export at a modest pace is not). The moment the answer
is decided (too big, too slow, not gzip) reading stops; the server closes the
connection rather than read the rest (:func:`close_after_answer`).

``runtop serve`` runs aiohttp with ``auto_decompress=False`` so that nothing
is inflated before a handler asks; mounted in an application that lets aiohttp
inflate, the body arrives inflated (aiohttp's inflater is bounded by its
buffer: it waits for the reader) and is counted the same way.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Iterator
from typing import Final

from aiohttp import web

SLICE: Final = 1024 * 1024
"""Bytes inflated between two chances for other requests to run."""
READ_CHUNK: Final = 64 * 1024
READ_GAP: Final = 5.0
"""Seconds a body may go without a byte arriving (then 408)."""
PACE: Final = 1024 * 1024
"""Bytes a second a body earns beyond its ``time_limit``: a 64 MiB export has 64 s more."""

_GZIP: Final = frozenset({"gzip", "x-gzip"})
_DEFLATE: Final = frozenset({"deflate"})
_IDENTITY: Final = frozenset({"", "identity"})
TAKEN_ENCODINGS: Final = "gzip and deflate"


class BodyRefused(Exception):
    """The body will not be taken: ``status`` and ``message`` are the answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def content_encoding(request: web.Request) -> str:
    """The request's ``Content-Encoding``, checked before anything is read.

    Raises:
        BodyRefused: 415 for an encoding not taken (``br``, ``zstd``, anything unknown,
            or more than one).
    """
    encoding = request.headers.get("Content-Encoding", "").strip().lower()
    if encoding in _IDENTITY or encoding in _GZIP or encoding in _DEFLATE:
        return encoding
    shown = encoding if len(encoding) <= 40 else encoding[:40] + "..."
    raise BodyRefused(
        415, f"content encoding {shown!r} is not taken ({TAKEN_ENCODINGS} are, or none)"
    )


async def read_body(
    request: web.Request,
    *,
    max_bytes: int,
    time_limit: float,
    read_gap: float = READ_GAP,
) -> bytes:
    """The request's body, inflated if gzip or deflate, within ``max_bytes`` and in time.

    In time: at most ``read_gap`` seconds between two reads, and ``time_limit``
    seconds in all plus one for each :data:`PACE` bytes received.

    Raises:
        BodyRefused: 415 (encoding not taken), 413 (over ``max_bytes``, sent or
            inflated), 408 (a gap over ``read_gap``, or not whole in time), 400 (does
            not inflate).
    """
    encoding = content_encoding(request)
    too_big = BodyRefused(413, f"the request body is over {max_bytes} bytes")
    if request.content_length is not None and request.content_length > max_bytes:
        raise too_big
    inflater: _Inflater | None = None
    if encoding not in _IDENTITY and request.content.total_compressed_bytes is None:
        inflater = _Inflater(gzip=encoding in _GZIP)
    body = bytearray()
    received = 0
    loop = asyncio.get_running_loop()
    started = loop.time()
    gap_ends = started + read_gap

    def deadline() -> float:
        return min(gap_ends, started + time_limit + received / PACE)

    try:
        async with asyncio.timeout_at(deadline()) as timer:
            async for chunk in request.content.iter_chunked(READ_CHUNK):
                received += len(chunk)
                if received > max_bytes:
                    raise too_big
                gap_ends = loop.time() + read_gap
                timer.reschedule(deadline())
                if inflater is None:
                    body += chunk
                    continue
                for piece in inflater.feed(chunk):
                    body += piece
                    if len(body) > max_bytes:
                        raise too_big
                    await asyncio.sleep(0)  # the next slice after others have had a turn
    except TimeoutError:
        if loop.time() >= gap_ends:
            raise BodyRefused(
                408, f"no byte of the request body arrived for {read_gap:g} s"
            ) from None
        raise BodyRefused(408, f"the request body did not arrive within {time_limit:g} s") from None
    except web.HTTPException as error:  # aiohttp's own inflater found it broken
        raise BodyRefused(400, f"the request body cannot be read: {error.reason}") from None
    except (zlib.error, ValueError) as error:
        raise BodyRefused(400, f"the request body does not inflate: {error}") from None
    if inflater is not None and not inflater.ended:
        raise BodyRefused(400, f"the {encoding} body is cut short")
    return bytes(body)


class _Inflater:
    """gzip or deflate (zlib-wrapped or raw, as aiohttp takes it), a slice at a time."""

    def __init__(self, *, gzip: bool) -> None:
        self._inflater: zlib._Decompress | None = (
            zlib.decompressobj(wbits=16 + zlib.MAX_WBITS) if gzip else None
        )

    @property
    def ended(self) -> bool:
        return self._inflater is not None and self._inflater.eof

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        """What ``chunk`` inflates to, in slices of at most :data:`SLICE` bytes.

        A generator, so that the reader can let other requests run between slices:
        64 KiB of a gzip bomb inflate to 64 MiB.
        """
        if not chunk:
            return
        if self._inflater is None:
            # RFC 1950's header says deflate (CM = 8); without it the stream is raw deflate.
            wbits = zlib.MAX_WBITS if chunk[0] & 0x0F == 8 else -zlib.MAX_WBITS
            self._inflater = zlib.decompressobj(wbits=wbits)
        inflater = self._inflater
        data = chunk
        while True:
            if inflater.eof:
                if data or inflater.unused_data:
                    raise ValueError("data after the end of the compressed body")
                return
            piece = inflater.decompress(data, SLICE)
            data = inflater.unconsumed_tail
            if piece:
                yield piece
            if not data and len(piece) < SLICE and not inflater.eof:  # a full slice may hold more
                return


def close_after_answer(request: web.Request, response: web.StreamResponse) -> bool:
    """Whether an answer given before the body was read whole must end the connection.

    aiohttp would otherwise read (and, where it inflates, inflate) the rest of the
    body after the answer, for up to its ``lingering_time``: a client without a
    token could keep the server inflating a gzip bomb. The caller sends the answer
    and then closes the connection (:func:`end_connection`).
    """
    if not request.body_exists or request.content.is_eof():
        return False
    response.force_close()  # says "Connection: close" with the answer
    return True


async def end_connection(request: web.Request, response: web.StreamResponse) -> None:
    """Send ``response`` whole, then close the connection without reading the rest of the body."""
    await response.prepare(request)
    await response.write_eof()
    request.protocol.force_close()
