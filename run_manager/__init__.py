"""Give every agent run an id, a handle, a cancel switch and a ledger.

    async with Manager(ledger_dir="~/.runtop/runs") as manager:
        handle = manager.start(my_agent, "summarise the logs", timeout=60)
        print(handle.run_id, await handle.result())

This package imports neither textual nor rich.
"""

from __future__ import annotations

from run_manager.agents import (
    Agent,
    AgentError,
    AgentEvent,
    Canceled,
    CancelToken,
    Complete,
    Content,
    FunctionAgent,
    ModelRequest,
    StreamingAgent,
    Thinking,
    ToolCallEvent,
    ToolResultEvent,
)
from run_manager.budget import BadBudget, Budget
from run_manager.current import current_run_id
from run_manager.errors import RunCanceled, RunFailed, RunNotFound, RunNotResumable
from run_manager.handle import Handle, Info
from run_manager.hub import Hub, Lagged, Subscription
from run_manager.ids import new_run_id
from run_manager.ledger import LedgerBusy, LedgerWriter
from run_manager.manager import Closed, LedgerDirShared, Manager
from run_manager.recorders import (
    ModelCallRecord,
    ToolCallRecord,
    approval,
    cancel_requested,
    model_call,
    tool,
    tool_call,
    wait_for_approval,
)
from run_manager.run import Approval, ApprovalNotFound, CancelKind, Status

__all__ = [
    "Agent",
    "AgentError",
    "AgentEvent",
    "Approval",
    "ApprovalNotFound",
    "BadBudget",
    "Budget",
    "CancelKind",
    "CancelToken",
    "Canceled",
    "Closed",
    "Complete",
    "Content",
    "FunctionAgent",
    "Handle",
    "Hub",
    "Info",
    "Lagged",
    "LedgerBusy",
    "LedgerDirShared",
    "LedgerWriter",
    "Manager",
    "ModelCallRecord",
    "ModelRequest",
    "RunCanceled",
    "RunFailed",
    "RunNotFound",
    "RunNotResumable",
    "Status",
    "StreamingAgent",
    "Subscription",
    "Thinking",
    "ToolCallEvent",
    "ToolCallRecord",
    "ToolResultEvent",
    "approval",
    "cancel_requested",
    "current_run_id",
    "model_call",
    "new_run_id",
    "tool",
    "tool_call",
    "wait_for_approval",
]
