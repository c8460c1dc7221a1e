"""The ledger as the TUI and the command line read it, through the inspector.

The TUI never imports the ledger reader itself (an import-linter contract):
what it needs of the ledger (the record types it draws, run summaries, the
errors a user can cause, the files and directories it finds, a model call's
conversation) is named here once. This module imports only the ledger
reader, so ``runtop ls`` and ``runtop --version`` load nothing more than
they did; the store and the sources stay behind :mod:`inspector`'s lazy
names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ledger_reader import (
    MAX_LINE_BYTES,
    ApprovalRequest,
    ApprovalResponse,
    CancelRequested,
    DamagedLine,
    ErrorEvent,
    LedgerError,
    LedgerGone,
    LedgerItem,
    LedgerUnreadable,
    Line,
    LlmCall,
    LlmChunk,
    NodeEnter,
    NodeExit,
    NoLedgers,
    NotALedgerFile,
    ReasoningChunk,
    RunCompleted,
    RunEvent,
    RunPlaced,
    RunStarted,
    RunStatus,
    RunSummary,
    RunTotals,
    RunUpdated,
    StructuredOutput,
    SummaryCache,
    ToolCall,
    ToolResult,
    UnknownEvent,
    call_as_sent,
    encode_event,
    find_ledgers,
    is_valid_run_id,
    parse_time,
    read_ledger_lines,
    scan_summaries,
    summarize_ledger,
)
from ledger_reader.budgets import budget_words, limit_words, limits_of
from ledger_reader.collector import collector_held
from ledger_reader.decode import decode_line
from ledger_reader.errors import file_kind
from ledger_reader.events import BudgetLimits, BudgetSpent, BudgetState, BudgetUpdated
from ledger_reader.family import descendant_ledgers
from ledger_reader.head_tail import writer_gone
from ledger_reader.locations import default_ledger_dir, make_private_dir, runtop_home
from ledger_reader.messages import THINKING, TOOL_CALL, TOOL_RESULT, Message, conversation
from ledger_reader.sessions import (
    AGENT_NOTICE,
    CONTEXT_COMPACTED,
    NOTICES,
    SESSION_RESUMED,
    USER_MESSAGE,
    agent_of,
    agent_of_folder,
    find_session,
    find_sessions,
    home_session_dirs,
    is_session_place,
    read_session,
    session_events,
    sessions_named,
)
from ledger_reader.text_search import FileSearch, Hit, Phrase
from ledger_reader.timespan import (
    call_seconds,
    duration,
    model_answered,
    offset_in_run,
    under_a_tenth,
)
from ledger_reader.totals import family_totals

if TYPE_CHECKING:
    from ledger_reader import LedgerTail
else:

    def __getattr__(name: str) -> Any:
        """Following a file needs threads and asyncio: loaded only when a command follows one."""
        if name == "LedgerTail":
            import ledger_reader

            return ledger_reader.LedgerTail
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AGENT_NOTICE",
    "CONTEXT_COMPACTED",
    "MAX_LINE_BYTES",
    "NOTICES",
    "SESSION_RESUMED",
    "THINKING",
    "TOOL_CALL",
    "TOOL_RESULT",
    "USER_MESSAGE",
    "ApprovalRequest",
    "ApprovalResponse",
    "BudgetLimits",
    "BudgetSpent",
    "BudgetState",
    "BudgetUpdated",
    "CancelRequested",
    "DamagedLine",
    "ErrorEvent",
    "FileSearch",
    "Hit",
    "LedgerError",
    "LedgerGone",
    "LedgerItem",
    "LedgerTail",
    "LedgerUnreadable",
    "Line",
    "LlmCall",
    "LlmChunk",
    "Message",
    "NoLedgers",
    "NodeEnter",
    "NodeExit",
    "NotALedgerFile",
    "Phrase",
    "ReasoningChunk",
    "RunCompleted",
    "RunEvent",
    "RunPlaced",
    "RunStarted",
    "RunStatus",
    "RunSummary",
    "RunTotals",
    "RunUpdated",
    "StructuredOutput",
    "SummaryCache",
    "ToolCall",
    "ToolResult",
    "UnknownEvent",
    "agent_of",
    "agent_of_folder",
    "budget_words",
    "call_as_sent",
    "call_seconds",
    "collector_held",
    "conversation",
    "decode_line",
    "default_ledger_dir",
    "descendant_ledgers",
    "duration",
    "encode_event",
    "family_totals",
    "file_kind",
    "find_ledgers",
    "find_session",
    "find_sessions",
    "home_session_dirs",
    "is_session_place",
    "is_valid_run_id",
    "limit_words",
    "limits_of",
    "make_private_dir",
    "model_answered",
    "offset_in_run",
    "parse_time",
    "read_ledger_lines",
    "read_session",
    "runtop_home",
    "scan_summaries",
    "session_events",
    "sessions_named",
    "summarize_ledger",
    "under_a_tenth",
    "writer_gone",
]
