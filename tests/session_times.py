"""Real sessions played as if written now: their times moved, their bytes otherwise kept.

Tests and the coding agents' bench use it: a session is judged by its last event's
own time as well as its file's (:mod:`ledger_reader.sessions.status`), so one of last
year, copied now, is idle; to watch it as live, its times are moved to now.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

_ISO_TIME = re.compile(rb'"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?Z"')


def retimed(data: bytes, *, ending: float | None = None) -> bytes:
    """A real session's bytes as if written just now: every time in them (``"…Z"``) moved
    by one amount, the latest to ``ending`` (default: now), each written as it was.

    A session is judged by its last event's own time as well as its file's
    (:mod:`ledger_reader.sessions.status`): one of last year, copied now, is idle.
    """
    found = list(_ISO_TIME.finditer(data))
    if not found:
        return data
    moments = [
        datetime.fromisoformat(m[1].decode() + (m[2] or b"").decode() + "+00:00") for m in found
    ]
    shift = datetime.fromtimestamp(time.time() if ending is None else ending, UTC) - max(moments)

    def moved(match: re.Match[bytes]) -> bytes:
        fraction = (match[2] or b"").decode()
        at = datetime.fromisoformat(match[1].decode() + fraction + "+00:00") + shift
        digits = len(fraction) - 1
        said = at.strftime("%Y-%m-%dT%H:%M:%S") + (f"{at:.%f}"[: digits + 1] if digits > 0 else "")
        return f'"{said}Z"'.encode()

    return _ISO_TIME.sub(moved, data)
