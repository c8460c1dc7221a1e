"""The run manager: start runs, find them, watch them, stop them, re-issue them.

Every run gets an id and a :class:`Handle`. The :class:`Manager` lists the
runs it retains (the live ones and a bounded number of finished ones,
oldest evicted first, so a service that stays up for months does not
grow), cancels one by id or all of them, resolves approval gates, and
resumes a finished run from its recorded input. With a ledger directory
every run writes its ledger (LEDGER.md) and the directory's ``.control``
files can cancel or resume runs from outside the process.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import contextvars
import errno
import functools
import logging
import os
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal

from ledger_reader import LedgerError, LedgerFile, RunStarted, control, is_valid_run_id
from ledger_reader.control import (
    ApproveRequest,
    CancelRequest,
    ControlRequest,
    ResumeRequest,
    control_dir,
)
from ledger_reader.liveness import live_writer
from ledger_reader.locations import default_ledger_dir, foreign_access, make_private_dir
from run_manager.agents import (
    FunctionAgent,
    agent_name,
    as_runnable,
)
from run_manager.budget import Budget, BudgetAccount
from run_manager.control import ControlWatcher
from run_manager.current import context_of, current_run_id
from run_manager.drivers import drive
from run_manager.errors import RunCanceled, RunFailed, RunNotFound, RunNotResumable
from run_manager.executors import Executor
from run_manager.handle import Handle, Info, info_of
from run_manager.hub import Hub
from run_manager.ids import new_run_id
from run_manager.ledger import LedgerWriter
from run_manager.run import Approval, ApprovalNotFound, CancelKind, Run, Status

DEFAULT_RETAINED: Final = 100
"""Finished runs a manager keeps listable unless told otherwise."""
RECORD_CONTENT_VARIABLE: Final = "RUNTOP_RECORD_CONTENT"
"""Set to ``0`` (or ``false``, ``no``, ``off``) to keep what models were sent and answered
out of every ledger, whatever the program asks."""
CLOSE_MARGIN: Final = 1.0
"""Seconds :meth:`Manager.close` may take beyond its grace: stopping the control watcher."""

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Closed:
    """What :meth:`Manager.close` could not stop."""

    left: tuple[str, ...] = ()
    """Runs whose agents did not stop within the grace: recorded as cancelled at
    shutdown, their tasks or threads possibly still running."""


class Manager:
    """Starts agent runs and keeps track of them.

    Args:
        retained_runs: finished runs kept listable (0 forgets them at once).
        ledger_dir: where runs write their ledgers (``~`` expanded; made ``0700`` now,
            so a path that cannot be a directory is refused here). ``None`` (the
            default) is the folder ``runtop`` and ``runtop ls`` look in:
            ``$RUNTOP_LEDGER_DIR``, else ``~/.runtop/runs`` (``$RUNTOP_HOME/runs``).
            ``False`` writes no ledger: runs live in memory only, and cannot be
            resumed or cancelled by control file.
        agents: agents registered by name, for :meth:`resume` from a ledger
            and for control-file resumes.
        hub: the live fan-out (one is made if not given).
        watch_control: follow ``<ledger_dir>/.control`` for cancel, resume and
            approve requests.
        executor: where agents execute; ``None`` (the default) runs them on
            this event loop (or a thread of their own); ``RayExecutor()``
            (``run_manager.executors.ray``) on Ray workers. The manager closes it.
        record_content: keep in each ``llm_call`` what the model was sent and what it
            answered (its messages). On unless this is ``False`` or the environment
            says ``RUNTOP_RECORD_CONTENT=0``: conversations hold what users and tools
            said, which a ledger may be kept or shared longer than they should be.
        shared_ledger_dir: take a ``ledger_dir`` that another user owns or may write
            into, warning, where it is refused otherwise (:class:`LedgerDirShared`):
            whoever can write there can cancel and resume runs and remove ledgers.
        budget: what each run it starts may spend (:class:`~run_manager.Budget`), unless
            :meth:`start` gives one; a run started inside a budgeted run spends from that
            run's budget instead.
    """

    def __init__(
        self,
        *,
        retained_runs: int = DEFAULT_RETAINED,
        ledger_dir: str | Path | Literal[False] | None = None,
        agents: Iterable[object] = (),
        hub: Hub | None = None,
        watch_control: bool = True,
        writer_name: str = "runtop",
        executor: Executor | None = None,
        record_content: bool = True,
        shared_ledger_dir: bool = False,
        budget: Budget | None = None,
    ) -> None:
        if retained_runs < 0:
            raise ValueError("retained_runs must be 0 or more")
        self.retained_runs = retained_runs
        """Finished runs kept for :meth:`list`, :meth:`get` and :meth:`resume` from memory."""
        if ledger_dir is None:
            ledger_dir = default_ledger_dir()
        self.ledger_dir = Path(ledger_dir).expanduser() if ledger_dir is not False else None
        """Where runs write their ledgers; ``None`` when they write none."""
        if self.ledger_dir is not None:
            prepare_ledger_dir(self.ledger_dir, shared=shared_ledger_dir)
        self.hub = hub or Hub()
        """Every event the runs record, live: :meth:`Hub.subscribe`."""
        self.writer_name = writer_name
        """What ``run_started`` records as the ledger's ``writer``."""
        self.watch_control = watch_control and self.ledger_dir is not None
        """Whether ``<ledger_dir>/.control`` is followed (only with a ledger directory)."""
        self.executor = executor
        """Where agents execute; ``None``: on this event loop, or a thread of their own."""
        self.record_content = record_content and content_allowed()
        """Whether runs record model calls' messages (the argument and the environment)."""
        self.budget = budget
        """What each run may spend, unless its start gives a budget (or its parent has one)."""
        self._live: dict[str, Run] = {}
        self._finished: OrderedDict[str, Run] = OrderedDict()
        self._agents: dict[str, object] = {}
        for agent in agents:
            self.register(agent)
        self._attached: dict[asyncio.Task[Any], set[Run]] = {}
        self._control: asyncio.Task[None] | None = None
        self._control_stop: asyncio.Event | None = None
        self._closed = False

    # -- agents ----------------------------------------------------------------

    def register(self, agent: object, name: str | None = None) -> None:
        """Make ``agent`` known by name, so runs of it can be resumed from their ledgers."""
        runnable = as_runnable(agent)
        self._agents[name or agent_name(runnable)] = agent

    @property
    def agents(self) -> dict[str, object]:
        """The registered agents by name."""
        return dict(self._agents)

    # -- starting --------------------------------------------------------------

    def start(
        self,
        agent: object,
        input: Any,
        *,
        timeout: float | None = None,
        detached: bool = False,
        parent_run_id: str | None = None,
        resumed_from: str | None = None,
        budget: Budget | None = None,
    ) -> Handle:
        """Start a run of ``agent`` on ``input``; ``run_started`` is written before it returns.

        Args:
            agent: an object with a ``name`` and ``async def run(self, input)``, a
                framework's agent the adapters know (PydanticAI, the Agents SDK), or a
                plain function ``fn(input)`` / ``fn(input, token)`` run in a thread.
            input: what the agent is given, recorded for :meth:`resume`.
            timeout: seconds before the run is cancelled with the reason ``timeout``;
                ``None``, as long as it takes.
            detached: let the run outlive the task that starts it. Without it, a
                run is cancelled when that task is (a request handler's run ends with
                its request).
            parent_run_id: the run this one works for; by default, the run whose
                code starts it (:func:`~run_manager.current_run_id`), so sub-agents
                nest in the app's tree.
            resumed_from: the run this one re-issues (:meth:`resume` sets it).
            budget: what this run (and the runs it starts) may spend, in place of the
                manager's ``budget``: at its ``ask_at`` the run asks to go on, at a limit it
                is cancelled (:class:`~run_manager.Budget`). A run started inside a
                budgeted run spends from that budget as well as from its own.

        Returns:
            The run's handle, at once: await ``handle.result()`` for its output.

        Raises:
            RuntimeError: the manager is closed.
            TypeError: ``agent`` is none of the above.
        """
        return self._start(
            agent, input, False, timeout, detached, parent_run_id, resumed_from, budget
        )

    def stream(
        self,
        agent: object,
        input: Any,
        *,
        timeout: float | None = None,
        detached: bool = False,
        parent_run_id: str | None = None,
        resumed_from: str | None = None,
        budget: Budget | None = None,
    ) -> Handle:
        """Start a streamed run: ``handle.events()`` yields what the agent reports as it goes.

        Takes what :meth:`start` takes. An agent without ``run_stream`` fails the run
        at once with a clear error.
        """
        return self._start(
            agent, input, True, timeout, detached, parent_run_id, resumed_from, budget
        )

    def _start(
        self,
        agent: object,
        input: Any,
        streamed: bool,
        timeout: float | None,
        detached: bool,
        parent_run_id: str | None,
        resumed_from: str | None,
        budget: Budget | None,
    ) -> Handle:
        if self._closed:
            raise RuntimeError("the manager is closed")
        loop = asyncio.get_running_loop()
        runnable = as_runnable(agent)
        run_id = new_run_id()
        writer = LedgerWriter(self.ledger_dir, run_id) if self.ledger_dir is not None else None
        parent = parent_run_id or current_run_id()
        run = Run(
            run_id=run_id,
            agent_name=agent_name(runnable),
            agent=agent,
            input=input,
            loop=loop,
            hub=self.hub,
            writer=writer,
            streamed=streamed,
            writer_name=self.writer_name,
            parent_run_id=parent,
            resumed_from=resumed_from,
            record_content=self.record_content,
        )
        # Elsewhere, a synchronous agent's thread is the executor's to stop: cancel the task.
        run.in_thread = self.executor is None and isinstance(runnable, FunctionAgent)
        run.executor_name = self.executor.name if self.executor is not None else None
        above = self._live.get(parent) if parent is not None else None
        inherited = above.budgets if above is not None else ()
        if budget is None and not inherited:
            budget = self.budget
        run.budget = budget
        run.budgets = ((BudgetAccount(budget, run),) if budget is not None else ()) + inherited
        self._live[run_id] = run
        run.record_started()
        if budget is not None:
            run.budgets[0].arm()
        run.task = loop.create_task(
            drive(run, runnable, streamed, self.executor), context=context_of(run)
        )
        run.task.add_done_callback(functools.partial(self._task_done, run))
        if timeout is not None:
            run.timeout_handle = loop.call_later(
                timeout,
                functools.partial(
                    run.request_cancel, "timeout", source="timeout", kind=CancelKind.TIMEOUT
                ),
            )
        if not detached:
            caller = asyncio.current_task()
            if caller is not None:
                self._attach(caller, run)
        if self.watch_control and self._control is None:
            self._start_control_watch()
        return Handle(run)

    def _task_done(self, run: Run, task: asyncio.Task[None]) -> None:
        """A run's task ended: the run ends with it, if it has not already."""
        if run.status is Status.RUNNING:
            if task.cancelled():  # cancelled before its first step: the agent never ran
                run.finish(Status.CANCELED)
            else:
                run.finish(Status.FAILED, error="the run's task ended unexpectedly")
        run.task = None
        self._retire(run)

    def _retire(self, run: Run) -> None:
        """Move an ended run to the retained runs, evicting the oldest (once per run)."""
        if run.retired:
            return
        run.retired = True
        self._live.pop(run.id, None)
        if run.caller is not None:
            self._detach(run.caller, run)
        if self.retained_runs == 0:
            self.hub.forget(run.id)
            return
        self._finished[run.id] = run
        while len(self._finished) > self.retained_runs:
            old_id, _ = self._finished.popitem(last=False)
            self.hub.forget(old_id)

    def _attach(self, caller: asyncio.Task[Any], run: Run) -> None:
        """Tie ``run`` to the task that started it: one callback per caller, however many runs.

        A callback per run would make a long-lived caller (a server's task
        starting thousands of runs) pay a linear ``remove_done_callback`` for
        each run that ends.
        """
        run.caller = caller
        runs = self._attached.get(caller)
        if runs is None:
            runs = self._attached[caller] = set()
            caller.add_done_callback(self._caller_done)
        runs.add(run)

    def _detach(self, caller: asyncio.Task[Any], run: Run) -> None:
        run.caller = None
        runs = self._attached.get(caller)
        if runs is None:
            return
        runs.discard(run)
        if not runs:
            del self._attached[caller]
            caller.remove_done_callback(self._caller_done)

    def _caller_done(self, caller: asyncio.Task[Any]) -> None:
        """The task that started runs ended: if it was cancelled, so are they."""
        runs = self._attached.pop(caller, set())
        if caller.cancelled():
            for run in list(runs):
                run.request_cancel("the caller was cancelled", kind=CancelKind.PARENT)

    # -- finding ----------------------------------------------------------------

    def get(self, run_id: str) -> Handle:
        """The handle of a live or retained run.

        Raises:
            RunNotFound: no such run.
        """
        run = self._live.get(run_id) or self._finished.get(run_id)
        if run is None:
            raise RunNotFound(run_id)
        return Handle(run)

    def list(self) -> builtins.list[Info]:
        """Every live and retained run, newest first."""
        runs = [*self._live.values(), *self._finished.values()]
        runs.sort(key=lambda run: (run.started_at, run.id), reverse=True)
        return [info_of(run) for run in runs]

    def active(self) -> builtins.list[Info]:
        """The live runs, newest first."""
        runs = sorted(self._live.values(), key=lambda run: (run.started_at, run.id), reverse=True)
        return [info_of(run) for run in runs]

    # -- acting -------------------------------------------------------------------

    def cancel(
        self,
        run_id: str,
        reason: str | None = None,
        *,
        source: str = "api",
        requested_by: str | None = None,
    ) -> bool:
        """Ask a run to stop; ``False`` if it already ended or was already asked.
        ``requested_by``: who asks (a user's name), recorded in ``cancel_requested``.

        Raises:
            RunNotFound: no such run.
        """
        run = self._live.get(run_id)
        if run is None:
            if run_id in self._finished:
                return False
            raise RunNotFound(run_id)
        return run.request_cancel(reason, source=source, requested_by=requested_by)

    def cancel_all(self, reason: str | None = None, *, source: str = "api") -> int:
        """Ask every live run to stop; how many were signalled."""
        return sum(run.request_cancel(reason, source=source) for run in list(self._live.values()))

    def approve(
        self,
        run_id: str,
        approval_id: str | None,
        approved: bool,
        reason: str | None = None,
        source: str = "api",
        answered_by: str | None = None,
    ) -> Approval:
        """Decide a pending approval gate of a live run: the agent's ``approval`` returns.

        Args:
            run_id: the live run that waits.
            approval_id: the gate, one of ``handle.info().pending_approvals``; ``None``
                means the run's only pending approval, the usual case (a run that waits
                on several at once, from concurrent tasks, needs the id).
            approved: the decision the agent's :func:`~run_manager.approval` returns.
            reason: why, recorded in the ledger's ``approval_response`` and returned.
            source: what decided, recorded with it (the app says ``runtop``).
            answered_by: who decided (a user's name), recorded with it.

        Returns:
            The decision as the agent receives it.

        Raises:
            RunNotFound: no such live run.
            ApprovalNotFound: no such pending approval, or ``None`` was given while the
                run waits on none or on several.
        """
        run = self._live.get(run_id)
        if run is None:
            raise RunNotFound(run_id)
        return run.resolve_approval(approval_id, approved, reason, source, answered_by)

    def resume(self, run_id: str, *, detached: bool = True) -> Handle:
        """Re-issue a finished run: a new run of the same agent with the recorded input.

        Works for a retained run and, with a ledger directory, for any run
        whose ledger is there and whose agent is registered by name.

        Raises:
            RunNotFound: neither retained nor in the ledger directory.
            RunNotResumable: still live, agent unknown, or input cut by the cap.
        """
        if run_id in self._live:
            raise RunNotResumable(f"run {run_id} is still running")
        retained = self._finished.get(run_id)
        if retained is not None:
            reissue = self.stream if retained.stream is not None else self.start
            return reissue(
                retained.agent,
                retained.input,
                detached=detached,
                resumed_from=run_id,
                budget=retained.budget,
            )
        started = self._recorded_start(run_id)
        payload = started.payload
        assert self.ledger_dir is not None  # a run found by its ledger
        writer = live_writer(
            self.ledger_dir / f"{run_id}.jsonl", pid=payload.pid, host=payload.host
        )
        if writer is not None:
            raise RunNotResumable(f"run {run_id} is still running in another process ({writer})")
        name = payload.agent or payload.skill
        agent = self._agents.get(name or "")
        if agent is None:
            raise RunNotResumable(
                f"run {run_id} was made by agent {name!r}, which is not registered here"
            )
        if payload.truncated:
            raise RunNotResumable(
                f"run {run_id}'s input was cut at 64 KiB in its ledger; it cannot be re-issued"
            )
        # A ledger does not say whether the run was streamed: stream whatever can stream.
        reissue = self.stream if callable(getattr(agent, "run_stream", None)) else self.start
        given = Budget.of(payload.budget) if payload.budget is not None else None
        return reissue(agent, payload.input, detached=detached, resumed_from=run_id, budget=given)

    def _recorded_start(self, run_id: str) -> RunStarted:
        if self.ledger_dir is None or not is_valid_run_id(run_id):
            raise RunNotFound(run_id)
        path = self.ledger_dir / f"{run_id}.jsonl"
        try:
            with LedgerFile(path) as ledger:
                first = ledger.first_event()
        except LedgerError as error:
            raise RunNotFound(run_id) from error
        if not isinstance(first, RunStarted):
            raise RunNotResumable(f"run {run_id}'s ledger does not start with run_started")
        return first

    # -- control files ------------------------------------------------------------

    def _start_control_watch(self) -> None:
        assert self.ledger_dir is not None
        self._control_stop = asyncio.Event()
        watcher = ControlWatcher(self.ledger_dir, is_live=self._live.__contains__)
        self._control = asyncio.get_running_loop().create_task(
            self._follow_control(watcher, self._control_stop), context=contextvars.Context()
        )

    async def _follow_control(self, watcher: ControlWatcher, stop: asyncio.Event) -> None:
        async for request in watcher.requests(stop):
            try:
                self.act_on(request)
            except Exception as error:  # the watcher outlives any one request
                log.exception("control file %s failed", request.path)
                control.fail(request.path, f"internal error: {error}")

    def act_on(self, request: ControlRequest) -> None:
        """Carry out a control-file request, then complete it or answer it as failed."""
        match request:
            case CancelRequest(run_id=run_id, reason=reason, source=source):
                with contextlib.suppress(RunNotFound):  # it ended meanwhile: nothing to stop
                    self.cancel(
                        run_id,
                        reason,
                        source=source or "control-file",
                        requested_by=request.requested_by,
                    )
                control.complete(request.path)
            case ApproveRequest(run_id=run_id):
                try:
                    self.approve(
                        run_id,
                        request.approval_id,
                        request.approved,
                        request.reason,
                        source=request.source or "control-file",
                        answered_by=request.answered_by,
                    )
                except (RunNotFound, ApprovalNotFound) as error:
                    # Answered meanwhile, or it ended: said once, beside the request.
                    control.fail(request.path, f"cannot answer {run_id}'s approval: {error}")
                else:
                    control.complete(request.path)
            case ResumeRequest(run_id=run_id):
                try:
                    self.resume(run_id)
                except (RunNotFound, RunNotResumable, ValueError, OSError) as error:
                    control.fail(request.path, f"cannot resume {run_id}: {error}")
                else:  # its run_started is written: the request is done
                    control.complete(request.path)

    # -- closing ------------------------------------------------------------------

    async def close(self, *, cancel_running: bool = True, grace: float = 10.0) -> Closed:
        """Stop taking runs; cancel the live ones (or let them finish) and wait for them.

        Returns within ``grace`` plus :data:`CLOSE_MARGIN` seconds, whatever the
        agents do. A cancel an agent swallows is delivered again until it
        stops. With ``cancel_running``, a run still going when the grace ends
        (an agent that swallows every cancel, a synchronous agent that never
        looks at its token) is recorded ``cancelled`` with reason
        ``shutdown``, its ledger released, and named in :attr:`Closed.left`:
        its task or thread may still be running, and nothing it does is
        recorded any more. Without ``cancel_running`` such runs stay live
        (a later ``close()`` can cancel them). Safe to call again.
        """
        self._closed = True
        if cancel_running:
            for run in list(self._live.values()):
                run.request_cancel("the manager is shutting down", kind=CancelKind.SHUTDOWN)
        waiting = [run.done for run in self._live.values() if not run.done.done()]
        if waiting and grace > 0:
            await asyncio.wait(waiting, timeout=grace)
        left: list[str] = []
        if cancel_running:
            for run in list(self._live.values()):
                if run.status is Status.RUNNING:
                    run.abandon()
                    left.append(run.id)
                if run.task is None or run.task.done() or run.in_thread:
                    continue
                # Recorded as ended but its task runs on: it was ended by the grace.
                self._retire(run)
                if run.id not in left:
                    left.append(run.id)
            await asyncio.sleep(0)  # let the tasks of abandoned thread runs see it
        if left:
            log.warning(
                "closing the run manager: %d run(s) did not stop within %.1f s and were "
                "left running, recorded as cancelled: %s",
                len(left),
                grace,
                ", ".join(left),
            )
        await self._stop_control_watch()
        if self.executor is not None and (cancel_running or not self._live):
            await self.executor.close()
        return Closed(left=tuple(left))

    async def _stop_control_watch(self) -> None:
        control, stop = self._control, self._control_stop
        self._control = self._control_stop = None
        if control is None or stop is None:
            return
        stop.set()
        done, _ = await asyncio.wait([control], timeout=CLOSE_MARGIN / 2)
        if not done:
            control.cancel()
            await asyncio.wait([control], timeout=CLOSE_MARGIN / 4)
        if control.done() and not control.cancelled() and control.exception() is not None:
            log.error("the control-file watcher failed", exc_info=control.exception())

    async def __aenter__(self) -> Manager:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()


def content_allowed() -> bool:
    """Whether the environment lets runs record model calls' content (``RUNTOP_RECORD_CONTENT``)."""
    said = os.environ.get(RECORD_CONTENT_VARIABLE, "").strip().lower()
    return said not in ("0", "false", "no", "off")


class LedgerDirShared(PermissionError):
    """The ledger directory, or its ``.control`` directory, is another user's or others may
    write into it: they could cancel and resume its runs through control files, and
    remove or replace its ledgers."""


def prepare_ledger_dir(directory: Path, *, shared: bool = False) -> None:
    """Make the ledger directory now, so a path that cannot be one is refused at the start.

    A directory someone else could write into is refused too, unless ``shared``
    says it is meant to be (then it is only logged as a warning).

    Raises:
        NotADirectoryError: it names a file (or a parent of it does).
        LedgerDirShared: another user owns it or its ``.control``, or others may write
            into one of them (and not ``shared``).
        OSError: it cannot be made (permissions, a read-only file system).
    """
    with contextlib.suppress(FileExistsError):
        make_private_dir(directory)
    if not directory.is_dir():
        raise NotADirectoryError(
            errno.ENOTDIR, "not a directory; ledgers cannot be written there", str(directory)
        )
    for path in (directory, control_dir(directory)):
        why = foreign_access(path)
        if why is None:
            continue
        why += ": whoever can write there can cancel and resume runs and remove ledgers"
        if not shared:
            raise LedgerDirShared(errno.EACCES, why, str(path))
        log.warning("ledger directory: %s", why)


__all__ = [
    "CLOSE_MARGIN",
    "Approval",
    "ApprovalNotFound",
    "Closed",
    "Handle",
    "Info",
    "LedgerDirShared",
    "Manager",
    "RunCanceled",
    "RunFailed",
    "RunNotFound",
    "RunNotResumable",
    "Status",
    "content_allowed",
    "prepare_ledger_dir",
]
