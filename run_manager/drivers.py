"""How a run's task calls its agent and records how it ended.

One driver per kind of agent: an async agent is awaited on the loop, a
streaming one is iterated (each event recorded as it comes), and a
synchronous function runs in a thread of its own that only its cancel
token can stop. :func:`drive` is the body of every run's task.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from typing import Any

import msgspec

from run_manager.agents import AgentError, Canceled, FunctionAgent
from run_manager.executors import Executor, StreamFailed
from run_manager.run import CancelKind, Run, Status


async def drive(run: Run, runnable: Any, streamed: bool, executor: Executor | None = None) -> None:
    """The run's task: call the agent (here, or through ``executor``), record how it ended."""
    if run.ledger_failure is not None:  # not even run_started could be written
        run.finish(Status.FAILED)
        return
    try:
        if executor is not None:
            output = await executor.execute(run, runnable, streamed)
        elif isinstance(runnable, FunctionAgent):
            output = await _in_thread(run, runnable)
        elif streamed:
            output = await _stream(run, runnable)
        else:
            output = str(await runnable.run(as_agent_input(run.input)))
    except asyncio.CancelledError:
        if run.cancel_kind is None and run.ledger_failure is None:  # the loop is going away
            run.cancel_kind = CancelKind.SHUTDOWN
        run.finish(Status.CANCELED)
    except Canceled:
        run.finish(Status.CANCELED)
    except StreamFailed as failure:
        run.finish(Status.FAILED, error=str(failure))
    except Exception as error:
        message = str(error) or type(error).__name__
        run.record_error(message)
        run.finish(Status.FAILED, error=message)
    else:
        if run.cancel_kind is not None:
            run.finish(Status.CANCELED)  # asked to stop; it ended without noticing
        else:
            run.finish(Status.SUCCEEDED, output=output)


async def _stream(run: Run, runnable: Any) -> str:
    run_stream = getattr(runnable, "run_stream", None)
    if run_stream is None:
        message = f"agent {run.agent_name!r} cannot stream (it has no run_stream method)"
        run.record_error(message)
        raise StreamFailed(message)
    stream = run_stream(as_agent_input(run.input))
    # Closed in this task should recording stop between two of its events (a budget's
    # gate); an iterator that is not a generator has nothing to close.
    closing = contextlib.aclosing(stream) if hasattr(stream, "aclose") else contextlib.nullcontext()
    async with closing:
        async for event in stream:
            await run.record(event)
            if isinstance(event, AgentError):
                raise StreamFailed(event.message)
    output = getattr(runnable, "output", None)  # an adapter knows the framework's output
    return output if isinstance(output, str) else run.streamed_output


async def _in_thread(run: Run, runnable: FunctionAgent) -> str:
    """Run a synchronous agent in a thread of its own; only its token can stop it.

    The task waits for the thread, or for the manager to give up on the run
    (:meth:`Run.abandon`): a thread that never looks at its token is left to
    itself then, and the task does not wait on it for ever.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            output = context.run(runnable.call, as_agent_input(run.input), run.token)
        except BaseException as error:
            settled: tuple[str | None, BaseException | None] = (None, error)
        else:
            settled = (output, None)
        with contextlib.suppress(RuntimeError):  # the loop closed while the thread ran on
            loop.call_soon_threadsafe(_settle, future, *settled)

    threading.Thread(target=work, name=f"run {run.id}", daemon=True).start()
    ends: list[asyncio.Future[Any]] = [future, run.done]
    while not future.done() and not run.done.done():
        try:
            await asyncio.wait(ends, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            # Cancelling this task must not abandon the thread: tell it, and wait on.
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            run.request_cancel("canceled", kind=CancelKind.PARENT)
    if future.done():
        return future.result()
    return ""  # abandoned: the run is already recorded as ended


def _settle(future: asyncio.Future[str], output: str | None, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(output or "")


def as_agent_input(value: Any) -> str:
    """Agents take a string; an input recorded as a JSON object is passed as its JSON text."""
    if isinstance(value, str):
        return value
    return msgspec.json.encode(value).decode()


__all__ = ["as_agent_input", "drive"]
