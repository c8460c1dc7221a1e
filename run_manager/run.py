"""One run's life: its events, its ledger, its cancel switch and its approvals.

:class:`Run` is internal to the manager. Everything a run records goes
through :meth:`Run.emit`, which numbers the event, writes its line and
publishes it, from the event loop or from a synchronous agent's thread.
The mapping from what an agent does to ledger events lives here too: a
streamed :data:`~run_manager.agents.AgentEvent`, or a call made through the
bindings (:mod:`run_manager.recorders`), becomes the same ``node_enter``,
``tool_call``, ``tool_result``, ``node_exit`` sequence.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import os
import secrets
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec

from ledger_reader import RunEvent
from ledger_reader.events import (
    ApprovalRequest,
    ApprovalRequestPayload,
    ApprovalResponse,
    ApprovalResponsePayload,
    CancelRequested,
    CancelRequestedPayload,
    ChunkPayload,
    ErrorEvent,
    ErrorPayload,
    LineEncoder,
    LlmCall,
    LlmCallPayload,
    LlmChunk,
    NodeEnter,
    NodeEnterPayload,
    NodeExit,
    NodeExitPayload,
    ReasoningChunk,
    RunCompleted,
    RunCompletedPayload,
    RunStarted,
    RunStartedPayload,
    ToolCall,
    ToolCallPayload,
    ToolResult,
    ToolResultPayload,
)
from run_manager.agents import (
    AgentError,
    AgentEvent,
    CancelToken,
    Complete,
    Content,
    ModelRequest,
    Thinking,
    ToolCallEvent,
    ToolResultEvent,
)
from run_manager.ids import utc_now
from run_manager.ledger import LedgerWriter, cap_messages, cap_payload_value

if TYPE_CHECKING:
    from run_manager.hub import Hub

STREAM_BUFFER: Final = 10_000
"""Agent events a streamed run keeps for :meth:`Handle.events` readers."""
REDELIVER_EVERY: Final = 0.1
"""Seconds between deliveries of a cancel to a run's task that swallowed the last one."""

_encoder = msgspec.json.Encoder()


class Status(StrEnum):
    """Where a run stands."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELED = "canceled"


class CancelKind(StrEnum):
    """Why a run was cancelled, as ``run_completed.reason`` records it."""

    USER = "user"
    TIMEOUT = "timeout"
    SHUTDOWN = "shutdown"
    PARENT = "parent"


@dataclass(frozen=True, slots=True)
class Approval:
    """A decision on an approval gate."""

    approved: bool
    reason: str | None = None
    source: str | None = None
    approval_id: str | None = None


class ApprovalNotFound(LookupError):
    """No such approval is pending on the run."""


class _Stream:
    """A streamed run's agent events, for any number of :meth:`Handle.events` readers."""

    def __init__(self, limit: int = STREAM_BUFFER) -> None:
        self.events: deque[AgentEvent] = deque(maxlen=limit)
        self.first = 0
        """The number of the oldest event still kept (earlier ones were dropped)."""
        self.total = 0
        self.closed = False
        self._changed = asyncio.Event()

    def add(self, event: AgentEvent) -> None:
        if len(self.events) == self.events.maxlen:
            self.first += 1
        self.events.append(event)
        self.total += 1
        self._changed.set()

    def close(self) -> None:
        self.closed = True
        self._changed.set()

    async def read(self) -> AsyncIterator[AgentEvent]:
        position = self.first
        while True:
            position = max(position, self.first)
            while position < self.total:
                yield self.events[position - self.first]
                position += 1
            if self.closed:
                return
            self._changed.clear()
            await self._changed.wait()


class _PendingApproval:
    __slots__ = ("future", "node_id", "started", "timer")

    def __init__(self, node_id: str, future: concurrent.futures.Future[Approval]) -> None:
        self.node_id = node_id
        self.future = future
        self.started = time.monotonic()
        self.timer: asyncio.TimerHandle | None = None


class Run:
    """The manager's record of one run (callers hold a :class:`Handle`, never this)."""

    def __init__(
        self,
        *,
        run_id: str,
        agent_name: str,
        agent: object,
        input: Any,
        loop: asyncio.AbstractEventLoop,
        hub: Hub,
        writer: LedgerWriter | None,
        streamed: bool,
        writer_name: str,
        parent_run_id: str | None = None,
        resumed_from: str | None = None,
        record_content: bool = True,
    ) -> None:
        self.id = run_id
        self.agent_name = agent_name
        self.agent = agent
        self.input = input
        self.loop = loop
        self.hub = hub
        self.writer = writer
        self.writer_name = writer_name
        self.parent_run_id = parent_run_id
        self.resumed_from = resumed_from
        self.record_content = record_content
        """Whether an ``llm_call`` keeps what the model was sent and answered."""
        self.status = Status.RUNNING
        self.started_at = time.time()
        self.ended_at: float | None = None
        self.error: str | None = None
        self.output: str | None = None
        self.cancel_kind: CancelKind | None = None
        self.cancel_reason: str | None = None
        self.token = CancelToken()
        self.task: asyncio.Task[None] | None = None
        self.done: asyncio.Future[None] = loop.create_future()
        self.stream = _Stream() if streamed else None
        self._seq = writer.last_seq if writer is not None else 0
        self._encoder = LineEncoder(run_id)
        self._loop_thread = threading.get_ident()
        """Runs are started on the loop's thread; emits from elsewhere hop over to publish."""
        self._emit_lock = threading.Lock()
        self._ended = False
        self._node_counts: dict[str, int] = {}
        self._approvals: dict[str, _PendingApproval] = {}
        self._tool_nodes: dict[str, tuple[str, float]] = {}
        self._llm_node: tuple[str, float] | None = None
        self._llm_call = _ModelCall()
        """What the open model call was sent, and what it has streamed so far."""
        self._content: list[str] = []
        self._chunk_index = 0
        self.timeout_handle: asyncio.TimerHandle | None = None
        self._redeliver: asyncio.TimerHandle | None = None
        self.ledger_failure: str | None = None
        """Why the ledger could not be written; the run then ends failed, saying so."""
        self.retired = False
        """The manager has moved the run from its live runs to its finished ones."""
        self.caller: asyncio.Task[Any] | None = None
        self.in_thread = False
        self.executor_name: str | None = None
        """Where the agent executes, when not on this loop (``run_started.executor``)."""
        """A synchronous agent: cancelling the task would not stop its thread, the token does."""

    # -- recording -----------------------------------------------------------

    def emit(self, event_type: type[Any], payload: Any) -> RunEvent:
        """Number, write and publish one event; safe from any thread.

        Never raises for the ledger: the first write that fails stops the
        run (it ends ``failed``, saying why) and nothing more is written to
        the file, so every line already there stays whole. The event is
        still published, so live watchers see how the run ends. After the
        run's last event nothing more is recorded (an agent left running
        past its cancel cannot add to a finished run).
        """
        with self._emit_lock:
            if self._ended:
                dropped: RunEvent = event_type(
                    run_id=self.id, seq=self._seq, time=utc_now(), payload=payload
                )
                return dropped
            self._seq += 1
            seq = self._seq
            moment = utc_now()
            line = self._encoder.encode(seq, moment, event_type, payload)
            failed = None
            if self.writer is not None and self.ledger_failure is None:
                try:
                    self.writer.write(line, last=event_type is RunCompleted)
                except OSError as error:
                    failed = self.ledger_failure = _write_failure(self.writer.path, error)
                    if event_type is RunCompleted:  # watchers must see the end it really had
                        payload = RunCompletedPayload(status="error", error=failed)
                        line = self._encoder.encode(seq, moment, event_type, payload)
            if event_type is RunCompleted:
                self._ended = True
        if failed is not None:
            self._stop_for(failed)
        event: RunEvent = event_type(run_id=self.id, seq=seq, time=moment, payload=payload)
        if threading.get_ident() == self._loop_thread:
            self.hub.publish(event, line[:-1])
        else:
            self.loop.call_soon_threadsafe(self.hub.publish, event, line[:-1])
        return event

    def record_started(self) -> None:
        value, truncated = cap_payload_value(self.input)
        digest = hashlib.sha256(_encoder.encode(self.input)).hexdigest()
        self.emit(
            RunStarted,
            RunStartedPayload(
                skill=self.agent_name,
                agent=self.agent_name,
                input=value,
                input_digest=digest,
                truncated=True if truncated else None,
                parent_run_id=self.parent_run_id,
                resumed_from=self.resumed_from,
                pid=os.getpid(),
                host=_HOST,
                writer=self.writer_name,
                flavor="py",
                executor=self.executor_name,
            ),
        )

    def next_node(self, kind: str, name: str) -> str:
        """A node id ``kind:name#n``, counted per run."""
        key = f"{kind}:{name}"
        count = self._node_counts.get(key, 0) + 1
        self._node_counts[key] = count
        return f"{key}#{count}"

    # -- tool and model calls (recorders and streams share these) -------------

    def tool_started(self, name: str, arguments: Any, call_id: str | None = None) -> str:
        """Record a tool call's start; return its call id."""
        self._close_llm_node(success=True)
        call_id = call_id or f"call_{secrets.token_hex(8)}"
        node_id = self.next_node("tool", name)
        self._tool_nodes[call_id] = (node_id, time.monotonic())
        self.emit(NodeEnter, NodeEnterPayload(node_id=node_id, node_name=name))
        value, truncated = cap_payload_value(arguments)
        self.emit(
            ToolCall,
            ToolCallPayload(
                call_id=call_id,
                node_id=node_id,
                name=name,
                arguments=value,
                truncated=True if truncated else None,
            ),
        )
        return call_id

    def tool_finished(self, call_id: str, output: Any, *, is_error: bool) -> None:
        """Record a tool call's outcome (starting it first if it was never seen)."""
        node = self._tool_nodes.pop(call_id, None)
        if node is None:
            self.tool_started("tool", None, call_id)
            node = self._tool_nodes.pop(call_id)
        node_id, began = node
        text = output if isinstance(output, str) or output is None else _as_text(output)
        value, truncated = cap_payload_value(text)
        self.emit(
            ToolResult,
            ToolResultPayload(
                call_id=call_id,
                node_id=node_id,
                output=value,
                truncated=True if truncated else None,
                is_error=is_error,
            ),
        )
        self.emit(
            NodeExit,
            NodeExitPayload(
                node_id=node_id,
                duration_micros=int((time.monotonic() - began) * 1_000_000),
                success=not is_error,
            ),
        )

    def llm_node(self, name: str = "default") -> str:
        """The open model-call node, opening one if none is (the request is sent now)."""
        if self._llm_node is None:
            node_id = self.next_node("llm", name)
            self._llm_node = (node_id, time.monotonic())
            self._llm_call = _ModelCall(requested=True)
            self.emit(NodeEnter, NodeEnterPayload(node_id=node_id, node_name=name))
        return self._llm_node[0]

    def llm_requested(self, name: str, messages: Any = None) -> str:
        """A model call's request is sent: its node opens now (closing one left open)."""
        self._close_llm_node(success=True)
        node_id = self.llm_node(name)
        self._llm_call.messages = messages
        return node_id

    def llm_chunk(
        self, text: str, *, reasoning: bool = False, name: str = "default", streamed: bool = True
    ) -> None:
        """A piece of the model's answer; ``streamed`` when it came as the model made it
        (so its first one times the wait for the first token)."""
        opened = self._llm_node is not None
        node_id = self.llm_node(name)
        call = self._llm_call
        if not opened:
            call.requested = False  # no request opened it: the wait before it is unknown
        elif streamed and call.first_token is None and self._llm_node is not None:
            call.first_token = time.monotonic() - self._llm_node[1]
        if self.record_content:
            call.parts.append((reasoning, text))
        payload = ChunkPayload(index=self._chunk_index, delta=text, node_id=node_id)
        self._chunk_index += 1
        self.emit(ReasoningChunk if reasoning else LlmChunk, payload)

    def llm_finished(self, usage: LlmCallPayload, *, success: bool = True) -> None:
        """The model call's ``llm_call``, with what it was sent and answered unless the run
        records no content, then its node's end."""
        node_id = self.llm_node(usage.model or "default")
        usage.node_id = node_id
        call = self._llm_call
        if usage.first_token_micros is None and call.first_token is not None and call.requested:
            usage.first_token_micros = int(call.first_token * 1_000_000)
        if not self.record_content:
            usage.messages = usage.response = None
        else:
            if usage.messages is None:
                usage.messages = call.messages
            if usage.response is None:
                usage.response = call.answer()
            usage.messages, cut = _capped(usage.messages)
            usage.response, response_cut = _capped(usage.response)
            if cut or response_cut:
                usage.truncated = True
        self.emit(LlmCall, usage)
        self._close_llm_node(success=success)

    def _close_llm_node(self, *, success: bool) -> None:
        if self._llm_node is None:
            return
        node_id, began = self._llm_node
        self._llm_node = None
        self._llm_call = _ModelCall()
        self.emit(
            NodeExit,
            NodeExitPayload(
                node_id=node_id,
                duration_micros=int((time.monotonic() - began) * 1_000_000),
                success=success,
            ),
        )

    def record_error(self, message: str, node_id: str | None = None) -> None:
        self.emit(ErrorEvent, ErrorPayload(message=message, node_id=node_id))

    def on_agent_event(self, event: AgentEvent) -> None:
        """Turn one streamed agent event into ledger events."""
        if self.stream is not None:
            self.stream.add(event)
        match event:
            case ModelRequest(model=model, messages=messages):
                self.llm_requested(model or "default", messages)
            case Content(text=text):
                self._content.append(text)
                self.llm_chunk(text, streamed=self.stream is not None)
            case Thinking(text=text):
                self.llm_chunk(text, reasoning=True, streamed=self.stream is not None)
            case ToolCallEvent(status="starting" | "executing"):
                if event.id not in self._tool_nodes:
                    self.tool_started(event.name, event.arguments, event.id)
            case ToolCallEvent() | ToolResultEvent():
                if event.id not in self._tool_nodes:
                    arguments = event.arguments if isinstance(event, ToolCallEvent) else None
                    self.tool_started(event.name or "tool", arguments, event.id)
                self.tool_finished(event.id, event.result, is_error=event.status == "error")
            case Complete():
                self.llm_finished(
                    LlmCallPayload(
                        model=event.model,
                        provider=event.provider,
                        prompt_tokens=event.prompt_tokens,
                        output_tokens=event.output_tokens,
                        cost_usd=event.cost_usd,
                        messages=event.messages,
                        response=event.response,
                        first_token_micros=event.first_token_micros,
                    )
                )
            case AgentError(message=message):
                node = self._llm_node[0] if self._llm_node is not None else None
                self.record_error(message, node)
                self._close_llm_node(success=False)

    @property
    def streamed_output(self) -> str:
        return "".join(self._content)

    # -- approvals -----------------------------------------------------------

    def request_approval(
        self, prompt: str, *, name: str = "approval", timeout: float | None = None
    ) -> concurrent.futures.Future[Approval]:
        """Open an approval gate; the future resolves when someone decides (or it times out)."""
        approval_id = f"ap_{secrets.token_hex(8)}"
        node_id = self.next_node("approval", name)
        future: concurrent.futures.Future[Approval] = concurrent.futures.Future()
        pending = _PendingApproval(node_id, future)
        self._approvals[approval_id] = pending
        self.emit(NodeEnter, NodeEnterPayload(node_id=node_id, node_name=name))
        self.emit(
            ApprovalRequest,
            ApprovalRequestPayload(approval_id=approval_id, prompt=prompt, timeout_seconds=timeout),
        )
        if timeout is not None:

            def expire() -> None:
                if approval_id in self._approvals:
                    self.resolve_approval(approval_id, False, "timed out", "timeout")

            def arm() -> None:
                pending.timer = self.loop.call_later(timeout, expire)

            if _on_loop(self.loop):
                arm()
            else:
                self.loop.call_soon_threadsafe(arm)
        return future

    def resolve_approval(
        self, approval_id: str | None, approved: bool, reason: str | None, source: str | None
    ) -> Approval:
        """Decide a pending approval (the only one, when ``approval_id`` is ``None``)."""
        if approval_id is None:
            if len(self._approvals) != 1:
                raise ApprovalNotFound(
                    f"run {self.id} has {len(self._approvals)} pending approvals; name one"
                )
            approval_id = next(iter(self._approvals))
        pending = self._approvals.pop(approval_id, None)
        if pending is None:
            raise ApprovalNotFound(f"no pending approval {approval_id} on run {self.id}")
        if pending.timer is not None:
            pending.timer.cancel()
        decision = Approval(approved, reason, source, approval_id)
        self.emit(
            ApprovalResponse,
            ApprovalResponsePayload(
                approval_id=approval_id, approved=approved, reason=reason, source=source
            ),
        )
        self.emit(
            NodeExit,
            NodeExitPayload(
                node_id=pending.node_id,
                duration_micros=int((time.monotonic() - pending.started) * 1_000_000),
                success=approved,
            ),
        )
        if not pending.future.done():
            pending.future.set_result(decision)
        return decision

    @property
    def pending_approvals(self) -> list[str]:
        return list(self._approvals)

    # -- cancelling and ending -----------------------------------------------

    def request_cancel(
        self,
        reason: str | None = None,
        *,
        source: str = "api",
        kind: CancelKind = CancelKind.USER,
        requested_by: str | None = None,
    ) -> bool:
        """Ask the run to stop; ``False`` if it already ended or was already asked."""
        if self.status is not Status.RUNNING or self.cancel_kind is not None:
            return False
        self.cancel_kind = kind
        self.cancel_reason = reason
        self.emit(
            CancelRequested,
            CancelRequestedPayload(
                reason=_said(reason, kind), source=source, requested_by=requested_by
            ),
        )
        self._stop_for(_said(reason, kind))
        return True

    def _stop_for(self, reason: str) -> None:
        """Make the agent stop: its token, its approvals, and (async agents) its task."""
        self.token.cancel(reason)
        for approval_id in list(self._approvals):
            pending = self._approvals.pop(approval_id, None)
            if pending is None:
                continue
            if pending.timer is not None:
                pending.timer.cancel()
            pending.future.cancel()
        if _on_loop(self.loop):
            self._interrupt()
        else:
            self.loop.call_soon_threadsafe(self._interrupt)

    def _interrupt(self) -> None:
        """Cancel the task, and again every :data:`REDELIVER_EVERY` until it ends.

        An agent may swallow one ``CancelledError`` (a retry wrapper does);
        the cancel is then delivered again, level-triggered like a cancel
        scope, until the run ends or the manager gives up on it. A
        synchronous agent's thread cannot be interrupted: only its token tells it.
        """
        self._redeliver = None
        task = self.task
        if self.status is not Status.RUNNING or task is None or task.done() or self.in_thread:
            return
        task.cancel(self.token.reason)
        self._redeliver = self.loop.call_later(REDELIVER_EVERY, self._interrupt)

    def abandon(self) -> None:
        """Give up on an agent that did not stop: record it cancelled at shutdown.

        Its task (or thread) may go on; nothing it does is recorded any more.
        """
        if self.cancel_kind is None:
            self.cancel_kind = CancelKind.SHUTDOWN
        if self.cancel_reason is None:
            self.cancel_reason = "the manager is shutting down"
        self.finish(Status.CANCELED)

    def finish(
        self, status: Status, *, output: str | None = None, error: str | None = None
    ) -> None:
        """Record the end, release the ledger, wake everyone waiting; never raises for the ledger.

        A run whose ledger could not be written ends ``failed`` with that reason,
        however the agent ended.
        """
        if self.status is not Status.RUNNING:
            return
        try:
            self._close_llm_node(success=status is Status.SUCCEEDED)
            for call_id in list(self._tool_nodes):
                self.tool_finished(call_id, "interrupted", is_error=True)
            if self.ledger_failure is not None:
                status, output, error = Status.FAILED, None, self.ledger_failure
            if status is Status.CANCELED:
                kind = self.cancel_kind or CancelKind.USER
                error = f"canceled: {_said(self.cancel_reason, kind)}"
                payload = RunCompletedPayload(status="cancelled", error=error, reason=kind.value)
            elif status is Status.FAILED:
                payload = RunCompletedPayload(status="error", error=error)
            else:
                value, truncated = cap_payload_value(output)
                payload = RunCompletedPayload(
                    status="ok", output=value, truncated=True if truncated else None
                )
            self.emit(RunCompleted, payload)
            if self.ledger_failure is not None:  # run_completed itself could not be written
                status, output, error = Status.FAILED, None, self.ledger_failure
        finally:
            with self._emit_lock:
                self._ended = True
            self.status = status
            self.output = output
            self.error = error
            self.ended_at = time.time()
            self._release()

    def _release(self) -> None:
        """Let go of everything the run held; each step is independent of the others."""
        if self.writer is not None:
            try:
                self.writer.close()
            except OSError as error:  # the lock goes with the descriptor anyway
                if self.ledger_failure is None:
                    self.error = self.ledger_failure = _write_failure(self.writer.path, error)
                    self.status = Status.FAILED
        for timer in (self.timeout_handle, self._redeliver):
            if timer is not None:
                timer.cancel()
        if self.stream is not None:
            self.stream.close()
        if not self.done.done():
            self.done.set_result(None)


def _capped(conversation: Any) -> tuple[Any, bool]:
    """A conversation under the cap: the newest messages of a list, else the value cut as
    any user data is; and whether anything was left out."""
    if conversation is None:
        return None, False
    if isinstance(conversation, list):
        return cap_messages(conversation)
    return cap_payload_value(conversation)


class _ModelCall:
    """The open model call: what it was sent, and what it has streamed."""

    __slots__ = ("first_token", "messages", "parts", "requested")

    def __init__(self, *, requested: bool = False) -> None:
        self.requested = requested
        """Its node opened when the request was sent (not at its first text)."""
        self.messages: Any = None
        self.first_token: float | None = None
        """Seconds from the request to the first streamed piece of the answer."""
        self.parts: list[tuple[bool, str]] = []
        """(reasoning?, text) of each piece streamed, in order."""

    def answer(self) -> list[dict[str, Any]] | None:
        """What was streamed, as one assistant message: thinking and text, each gathered."""
        if not self.parts:
            return None
        content: list[dict[str, Any]] = []
        pieces: list[str] = []
        for number, (reasoning, text) in enumerate(self.parts):
            pieces.append(text)
            last = number + 1 == len(self.parts)
            if last or self.parts[number + 1][0] != reasoning:
                kind = "thinking" if reasoning else "text"
                content.append({"type": kind, "text": "".join(pieces)})
                pieces = []
        return [{"role": "assistant", "content": content}]


def _write_failure(path: Path, error: OSError) -> str:
    """What a run's error says when its ledger could not be written."""
    reason = error.strerror or str(error) or type(error).__name__
    return f"the run's ledger could not be written ({path}): {reason}"


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether the calling thread is running ``loop``."""
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _as_text(value: Any) -> str:
    try:
        return _encoder.encode(value).decode()
    except (TypeError, ValueError, msgspec.EncodeError):
        return repr(value)


_HOST: Final = socket.gethostname()


def _said(reason: str | None, kind: CancelKind) -> str:
    """What a cancel's reason reads as: the one given, else why it was stopped.

    A user who gave no reason gets ``no reason given``: the kind's word
    (``user``) alone read as the reason in every table (``canceled: user``).
    """
    if reason:
        return reason
    return "no reason given" if kind is CancelKind.USER else kind.value
