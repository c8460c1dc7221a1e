"""How late the event loop runs what is due: the attach server's measure of being behind.

The runs and the server share one event loop. When hundreds of streams open
at once, every turn of the loop serves them all before a run's timer gets its
turn, and the run slows. :class:`LoopLag` times a short sleep while streams
are open; while the loop runs it late, new streams are turned away (``503``
with ``Retry-After``) instead of admitted, so the runs keep their turns and
the streams already open keep theirs.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Final

INTERVAL: Final = 0.02
"""Seconds between two measures (only while streams are open)."""
BEHIND: Final = 0.004
"""Seconds late past which the loop counts as behind: a run that waits 10 ms between steps
loses a fifth of its pace when each of its turns comes 2.5 ms late."""
SETTLE: Final = 0.8
"""How much of the smoothed measure the next one keeps: a single late turn does not count
the loop behind, a run of them does, and it counts as keeping time again soon after."""


class LoopLag:
    """The event loop's recent lateness, measured while someone needs it (:meth:`watch`)."""

    def __init__(self, *, interval: float = INTERVAL, behind: float = BEHIND) -> None:
        self.interval = interval
        self.behind = behind
        self.late = 0.0
        """Seconds late, smoothed over the last measures."""
        self._task: asyncio.Task[None] | None = None

    @property
    def lagging(self) -> bool:
        return self.late > self.behind

    def watch(self) -> None:
        """Measure from now on (a no-op when already measuring)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._measure())

    def stop(self) -> None:
        """Stop measuring; the loop counts as keeping time again."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        self.late = 0.0

    async def _measure(self) -> None:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                began = loop.time()
                await asyncio.sleep(self.interval)
                late = max(0.0, loop.time() - began - self.interval)
                self.late = SETTLE * self.late + (1 - SETTLE) * late
