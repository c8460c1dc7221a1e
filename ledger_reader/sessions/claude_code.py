"""Claude Code's session files (``~/.claude/projects/<project>/<session>.jsonl``) as runs.

One API response is split over several ``assistant`` records, one per
content block, that share ``message.id`` and repeat its usage (the output
count may grow from one to the next, and tool results can come between
them while it streams): each block becomes its event as it comes, and the
response's one ``llm_call``, with the last (largest) counts, is made when
the next response or prompt begins, it says it stopped, or the file goes
quiet (:meth:`SessionFold.rest`).
A sub-agent's file (``<session>/subagents/agent-<id>.jsonl``, or in 2.0
``agent-<id>.jsonl`` beside the session) is a run of its own, a child of the
session's: its records carry ``isSidechain`` and ``agentId``. The ``Task`` call that
started it names it in its result's record (``toolUseResult.agentId``): that
``tool_result`` carries the child's run id (``child_run_id``).

Which tool uses wait on the person: questions (``AskUserQuestion``,
``ExitPlanMode``) always; the tools the session's permission mode asks about
(shell commands, edits, fetches in ``default``; shell commands and fetches
in ``acceptEdits``; none in ``bypassPermissions``), while their result has
not come. A transcript does not say which commands a user's settings allow
beforehand, so such a tool that is running rather than waiting reads as
waiting until its result is written.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Final

from ledger_reader.sessions.fold import (
    SessionFold,
    Usage,
    as_int,
    as_str,
    text_of,
)

SKIPPED: Final = frozenset({"progress", "file-history-snapshot", "summary", "custom-title"})
"""Record types that say nothing a run shows (hook and sub-agent progress, file backups)."""
QUESTIONS: Final = frozenset({"AskUserQuestion", "ExitPlanMode"})
ASKING: Final[dict[str, frozenset[str]]] = {
    "default": frozenset(
        {"Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "WebFetch", "KillShell"}
    ),
    "acceptEdits": frozenset({"Bash", "WebFetch", "KillShell"}),
    "plan": frozenset(),
    "bypassPermissions": frozenset(),
    "dontAsk": frozenset(),
}
"""The tools each permission mode asks the person about before they run."""
INTERRUPTED: Final = "[Request interrupted by user"
"""How Claude Code marks, in the person's turn, a response the person stopped (Esc)."""
REMEMBERED_RESPONSES: Final = 256
"""Responses folded already, by id, so a straggling record of one is not counted again."""


class _Response:
    """A model response whose records are still coming."""

    __slots__ = ("id", "last", "model", "node_id", "parts", "stopped", "usage")

    def __init__(self, message_id: str, model: str | None, node_id: str, time: str) -> None:
        self.id = message_id
        self.model = model
        self.node_id = node_id
        self.last = time
        self.parts: list[dict[str, Any]] = []
        self.usage: Usage | None = None
        self.stopped = False


class ClaudeCodeFold(SessionFold):
    """The events of one Claude Code transcript (a session's or a sub-agent's)."""

    agent: ClassVar[str] = "claude-code"

    def __init__(self, run_id: str = "", path: str | None = None) -> None:
        super().__init__(run_id, path)
        self._open: _Response | None = None
        self._done: dict[str, None] = {}
        self._mode = "default"
        self._queue: list[str] = []
        """What was typed (or notified) while the agent worked, not taken into a turn yet."""

    def feed(self, record: Any, offset: int, length: int) -> None:
        if not isinstance(record, dict):
            self.damaged(offset, length, "not a JSON object")
            return
        kind = as_str(record.get("type"))
        time = as_str(record.get("timestamp"))
        if time:
            self.seen = time
        if kind in SKIPPED:
            return
        if kind == "queue-operation":
            self._queued(record, time)
            return
        self._identify(record)
        if kind == "assistant":
            self._assistant(record, time)
        elif kind == "user":
            self._user(record, time)
        elif not (kind == "system" and self._system(record, time)):
            self.start(time)
            self.unknown(kind, time, record)
        if time:
            self.last_time = time

    def _identify(self, record: dict[str, Any]) -> None:
        """The run's id, project and branch from the first record that says them."""
        if self.started:
            return
        session = as_str(record.get("sessionId"))
        agent_id = as_str(record.get("agentId"))
        if session:
            if agent_id and record.get("isSidechain"):
                self.run_id = f"{session}.agent-{agent_id}"
                self.parent_run_id = session
            else:
                self.run_id = session
        self.project = self.project or as_str(record.get("cwd")) or None
        self.git_branch = self.git_branch or as_str(record.get("gitBranch")) or None

    def _user(self, record: dict[str, Any], time: str) -> None:
        mode = record.get("permissionMode")
        if isinstance(mode, str) and mode:
            self._mode = mode
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        results = (
            [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if isinstance(content, list)
            else []
        )
        if not results:
            words = text_of(content)
            if record.get("isMeta") or not words:
                # Context Claude Code adds (a hook's reminder, a caveat): nothing a run shows,
                # and not where it starts; a sub-agent's first prompt may follow it.
                return
            self._close()  # a new prompt: the last response is over
            self._said(record, time, words)
            return
        # Results come while the response that asked for them may still be streaming
        # (parallel tool uses): it stays open.
        self.start(time)
        child = self._sub_agent(record) if len(results) == 1 else None
        for block in results:
            call_id = as_str(block.get("tool_use_id"))
            output = block.get("content")
            if isinstance(output, list):
                output = text_of(output) or output
            self.tool_result(
                time, call_id, output, is_error=block.get("is_error") is True, child_run_id=child
            )

    def _said(self, record: dict[str, Any], time: str, words: str, *, queued: bool = False) -> None:
        """Words in the person's turn: a prompt they typed (a slash command as they typed
        it), or what Claude Code put there itself (:func:`notice_of`)."""
        if not queued and words in self._queue:
            self._queue.remove(words)  # queued before, told by this record
        notice = notice_of(words, compact_summary=record.get("isCompactSummary") is True)
        if notice is not None:
            self.start(time)
            self.agent_notice(time, *notice)
            return
        words = command_typed(words)
        if not self.started:
            self.start(time, words)
        else:
            self.user_message(time, words)

    def _queued(self, record: dict[str, Any], time: str) -> None:
        """Words put in the queue while the agent worked (``queue-operation``).

        ``enqueue`` holds them. ``remove`` took the person's oldest words into the turn
        under way, with no record of their own (2.1.38-39): they are said here. A slash
        command taken so runs as a record of its own, and a background task's notice
        waits in the queue for the record that tells it; both are read there.
        """
        operation = record.get("operation")
        if operation == "enqueue":
            words = as_str(record.get("content"))
            if words:
                self._queue.append(words)
        elif operation == "remove":
            typed = [words for words in self._queue if notice_of(words) is None]
            if typed:
                self._queue.remove(typed[0])
                if not typed[0].lstrip().startswith("/") and self.started:
                    self._said(record, time, typed[0], queued=True)
        elif operation == "dequeue":  # taken as the next prompt, which has its record
            del self._queue[:1]
        elif operation == "popAll":  # taken back into the input box
            self._queue.clear()

    def _system(self, record: dict[str, Any], time: str) -> bool:
        """A ``system`` record that says something a run shows: a compaction, a local
        command and its output; ``False`` for the others (kept as they are)."""
        subtype = record.get("subtype")
        if subtype == "compact_boundary":
            self._close()
            self.start(time)
            said = record.get("compactMetadata")
            said = said if isinstance(said, dict) else {}
            self.context_compacted(
                time,
                trigger=as_str(said.get("trigger")) or None,
                tokens_before=as_int(said.get("preTokens")) or None,
            )
            return True
        words = as_str(record.get("content"))
        if subtype == "local_command" and words:
            self._said(record, time, words)
            return True
        return False

    def _sub_agent(self, record: dict[str, Any]) -> str | None:
        """The run of the sub-agent a ``Task`` result's record names (``toolUseResult.agentId``,
        as its file's records name it), or ``None``."""
        said = record.get("toolUseResult")
        agent_id = as_str(said.get("agentId")) if isinstance(said, dict) else ""
        session = as_str(record.get("sessionId")) or self.run_id
        return f"{session}.agent-{agent_id}" if agent_id and session else None

    def _assistant(self, record: dict[str, Any], time: str) -> None:
        self.start(time)
        message = record.get("message")
        if not isinstance(message, dict):
            self.unknown("assistant", time, record)
            return
        message_id = as_str(message.get("id")) or as_str(record.get("uuid"))
        model = as_str(message.get("model")) or None
        if model == "<synthetic>":  # said by Claude Code itself (an API error): no model call
            self.unknown("synthetic", time, {"text": text_of(message.get("content"))})
            return
        response = self._open
        if response is None or response.id != message_id:
            self._close()
            node_id = self.open_model(self.last_time or time, model)
            response = _Response(message_id, model, node_id, time)
            if message_id in self._done:  # a straggler of a response counted already
                self._blocks(response, message, time)
                self.end_model(node_id, time, model, None, response.parts, "anthropic")
                return
            self._open = response
        response.last = time or response.last
        response.model = model or response.model
        self._blocks(response, message, time)
        usage = message.get("usage")
        if isinstance(usage, dict):
            counted = response.usage or Usage()
            counted.input = as_int(usage.get("input_tokens"))
            counted.cache_read = as_int(usage.get("cache_read_input_tokens"))
            counted.cache_write = as_int(usage.get("cache_creation_input_tokens"))
            output = usage.get("output_tokens")
            if isinstance(output, int) and (counted.output is None or output > counted.output):
                counted.output = output
            response.usage = counted
        if message.get("stop_reason"):
            response.stopped = True

    def _blocks(self, response: _Response, message: dict[str, Any], time: str) -> None:
        """Each content block as it comes: text and thinking, tool uses."""
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return
        node_id = response.node_id
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                response.parts.append(
                    self.said(node_id, time, as_str(block.get("text")), thinking=False)
                )
            elif kind == "thinking":
                response.parts.append(
                    self.said(node_id, time, as_str(block.get("thinking")), thinking=True)
                )
            elif kind in ("tool_use", "server_tool_use"):
                call_id = as_str(block.get("id"))
                name = as_str(block.get("name")) or "?"
                arguments = block.get("input")
                response.parts.append(
                    {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
                )
                self.tool_call(
                    time,
                    call_id,
                    name,
                    arguments,
                    asks=self._question(name, arguments),
                )

    def _close(self) -> None:
        response, self._open = self._open, None
        if response is None:
            return
        self._done[response.id] = None
        if len(self._done) > REMEMBERED_RESPONSES:
            del self._done[next(iter(self._done))]
        self.end_model(
            response.node_id,
            response.last,
            response.model,
            response.usage,
            response.parts,
            "anthropic",
        )

    def _question(self, name: str, arguments: Any) -> str | None:
        """What a tool use asks the person, or ``None`` when it runs without asking."""
        fields = arguments if isinstance(arguments, dict) else {}
        if name == "AskUserQuestion":
            questions = fields.get("questions")
            if isinstance(questions, list) and questions and isinstance(questions[0], dict):
                return as_str(questions[0].get("question")) or "a question"
            return as_str(fields.get("question")) or "a question"
        if name == "ExitPlanMode":
            return "approve the plan"
        if name not in ASKING.get(self._mode, ASKING["default"]):
            return None
        said = fields.get("command") or fields.get("file_path") or fields.get("url") or ""
        return f"{name}: {said}" if isinstance(said, str) and said else name

    def close_open(self, *, final: bool) -> None:
        response = self._open
        if response is not None and (final or response.stopped):
            self._close()

    def settled(self) -> bool:
        return self._open is None and super().settled()


def notice_of(words: str, *, compact_summary: bool = False) -> tuple[str, str] | None:
    """What Claude Code itself put in the person's turn, as ``(kind, text)`` (the kinds of
    :data:`~ledger_reader.sessions.fold.NOTICES`); ``None`` for words the person typed.

    A compacted conversation's summary (its record says ``isCompactSummary``); a background
    task's notice (``<task-notification>``, its ``<summary>``); a local command's output
    (``<local-command-stdout>``, ``-stderr``); the mark of a response the person interrupted.
    """
    if compact_summary:
        return "compact_summary", words
    stripped = words.lstrip()
    if stripped.startswith(INTERRUPTED):
        return "interrupted", stripped
    if stripped.startswith("<task-notification>"):
        return "task_notification", _tagged(stripped, "summary") or stripped
    if stripped.startswith(("<local-command-stdout>", "<local-command-stderr>")):
        output = _tagged(stripped, "local-command-stdout") or _tagged(
            stripped, "local-command-stderr"
        )
        return "command_output", output
    return None


def _tagged(words: str, tag: str) -> str:
    """The text inside the first ``<tag>...</tag>`` of ``words``, ``""`` if none."""
    found = re.search(f"<{tag}>(.*?)</{tag}>", words, re.DOTALL)
    return found[1].strip() if found else ""


def command_typed(words: str) -> str:
    """A slash command as the person typed it (``/compact and go on``), from the tags Claude
    Code writes it in (``<command-name>``, ``<command-args>``); other words as they are."""
    if not words.lstrip().startswith(("<command-name>", "<command-message>")):
        return words
    name = _tagged(words, "command-name") or "/" + _tagged(words, "command-message")
    return f"{name} {_tagged(words, 'command-args')}".strip()


__all__ = ["ClaudeCodeFold", "command_typed", "notice_of"]
