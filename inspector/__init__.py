"""The UI-free model of runs the TUI draws, whatever source they come from.

Sources (:class:`RunSource`: a ledger directory, a replay of ledger files,
a run manager in this process) feed one :class:`RunStore`, which keeps a
view of every run current, batches change notifications in time, serves a
run's events by range, pairs tool calls, keeps per-tool statistics, filters
runs, and routes cancel, resume and approve to each run's source.

This package imports neither textual nor rich.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from inspector.filters import FilterError, RunFilter
from inspector.ledger_source import SPEEDS, LedgerDirectorySource, ReplaySource
from inspector.model import RunKey, RunView, ToolCallView
from inspector.source import ActionRefused, RunSource, RunUpdate, SourceError, SourceUpdate
from inspector.store import RunStore, Snapshot, SourcesDown, SourceState, StoreChange, ToolStats

if TYPE_CHECKING:
    from inspector.manager_source import ManagerSource
    from inspector.remote_source import RemoteSource


def __getattr__(name: str) -> Any:
    """Sources with heavy imports (the run manager, aiohttp) load only when asked for."""
    if name == "ManagerSource":
        from inspector.manager_source import ManagerSource

        return ManagerSource
    if name == "RemoteSource":
        from inspector.remote_source import RemoteSource

        return RemoteSource
    raise AttributeError(f"module 'inspector' has no attribute {name!r}")


__all__ = [
    "SPEEDS",
    "ActionRefused",
    "FilterError",
    "LedgerDirectorySource",
    "ManagerSource",
    "RemoteSource",
    "ReplaySource",
    "RunFilter",
    "RunKey",
    "RunSource",
    "RunStore",
    "RunUpdate",
    "RunView",
    "Snapshot",
    "SourceError",
    "SourceState",
    "SourceUpdate",
    "SourcesDown",
    "StoreChange",
    "ToolCallView",
    "ToolStats",
]
