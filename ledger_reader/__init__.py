"""Read, index and follow run ledgers (LEDGER.md), whatever they hold.

This package imports neither textual nor rich: it is the UI-free base the
inspector and the command line stand on.

Following files and directories (:class:`LedgerFile`, :class:`LedgerDirectory`,
:class:`LedgerTail`) needs threads, ``concurrent.futures`` and ``logging``; a
listing (``runtop ls``) needs none of it, and pays every import on each call.
Those names are imported on first use (the modules that use them import them at
their top, on the main thread).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ledger_reader.decode import decode_line, iter_events
from ledger_reader.errors import (
    LedgerError,
    LedgerGone,
    LedgerUnreadable,
    NoLedgers,
    NotALedgerFile,
)
from ledger_reader.events import (
    EVENT_TYPES,
    MAX_LINE_BYTES,
    PAYLOAD_CAP_BYTES,
    ApprovalRequest,
    ApprovalResponse,
    BudgetState,
    BudgetUpdated,
    CancelRequested,
    DamagedLine,
    ErrorEvent,
    KnownEvent,
    LedgerItem,
    LlmCall,
    LlmChunk,
    NodeEnter,
    NodeExit,
    ReasoningChunk,
    RunCompleted,
    RunEvent,
    RunPlaced,
    RunStarted,
    RunUpdated,
    StructuredOutput,
    ToolCall,
    ToolResult,
    UnknownEvent,
    call_as_sent,
    encode_event,
    event_of,
    event_to_dict,
    is_valid_run_id,
    parse_time,
)
from ledger_reader.head_tail import LedgerState, read_ledger_state, summarize_ledger
from ledger_reader.lines import Line, LineAssembler, read_ledger_lines, read_lines
from ledger_reader.liveness import judge_liveness, ledger_lock_held, writer_holds_lock
from ledger_reader.scan import ScanResult, find_ledgers, scan_paths, scan_summaries
from ledger_reader.summary import PendingApproval, RunStatus, RunSummary, SummaryBuilder
from ledger_reader.summary_cache import SummaryCache
from ledger_reader.totals import RunTotals

if TYPE_CHECKING:
    from ledger_reader.directory import DirectoryUpdate, LedgerDirectory, RunChange
    from ledger_reader.file import LedgerFile
    from ledger_reader.tail import LedgerTail, TailBatch

_FOLLOWING = {
    "DirectoryUpdate": "ledger_reader.directory",
    "LedgerDirectory": "ledger_reader.directory",
    "RunChange": "ledger_reader.directory",
    "LedgerFile": "ledger_reader.file",
    "LedgerTail": "ledger_reader.tail",
    "TailBatch": "ledger_reader.tail",
}
"""Names imported on first use, and their modules (see the package's docstring)."""

if not TYPE_CHECKING:  # the type checker sees the imports above, and no catch-all

    def __getattr__(name: str) -> Any:
        module = _FOLLOWING.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


__all__ = [
    "EVENT_TYPES",
    "MAX_LINE_BYTES",
    "PAYLOAD_CAP_BYTES",
    "ApprovalRequest",
    "ApprovalResponse",
    "BudgetState",
    "BudgetUpdated",
    "CancelRequested",
    "DamagedLine",
    "DirectoryUpdate",
    "ErrorEvent",
    "KnownEvent",
    "LedgerDirectory",
    "LedgerError",
    "LedgerFile",
    "LedgerGone",
    "LedgerItem",
    "LedgerState",
    "LedgerTail",
    "LedgerUnreadable",
    "Line",
    "LineAssembler",
    "LlmCall",
    "LlmChunk",
    "NoLedgers",
    "NodeEnter",
    "NodeExit",
    "NotALedgerFile",
    "PendingApproval",
    "ReasoningChunk",
    "RunChange",
    "RunCompleted",
    "RunEvent",
    "RunPlaced",
    "RunStarted",
    "RunStatus",
    "RunSummary",
    "RunTotals",
    "RunUpdated",
    "ScanResult",
    "StructuredOutput",
    "SummaryBuilder",
    "SummaryCache",
    "TailBatch",
    "ToolCall",
    "ToolResult",
    "UnknownEvent",
    "call_as_sent",
    "decode_line",
    "encode_event",
    "event_of",
    "event_to_dict",
    "find_ledgers",
    "is_valid_run_id",
    "iter_events",
    "judge_liveness",
    "ledger_lock_held",
    "parse_time",
    "read_ledger_lines",
    "read_ledger_state",
    "read_lines",
    "scan_paths",
    "scan_summaries",
    "summarize_ledger",
    "writer_holds_lock",
]
