"""The attach API's streams: a run's events (SSE or JSON), every run's live events (SSE).

A live event reaches every stream through one shared
:class:`~run_manager.server.frame_ring.FrameRing`, framed once by
:mod:`run_manager.server.sse`; a history is read from the run's ledger as
written (:mod:`run_manager.server.history`), so a stream costs the runs
nothing it does not read.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any, Final

from aiohttp import web

from ledger_reader.head_tail import writer_gone
from run_manager.errors import RunNotFound
from run_manager.manager import Manager
from run_manager.run import Status
from run_manager.server.answers import (
    ApiError,
    Families,
    booked_run,
    encode,
    error_response,
    whole_number,
    wire_summary,
)
from run_manager.server.frame_ring import FrameRing
from run_manager.server.history import LedgerUnreadable, RunHistory
from run_manager.server.loop_lag import LoopLag
from run_manager.server.sse import SSE_HEADERS, damaged_frame, sse_frame
from run_manager.server.summary_index import IndexedRun, SummaryIndex

RUN_EVENTS_LIMIT: Final = 10_000
"""Events ``GET /runs/{run_id}`` returns at most; the SSE endpoint serves the rest."""
PACE_PER_STREAM: Final = 0.0005
"""Seconds a stream lets events gather after a write, for each stream open (see _pace)."""
MAX_PACE: Final = 0.5
KEEPALIVE: Final = 15.0
"""Seconds of quiet after which a stream sends a comment, so dead peers are noticed."""
ADMIT_FREELY: Final = 64
"""Streams open below which a new one is always admitted; past it, only while the event
loop keeps time (:class:`~run_manager.server.loop_lag.LoopLag`)."""
RETRY_AFTER: Final = 1
"""Seconds a stream turned away is told to wait before it comes back."""


class RunStreams:
    """The routes that stream runs' events, and the streams they have open.

    Args:
        manager: whose live runs are followed.
        book: the runs the server knows, with their ledgers.
        feed: the recent events every stream reads.
        history: the runs' ledgers, read for what the feed no longer holds.
        keepalive: seconds of quiet before a stream sends a comment.
    """

    def __init__(
        self,
        manager: Manager,
        book: SummaryIndex,
        feed: FrameRing,
        history: RunHistory,
        *,
        keepalive: float = KEEPALIVE,
    ) -> None:
        self.manager = manager
        self.book = book
        self.feed = feed
        self.history = history
        self.keepalive = keepalive
        self._streams: set[asyncio.Task[Any]] = set()
        self.lag = LoopLag()
        self.turned_away = 0
        """Streams answered ``503`` because the loop was behind."""

    async def close(self) -> None:
        """Wait (a while) for the streams to end: the feed, closed first, ends them."""
        if self._streams:
            await asyncio.wait(list(self._streams), timeout=5)
        self.lag.stop()

    def _turned_away(self) -> web.Response | None:
        """A ``503`` for a new stream while many are open and the loop is behind, else None.

        Admitting it would cost the loop a history and a place in every turn, taken
        from the runs; told to come back in a second, the client costs nothing meanwhile.
        """
        if len(self._streams) < ADMIT_FREELY or not self.lag.lagging:
            return None
        self.turned_away += 1
        response = error_response(503, "the server is busy: come back in a second")
        response.headers["Retry-After"] = str(RETRY_AFTER)
        return response

    async def get_run(self, request: web.Request) -> web.StreamResponse:
        """The run and its first events, written as they are read: never whole in memory."""
        run_id = request.match_info["run_id"]
        booked = booked_run(self.book, run_id)
        await self._check_ledger(booked)
        response = web.StreamResponse()
        response.content_type = "application/json"
        await response.prepare(request)
        total = Families(self.book).total(run_id)
        await response.write(b'{"run":%s,"events":[' % encode(wire_summary(booked, total=total)))
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
                raise ApiError(410, str(LedgerUnreadable.of(error))) from None

    async def run_events(self, request: web.Request) -> web.StreamResponse:
        """A run's events as SSE: history, then (``follow=1``) live until the run ends.

        Extensions: ``start``/``stop`` serve lines by position (0-based) and close.
        """
        query = request.query
        if "start" not in query and "stop" not in query and (busy := self._turned_away()):
            return busy
        run_id = request.match_info["run_id"]
        booked = booked_run(self.book, run_id)
        follow = query.get("follow", "") in {"1", "true", "yes"}
        after = whole_number(request.headers.get("Last-Event-ID"), 0, "Last-Event-ID")
        await self._check_ledger(booked)
        response = web.StreamResponse(headers=SSE_HEADERS)
        await response.prepare(request)
        if "start" in query or "stop" in query:
            start = whole_number(query.get("start"), 0, "start")
            stop = whole_number(query.get("stop"), start + RUN_EVENTS_LIMIT, "stop")
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
        streams = self._streams
        streams.add(task)
        if len(streams) >= ADMIT_FREELY // 2:
            self.lag.watch()  # before the door may need closing
        try:
            yield
        except ConnectionResetError:
            return
        finally:
            streams.discard(task)
            if len(streams) < ADMIT_FREELY // 2:
                self.lag.stop()  # a timer a few streams would pay for, needed by none
            if not streams:
                self.history.give_back_soon()
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
        events in fewer, larger writes: together the streams make at most
        ``1 / PACE_PER_STREAM`` writes a second, however many they are (up to
        ``MAX_PACE / PACE_PER_STREAM`` streams). A write is a ``send`` that wakes the
        peer, some 60-80 µs of the loop's time on loopback whatever its size: the
        writes, not the reconnects, were most of what a storm of followers cost.
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
        if busy := self._turned_away():
            return busy
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

    # -- histories ---------------------------------------------------------------

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


def _unreadable_frame(error: LedgerUnreadable) -> bytes:
    """The last frame of a stream whose ledger went away under it (ATTACH_API.md)."""
    return sse_frame(None, encode({"error": str(error)}), "ledger_unreadable")
