"""Codex CLI's session files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) as runs.

Records are ``{timestamp, type, payload}``. A model response's items
(``reasoning``, an assistant ``message``, ``function_call``,
``custom_tool_call``) come first and its ``token_count`` after them: the
items are held until the count, which closes the response with the
response's own usage (``last_token_usage``; ``input_tokens`` includes the
``cached_input_tokens`` read from the cache). A count whose running total did
not move is the same count said again, and is not counted twice; a count
that comes after its response was closed (a tool's output came first) is
carried to the next response, so the run's totals stay whole.

A command run with escalated permissions under an approval policy other
than ``never`` waits on the person until its output comes. A web search the
model ran (``web_search_call``: no name, no call id, its results not written)
is a tool call of its own, ``web_search``, whose result is only its status. A
compaction (a ``compacted`` record holding the history that replaced the
conversation, then an ``event_msg`` ``context_compacted``) is one
``context_compacted`` event. The session's id is its ``session_meta``'s, else
the one the file's name ends with (``rollout-<time>-<id>.jsonl``).
"""

from __future__ import annotations

import os
import re
from typing import Any, ClassVar, Final

import msgspec

from ledger_reader.sessions.fold import (
    SessionFold,
    Usage,
    as_int,
    as_str,
    exit_code_of,
    text_of,
)

SKIPPED_EVENTS: Final = frozenset(
    {
        "agent_message",
        "agent_reasoning",
        "agent_reasoning_section_break",
        "task_started",
        "task_complete",
        "exec_command_begin",
        "patch_apply_begin",
        "patch_apply_end",
        "exec_approval_request",
        "turn_diff",
        "context_compacted",
    }
)
"""``event_msg`` types that repeat what ``response_item`` records say."""
SKIPPED_ITEMS: Final = frozenset({"ghost_snapshot"})
WEB_SEARCH: Final = "web_search"
"""The name a ``web_search_call`` is told by (the record names none)."""
_NAMED_ID: Final = re.compile(
    r"rollout-.*-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$"
)

_decode_arguments: Final = msgspec.json.Decoder()


def _arguments(raw: Any) -> Any:
    """A function call's arguments: Codex writes them as a JSON string."""
    if isinstance(raw, str):
        try:
            return _decode_arguments.decode(raw)
        except (msgspec.DecodeError, ValueError, RecursionError):
            return raw
    return raw


def _parent_thread(meta: dict[str, Any]) -> str:
    """The session (thread) that spawned a sub-agent's: ``session_meta.parent_thread_id``
    (newer), or its ``source`` = ``{"subagent": {"thread_spawn": {"parent_thread_id": …}}}``;
    ``""`` for a session a person started, or a sub-agent that names no parent (a review)."""
    parent = as_str(meta.get("parent_thread_id"))
    source = meta.get("source")
    subagent = source.get("subagent") if isinstance(source, dict) else None
    spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
    if not parent and isinstance(spawn, dict):
        parent = as_str(spawn.get("parent_thread_id"))
    return parent


class _Response:
    __slots__ = ("calls", "first", "last", "text", "thinking")

    def __init__(self, time: str) -> None:
        self.first = time
        self.last = time
        self.thinking: list[tuple[str, str]] = []
        self.text: list[tuple[str, str]] = []
        self.calls: list[tuple[str, str, str, Any]] = []


class CodexFold(SessionFold):
    """The events of one Codex rollout file."""

    agent: ClassVar[str] = "codex"

    def __init__(self, run_id: str = "", path: str | None = None) -> None:
        named = _NAMED_ID.search(os.path.basename(path)) if path else None
        super().__init__(run_id or (named[1] if named else ""), path)
        self._open: _Response | None = None
        self._model: str | None = None
        self._policy = "on-request"
        self._total: Any = None
        self._carried: Usage | None = None
        self._requested = ""
        self._exit_codes: dict[str, int] = {}
        """Commands' exit codes said by ``exec_command_end`` before their output, by call id."""
        self._searches: dict[str, str] = {}
        """Web searches of the open response: call id → their status (``completed``, ...)."""
        self._searched = 0

    def feed(self, record: Any, offset: int, length: int) -> None:
        if not isinstance(record, dict):
            self.damaged(offset, length, "not a JSON object")
            return
        kind = as_str(record.get("type"))
        time = as_str(record.get("timestamp"))
        if time:
            self.seen = time
        payload = record.get("payload")
        fields = payload if isinstance(payload, dict) else {}
        if kind == "session_meta":
            self._meta(fields, time)
        elif kind == "turn_context":
            self._model = as_str(fields.get("model")) or self._model
            self._policy = as_str(fields.get("approval_policy")) or self._policy
        elif kind == "response_item":
            self._item(fields, time, record)
        elif kind == "event_msg":
            self._event(fields, time, record)
        elif kind == "compacted":
            self._close(None)
            self.start(time)
            self.context_compacted(time)
        else:
            self.start(time)
            self.unknown(kind, time, record)
        if time:
            self.last_time = time

    def _meta(self, fields: dict[str, Any], time: str) -> None:
        if self.started:
            return
        self.run_id = as_str(fields.get("id")) or self.run_id
        self.project = as_str(fields.get("cwd")) or None
        git = fields.get("git")
        if isinstance(git, dict):
            self.git_branch = as_str(git.get("branch")) or None
        self.parent_run_id = _parent_thread(fields) or None

    def _event(self, fields: dict[str, Any], time: str, record: dict[str, Any]) -> None:
        kind = as_str(fields.get("type"))
        if kind == "token_count":
            self._tokens(fields, time)
        elif kind == "exec_command_end":
            code = fields.get("exit_code")
            if isinstance(code, int) and not isinstance(code, bool):
                self._exit_codes[as_str(fields.get("call_id"))] = code
        elif kind == "user_message":
            words = as_str(fields.get("message"))
            self._close(None)
            self._requested = time
            if not self.started:
                self.start(time, words)
            else:
                self.user_message(time, words)
        elif kind not in SKIPPED_EVENTS:
            self.start(time)
            self.unknown(kind or "event_msg", time, record)

    def _item(self, fields: dict[str, Any], time: str, record: dict[str, Any]) -> None:
        kind = as_str(fields.get("type"))
        if kind in SKIPPED_ITEMS:
            return
        if kind == "message":
            if fields.get("role") == "assistant":
                self.start(time)
                self._response(time).text.append((time, text_of(fields.get("content"))))
            return  # the person's words come as user_message events; the rest is context
        self.start(time)
        if kind == "reasoning":
            summary = fields.get("summary")
            words = text_of(summary) if isinstance(summary, list) else ""
            if words:
                self._response(time).thinking.append((time, words))
            return
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            call_id = as_str(fields.get("call_id")) or as_str(fields.get("id"))
            name = as_str(fields.get("name")) or kind
            arguments = (
                _arguments(fields.get("arguments"))
                if "arguments" in fields
                else fields.get("input", fields.get("action"))
            )
            self._response(time).calls.append((time, call_id, name, arguments))
            return
        if kind == "web_search_call":
            self._searched += 1
            call_id = as_str(fields.get("id")) or f"{WEB_SEARCH}#{self._searched}"
            self._searches[call_id] = as_str(fields.get("status"))
            action = fields.get("action")
            self._response(time).calls.append((time, call_id, WEB_SEARCH, action or {}))
            return
        if kind in ("function_call_output", "custom_tool_call_output"):
            self._close(None)
            output = fields.get("output")
            call_id = as_str(fields.get("call_id"))
            failed = False
            if isinstance(output, dict):  # older versions: {"content": ..., "success": ...}
                failed = output.get("success") is False
                output = output.get("content", output)
            code = self._exit_codes.pop(call_id, None)
            code = exit_code_of(output) if code is None else code
            failed = failed or (code is not None and code != 0)
            self.tool_result(time, call_id, output, is_error=failed)
            self._requested = time
            return
        self.unknown(kind or "response_item", time, record)

    def _response(self, time: str) -> _Response:
        if self._open is None:
            self._open = _Response(time)
        self._open.last = time
        return self._open

    def _tokens(self, fields: dict[str, Any], time: str) -> None:
        info = fields.get("info")
        if not isinstance(info, dict):
            return
        total = info.get("total_token_usage")
        if total is not None and total == self._total:
            return  # the same count, said again
        self._total = total
        last = info.get("last_token_usage")
        if not isinstance(last, dict):
            return
        usage = Usage()
        cached = as_int(last.get("cached_input_tokens"))
        usage.input = max(0, as_int(last.get("input_tokens")) - cached)
        usage.cache_read = cached
        usage.output = as_int(last.get("output_tokens"))
        if self._open is None:
            carried = self._carried or Usage()
            carried.input += usage.input
            carried.cache_read += usage.cache_read
            carried.output = (carried.output or 0) + (usage.output or 0)
            self._carried = carried
            return
        self._close(usage, time)

    def _close(self, usage: Usage | None, time: str = "") -> None:
        response, self._open = self._open, None
        if response is None:
            return
        carried, self._carried = self._carried, None
        if carried is not None:
            usage = usage or Usage()
            usage.input += carried.input
            usage.cache_read += carried.cache_read
            usage.output = (usage.output or 0) + (carried.output or 0)
        parts = [
            {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
            for _, call_id, name, arguments in response.calls
        ]
        answered = max(response.last, time) if time else response.last
        self.model_call(
            requested=self._requested or response.first,
            answered=answered,
            model=self._model,
            usage=usage,
            thinking=response.thinking,
            text=response.text,
            calls=parts,
            provider="openai",
        )
        for _, call_id, name, arguments in response.calls:
            self.tool_call(
                answered,
                call_id,
                name,
                arguments,
                asks=self._asks(name, arguments),
            )
        searches, self._searches = self._searches, {}
        for call_id, status in searches.items():
            if status in ("completed", "failed"):
                self.tool_result(answered, call_id, status, is_error=status == "failed")
        self._requested = answered

    def _asks(self, name: str, arguments: Any) -> str | None:
        """What a call asks the person: a command that wants to leave the sandbox."""
        if self._policy == "never" or not isinstance(arguments, dict):
            return None
        escalated = arguments.get("with_escalated_permissions") is True or (
            arguments.get("sandbox_permissions") == "require_escalated"
        )
        if not escalated:
            return None
        command = arguments.get("command")
        if isinstance(command, list):
            command = " ".join(str(part) for part in command)
        return f"{name}: {command}" if isinstance(command, str) and command else name

    def close_open(self, *, final: bool) -> None:
        if final:
            self._close(None)

    def settled(self) -> bool:
        return self._open is None and super().settled()


__all__ = ["CodexFold"]
