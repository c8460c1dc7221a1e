"""What every coding agent's session becomes: one run, its records folded into ledger events.

A session file is read record by record; each agent's fold
(:mod:`~ledger_reader.sessions.claude_code`, :mod:`~ledger_reader.sessions.codex`,
:mod:`~ledger_reader.sessions.gemini`) turns what a record says into the
events of LEDGER.md, numbered in order (``seq`` from 1), under the session's
id as the run id:

- ``run_started`` (``agent``, ``project``, ``git_branch``, the first prompt as
  ``input``, ``parent_run_id`` for a sub-agent) at the first record that names
  the session;
- a ``user_message`` for each prompt a person typed (a type of its own, shown
  as it is); what the agent itself put in the person's turn (a compacted
  conversation's summary, a background task's notice, a local command's output,
  the mark of an interruption) is an ``agent_notice`` instead, and a compaction
  a ``context_compacted``;
- per model response: its thinking (``reasoning_chunk``) and text (``llm_chunk``),
  then one ``llm_call`` with its tokens (counted once) and what it answered,
  inside a ``node_enter``/``node_exit`` from the request to the answer;
- per tool use a node of its own (``tool:<name>#<n>``): ``node_enter``,
  ``tool_call``, then ``tool_result`` and ``node_exit`` when the output comes.
  A tool use is held until its result, so that the two are told together even
  where a response asked for several tools at once and their results came after
  all of them (a reader pairs a call with the result that follows it): it is
  told without its result when it waits on the person, when :data:`HOLD` seconds
  of the session's records passed without its result, or when the file goes
  quiet. Its result fails (``is_error``) where the agent said so or where the
  command it ran exited non-zero;
- a tool use that waits on the person (a permission prompt, a question) is an
  ``approval_request``, answered (``approval_response``) by its result, so the
  run reads ``awaiting_approval`` exactly while it waits.

A session has no end record: how live it is comes from the time of its last
write (:func:`ledger_reader.sessions.status.judge_session`). Records of types
a fold does not know become :class:`~ledger_reader.events.UnknownEvent` of type
``<agent>.<type>`` with the record as payload (kept, shown raw); a line that
is not JSON is a :class:`~ledger_reader.events.DamagedLine`. Nothing here raises
on what a file holds.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, ClassVar, Final

import msgspec

from ledger_reader.events import (
    ApprovalRequest,
    ApprovalRequestPayload,
    ApprovalResponse,
    ApprovalResponsePayload,
    ChunkPayload,
    DamagedLine,
    LedgerItem,
    LlmCall,
    LlmCallPayload,
    LlmChunk,
    NodeEnter,
    NodeEnterPayload,
    NodeExit,
    NodeExitPayload,
    ReasoningChunk,
    RunStarted,
    RunStartedPayload,
    ToolCall,
    ToolCallPayload,
    ToolResult,
    ToolResultPayload,
    UnknownEvent,
    parse_time,
)
from ledger_reader.sessions.prices import estimate_cost

_decode_json: Final = msgspec.json.decode
USER_MESSAGE: Final = "user_message"
"""The event type of a prompt a person typed into a coding agent (``{"text": ...}``)."""
SESSION_RESUMED: Final = "session_resumed"
"""The event type that says a session was taken up again after :data:`RESUMED_AFTER`
(``{"after_seconds": ...}``): its events after the gap are that far into the run."""
AGENT_NOTICE: Final = "agent_notice"
"""The event type of words the agent itself put in the person's turn (``{"kind": ...,
"text": ...}``): kinds in :data:`NOTICES`. They are not a prompt typed: a run's first prompt and
its ``user_message`` events are the person's own words only."""
NOTICES: Final = {
    "interrupted": "interrupted by the person",
    "compact_summary": "summary of the compacted conversation",
    "task_notification": "background task",
    "command_output": "command output",
}
"""Each kind of :data:`AGENT_NOTICE`, and how it reads."""
CONTEXT_COMPACTED: Final = "context_compacted"
"""The event type that says the agent compacted the conversation (its earlier turns replaced
by a summary) to fit the model's context: ``{"trigger": "auto" | "manual", "tokens_before":
...}``, each where the file says it."""
RESUMED_AFTER: Final = 3600.0
"""Seconds of silence before a prompt after which the session counts as resumed."""
TEXT_LIMIT: Final = 64 * 1024
"""Text, thinking and tool output over this are cut, as a ledger writer cuts user data."""
HOLD: Final = 1.0
"""Seconds of a session's records after a tool use without its result, after which the use
is told without it (it runs on: its result, when it comes, is a line of its own)."""


def cut(text: str) -> tuple[str, bool]:
    """``text`` within :data:`TEXT_LIMIT`, and whether it was cut."""
    if len(text) <= TEXT_LIMIT:
        return text, False
    return text[:TEXT_LIMIT], True


def _words(text: str) -> dict[str, Any]:
    """Words said in the person's turn, as an event's payload: ``text``, cut to
    :data:`TEXT_LIMIT` (``truncated`` then)."""
    said, was_cut = cut(text)
    return {"text": said, "truncated": True} if was_cut else {"text": said}


class Usage:
    """One model response's tokens, as its records said them (the last, largest output)."""

    __slots__ = ("cache_read", "cache_write", "input", "output")

    def __init__(self) -> None:
        self.input = 0
        """Tokens sent that were neither read from nor written to the cache."""
        self.cache_read = 0
        self.cache_write = 0
        self.output: int | None = None

    @property
    def prompt(self) -> int:
        """Everything the model was sent: the uncached input and the cache's parts."""
        return self.input + self.cache_read + self.cache_write


class _Held:
    """A tool use not told yet: it waits for its result to be told with it."""

    __slots__ = ("arguments", "asks", "call_id", "name", "node_id", "time")

    def __init__(
        self, time: str, call_id: str, name: str, arguments: Any, asks: str | None, node_id: str
    ) -> None:
        self.time = time
        self.call_id = call_id
        self.name = name
        self.arguments = arguments
        self.asks = asks
        self.node_id = node_id


class SessionFold:
    """The events of one session file, made as its records are fed in order.

    Subclasses implement :meth:`feed` for their agent's records and may hold a
    model response open until it is whole (:meth:`close` ends it).

    Args:
        run_id: the session's id, when the file's name gives it; the first record
            naming the session can set it.
        path: the session file, reported in damage.
    """

    agent: ClassVar[str] = ""
    """The agent's name, as runs show it (``claude-code``, ``codex``, ``gemini-cli``)."""

    def __init__(self, run_id: str = "", path: str | None = None) -> None:
        self.run_id = run_id
        self.path = path
        self.seq = 0
        self.items: list[LedgerItem] = []
        self.started = False
        self.last_time = ""
        """The time of the last record that had one: a request starts there."""
        self.project: str | None = None
        self.git_branch: str | None = None
        self.parent_run_id: str | None = None
        self.model: str | None = None
        self.waiting: dict[str, tuple[str, str]] = {}
        """Tool uses that would wait on the person, without a result yet: call id → (time,
        question)."""
        self.asked: dict[str, str] = {}
        """Of those, the ones asked (an ``approval_request`` made): call id → approval id."""
        self.calls = 0
        self.tools = 0
        self.seen = ""
        """The time of the last record of any kind (progress too): how long a tool use was
        held is measured against it."""
        self._held: dict[str, _Held] = {}
        """Tool uses not told yet, by call id, in the order they came."""
        self._told: dict[str, str] = {}
        """Tool uses told without their result yet: call id → their node's id."""
        self._latest: tuple[datetime, str] | None = None
        self._started_at: dict[str, str] = {}
        self.priced = True
        """Estimate each call's cost (a quick look at a file's ends leaves the price
        library alone: its sums are not kept)."""

    # -- what subclasses call --------------------------------------------------

    def take(self) -> list[LedgerItem]:
        """The items made since the last take."""
        items, self.items = self.items, []
        return items

    def emit(self, cls: type[Any], time: str, payload: Any) -> str:
        """Add one event of ``cls`` at ``time`` with ``payload``, numbered next; the time it
        was given (never before the event before it)."""
        self.seq += 1
        time = self._in_order(time)
        self.items.append(cls(run_id=self.run_id, seq=self.seq, time=time, payload=payload))
        return time

    def _in_order(self, time: str) -> str:
        """``time``, or the last event's when it is earlier: records stamp a response's parts
        when each began (a thought before its message), while the run's events are in order."""
        moment = parse_time(time)
        if moment is None:
            return time
        if self._latest is not None and moment < self._latest[0]:
            return self._latest[1]
        self._latest = (moment, time)
        return time

    def unknown(self, kind: str, time: str, record: Any) -> None:
        """Keep a record this fold does not know, as an event of its own type."""
        self.seq += 1
        self.items.append(
            UnknownEvent(
                run_id=self.run_id,
                seq=self.seq,
                time=self._in_order(time),
                type=f"{self.agent}.{kind or '?'}",
                payload=record,
            )
        )

    def damaged(self, offset: int, length: int, reason: str) -> None:
        """A line that is not a record."""
        self.items.append(DamagedLine(offset=offset, length=length, reason=reason))

    def start(self, time: str, prompt: Any = None) -> None:
        """The run's first event, once the session's id is known."""
        if self.started:
            return
        self.started = True
        self.emit(
            RunStarted,
            time,
            RunStartedPayload(
                agent=self.agent,
                writer=self.agent,
                input=prompt,
                parent_run_id=self.parent_run_id,
                project=self.project,
                git_branch=self.git_branch,
                skill=project_name(self.project),
            ),
        )

    def user_message(self, time: str, text: str) -> None:
        """A prompt the person typed; after a long silence (the session resumed, perhaps
        days later), the gap is said first."""
        before, now = parse_time(self.last_time), parse_time(time)
        if before is not None and now is not None:
            gap = (now - before).total_seconds()
            if gap >= RESUMED_AFTER:
                self.unknown_typed(SESSION_RESUMED, time, {"after_seconds": round(gap, 3)})
        self.unknown_typed(USER_MESSAGE, time, _words(text))

    def agent_notice(self, time: str, kind: str, text: str) -> None:
        """Words the agent put in the person's turn (:data:`AGENT_NOTICE`)."""
        self.unknown_typed(AGENT_NOTICE, time, {"kind": kind, **_words(text)})

    def context_compacted(
        self, time: str, *, trigger: str | None = None, tokens_before: int | None = None
    ) -> None:
        """The conversation compacted to fit the context (:data:`CONTEXT_COMPACTED`)."""
        payload: dict[str, Any] = {}
        if trigger:
            payload["trigger"] = trigger
        if tokens_before:
            payload["tokens_before"] = tokens_before
        self.unknown_typed(CONTEXT_COMPACTED, time, payload)

    def unknown_typed(self, kind: str, time: str, payload: Any) -> None:
        self.seq += 1
        self.items.append(
            UnknownEvent(
                run_id=self.run_id,
                seq=self.seq,
                time=self._in_order(time),
                type=kind,
                payload=payload,
            )
        )

    def model_call(
        self,
        *,
        requested: str,
        answered: str,
        model: str | None,
        usage: Usage | None,
        thinking: list[tuple[str, str]],
        text: list[tuple[str, str]],
        calls: list[dict[str, Any]],
        provider: str | None,
    ) -> str:
        """One model response told whole: its node, thinking and text, its ``llm_call``.

        Returns the node's id, which the tool calls it made carry.
        """
        node_id = self.open_model(requested or answered, model)
        parts: list[dict[str, Any]] = []
        for at, words in thinking:
            parts.append(self.said(node_id, at, words, thinking=True))
        for at, words in text:
            parts.append(self.said(node_id, at, words, thinking=False))
        self.end_model(node_id, answered, model, usage, [*parts, *calls], provider)
        return node_id

    def open_model(self, requested: str, model: str | None) -> str:
        """A model request's start (``node_enter``); the node's id."""
        self.calls += 1
        node_id = f"llm:{model or 'model'}#{self.calls}"
        self._started_at[node_id] = self.emit(
            NodeEnter, requested, NodeEnterPayload(node_id=node_id, node_name=model)
        )
        return node_id

    def said(self, node_id: str, time: str, words: str, *, thinking: bool) -> dict[str, Any]:
        """Text or thinking the model produced, as it came; the response's part for it."""
        text, _ = cut(words)
        cls = ReasoningChunk if thinking else LlmChunk
        self.emit(cls, time, ChunkPayload(index=0, delta=text, node_id=node_id))
        return {"type": "thinking" if thinking else "text", "text": text}

    def end_model(
        self,
        node_id: str,
        answered: str,
        model: str | None,
        usage: Usage | None,
        parts: list[dict[str, Any]],
        provider: str | None,
    ) -> None:
        """A model response's end: its ``llm_call`` (tokens counted once, cost estimated)."""
        if model and not model.startswith("<"):
            self.model = model
        payload = LlmCallPayload(
            model=model,
            provider=provider,
            node_id=node_id,
            response=[{"role": "assistant", "content": parts}] if parts else None,
        )
        if usage is not None:
            payload.prompt_tokens = usage.prompt
            payload.output_tokens = usage.output
            payload.cache_read_tokens = usage.cache_read
            payload.cache_write_tokens = usage.cache_write
            cost = (
                estimate_cost(
                    model, usage.prompt, usage.cache_read, usage.cache_write, usage.output or 0
                )
                if self.priced
                else None
            )
            if cost is not None:
                payload.cost_usd = round(cost, 10)
                payload.cost_estimated = True
        written = self.emit(LlmCall, answered, payload)
        if written != answered and answered:
            payload.answered_at = answered  # its tools' results came first: not its time
        self.exit_node(node_id, written, success=True)

    def exit_node(self, node_id: str, time: str, *, success: bool) -> None:
        """A node's end, its duration from the time its enter was given (as a timeline
        measures it: the two never disagree)."""
        start = self._started_at.pop(node_id, "")
        self.emit(
            NodeExit,
            time,
            NodeExitPayload(
                node_id=node_id, success=success, duration_micros=micros_between(start, time)
            ),
        )

    def tool_call(
        self,
        time: str,
        call_id: str,
        name: str,
        arguments: Any,
        *,
        asks: str | None = None,
    ) -> None:
        """A tool use; ``asks`` is what it asks the person, when it waits on them to run.

        It is held until its result (:meth:`tool_result`) or the end of a read (:meth:`rest`).
        """
        self.tools += 1
        node_id = f"tool:{name or 'tool'}#{self.tools}"
        self._held[call_id] = _Held(time, call_id, name, arguments, asks, node_id)
        if asks is not None:
            self.waiting[call_id] = (time, asks)

    def _tell(self, held: _Held) -> None:
        """A held tool use's node and call, at the time it was made."""
        time = self.emit(NodeEnter, held.time, NodeEnterPayload(node_id=held.node_id))
        self._started_at[held.node_id] = time
        self.emit(
            ToolCall,
            held.time,
            ToolCallPayload(
                call_id=held.call_id,
                name=held.name,
                arguments=held.arguments,
                node_id=held.node_id,
            ),
        )
        self._told[held.call_id] = held.node_id

    def rest(self, *, final: bool) -> None:
        """The reader has read all there is for now.

        What is held open is folded when it is plainly whole, or when ``final``
        (the file has gone quiet, or is read once). A tool use still waiting
        on the person is asked now (an ``approval_request``): the question is
        only known to wait when nothing has answered it by the end of a read.
        Tool uses held without their result are told when they ask, when they
        were made :data:`HOLD` seconds of records ago, or when ``final``.
        """
        self.close_open(final=final)
        seen = parse_time(self.seen)
        for call_id, held in list(self._held.items()):
            made = parse_time(held.time)
            old = seen is not None and made is not None and (seen - made).total_seconds() >= HOLD
            if final or held.asks is not None or old:
                del self._held[call_id]
                self._tell(held)
        for call_id, (time, question) in list(self.waiting.items()):
            if call_id not in self.asked and call_id in self._told:
                approval_id = f"ask-{call_id}"
                self.asked[call_id] = approval_id
                self.emit(
                    ApprovalRequest,
                    time,
                    ApprovalRequestPayload(approval_id=approval_id, prompt=question),
                )

    def tool_result(
        self,
        time: str,
        call_id: str,
        output: Any,
        *,
        is_error: bool,
        child_run_id: str | None = None,
    ) -> None:
        """A tool's output, told after its use; it answers the question its use asked, if
        it asked one. ``child_run_id``: the run the use started (a sub-agent's)."""
        held = self._held.pop(call_id, None)
        if held is not None:
            self._tell(held)
        self.waiting.pop(call_id, None)
        node_id = self._told.pop(call_id, None)
        approval_id = self.asked.pop(call_id, None)
        if approval_id is not None:
            denied = is_error and _denied(output)
            self.emit(
                ApprovalResponse,
                time,
                ApprovalResponsePayload(
                    approval_id=approval_id,
                    approved=not denied,
                    source=self.agent,
                    reason="denied in the agent" if denied else None,
                ),
            )
        truncated = None
        if isinstance(output, str):
            output, was_cut = cut(output)
            truncated = was_cut or None
        time = self.emit(
            ToolResult,
            time,
            ToolResultPayload(
                call_id=call_id,
                node_id=node_id,
                output=output,
                is_error=is_error or None,
                truncated=truncated,
                child_run_id=child_run_id,
            ),
        )
        if node_id is not None:
            self.exit_node(node_id, time, success=not is_error)

    # -- what subclasses implement ----------------------------------------------

    def feed(self, record: Any, offset: int, length: int) -> None:
        """Fold one decoded record (a JSON value) that started at ``offset``."""
        raise NotImplementedError

    def close_open(self, *, final: bool) -> None:
        """Fold what is held open (a response whose last record may still come) if it is
        plainly whole, or at all when ``final``."""

    def settled(self) -> bool:
        """Whether nothing is held open that a later record could still change."""
        return not self._held


def _denied(output: Any) -> bool:
    """Whether a failed tool result says the person refused it."""
    text = output if isinstance(output, str) else str(output)
    lowered = text[:400].lower()
    return "denied" in lowered or "rejected" in lowered or "doesn't want" in lowered


_EXIT_CODE: Final = re.compile(
    r"^(?:Exit code:|Exit Code:|Process exited with code) *(-?\d+)", re.MULTILINE
)


def exit_code_of(output: Any) -> int | None:
    """The exit code a shell command's output says, or ``None`` when it says none.

    The agents put it in words: ``Exit code: 1`` (Codex's ``shell_command``),
    ``Process exited with code 1`` (Codex's ``exec_command``), ``Exit Code: 1``
    (Gemini CLI's ``run_shell_command``); or in a JSON string's
    ``metadata.exit_code`` (Codex's ``shell`` and ``apply_patch``).
    """
    if isinstance(output, dict):
        metadata = output.get("metadata")
        code = metadata.get("exit_code") if isinstance(metadata, dict) else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None
    if not isinstance(output, str):
        return None
    head = output[:4096]
    if head.startswith("{") and '"exit_code"' in head:
        try:
            return exit_code_of(_decode_json(output))
        except (msgspec.DecodeError, ValueError, RecursionError):
            return None
    found = _EXIT_CODE.search(head)
    return int(found.group(1)) if found else None


def project_name(project: str | None) -> str | None:
    """The last folder of a project's path: what names a session in a table."""
    if not project:
        return None
    trimmed = project.rstrip("/\\")
    name = trimmed.replace("\\", "/").rpartition("/")[2]
    return name or trimmed or None


def micros_between(start: str, end: str) -> int | None:
    """Microseconds from ``start`` to ``end`` (RFC 3339), or ``None``."""
    first, last = parse_time(start), parse_time(end)
    if first is None or last is None:
        return None
    return max(0, int((last - first).total_seconds() * 1_000_000))


def text_of(content: Any) -> str:
    """The words of a message's content: a string, or the text of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        words = [
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        ]
        return "\n".join(word for word in words if word)
    return ""


def as_int(value: Any) -> int:
    """A token count as a file wrote it: an integer, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


__all__ = [
    "AGENT_NOTICE",
    "CONTEXT_COMPACTED",
    "NOTICES",
    "RESUMED_AFTER",
    "SESSION_RESUMED",
    "TEXT_LIMIT",
    "USER_MESSAGE",
    "SessionFold",
    "Usage",
    "as_int",
    "as_str",
    "cut",
    "exit_code_of",
    "micros_between",
    "project_name",
    "text_of",
]
