"""Run ids and the times ledgers record, both cheap enough to make once an event."""

from __future__ import annotations

import secrets
import time
from datetime import UTC, datetime
from typing import Any


def new_run_id(now: datetime | None = None) -> str:
    """A fresh id: ``run_<UTC yyyyMMddTHHmmssSSS>_<16 hex>``; ids sort by start time."""
    if now is None:
        moment = time.time()
        second = int(moment)
        stamp = _format_second(second, "%Y%m%dT%H%M%S", _id_second)
        millis = int((moment - second) * 1000)
    else:
        moment_utc = now.astimezone(UTC)
        stamp = moment_utc.strftime("%Y%m%dT%H%M%S")
        millis = moment_utc.microsecond // 1000
    return f"run_{stamp}{millis:03d}_{secrets.token_hex(8)}"


def _format_second(second: int, pattern: str, cache: list[Any]) -> str:
    """``second`` formatted with ``pattern``, formatting only when the second changes."""
    if cache[0] != second:
        cache[1] = time.strftime(pattern, time.gmtime(second))
        cache[0] = second
    text: str = cache[1]
    return text


_id_second: list[Any] = [-1, ""]


_second: list[Any] = [-1, ""]
"""The last whole second formatted, and its text: strftime once a second, not once an event."""


def utc_now() -> str:
    """Now, as ledgers write times: RFC 3339 in UTC with microseconds."""
    now = time.time()
    second = int(now)
    stamp = _format_second(second, "%Y-%m-%dT%H:%M:%S", _second)
    return f"{stamp}.{int((now - second) * 1_000_000):06d}Z"
