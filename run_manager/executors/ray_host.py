"""The Ray executor's side in the worker: the actor that runs agents and the run it hands them.

A :class:`RunHost` is a long-lived async actor executing many runs at once.
Each run's agent finds a stand-in for the manager's run on its context,
which records what :func:`~run_manager.tool_call`,
:func:`~run_manager.model_call` and :func:`~run_manager.approval` say as
*calls* and sends them back in batches; nothing here numbers or writes
events, the manager does (:mod:`run_manager.executors.ray`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import itertools
import os
import secrets
import socket
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Final, cast

import msgspec
import ray

from ledger_reader.events import LlmCallPayload
from run_manager.agents import (
    AgentError,
    AgentEvent,
    Canceled,
    CancelToken,
    FunctionAgent,
    ToolCallEvent,
    ToolResultEvent,
    as_runnable,
)
from run_manager.current import context_of
from run_manager.run import Approval

if TYPE_CHECKING:
    from run_manager.run import Run

BATCH_CALLS: Final = 256
"""Recorded calls that make a worker send a batch at once."""

BATCH_SECONDS: Final = 0.004
"""How long a worker lets a batch gather after its first call."""

OPEN_MODEL_NODE: Final = "llm:(open)"
"""What the worker's stand-in answers for "the open model node": the manager knows its id."""

EARLY_CANCELS_KEPT: Final = 4096
"""Cancels a host remembers for runs it has not started yet (or has already finished)."""

Call = tuple[Any, ...]
"""One recorded call: its name first, then its arguments."""


class _WorkerRun:
    """Stands in for the manager's run inside a Ray worker: records calls, sends them in batches.

    It answers the calls the recorders and adapters make on a run (``tool_started``,
    ``llm_chunk``, ``request_approval`` ...) by queueing them; nothing here
    numbers or writes events, the manager does.
    """

    budgets: tuple[Any, ...] = ()
    """None here: the manager checks a run's budgets as its calls arrive."""

    def __init__(self, run_id: str, loop: asyncio.AbstractEventLoop) -> None:
        self.id = run_id
        self.token = CancelToken()
        self.ready = asyncio.Event()
        """Set when the first call of a batch arrives, and when a batch is full."""
        self._loop = loop
        self._loop_thread = threading.get_ident()
        self._lock = threading.Lock()
        self._calls: list[Call] = []
        self._approvals: dict[int, concurrent.futures.Future[Approval]] = {}
        self._tickets = itertools.count(1)

    # the batch

    def _record(self, call: Call) -> None:
        with self._lock:
            self._calls.append(call)
            count = len(self._calls)
        if count == 1 or count >= BATCH_CALLS:
            if threading.get_ident() == self._loop_thread:
                self.ready.set()
            else:  # a synchronous agent's thread
                self._loop.call_soon_threadsafe(self.ready.set)

    def take(self) -> list[Call]:
        with self._lock:
            calls, self._calls = self._calls, []
        return calls

    @property
    def pending(self) -> int:
        return len(self._calls)

    # what the recorders and adapters call

    def tool_started(self, name: str, arguments: Any, call_id: str | None = None) -> str:
        call_id = call_id or f"call_{secrets.token_hex(8)}"
        self._record(("tool_started", name, _portable(arguments), call_id))
        return call_id

    def tool_finished(self, call_id: str, output: Any, *, is_error: bool) -> None:
        self._record(("tool_finished", call_id, _portable(output), is_error))

    def llm_node(
        self, name: str = "default", *, provider: str | None = None, messages: Any = None
    ) -> str:
        self._record(("llm_node", name, provider, _portable(messages)))
        return OPEN_MODEL_NODE

    def llm_chunk(self, text: str, *, reasoning: bool = False, name: str = "default") -> None:
        self._record(("llm_chunk", text, reasoning, name))

    def llm_finished(self, usage: LlmCallPayload, *, success: bool = True) -> None:
        self._record(("llm_finished", msgspec.structs.replace(usage), success))

    def record_error(self, message: str, node_id: str | None = None) -> None:
        self._record(("error", message, node_id))

    async def record(self, event: AgentEvent) -> None:
        """As the manager's run records an agent event (its budgets are checked there)."""
        self.on_agent_event(event)

    def on_agent_event(self, event: AgentEvent) -> None:
        self._record(("agent_event", _portable_event(event)))

    def request_approval(
        self, prompt: str, *, name: str = "approval", timeout: float | None = None
    ) -> concurrent.futures.Future[Approval]:
        future: concurrent.futures.Future[Approval] = concurrent.futures.Future()
        with self._lock:  # a synchronous agent asks from its thread
            ticket = next(self._tickets)
            self._approvals[ticket] = future
        self._record(("approval", ticket, prompt, name, timeout))
        return future

    # what the manager sends

    def decide(self, ticket: int, decision: Approval) -> None:
        with self._lock:
            future = self._approvals.pop(ticket, None)
        if future is not None and not future.done():
            future.set_result(decision)

    def cancel(self, reason: str) -> None:
        """Wake whatever waits: the token (a thread's agent) and every open approval."""
        self.token.cancel(reason)
        with self._lock:
            futures = list(self._approvals.values())
            self._approvals.clear()
        for future in futures:
            future.cancel()


def _portable(value: Any) -> Any:
    """A value that crosses to the manager and is written there as it would be in process.

    Plain JSON values go as they are; anything else as the builtins msgspec
    would encode it to (so the ledger reads the same), or its ``repr`` where
    msgspec cannot encode it, as the ledger writer does.
    """
    if value is None or isinstance(value, str | bool | int | float):
        return value
    try:
        return msgspec.to_builtins(value)
    except (TypeError, ValueError, msgspec.EncodeError):
        return repr(value)


def _portable_event(event: AgentEvent) -> AgentEvent:
    if isinstance(event, ToolCallEvent):
        return dataclasses.replace(
            event, arguments=_portable(event.arguments), result=_portable(event.result)
        )
    if isinstance(event, ToolResultEvent):
        return dataclasses.replace(event, result=_portable(event.result))
    return event


async def _call_agent(agent: object, text: str, streamed: bool, run: _WorkerRun) -> Call:
    """Run the agent in the worker; how it ended, as the last call of its last batch."""
    try:
        runnable = as_runnable(agent)
        if isinstance(runnable, FunctionAgent):
            return ("ended", "ok", await _in_thread(runnable, text, run))
        if not streamed:
            return ("ended", "ok", str(await runnable.run(text)))
        run_stream = getattr(runnable, "run_stream", None)
        if run_stream is None:
            message = f"agent {agent_name(runnable)!r} cannot stream (it has no run_stream method)"
            run.record_error(message)
            return ("ended", "stream_failed", message)
        async for event in run_stream(text):
            run.on_agent_event(event)
            if isinstance(event, AgentError):
                return ("ended", "stream_failed", event.message)
        output = getattr(runnable, "output", None)  # an adapter knows the framework's output
        return ("ended", "ok", output if isinstance(output, str) else None)
    except asyncio.CancelledError:
        if not run.token.cancelled:
            raise  # not our cancel: the host itself is going away
        return ("ended", "canceled", run.token.reason)
    except Canceled as error:
        return ("ended", "canceled", str(error) or run.token.reason)
    except Exception as error:
        return ("ended", "failed", str(error) or type(error).__name__)


async def _in_thread(runnable: FunctionAgent, text: str, run: _WorkerRun) -> str:
    """A synchronous agent in a thread of its own, as in process: only its token stops it."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()
    context = contextvars.copy_context()

    def settle(output: str | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(output or "")

    def work() -> None:
        try:
            output = context.run(runnable.call, text, run.token)
        except BaseException as error:
            loop.call_soon_threadsafe(settle, None, error)
        else:
            loop.call_soon_threadsafe(settle, output, None)

    threading.Thread(target=work, name=f"run {run.id}", daemon=True).start()
    while True:
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            if future.done():
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # the thread goes on until it checks its token


def agent_name(agent: object) -> str:
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else type(agent).__name__


class RunHost:
    """A long-lived async Ray actor that executes many runs at once (``max_concurrency``)."""

    def __init__(self) -> None:
        context = ray.get_runtime_context()
        self._place: dict[str, Any] = {
            "executor": "ray",
            "node_id": context.get_node_id(),
            "worker_id": context.get_worker_id(),
            "actor_id": context.get_actor_id(),
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "address": ray.util.get_node_ip_address(),  # type: ignore[no-untyped-call]
        }
        self._runs: dict[str, tuple[_WorkerRun, asyncio.Task[Call]]] = {}
        self._early: OrderedDict[str, str] = OrderedDict()

    def placement(self) -> dict[str, Any]:
        """Where this host runs (node, worker, pid)."""
        return dict(self._place)

    async def execute(
        self, run_id: str, agent: object, text: str, streamed: bool
    ) -> AsyncIterator[list[Call]]:
        """Run one agent; yield its recorded calls in batches, the outcome last."""
        loop = asyncio.get_running_loop()
        run = _WorkerRun(run_id, loop)
        run._record(("placed", self._place))
        early = self._early.pop(run_id, None)
        if early is not None:
            yield [*run.take(), ("ended", "canceled", early)]
            return
        # The stand-in answers every call the recorders (and adapters) make on a run.
        context = context_of(cast("Run", run))
        task = loop.create_task(_call_agent(agent, text, streamed, run), context=context)
        task.add_done_callback(lambda _: run.ready.set())
        self._runs[run_id] = (run, task)
        try:
            while True:
                await run.ready.wait()
                run.ready.clear()
                if not task.done() and run.pending < BATCH_CALLS:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(run.ready.wait(), BATCH_SECONDS)
                    run.ready.clear()
                if task.done():
                    break
                calls = run.take()
                if calls:
                    yield calls
            if task.cancelled():
                outcome: Call = ("ended", "canceled", run.token.reason or "canceled")
            else:
                outcome = task.result()
            yield [*run.take(), outcome]
        finally:
            self._runs.pop(run_id, None)
            if not task.done():  # the stream itself was cancelled: take the agent with it
                run.cancel("the run's stream was cancelled")
                task.cancel()

    async def cancel(self, run_id: str, reason: str) -> bool:
        """Cancel a run's coroutine (``CancelledError`` in it); remember it if not started yet."""
        entry = self._runs.get(run_id)
        if entry is None:
            self._early[run_id] = reason
            while len(self._early) > EARLY_CANCELS_KEPT:
                self._early.popitem(last=False)
            return False
        run, task = entry
        run.cancel(reason)
        task.cancel(reason)
        return True

    async def decide(
        self,
        run_id: str,
        ticket: int,
        approved: bool,
        reason: str | None,
        source: str | None,
        approval_id: str | None,
    ) -> bool:
        """Hand an approval decision made in the manager to the run waiting on it."""
        entry = self._runs.get(run_id)
        if entry is None:
            return False
        entry[0].decide(ticket, Approval(approved, reason, source, approval_id))
        return True


class BuiltInWorker:
    """An agent made where it runs, by ``factory``: for agents that cannot be pickled.

    A framework's agent often holds what cannot cross to another process
    (locks, HTTP clients): ``BuiltInWorker(make_agent, name="weather")``
    sends the function instead, and each run builds its agent in its worker
    (its adapter then records there as in process). It works the same in
    process, so one agent list serves both executors.
    """

    def __init__(self, factory: Callable[[], object], *, name: str | None = None) -> None:
        self.factory = factory
        """Makes the agent, in the worker, for each run."""
        self.name = name or getattr(factory, "__name__", None) or "agent"
        """``name``, else the factory's own."""

    async def run(self, input: str) -> str:
        """Build the agent here and run it on ``input``."""
        return str(await self._build().run(input))

    async def run_stream(self, input: str) -> AsyncIterator[AgentEvent]:
        """Build the agent here and stream it on ``input`` (it must have ``run_stream``)."""
        run_stream = getattr(self._build(), "run_stream", None)
        if run_stream is None:
            raise TypeError(f"the agent {self.name!r} builds cannot stream (no run_stream)")
        async for event in run_stream(input):
            yield event

    def _build(self) -> Any:
        runnable = as_runnable(self.factory())
        if isinstance(runnable, FunctionAgent):
            raise TypeError(
                f"{self.name!r} built a plain function: give it to the manager as it is"
            )
        return runnable
