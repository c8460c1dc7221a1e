"""What the store's background detail pass reads: a run's events that its extras count
(tool calls and results, model calls and their model nodes' starts, errors, the end), from
its ledger or its source."""

from __future__ import annotations

from typing import Final

from inspector.source import RunSource
from inspector.timeline_nodes import NodeKind, node_kind
from ledger_reader import (
    ErrorEvent,
    LlmCall,
    NodeEnter,
    RunCompleted,
    RunEvent,
    ToolCall,
    ToolResult,
    event_of,
)
from ledger_reader.lines import read_ledger_lines

DETAIL_PAGE: Final = 5_000
"""Events asked of a source at a time."""
DETAIL_TYPES: Final = (ToolCall, ToolResult, LlmCall, ErrorEvent, RunCompleted)
"""The events a detail pass folds: the ones extras count (and a model node's start)."""


def counted(event: RunEvent | None) -> bool:
    """Whether extras count ``event``: one of :data:`DETAIL_TYPES`, or the ``node_enter`` of
    a model call (its start: how long the call took)."""
    if isinstance(event, DETAIL_TYPES):
        return True
    return isinstance(event, NodeEnter) and node_kind(event.payload.node_id) is NodeKind.MODEL


def read_history(path: str, end: int) -> list[RunEvent]:
    """The events of a ledger before ``end`` that extras count (blocking; runs in a thread)."""
    found: list[RunEvent] = []
    for line in read_ledger_lines(path, 0, end):
        event = event_of(line.item)
        if counted(event):
            assert event is not None
            found.append(event)
    return found


async def history_from_source(source: RunSource, run_id: str, count: int) -> list[RunEvent]:
    """A run's first ``count`` events, asked of its source, that extras count."""
    found: list[RunEvent] = []
    for start in range(0, count, DETAIL_PAGE):
        items = await source.events(run_id, start, min(count, start + DETAIL_PAGE))
        for item in items:
            event = event_of(item)
            if counted(event):
                assert event is not None
                found.append(event)
    return found


__all__ = ["DETAIL_PAGE", "DETAIL_TYPES", "counted", "history_from_source", "read_history"]
