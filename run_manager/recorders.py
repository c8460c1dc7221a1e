"""Recording what a non-streaming agent does: tool calls, model calls, approval gates.

Agent code wraps its calls in these, and the run it is part of records the
same ledger events a streamed run would. Outside a run they do nothing,
so the same agent code runs with or without a manager::

    async def run(self, input: str) -> str:
        async with tool_call("search", {"q": input}) as call:
            call.output = await search(input)
        asked = [{"role": "user", "content": f"Answer from: {call.output}"}]
        async with model_call("claude-sonnet", provider="anthropic", messages=asked) as model:
            text = await ask(asked)
            model.usage(prompt_tokens=812, output_tokens=41, cost_usd=0.003)
            model.response = [{"role": "assistant", "content": text}]
        if not (await approval("Send the answer?", timeout_seconds=600)).approved:
            return "not sent"
        return text

A model call's ``messages`` (what it was sent) and ``response`` (what it
answered; by default, the text streamed with :meth:`ModelCallRecord.chunk`)
are in the shape :mod:`ledger_reader.messages` reads; the manager leaves
them out when told not to record content.

Both ``with`` and ``async with`` work, so a synchronous agent in its thread
records the same way; :func:`wait_for_approval` is the blocking gate.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, ParamSpec, Self, TypeVar

from ledger_reader.events import LlmCallPayload
from run_manager.budget import gate, gate_sync
from run_manager.current import current_run

if TYPE_CHECKING:
    from run_manager.run import Approval, Run

P = ParamSpec("P")
R = TypeVar("R")


class _Recording:
    """A block that records a call: ``with`` in a thread, ``async with`` on the loop.

    The call starts only once the run's budgets allow it (:mod:`run_manager.budget`):
    it may wait on the question a budget asks, or stop the run at a limit.
    """

    _run: Run | None

    def _begin(self) -> Self:
        raise NotImplementedError

    def _end(self, error: BaseException | None) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        if self._run is not None:
            gate_sync(self._run)
        return self._begin()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._end(error)

    async def __aenter__(self) -> Self:
        if self._run is not None:
            await gate(self._run)
        return self._begin()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._end(error)


class ToolCallRecord(_Recording):
    """A tool call in progress: set ``output`` (or ``error``) before the block ends.

    An exception escaping the block is recorded as the call's error and raised on.
    """

    def __init__(self, name: str, arguments: Any) -> None:
        self.name = name
        """The tool's name."""
        self.arguments = arguments
        """What it was called with, as the ledger's ``tool_call`` keeps it."""
        self.output: Any = None
        """What the tool returned: set it in the block (JSON-like; capped like any data)."""
        self.error: str | None = None
        """Set instead of :attr:`output` for a call that failed without raising."""
        self.call_id: str | None = None
        """The call's id in the ledger, once the block has begun inside a run."""
        self._run = current_run()

    def _begin(self) -> Self:
        if self._run is not None:
            self.call_id = self._run.tool_started(self.name, self.arguments)
        return self

    def _end(self, error: BaseException | None) -> None:
        if self._run is None or self.call_id is None:
            return
        if error is not None:
            message = str(error) or type(error).__name__
            self._run.tool_finished(self.call_id, message, is_error=True)
        elif self.error is not None:
            self._run.tool_finished(self.call_id, self.error, is_error=True)
        else:
            self._run.tool_finished(self.call_id, self.output, is_error=False)


def tool_call(name: str, arguments: Any = None) -> ToolCallRecord:
    """Record a tool call around a block (``with`` or ``async with``).

    The ledger gets ``tool_call`` when the block begins and ``tool_result`` when it
    ends, so the call's time is the block's, and a run that hangs in a tool shows
    which one.

    Args:
        name: the tool's name (the app's tool-call statistics group by it).
        arguments: what the tool is called with (JSON-like).

    Returns:
        The call, whose :attr:`~ToolCallRecord.output` the block sets.
    """
    return ToolCallRecord(name, arguments)


class ModelCallRecord(_Recording):
    """A model call in progress: stream text with :meth:`chunk`, report :meth:`usage`.

    The block starts when the request is sent: the call's time is the block's, and the
    ``messages`` given are recorded then, so a call still waiting shows what it was sent.
    A call the block leaves by an exception is recorded without an answer: ``cancelled``
    when the run was cancelled while it waited, else ``error``.
    """

    def __init__(self, model: str | None, provider: str | None, messages: Any = None) -> None:
        self.model = model
        """The model's name (the call's node in the timeline is named after it)."""
        self.provider = provider
        """Who serves the model."""
        self.messages: Any = messages
        """What the model was sent: ``[{"role": ..., "content": ...}, ...]``."""
        self.response: Any = None
        """What it answered, the same shape; when left ``None``, the text streamed."""
        self._usage = LlmCallPayload(model=model, provider=provider)
        self._run = current_run()

    def chunk(self, text: str, *, reasoning: bool = False) -> None:
        """Record a piece of streamed text (or reasoning)."""
        if self._run is not None:
            self._run.llm_chunk(text, reasoning=reasoning, name=self.model or "default")

    def usage(
        self,
        *,
        prompt_tokens: int | None = None,
        output_tokens: int | None = None,
        cache_read_tokens: int | None = None,
        cache_write_tokens: int | None = None,
        cost_usd: float | None = None,
    ) -> None:
        """Record the call's token counts and cost."""
        usage = self._usage
        usage.prompt_tokens = prompt_tokens
        usage.output_tokens = output_tokens
        usage.cache_read_tokens = cache_read_tokens
        usage.cache_write_tokens = cache_write_tokens
        usage.cost_usd = cost_usd

    def _begin(self) -> Self:
        if self._run is not None:
            self._run.llm_node(
                self.model or "default", provider=self.provider, messages=self.messages
            )
        return self

    def _end(self, error: BaseException | None) -> None:
        if self._run is None:
            return
        if isinstance(error, asyncio.CancelledError):
            self._usage.status = "cancelled"
        elif error is not None:
            self._run.record_error(str(error) or type(error).__name__, self._run.llm_node())
            self._usage.status = "error"
        self._usage.messages = self.messages
        self._usage.response = self.response
        self._run.llm_finished(self._usage, success=error is None)


def model_call(
    model: str | None = None, *, provider: str | None = None, messages: Any = None
) -> ModelCallRecord:
    """Record a model call around a block (``with`` or ``async with``).

    The block is the call: begin it when the request is sent, so the wait for the
    answer counts as the model's time. It writes one ``llm_call`` at its end (with
    the tokens and cost given to :meth:`~ModelCallRecord.usage`) and an
    ``llm_chunk`` for each :meth:`~ModelCallRecord.chunk`.

    Args:
        model: the model's name.
        provider: who serves it (``anthropic``, ``openai``).
        messages: what the model is sent (``[{"role": ..., "content": ...}, ...]``); left
            out of the ledger when the manager does not record content.

    Returns:
        The call, to report chunks, usage and the ``response`` on.
    """
    return ModelCallRecord(model, provider, messages)


async def approval(
    prompt: str, *, name: str = "approval", timeout_seconds: float | None = None
) -> Approval:
    """Wait until someone approves or denies (``Manager.approve``), or the timeout passes.

    The run shows as waiting (``handle.info().pending_approvals``, the app's ``a``
    and ``d``, the attach API's ``approve``) until it is decided. Outside a run
    there is nobody to ask: it approves at once.

    Args:
        prompt: the question, as people deciding it read it.
        name: the gate's node in the run's timeline.
        timeout_seconds: after this long undecided it is denied with the reason
            ``timed out``; ``None`` waits as long as the run does.

    Returns:
        The decision: ``approved``, with the ``reason`` and ``source`` its decider gave.
    """
    from run_manager.run import Approval

    run = current_run()
    if run is None:
        return Approval(approved=True, reason="no run to ask", source="auto")
    future = run.request_approval(prompt, name=name, timeout=timeout_seconds)
    return await asyncio.wrap_future(future)


def wait_for_approval(
    prompt: str, *, name: str = "approval", timeout_seconds: float | None = None
) -> Approval:
    """:func:`approval` for a synchronous agent in its thread (blocks it)."""
    from run_manager.agents import Canceled
    from run_manager.run import Approval

    run = current_run()
    if run is None:
        return Approval(approved=True, reason="no run to ask", source="auto")
    future = run.request_approval(prompt, name=name, timeout=timeout_seconds)
    try:
        return future.result()
    except Exception as error:  # cancelled with the run
        raise Canceled(run.token.reason or "canceled") from error


def tool(function: Callable[P, R] | None = None, *, name: str | None = None) -> Any:
    """Decorate a tool function (sync or async) so that every call is recorded."""

    def decorate(inner: Callable[P, Any]) -> Callable[P, Any]:
        label = str(name or getattr(inner, "__name__", "tool"))
        if inspect.iscoroutinefunction(inner):

            @functools.wraps(inner)
            async def recorded_async(*args: P.args, **kwargs: P.kwargs) -> Any:
                async with tool_call(label, _arguments(args, kwargs)) as call:
                    call.output = await inner(*args, **kwargs)
                    return call.output

            return recorded_async

        @functools.wraps(inner)
        def recorded(*args: P.args, **kwargs: P.kwargs) -> Any:
            with tool_call(label, _arguments(args, kwargs)) as call:
                call.output = inner(*args, **kwargs)
                return call.output

        return recorded

    return decorate(function) if function is not None else decorate


def _arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if args and kwargs:
        return {"args": list(args), **kwargs}
    return dict(kwargs) if kwargs else list(args)


def cancel_requested() -> bool:
    """Whether the run this code is part of was asked to stop (for polling loops)."""
    run = current_run()
    return run is not None and run.token.cancelled


__all__ = [
    "Awaitable",
    "ModelCallRecord",
    "ToolCallRecord",
    "approval",
    "cancel_requested",
    "model_call",
    "tool",
    "tool_call",
    "wait_for_approval",
]
