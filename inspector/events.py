"""A run's events as the TUI reads them: the ledger's item types, each event's ledger
line as written, and the tool call an event belongs to.

The TUI reads runs through the inspector, never the ledger reader itself (an
import-linter contract): the item types it draws are re-exported here.
"""

from __future__ import annotations

from typing import Final

from inspector.model import RunKey, ToolCallView
from inspector.store import RunStore
from ledger_reader import (
    ApprovalResponse,
    DamagedLine,
    LedgerItem,
    LlmCall,
    LlmChunk,
    ReasoningChunk,
    RunStatus,
    ToolCall,
    ToolResult,
    encode_event,
    event_of,
)

RAW_LIMIT: Final = 64 * 1024
"""Bytes of a damaged line shown raw."""


def raw_line(store: RunStore, key: RunKey, item: LedgerItem) -> bytes | None:
    """``item``'s ledger line as written, when its ledger is at hand; else re-encoded."""
    if isinstance(item, DamagedLine):
        run = store.get(key)
        path = run.path if run is not None else None
        if path is None:
            return None
        try:
            with open(path, "rb") as ledger:
                ledger.seek(item.offset)
                return ledger.read(min(item.length, RAW_LIMIT))
        except OSError:
            return None
    return encode_event(item).rstrip(b"\n")


def call_of(store: RunStore, key: RunKey, item: LedgerItem | None) -> ToolCallView | None:
    """The tool call ``item`` (a call or its result) belongs to, as the store pairs them."""
    if isinstance(item, DamagedLine) or not isinstance(item, ToolCall | ToolResult):
        return None
    call_id = item.payload.call_id
    return next((call for call in store.tool_calls(key) if call.call_id == call_id), None)


__all__ = [
    "ApprovalResponse",
    "DamagedLine",
    "LedgerItem",
    "LlmCall",
    "LlmChunk",
    "ReasoningChunk",
    "RunStatus",
    "ToolCall",
    "ToolResult",
    "call_of",
    "event_of",
    "raw_line",
]
