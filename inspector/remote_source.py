"""Runs of a run manager in another process or on another host, over the attach API.

The source lists every run (page by page), follows the global event
stream, and serves a run's events by range from the server. Events are
deduplicated on ``(run_id, seq)``; a gap (a reconnect the server could
not bridge, ``stream_restarted``) is filled by asking the run's history
after the last ``seq`` seen, so nothing is lost and nothing is shown
twice. When the server goes away the source says so and reconnects with
backoff, listing the runs again before it says it is back (a run the server
ended meanwhile is never shown live again); a refused token is said in
words, not retried in a tight loop; a busy server's ``Retry-After`` (its
``503`` to a stream opened while it was behind) is waited out before the
next try.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator, Coroutine
from typing import Any, ClassVar, Final, TypeVar

from inspector.attach_client import (
    AttachClient,
    ServerError,
    ServerReadOnly,
    SseFrame,
    TokenRefused,
    item_of,
)
from inspector.source import (
    ActionRefused,
    RunSource,
    RunUpdate,
    SourceError,
    SourceUpdate,
)
from ledger_reader import LedgerItem, RunSummary, SummaryBuilder, event_of

BACKOFF_FIRST: Final = 0.25
BACKOFF_MAX: Final = 10.0
LIVE_HISTORY: Final = 5_000
"""A live run listed with up to this many events has them read at once (else in the background)."""

T = TypeVar("T")


class RemoteSource(RunSource):
    """Attach to a ``runtop serve`` (or gridctl) server.

    Args:
        url: the server, e.g. ``http://127.0.0.1:8765``.
        token: the bearer token; found as :func:`~inspector.attach_client.find_token` says
            when not given.
        name: shown in the source column (``host:port`` by default).
    """

    live: ClassVar[bool] = True
    can_cancel: ClassVar[bool] = True
    can_resume: ClassVar[bool] = True
    can_approve: ClassVar[bool] = True

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        name: str | None = None,
        backoff_first: float = BACKOFF_FIRST,
        backoff_max: float = BACKOFF_MAX,
    ) -> None:
        from inspector.attach_client import find_token

        self._token_given = token is not None
        self.client = AttachClient(url, find_token(url, token))
        super().__init__(name or f"{self.client.host}:{self.client.port}")
        self.backoff_first = backoff_first
        self.backoff_max = backoff_max
        self._runs: dict[str, SummaryBuilder] = {}
        self._last_id: str | None = None
        self._read_only = False
        self._closed = asyncio.Event()
        self.reconnects = 0
        """Times the stream was connected again after the first (for tests and the status line)."""

    def describe(self) -> str:
        return f"the server at {self.client.url}"

    # -- following ------------------------------------------------------------------

    async def updates(self) -> AsyncIterator[SourceUpdate]:
        delay = self.backoff_first
        first = True
        while not self._closed.is_set():
            try:
                async for update in self._follow(first):
                    if update.initial:
                        first = False
                    delay = self.backoff_first
                    yield update
                problem: SourceError = SourceError("the server ended the stream")
            except TokenRefused as error:
                if await self._fresh_token():
                    continue  # the server restarted with a new token, written where we look
                problem = error
                if self._token_given:
                    delay = self.backoff_max  # a token given by hand does not fix itself
            except SourceError as error:
                problem = error
            if self._closed.is_set():
                return
            if isinstance(problem, TokenRefused):
                yield SourceUpdate(error=problem, available=False)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closed.wait(), delay)
            else:
                # A busy server says when to come back: sooner, every client it turned
                # away would be back at once, into the same crowd.
                wait = delay
                if isinstance(problem, ServerError) and problem.retry_after is not None:
                    wait = max(delay, problem.retry_after)
                async for update in self._count_down(wait, problem):
                    yield update
            if self._closed.is_set():
                return
            delay = min(delay * 2, self.backoff_max)
            self.reconnects += 1

    async def _count_down(self, delay: float, problem: SourceError) -> AsyncIterator[SourceUpdate]:
        """``reconnecting in 8 s: …``, then 7, 6, … a second apart until the next try (not
        "in 8 s" for the whole wait); returns early once the source is closed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + delay
        while (left := deadline - loop.time()) > 0:
            said = f"{max(1, round(left))} s" if delay >= 1 else f"{left:.2g} s"
            yield SourceUpdate(
                error=SourceError(f"reconnecting in {said}: {problem}"), available=False
            )
            step = left - (math.ceil(left) - 1) if left > 1 else left  # to the next whole second
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closed.wait(), step)
            if self._closed.is_set():
                return

    async def _fresh_token(self) -> bool:
        """Take up a token the server wrote since (not one given by hand); whether it changed."""
        from inspector.attach_client import find_token

        if self._token_given:
            return False
        token = find_token(self.client.url)
        if not token or token == self.client.token:
            return False
        await self.client.use_token(token)
        return True

    async def _follow(self, first: bool) -> AsyncIterator[SourceUpdate]:
        """One connection: the stream, a listing once it is ready, then events as they come."""
        # Every connection lists the runs before it says it is connected, a reconnect too:
        # what the server replays from the last event id comes after "ready", and until
        # then a run the server ended while we were away (canceled as it shut down) was
        # shown running again, un-dimmed, for the seconds the replay took.
        must_list = True
        stream = self.client.frames("runs/events/stream", last_event_id=self._last_id)
        async for frames in stream:
            if self._closed.is_set():
                return
            pending: list[SseFrame] = []
            for frame in frames:
                if frame.event == "ready":
                    # Subscribed: from here on nothing lands unseen. Without an event to
                    # resume from, list the runs; with one, the server replays what was missed.
                    if must_list:
                        yield await self._relist(initial=first)
                        first = must_list = False
                elif frame.event == "stream_restarted":
                    if pending:
                        yield await self._items(pending)
                        pending = []
                    yield await self._relist(initial=first)
                    first = must_list = False
                elif frame.event is None or frame.event == "damaged":
                    pending.append(frame)
            if pending:
                yield await self._items(pending)

    async def _relist(self, *, initial: bool) -> SourceUpdate:
        summaries = await self.client.runs()
        update = SourceUpdate(initial=initial, status="connected")
        listed = {summary.run_id for summary in summaries}
        for run_id in list(self._runs):
            if run_id not in listed:
                del self._runs[run_id]
                update.removed.append(run_id)
        for summary in summaries:
            builder = self._runs.get(summary.run_id)
            if builder is None or initial:
                builder = self._runs[summary.run_id] = SummaryBuilder(summary.run_id)
                count = (summary.event_count or 0) + (summary.damaged_lines or 0)
                if summary.status.is_live and count <= LIVE_HISTORY:
                    # A live run's events are read now, whole: what it is doing shows at once.
                    items = await self._history_after(summary.run_id, 0)
                    for item in items:
                        builder.add_item(item)
                    update.runs.append(RunUpdate(summary.run_id, builder.summary(), items))
                    continue
                builder.resume_from(summary)
                update.runs.append(RunUpdate(summary.run_id, summary, history_count=count))
                continue
            if summary.last_seq > builder.last_seq:
                # Missed while away: fetch exactly what came after the last event seen.
                items = await self._history_after(summary.run_id, builder.last_seq)
                for item in items:
                    builder.add_item(item)
                update.runs.append(RunUpdate(summary.run_id, builder.summary(), items))
        return update

    async def _history_after(self, run_id: str, seq: int) -> list[LedgerItem]:
        return await self.client.events(run_id, after=seq)

    async def _items(self, frames: list[SseFrame]) -> SourceUpdate:
        """Fold the events of a batch of frames, dropping any seen before, filling any gap."""
        changed: dict[str, list[LedgerItem]] = {}
        for frame in frames:
            item = item_of(frame)
            if item is None:
                continue
            if frame.id:
                self._last_id = frame.id
            event = event_of(item)
            if event is None:
                continue  # a damaged line on the global stream names no run
            run_id, seq = event.run_id, event.seq
            builder = self._runs.get(run_id)
            if builder is None:
                builder = self._runs[run_id] = SummaryBuilder(run_id)
            if seq <= builder.last_seq:
                continue  # seen already (a reconnect replays from the last id it had)
            items = changed.setdefault(run_id, [])
            if seq > builder.last_seq + 1:
                gap = await self._history_after(run_id, builder.last_seq)
                for missed in gap:
                    missed_event = event_of(missed)
                    if missed_event is None or missed_event.seq > builder.last_seq:
                        builder.add_item(missed)
                        items.append(missed)
                continue
            builder.add_item(item)
            items.append(item)
        return SourceUpdate(
            runs=[
                RunUpdate(run_id, self._runs[run_id].summary(), items)
                for run_id, items in changed.items()
                if items
            ],
            status="connected",
        )

    # -- reading --------------------------------------------------------------------

    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        if stop <= start:
            return []
        return await self.client.events(run_id, start=start, stop=stop)

    async def event_count(self, run_id: str) -> int:
        builder = self._runs.get(run_id)
        if builder is None:
            return 0
        summary = builder.summary()
        return (summary.event_count or 0) + (summary.damaged_lines or 0)

    # -- acting ---------------------------------------------------------------------

    def refusal(self, action: str, summary: RunSummary) -> str | None:
        if self._read_only or self.client.read_only:
            return f"the server {self.name} is read-only"
        return super().refusal(action, summary)

    async def cancel(self, run_id: str, reason: str | None, *, by: str | None = None) -> None:
        """``POST .../runs/{run_id}/cancel`` to the server; its refusal's words if it refuses."""
        await self._act(self.client.cancel(run_id, reason, by=by))

    async def resume(self, run_id: str) -> str:
        return await self._act(self.client.resume(run_id))

    async def approve(
        self,
        run_id: str,
        approval_id: str | None,
        approved: bool,
        reason: str | None,
        *,
        by: str | None = None,
    ) -> None:
        """``POST .../runs/{run_id}/approve`` to the server."""
        await self._act(self.client.approve(run_id, approval_id, approved, reason, by=by))

    async def _act(self, action: Coroutine[Any, Any, T]) -> T:
        try:
            return await action
        except ServerReadOnly:
            self._read_only = True
            raise
        except SourceError as error:
            raise ActionRefused(str(error)) from None

    async def close(self) -> None:
        self._closed.set()
        await self.client.close()
