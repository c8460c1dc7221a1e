"""The TUI's settings: one object, built by the command line, passed to :func:`make_app`.

Every field can also come from a ``RUNTOP_*`` environment variable.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """What the app needs to know before it starts."""

    model_config = SettingsConfigDict(env_prefix="RUNTOP_", extra="ignore")

    ledger_dir: Path = Field(
        default_factory=lambda: Path.home() / ".runtop" / "runs",
        description="The ledger directory opened when no path or URL is given.",
    )
    theme: str = Field(default="textual-dark", description="A Textual theme name.")
    read_only: bool = Field(default=False, description="Turn every action off.")
    stale_after: float = Field(
        default=300.0, description="Seconds of quiet before another writer's run is stale."
    )
    flush_interval: float = Field(
        default=0.05, description="Longest a change waits before the screen hears of it."
    )
    clock: float | None = Field(
        default=None,
        description="A fixed 'now' (POSIX seconds) for relative times: snapshots and tests.",
    )
