"""Time in a run: how long it lasted, where an event falls in it, and clocks that go back.

One rule, used by ``runtop ls``, ``runtop show``, the app's table and the
timeline alike: a run lasted from its start (its first event, ``run_started``)
to its last event, in the order the ledger holds them (:func:`elapsed`), and
never less than nothing. An event's offset is measured from the same start, as
written: below zero where it is before it (:func:`offset_in_run`). Times are the
writer's, kept as written: when they go back (a clock stepped back, or moved
ahead and back),
:class:`ClockCheck` words it for the run's ``warnings`` (``clock went back
5.0s at seq 12``) instead of anything quietly reordering or hiding them.

Beside them, the one way a duration is written (:func:`duration`: every screen,
``runtop show``, ``ls``, a budget's question and a clock's warning), and the one
reading of "5m / 1h / 7d, or a time": where a ``since`` window starts
(:func:`since`; the attach API's ``?since=`` and the TUI's ``since:`` filter
both take it).
"""

from __future__ import annotations

import contextlib
from typing import Final

from ledger_reader import quantities
from ledger_reader.events import LlmCall, parse_time

CLOCK_SLACK: Final = 1.0
"""Seconds an event's time may fall behind the one before without a warning: writers
with several tasks stamp a little out of order, and NTP slews a clock by less."""


def elapsed(start: float | None, end: float | None) -> float | None:
    """Seconds from ``start`` to ``end`` (POSIX times), never negative; ``None`` if unknown.

    A run's duration: from its first event to its last (or to now while it runs).
    """
    if start is None or end is None:
        return None
    return max(0.0, end - start)


def call_seconds(called: float | None, answered: float | None) -> float | None:
    """How long a call took, from its request to its answer (POSIX times), never
    negative; ``None`` while unanswered or untimed. A tool call's is from its
    ``tool_call`` to its ``tool_result``; a model call's from its model node's
    ``node_enter`` (the request sent) to its ``llm_call`` (the answer).

    The one measure of a call: the event list's line, its detail (a model call's
    conversation), the tool and model statistics (``t``, ``M``, ``runtop stats``) and the
    timeline's number all say it (the call's node, left a little after the answer, spans
    the timeline's bar).
    """
    return elapsed(called, answered)


def model_answered(call: LlmCall) -> float | None:
    """When a model call was answered (POSIX seconds): its ``llm_call``'s time, or the
    earlier time it says its answer ended (``answered_at``: a coding agent's response is
    written once the tools it asked for have run). The end of every measure of a model
    call (:func:`call_seconds`)."""
    said = call.payload.answered_at
    moment = parse_time(said) if said else None
    if moment is None:
        moment = call.timestamp
    return moment.timestamp() if moment is not None else None


def offset_in_run(moment: float, start: float) -> float:
    """Where ``moment`` falls in a run that started at ``start``, as written: before its
    start it is below zero (an event stamped by a clock that went back, a sub-agent's
    start before its session's first record), said, never moved to the start."""
    return moment - start


def duration(seconds: float | None) -> str:
    """``0.012s``, ``0.4s``, ``30s``, ``4m30s``, ``2h05m``: a run's length at a glance
    (``<0.001s`` under half a millisecond, ``0s`` for none at all).

    The one way a duration is written: the TUI, ``runtop show``, ``ls``, a budget's
    question and a clock's warning alike. Its
    precision goes by the value *as rounded*, so the same span never reads two ways
    (``0.0999`` is ``0.1s``, as ``0.1`` is, never ``0.100s``; ``9.96`` is ``10s``, never
    ``10.0s``), and a longer span never reads shorter. It is rounded once, from whole
    microseconds (a ledger's finest time), half up: a span of 1.45 s reads ``1.5s``
    however it was worked out (from two datetimes, exactly; from two Unix times in floats,
    a few tenths of a microsecond off either way).
    """
    if seconds is None:
        return ""
    micros = max(0, round(seconds * 1_000_000))
    millis = (micros + 500) // 1000
    if millis == 0:
        return "<0.001s" if seconds > 0 else "0s"  # a call that took time did not take none
    if millis < 100:
        return f"0.{millis:03d}s"  # a fast tool call, not a 0.0
    tenths = (micros + 50_000) // 100_000
    if tenths < 100:
        return f"{tenths // 10}.{tenths % 10}s"
    whole = max(10, micros // 1_000_000)  # whole seconds, as a clock counts them
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def under_a_tenth(seconds: float) -> bool:
    """Whether :func:`duration` writes ``seconds`` in milliseconds (``0.012s``) or as
    nothing: a moment that long ago is *now* (:func:`tui.text.runs.relative`)."""
    return (max(0, round(seconds * 1_000_000)) + 500) // 1000 < 100


def clock_warning(back: float, seq: int) -> str:
    """The warning for an event ``back`` seconds before the one written just before it."""
    return f"clock went back {duration(back)} at seq {seq}"


class ClockCheck:
    """Notices event times that go back, event by event in file order.

    Most writers stamp ``...THH:MM:SS[.frac]Z``; for two such times, the first 19
    characters compare as the times do, to the second. So a time is parsed
    only when its seconds read earlier than the last one's (or it is written
    another way), and an event a fraction of a second behind is never flagged
    (:data:`CLOCK_SLACK`).
    """

    __slots__ = ("_last", "_last_value")

    def __init__(self) -> None:
        self._last = ""
        self._last_value: float | None = None

    def forget(self) -> None:
        """Events were skipped (a head and tail read): the next time starts afresh."""
        self._last = ""
        self._last_value = None

    def see(self, time: str, seq: int) -> str | None:
        """Take the next event's time; the warning if it went back past the slack."""
        last = self._last
        self._last = time
        if not last or not time:
            self._last_value = None
            return None
        if time[-1:] == "Z" and last[-1:] == "Z" and time[:19] >= last[:19]:
            self._last_value = None  # at most a fraction of a second back: within the slack
            return None
        before = self._last_value
        if before is None:
            parsed = parse_time(last)
            before = parsed.timestamp() if parsed is not None else None
        parsed = parse_time(time)
        now = parsed.timestamp() if parsed is not None else None
        self._last_value = now
        if before is None or now is None or before - now < CLOCK_SLACK:
            return None
        return clock_warning(before - now, seq)


class BadTimeSpan(ValueError):
    """A value that is neither a span like ``5m`` nor an RFC 3339 time."""


def since(value: str, now: float) -> float:
    """The start of the window ``value`` names, as POSIX seconds.

    Args:
        value: a span back from ``now`` (``30s``, ``5m``, ``1.5h``, ``7d``)
            or an RFC 3339 time (``2026-11-29T06:45:00Z``).
        now: the present, as POSIX seconds.

    Raises:
        BadTimeSpan: ``value`` is neither.
    """
    text = value.strip()
    with contextlib.suppress(quantities.BadQuantity):
        return now - quantities.seconds(text, bare=False)
    parsed = parse_time(text)
    if parsed is None:
        raise BadTimeSpan(f"{value!r} is neither a time nor a span like 30s, 5m, 1h or 7d")
    return parsed.timestamp()


__all__ = [
    "CLOCK_SLACK",
    "BadTimeSpan",
    "ClockCheck",
    "call_seconds",
    "clock_warning",
    "duration",
    "elapsed",
    "model_answered",
    "offset_in_run",
    "since",
    "under_a_tenth",
]
