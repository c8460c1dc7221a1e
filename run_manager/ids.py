"""Run ids, and the one thing code inside a run may know about it: its id.

``current_run_id()`` returns a string, never the run's handle: a tool (or a
remote MCP tool) running inside a run must not be able to mark the run
done or forge its result.
"""

from __future__ import annotations

import secrets
from contextvars import ContextVar
from datetime import UTC, datetime

_current_run_id: ContextVar[str | None] = ContextVar("runtop_run_id", default=None)


def new_run_id(now: datetime | None = None) -> str:
    """A fresh id: ``run_<UTC yyyyMMddTHHmmssSSS>_<16 hex>``; ids sort by start time."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    stamp = moment.strftime("%Y%m%dT%H%M%S") + f"{moment.microsecond // 1000:03d}"
    return f"run_{stamp}_{secrets.token_hex(8)}"


def current_run_id() -> str | None:
    """The id of the run this code is part of, or ``None`` outside any run."""
    return _current_run_id.get()


def utc_now() -> str:
    """Now, as ledgers write times: RFC 3339 in UTC with microseconds."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
