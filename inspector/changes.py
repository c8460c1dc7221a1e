"""What changed in the store, and how a subscriber hears of it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import msgspec

from inspector.model import RunKey


class StoreChange(msgspec.Struct, frozen=True):
    """What changed since the last notification."""

    runs: frozenset[RunKey] = frozenset()
    """Runs whose view changed (new ones included)."""
    events: frozenset[RunKey] = frozenset()
    """Runs with new events."""
    removed: frozenset[RunKey] = frozenset()
    sources: frozenset[str] = frozenset()
    """Sources whose state (error, availability) changed."""
    reset: bool = False
    """Everything changed: redraw from a fresh snapshot."""

    def merge(self, other: StoreChange) -> StoreChange:
        return StoreChange(
            self.runs | other.runs,
            self.events | other.events,
            self.removed | other.removed,
            self.sources | other.sources,
            self.reset or other.reset,
        )


class ChangeSubscriber:
    """One reader of the store's changes: what comes while it is busy is merged, so a slow
    reader gets fewer, larger changes, never a queue."""

    def __init__(self, on_close: Callable[[ChangeSubscriber], None]) -> None:
        self._on_close = on_close
        self._pending: StoreChange | None = None
        self._event = asyncio.Event()
        self._closed = False

    def offer(self, change: StoreChange) -> None:
        self._pending = change if self._pending is None else self._pending.merge(change)
        self._event.set()

    def close(self) -> None:
        self._closed = True
        self._event.set()

    async def read(self) -> AsyncIterator[StoreChange]:
        try:
            while not self._closed:
                await self._event.wait()
                self._event.clear()
                if self._pending is not None:
                    change, self._pending = self._pending, None
                    yield change
        finally:
            with contextlib.suppress(ValueError):
                self._on_close(self)


__all__ = ["ChangeSubscriber", "StoreChange"]
