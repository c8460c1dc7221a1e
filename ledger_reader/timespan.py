"""The one reading of "5m / 1h / 7d, or a time": where a ``since`` window starts.

The attach API's ``?since=`` and the TUI's ``since:`` filter both take it.
"""

from __future__ import annotations

import re
from typing import Final

from ledger_reader.events import parse_time

_SPAN: Final = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd])", re.IGNORECASE)
_SECONDS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400}


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
    match = _SPAN.fullmatch(text)
    if match:
        return now - float(match[1]) * _SECONDS[match[2].lower()]
    parsed = parse_time(text)
    if parsed is None:
        raise BadTimeSpan(f"{value!r} is neither a time nor a span like 30s, 5m, 1h or 7d")
    return parsed.timestamp()


__all__ = ["BadTimeSpan", "since"]
