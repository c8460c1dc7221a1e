"""One run's life: its events, its ledger, its cancel switch and its approvals.

:class:`Run` is internal to the manager. Everything a run records goes
through :meth:`Run.emit`, which numbers the event, writes its line and
publishes it, from the event loop or from a synchronous agent's thread.
What its tool and model calls become in the ledger is its base,
:class:`~run_manager.call_recording.CallRecording`: a streamed
:data:`~run_manager.agents.AgentEvent`, or a call made through the bindings
(:mod:`run_manager.recorders`), becomes the same ``node_enter``,
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
    LineEncoder,
    NodeEnter,
    NodeEnterPayload,
    NodeExit,
    NodeExitPayload,
    RunCompleted,
    RunCompletedPayload,
    RunStarted,
    RunStartedPayload,
)
from run_manager.agents import AgentEvent, CancelToken
from run_manager.budget import Budget, BudgetAccount, check_budgets, gate, starts_a_call
from run_manager.call_recording import AgentEventStream, CallRecording, ModelCallSoFar
from run_manager.ids import utc_now
from run_manager.ledger import LedgerWriter, cap_payload_value

if TYPE_CHECKING:
    from run_manager.hub import Hub

REDELIVER_EVERY: Final = 0.1
"""Seconds between deliveries of a cancel to a run's task that swallowed the last one."""

_encoder = msgspec.json.Encoder()


class Status(StrEnum):
    """Where a run stands."""

    RUNNING = "running"
    """Started and not yet ended (a cancel may be on its way)."""
    SUCCEEDED = "succeeded"
    """Returned an output."""
    FAILED = "failed"
    """Raised, reported an error, or its ledger could not be written."""
    CANCELED = "canceled"
    """Stopped by a cancel, a timeout or the manager's close."""


class CancelKind(StrEnum):
    """Why a run was cancelled, as ``run_completed.reason`` records it."""

    USER = "user"
    TIMEOUT = "timeout"
    SHUTDOWN = "shutdown"
    PARENT = "parent"
    BUDGET = "budget"


@dataclass(frozen=True, slots=True)
class Approval:
    """A decision on an approval gate."""

    approved: bool
    """Approved (``True``) or denied."""
    reason: str | None = None
    """Why, as its decider said (``timed out`` for a gate that expired)."""
    source: str | None = None
    """Who decided: what the caller said (``api`` by default, ``runtop`` from the app),
    ``timeout``, or ``auto`` outside a run."""
    approval_id: str | None = None
    """The gate's id (one of ``Info.pending_approvals`` while it waited)."""


class ApprovalNotFound(LookupError):
    """No such approval is pending on the run."""


class _PendingApproval:
    __slots__ = ("future", "node_id", "started", "timer")

    def __init__(self, node_id: str, future: concurrent.futures.Future[Approval]) -> None:
        self.node_id = node_id
        self.future = future
        self.started = time.monotonic()
        self.timer: asyncio.TimerHandle | None = None


class Run(CallRecording):
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
        self.stream = AgentEventStream() if streamed else None
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
        self._llm_call = ModelCallSoFar()
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
        self.budget: Budget | None = None
        """The budget given to this run (``run_started.budget``), if any."""
        self.budgets: tuple[BudgetAccount, ...] = ()
        """The budgets its calls spend from and are checked against: its own, then its
        parent's (and theirs), so a child run counts against its parent's budget."""

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
                budget=self.budget.limits() if self.budget is not None else None,
            ),
        )

    async def record(self, event: AgentEvent) -> None:
        """Record an agent event; one that starts a model or tool call first waits until
        the run's budgets allow it (:func:`run_manager.budget.gate`)."""
        if self.budgets and starts_a_call(event):
            await gate(self)
        self.on_agent_event(event)

    def stop_for_budget(self, reason: str) -> bool:
        """Cancel the run, its budget spent or its question denied (reason ``budget``)."""
        return self.request_cancel(reason, source="budget", kind=CancelKind.BUDGET)

    def check_budgets(self) -> None:
        """Check the run's budgets now, without waiting (:func:`run_manager.budget.check`)."""
        check_budgets(self)

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
        self,
        approval_id: str | None,
        approved: bool,
        reason: str | None,
        source: str | None,
        answered_by: str | None = None,
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
                approval_id=approval_id,
                approved=approved,
                reason=reason,
                source=source,
                answered_by=answered_by,
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
            if status is not Status.SUCCEEDED:  # the model call it waited on: sent, unanswered
                self.llm_unanswered("cancelled" if status is Status.CANCELED else "error")
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
        for account in self.budgets:
            if account.owner is self:
                account.close()
        if self.stream is not None:
            self.stream.close()
        if not self.done.done():
            self.done.set_result(None)


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


_HOST: Final = socket.gethostname()


def _said(reason: str | None, kind: CancelKind) -> str:
    """What a cancel's reason reads as: the one given, else why it was stopped.

    A user who gave no reason gets ``no reason given``: the kind's word
    (``user``) alone read as the reason in every table (``canceled: user``).
    """
    if reason:
        return reason
    return "no reason given" if kind is CancelKind.USER else kind.value
