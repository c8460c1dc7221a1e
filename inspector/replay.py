"""The replay controls: pause and play, step, speed, restart, for every replay open at once.

UI-free: each control acts on the replays and returns what to say of it (the TUI shows
that as a notice; a test reads it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from inspector.ledger_source import Recording, ReplaySource

SPEED_ORDER: Final = (1.0, 2.0, 10.0, 0.0)
"""The speeds ``x`` goes through, in turn (0: at once)."""


class ReplayControls:
    """The replays among the sources open; each control acts on all of them."""

    def __init__(self, sources: Iterable[object]) -> None:
        self.replays: list[ReplaySource] = [
            source for source in sources if isinstance(source, ReplaySource)
        ]

    def __bool__(self) -> bool:
        """Whether a replay is open (its keys apply only then)."""
        return bool(self.replays)

    @property
    def recording(self) -> Recording:
        """What the replays' recordings hold, together (known once each is read)."""
        held = [replay.recording for replay in self.replays]
        return Recording(
            damage=any(one.damage for one in held), spending=any(one.spending for one in held)
        )

    @property
    def paused(self) -> bool:
        return bool(self.replays) and all(replay.paused for replay in self.replays)

    def toggle(self) -> str:
        """Pause the replays, or play them; played to the end, play them again. What to say."""
        if self.replays and all(replay.finished.is_set() for replay in self.replays):
            for replay in self.replays:
                replay.play()
                replay.restart()
            return "replay from the start"
        for replay in self.replays:
            if replay.paused:
                replay.play()
            else:
                replay.pause()
        return "replay paused (n steps)" if self.paused else "replay playing"

    def restart(self) -> str:
        """The replays again from their first event, paused or playing as they were.

        Played at once, a replay would be at its end again before a frame was drawn:
        restarting would change nothing on screen. It waits at the start instead, as a
        player's seek to the start shows the first frame. What to say.
        """
        for replay in self.replays:
            if replay.speed <= 0:
                replay.pause()
            replay.restart()
        if not self.paused:
            return "replay from the start"
        at_once = any(replay.speed <= 0 for replay in self.replays)
        plays = "space plays it at once, n steps, x slows it" if at_once else "space plays, n steps"
        return f"replay from the start, paused: {plays}"

    def step(self) -> None:
        """One more event of each replay."""
        for replay in self.replays:
            replay.step(1)

    def next_speed(self) -> None:
        """Each replay at the next speed of :data:`SPEED_ORDER` (its source says it)."""
        for replay in self.replays:
            at = SPEED_ORDER.index(replay.speed) if replay.speed in SPEED_ORDER else -1
            replay.set_speed(SPEED_ORDER[(at + 1) % len(SPEED_ORDER)])
