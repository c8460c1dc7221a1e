"""Coding agents' session files (Claude Code, Codex CLI, Gemini CLI) read as runs.

Every reader (``runtop ls``, ``show``, the app, a replay) reads a session
through here: each file is folded into the ledger's events
(:mod:`~ledger_reader.sessions.fold`), so a session is a run like any other
downstream. The formats are described in :mod:`~ledger_reader.sessions.claude_code`,
:mod:`~ledger_reader.sessions.codex` and :mod:`~ledger_reader.sessions.gemini`;
how live a session is, in :mod:`~ledger_reader.sessions.status`.
"""

from __future__ import annotations

from ledger_reader.sessions.fold import (
    AGENT_NOTICE,
    CONTEXT_COMPACTED,
    NOTICES,
    RESUMED_AFTER,
    SESSION_RESUMED,
    USER_MESSAGE,
)
from ledger_reader.sessions.homes import home_session_dirs
from ledger_reader.sessions.session_file import (
    AGENTS,
    CLAUDE_CODE,
    CODEX,
    GEMINI_CLI,
    SessionFile,
    agent_of,
    agent_of_folder,
    find_session,
    find_sessions,
    is_session_place,
    quick_summary,
    read_session,
    session_events,
    session_summaries,
    sessions_named,
)
from ledger_reader.sessions.status import IDLE_AFTER, WAIT_LIMIT, judge_session

__all__ = [
    "AGENTS",
    "AGENT_NOTICE",
    "CLAUDE_CODE",
    "CODEX",
    "CONTEXT_COMPACTED",
    "GEMINI_CLI",
    "IDLE_AFTER",
    "NOTICES",
    "RESUMED_AFTER",
    "SESSION_RESUMED",
    "USER_MESSAGE",
    "WAIT_LIMIT",
    "SessionFile",
    "agent_of",
    "agent_of_folder",
    "find_session",
    "find_sessions",
    "home_session_dirs",
    "is_session_place",
    "judge_session",
    "quick_summary",
    "read_session",
    "session_events",
    "session_summaries",
    "sessions_named",
]
