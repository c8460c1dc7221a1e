"""What a run records of its tool and model calls, from whichever side they come.

A call made through the bindings (:mod:`run_manager.recorders`, the
adapters) and a streamed :data:`~run_manager.agents.AgentEvent` become the
same ledger events: ``node_enter``, ``tool_call``, ``tool_result``,
``node_exit`` for a tool; ``node_enter``, ``llm_chunk`` or
``reasoning_chunk``, ``llm_call``, ``node_exit`` for a model call.
:class:`CallRecording` is the part of :class:`~run_manager.run.Run` that
maps them; the run numbers, writes and publishes each event
(:meth:`~run_manager.run.Run.emit`).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

import msgspec

from ledger_reader import RunEvent
from ledger_reader.events import (
    ChunkPayload,
    ErrorEvent,
    ErrorPayload,
    LlmCall,
    LlmCallPayload,
    LlmChunk,
    NodeEnter,
    NodeEnterPayload,
    NodeExit,
    NodeExitPayload,
    ReasoningChunk,
    ToolCall,
    ToolCallPayload,
    ToolResult,
    ToolResultPayload,
)
from run_manager.agents import (
    AgentError,
    AgentEvent,
    Complete,
    Content,
    ModelRequest,
    Thinking,
    ToolCallEvent,
    ToolResultEvent,
)
from run_manager.ledger import cap_messages, cap_payload_value

if TYPE_CHECKING:
    from run_manager.budget import BudgetAccount

STREAM_BUFFER: Final = 10_000
"""Agent events a streamed run keeps for :meth:`Handle.events` readers."""

_encoder = msgspec.json.Encoder()


class AgentEventStream:
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


class CallRecording:
    """A run's tool and model calls as ledger events (the base of :class:`Run`).

    The run sets the state below in its ``__init__`` and numbers, writes and
    publishes what :meth:`emit` is given.
    """

    record_content: bool
    """Whether an ``llm_call`` keeps what the model was sent and answered."""
    stream: AgentEventStream | None
    _node_counts: dict[str, int]
    _tool_nodes: dict[str, tuple[str, float]]
    _llm_node: tuple[str, float] | None
    _llm_call: ModelCallSoFar
    _content: list[str]
    _chunk_index: int
    budgets: tuple[BudgetAccount, ...]
    """The budgets its model calls spend from (:mod:`run_manager.budget`)."""

    def emit(self, event_type: type[Any], payload: Any) -> RunEvent:
        """Number, write and publish one event (the run's)."""
        raise NotImplementedError

    def check_budgets(self) -> None:
        """Check the run's budgets now, without waiting (the run's)."""
        raise NotImplementedError

    def next_node(self, kind: str, name: str) -> str:
        """A node id ``kind:name#n``, counted per run."""
        key = f"{kind}:{name}"
        count = self._node_counts.get(key, 0) + 1
        self._node_counts[key] = count
        return f"{key}#{count}"

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

    def llm_node(
        self, name: str = "default", *, provider: str | None = None, messages: Any = None
    ) -> str:
        """The open model-call node, opening one if none is (the request is sent now).

        Its ``node_enter`` says the model and what it is sent (unless the run records no
        content), so the call shows what it was asked while it waits, and after a cancel.
        """
        if self._llm_node is None:
            if self.budgets:  # for a call no gate checked before it started (on Ray)
                self.check_budgets()
            node_id = self.next_node("llm", name)
            self._llm_node = (node_id, time.monotonic())
            call = self._llm_call = ModelCallSoFar(requested=True)
            call.model = None if name == "default" else name
            call.provider = provider
            if self.record_content and messages is not None:
                call.messages, call.cut = _capped(messages)
            self.emit(
                NodeEnter,
                NodeEnterPayload(
                    node_id=node_id,
                    node_name=name,
                    model=call.model,
                    provider=provider,
                    messages=call.messages,
                    truncated=True if call.cut else None,
                ),
            )
        return self._llm_node[0]

    def llm_requested(self, name: str, messages: Any = None) -> str:
        """A model call's request is sent: its node opens now (closing one left open)."""
        self._close_llm_node(success=True)
        return self.llm_node(name, messages=messages)

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
        if self.budgets:  # while the answer streams in: a limit stops it at once
            self.check_budgets()
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
        if usage.model is None:
            usage.model = call.model
        if usage.provider is None:
            usage.provider = call.provider
        if usage.first_token_micros is None and call.first_token is not None and call.requested:
            usage.first_token_micros = int(call.first_token * 1_000_000)
        if not self.record_content:
            usage.messages = usage.response = None
        else:
            cut = False
            if usage.messages is None:  # as its node_enter said it, capped there
                usage.messages, cut = call.messages, call.cut
            else:
                usage.messages, cut = _capped(usage.messages)
            if usage.response is None:
                usage.response = call.answer()
            usage.response, response_cut = _capped(usage.response)
            if cut or response_cut:
                usage.truncated = True
        self.emit(LlmCall, usage)
        for account in self.budgets:
            account.add(usage)
        self._close_llm_node(success=success)

    def llm_unanswered(self, status: str) -> None:
        """End the open model call, if any, with no answer: its ``llm_call`` says ``status``
        (``cancelled``, ``error``) with what it was sent and what it had streamed."""
        if self._llm_node is not None:
            self.llm_finished(LlmCallPayload(status=status), success=False)

    def _close_llm_node(self, *, success: bool) -> None:
        if self._llm_node is None:
            return
        node_id, began = self._llm_node
        self._llm_node = None
        self._llm_call = ModelCallSoFar()
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
                        cost_estimated=True if event.cost_estimated else None,
                        messages=event.messages,
                        response=event.response,
                        first_token_micros=event.first_token_micros,
                    )
                )
            case AgentError(message=message):
                node = self._llm_node[0] if self._llm_node is not None else None
                self.record_error(message, node)
                self.llm_unanswered("error")

    @property
    def streamed_output(self) -> str:
        return "".join(self._content)


def _capped(conversation: Any) -> tuple[Any, bool]:
    """A conversation under the cap: the newest messages of a list, else the value cut as
    any user data is; and whether anything was left out."""
    if conversation is None:
        return None, False
    if isinstance(conversation, list):
        return cap_messages(conversation)
    return cap_payload_value(conversation)


class ModelCallSoFar:
    """The open model call: what it was sent, and what it has streamed."""

    __slots__ = ("cut", "first_token", "messages", "model", "parts", "provider", "requested")

    def __init__(self, *, requested: bool = False) -> None:
        self.requested = requested
        """Its node opened when the request was sent (not at its first text)."""
        self.model: str | None = None
        self.provider: str | None = None
        self.messages: Any = None
        """What it was sent, under the cap (as its ``node_enter`` wrote it)."""
        self.cut = False
        """Older messages were left out of ``messages``."""
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


def _as_text(value: Any) -> str:
    try:
        return _encoder.encode(value).decode()
    except (TypeError, ValueError, msgspec.EncodeError):
        return repr(value)
