"""Run agents on a Ray cluster while the manager keeps ids, ledgers, the hub and cancel.

    from run_manager import Manager
    from run_manager.executors.ray import RayExecutor

    async with Manager(ledger_dir="runs", executor=RayExecutor()) as manager:
        print(await manager.start(MyAgent(), "summarise the logs").result())

``RayExecutor(address=None)`` joins the cluster ``ray.init()`` would find
(or starts a local one); ``RayExecutor(address="ray://head:10001")``
names one. Ray is an optional extra (``runtop-agents[ray]``): nothing else in
``run_manager`` imports it.

How a run crosses the process boundary:

- A few long-lived async actors (:class:`RunHost`, ``hosts`` of them, each
  taking up to ``max_concurrency`` runs at once) execute the agents. Starting
  an actor costs far more than a run does (``bench/ray.py`` times the hosts'
  start-up), so there is never one per run.
- In the worker, the agent runs with a stand-in for the manager's run on
  its context, so :func:`~run_manager.tool_call`, :func:`~run_manager.model_call`
  and :func:`~run_manager.approval` record as they do in process. What they
  record travels back as *calls* (start this tool call, add this chunk),
  batched by count and by a few milliseconds (each item a Ray streaming
  generator yields has a cost of its own, far above a recorded call's;
  ``bench/ray.py`` measures events per second), and the manager makes the same calls
  on its own record of the run, which numbers, writes and publishes the
  events. Times and durations are the manager's: they lag the worker by
  at most one batch interval.
- Cancel (a handle, a timeout, a control file, the attach API, ``close()``)
  cancels the manager's task as in process; the executor passes it on to
  the worker, where the agent's coroutine gets ``CancelledError`` (its
  ``finally`` runs) and whatever it records while unwinding still reaches
  the ledger before ``run_completed``.
- A worker or node that dies fails the run with an error that says so, as
  soon as Ray notices (a second or two for a killed process); the actor is
  restarted for later runs, never for the lost one (a run is not silently
  executed twice).
- An approval the agent waits on is opened in the manager, where
  ``manager.approve`` and the TUI find it; the decision is sent back.

This module is the manager's side: connecting to the cluster, starting the
hosts, applying the calls a run's worker sends. The worker's side, the
actor and the stand-in run, is :mod:`run_manager.executors.ray_host`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import itertools
import re
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import msgspec
import ray
from ray import exceptions as ray_errors

from ledger_reader.events import RunPlaced, RunPlacedPayload
from run_manager.agents import Canceled
from run_manager.executors import StreamFailed
from run_manager.executors.ray_host import (
    OPEN_MODEL_NODE,
    BuiltInWorker,
    Call,
    RunHost,
)
from run_manager.run import Approval

if TYPE_CHECKING:
    from run_manager.run import Run

_CLOSE_WAIT: Final = 0.5
"""How long ``close()`` waits on Ray itself (a connection under way, a local cluster stopping)."""


# -- in the manager -----------------------------------------------------------

_LOST: Final = (
    ray_errors.RayActorError,
    ray_errors.WorkerCrashedError,
    ray_errors.NodeDiedError,
    ray_errors.LocalRayletDiedError,
    ray_errors.ObjectLostError,
)
"""What Ray raises when the process a run lived in is gone."""


class RayExecutor:
    """Executes runs on Ray workers; the manager keeps identity, ledgers, the hub and cancel.

    Args:
        address: the cluster, as ``ray.init(address=...)`` takes it; ``None``
            joins the one Ray finds or starts a local one. Ignored when Ray
            is already initialised in this process.
        hosts: long-lived actors that execute runs (spread over the nodes).
        max_concurrency: runs one host executes at once.
        init_options: more keyword arguments for ``ray.init``.
        host_options: more actor options for the hosts (``num_cpus``,
            ``runtime_env``, ``resources`` ...).
        connect_timeout: seconds a run waits for the cluster (``ray.init``
            keeps trying an address that does not answer for minutes); the
            next run tries again.
    """

    name: Final = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        hosts: int = 2,
        max_concurrency: int = 1000,
        init_options: dict[str, Any] | None = None,
        host_options: dict[str, Any] | None = None,
        connect_timeout: float = 60.0,
    ) -> None:
        if hosts < 1:
            raise ValueError("hosts must be 1 or more")
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be 1 or more")
        self.address = address
        self.hosts = hosts
        self.max_concurrency = max_concurrency
        self.connect_timeout = connect_timeout
        self._init_options = dict(init_options or {})
        self._host_options = dict(host_options or {})
        self._handles: list[Any] = []
        self._streams: list[Any] = []
        self._turn = itertools.count()
        self._connect_lock = threading.Lock()
        self._hosts_lock = threading.Lock()
        self._connecting: asyncio.Future[None] | None = None
        self._owns_ray = False
        self._released = threading.Event()
        """Set by :meth:`close`: the thread that started Ray may end (see ``_init_in_keeper``)."""
        self._closed = False

    # -- connecting ----------------------------------------------------------

    def connect(self) -> None:
        """Join (or start) the cluster and start the hosts; blocks, safe to call twice.

        Runs connect on their own when the first one starts (in a thread, so the
        event loop goes on); call this first to pay Ray's start-up up front.
        """
        with self._connect_lock:  # one ray.init at a time (it may take minutes)
            if self._closed:
                raise RuntimeError("the Ray executor is closed")
            if self._handles:
                return
            if not ray.is_initialized():
                self._init_in_keeper()
                self._owns_ray = True
            with self._hosts_lock:  # short: close() takes the hosts under it
                if not self._closed:
                    self._start_hosts()

    def _init_in_keeper(self) -> None:
        """``ray.init`` in a thread that lives until :meth:`close`; blocks until it returns.

        A local cluster that ``ray.init`` starts is fate-shared on Linux with the
        *thread* that started it (``PR_SET_PDEATHSIG``): started from a thread that
        then ends (a run connecting off the event loop), its GCS and raylet are
        killed at once, and Ray then ends the whole process.
        """
        started = threading.Event()
        failed: list[BaseException] = []

        def keep() -> None:
            try:
                ray.init(address=self.address, **self._init_options)
            except BaseException as error:
                failed.append(error)
                return
            finally:
                started.set()
            self._released.wait()

        threading.Thread(target=keep, name="runtop-ray-keeper", daemon=True).start()
        started.wait()
        if failed:
            raise failed[0]

    def _start_hosts(self) -> None:
        options: dict[str, Any] = {
            "max_concurrency": self.max_concurrency,
            "max_restarts": -1,  # a host that dies comes back for later runs ...
            "max_task_retries": 0,  # ... but a run it held is never re-executed
            "num_cpus": 0,  # runs wait on models and tools; don't hold a CPU each
            "scheduling_strategy": "SPREAD",
            **self._host_options,
        }
        host = ray.remote(RunHost).options(**options)
        self._handles = [host.remote() for _ in range(self.hosts)]
        self._streams = [
            handle.execute.options(num_returns="streaming") for handle in self._handles
        ]

    async def _connected(self) -> None:
        if self._handles:
            return
        if self._connecting is None:
            self._connecting = _in_daemon_thread(self.connect)
        connecting = self._connecting
        try:
            await asyncio.wait_for(asyncio.shield(connecting), self.connect_timeout)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if self._connecting is connecting:
                self._connecting = None  # the next run tries again
            if isinstance(error, TimeoutError):
                where = self.address or "the cluster ray.init() finds"
                raise RuntimeError(
                    f"no answer from Ray at {where} within {self.connect_timeout:g} s"
                ) from None
            raise

    async def placements(self) -> list[dict[str, Any]]:
        """Where each host runs: node, worker, actor, pid, host name, address."""
        await self._connected()
        return [await handle.placement.remote() for handle in self._handles]

    # -- executing -----------------------------------------------------------

    async def execute(self, run: Run, runnable: object, streamed: bool) -> str:
        """Execute one run on a host; return its output or raise as the in-process path does.

        The agent goes to the worker as the caller gave it (``run.agent``); the
        worker adapts it (a framework's agent, a plain function) itself.
        """
        await self._connected()
        if self._closed:
            raise RuntimeError("the Ray executor is closed")
        turn = next(self._turn) % len(self._handles)
        host, execute = self._handles[turn], self._streams[turn]
        try:
            stream = execute.remote(run.id, run.agent, _agent_input(run.input), streamed)
        except Exception as error:  # the agent or its input could not be serialised
            raise RuntimeError(f"the run could not be sent to Ray: {_first_line(error)}") from error
        pump = asyncio.ensure_future(self._pump(run, host, stream))
        cancel_sent = False
        while True:
            try:
                outcome = await asyncio.shield(pump)
                break
            except asyncio.CancelledError:
                if pump.done():
                    raise
                task = asyncio.current_task()
                if task is not None:
                    task.uncancel()
                if not cancel_sent:  # pass it on; the run ends when the worker says so
                    cancel_sent = True
                    host.cancel.remote(run.id, run.cancel_reason or _kind(run))
        match outcome:
            case ("ended", "ok", output):
                if streamed and not isinstance(output, str):
                    return run.streamed_output
                return str(output)
            case ("ended", "canceled", reason):
                raise Canceled(reason or "canceled")
            case ("ended", "stream_failed", message):
                raise StreamFailed(message)
            case ("ended", "failed", message):
                raise _RemoteFailure(message)
            case ("lost", message):
                if self._closed and run.cancel_kind is not None:
                    raise Canceled(message)  # stopped for good with the executor, as asked
                raise _RemoteFailure(message)
        raise _RemoteFailure(f"the Ray worker sent an outcome runtop does not know: {outcome!r}")

    async def _pump(self, run: Run, host: Any, stream: Any) -> Call:
        """Apply each batch the worker sends to the run, until its outcome arrives."""
        apply = _Applier(run, host)
        try:
            async for ref in stream:
                calls: list[Call] = await ref
                outcome = apply(calls)
                if outcome is not None:
                    return outcome
        except ray_errors.TaskCancelledError:
            return ("ended", "canceled", run.cancel_reason or "the Ray task was cancelled")
        except _LOST as error:
            if self._closed:
                return ("lost", "the Ray executor was closed while the run was live")
            return ("lost", apply.lost(error))
        except ray_errors.RayError as error:
            return ("lost", f"the run's Ray task failed: {_first_line(error)}")
        return ("lost", "the Ray worker's stream ended without saying how the run ended")

    # -- closing -------------------------------------------------------------

    async def close(self) -> None:
        """Stop the hosts (a run still live on one fails); shut Ray down if this started it."""
        self._closed = True
        if self._connecting is not None:  # let a connection under way finish, briefly
            with contextlib.suppress(Exception):
                await asyncio.wait([self._connecting], timeout=_CLOSE_WAIT)
        with self._hosts_lock:
            handles, self._handles, self._streams = self._handles, [], []
        for handle in handles:
            with contextlib.suppress(Exception):
                ray.kill(handle, no_restart=True)
        if self._owns_ray:
            self._owns_ray = False
            # A local cluster takes a second or two to stop: the process exit waits, not close().
            await asyncio.wait([_in_daemon_thread(ray.shutdown)], timeout=_CLOSE_WAIT)
        self._released.set()


def _in_daemon_thread(work: Callable[[], None]) -> asyncio.Future[None]:
    """Run blocking Ray calls where a hang cannot hold the event loop, nor the process's exit."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()

    def settle(error: BaseException | None) -> None:
        if future.done():
            return
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)

    def call() -> None:
        error: BaseException | None = None
        try:
            work()
        except BaseException as raised:
            error = raised
        # The loop may have closed while this ran (ray.shutdown at exit outlasts its wait):
        # nobody waits for the answer then, and saying it would raise in this thread.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, error)

    threading.Thread(target=call, name="runtop ray", daemon=True).start()
    return future


class _RemoteFailure(Exception):
    """The agent failed in its worker, or the worker was lost (the message says which)."""


class _Applier:
    """Makes the calls a worker recorded on the manager's record of the run."""

    def __init__(self, run: Run, host: Any) -> None:
        self.run = run
        self.host = host
        self.place: dict[str, Any] | None = None

    def __call__(self, calls: Sequence[Call]) -> Call | None:
        run = self.run
        for call in calls:
            match call[0]:
                case "llm_chunk":
                    run.llm_chunk(call[1], reasoning=call[2], name=call[3])
                case "tool_started":
                    run.tool_started(call[1], call[2], call[3])
                case "tool_finished":
                    run.tool_finished(call[1], call[2], is_error=call[3])
                case "llm_node":
                    run.llm_node(call[1], provider=call[2], messages=call[3])
                case "llm_finished":
                    run.llm_finished(call[1], success=call[2])
                case "error":
                    node_id = run.llm_node() if call[2] == OPEN_MODEL_NODE else call[2]
                    run.record_error(call[1], node_id)
                case "agent_event":
                    run.on_agent_event(call[1])
                case "approval":
                    self._approval(*call[1:])
                case "placed":
                    self.place = call[1]
                    run.emit(RunPlaced, RunPlacedPayload(**call[1]))
                case "ended":
                    return call
        return None

    def _approval(self, ticket: int, prompt: str, name: str, timeout: float | None) -> None:
        future = self.run.request_approval(prompt, name=name, timeout=timeout)
        future.add_done_callback(functools.partial(self._deliver, ticket))

    def _deliver(self, ticket: int, future: concurrent.futures.Future[Approval]) -> None:
        if future.cancelled():
            return  # the run was cancelled: the worker's cancel wakes the agent
        decision = future.result()
        self.host.decide.remote(
            self.run.id,
            ticket,
            decision.approved,
            decision.reason,
            decision.source,
            decision.approval_id,
        )

    def lost(self, error: BaseException) -> str:
        place = self.place
        if place is None:
            where = "the Ray worker picked for this run died before it started"
        else:
            where = (
                f"the Ray worker running this run died (node {str(place['node_id'])[:12]}, "
                f"worker {str(place['worker_id'])[:12]}, pid {place['pid']} on {place['host']})"
            )
        return f"{where}: {_first_line(error)}"


def _first_line(error: BaseException) -> str:
    """One line that says what went wrong: the cause Ray wraps, without its colours."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException) and cause is not error:
        text = f"{type(cause).__name__}: {cause}"
    else:
        text = str(error)
    lines = [line.strip() for line in _COLOURS.sub("", text).splitlines() if line.strip()]
    first = lines[0] if lines else type(error).__name__
    return first if len(first) <= 300 else first[:299] + "…"


_COLOURS: Final = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _kind(run: Run) -> str:
    return run.cancel_kind.value if run.cancel_kind is not None else "canceled"


def _agent_input(value: Any) -> str:
    """Agents take a string; an input recorded as a JSON object is passed as its JSON text."""
    if isinstance(value, str):
        return value
    return msgspec.json.encode(value).decode()


__all__ = ["BuiltInWorker", "RayExecutor", "RunHost"]
