"""The UI-free model of runs the TUI draws, whatever source they come from.

Sources (:class:`RunSource`: a ledger directory, a replay of ledger files,
a run manager in this process) feed one :class:`RunStore`, which keeps a
view of every run current, batches change notifications in time, serves a
run's events by range, pairs tool calls, keeps per-tool statistics, filters
runs, and routes cancel, resume and approve to each run's source.

Every name here loads on first use: the store and the sources import
asyncio and statistics, which ``runtop ls``, ``runtop show`` and
``runtop --version`` never need, and importing a submodule such as
:mod:`inspector.ledger` runs this file first.

This package imports neither textual nor rich.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from inspector.filters import FilterError, RunFilter
    from inspector.ledger_source import SPEEDS, LedgerDirectorySource, ReplaySource
    from inspector.manager_source import ManagerSource
    from inspector.model import RunKey, RunView, ToolCallView
    from inspector.remote_source import RemoteSource
    from inspector.source import ActionRefused, RunSource, RunUpdate, SourceError, SourceUpdate
    from inspector.store import (
        RunStore,
        Snapshot,
        SourcesDown,
        SourceState,
        StoreChange,
        ToolStats,
    )

_HOMES: Final = {
    "FilterError": "inspector.filters",
    "RunFilter": "inspector.filters",
    "SPEEDS": "inspector.ledger_source",
    "LedgerDirectorySource": "inspector.ledger_source",
    "ReplaySource": "inspector.ledger_source",
    "ManagerSource": "inspector.manager_source",
    "RunKey": "inspector.model",
    "RunView": "inspector.model",
    "ToolCallView": "inspector.model",
    "RemoteSource": "inspector.remote_source",
    "ActionRefused": "inspector.source",
    "RunSource": "inspector.source",
    "RunUpdate": "inspector.source",
    "SourceError": "inspector.source",
    "SourceUpdate": "inspector.source",
    "RunStore": "inspector.store",
    "Snapshot": "inspector.store",
    "SourcesDown": "inspector.store",
    "SourceState": "inspector.store",
    "StoreChange": "inspector.store",
    "ToolStats": "inspector.store",
}
"""The module each public name lives in, imported when the name is first asked for."""


def __getattr__(name: str) -> Any:
    """Import the module that holds ``name`` and keep the name here for the next use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'inspector' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


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
