"""What a reader derives from a run's events: its summary and status.

:class:`SummaryBuilder` folds events one at a time, so the same code
summarises a whole small file, the head and tail of a large one
(:mod:`ledger_reader.head_tail`, with the fast block fold of
:mod:`ledger_reader.block_fold`), and a live ledger as lines land. Whether
an unfinished run's writer still lives is judged in
:mod:`ledger_reader.liveness`.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable
from enum import StrEnum
from typing import Any, Final

import msgspec

from ledger_reader.events import (
    ApprovalRequest,
    ApprovalResponse,
    BudgetState,
    BudgetUpdated,
    CancelRequested,
    DamagedLine,
    ErrorEvent,
    LedgerItem,
    LlmCall,
    LlmCallPayload,
    NodeEnter,
    NodeExit,
    RunCompleted,
    RunDescribedPayload,
    RunEvent,
    RunStarted,
    RunUpdated,
    is_valid_run_id,
    parse_time,
)
from ledger_reader.timespan import ClockCheck, elapsed
from ledger_reader.totals import FIGURES, RunTotals

OTLP_WRITER: Final = "otlp"
"""The ``writer`` of ledgers made from OpenTelemetry spans: their events carry the spans'
own times, written as spans arrive (a parent after its children), so times that go back
there are not a clock going back, and are not flagged."""

_DESCRIBED: Final = RunDescribedPayload.__struct_fields__
"""The fields of ``run_started`` and ``run_updated`` that say who a run was for."""

MAX_WARNINGS: Final = 20
"""Warnings kept per run; the rest are only counted, so a damaged file cannot grow memory."""


class RunStatus(StrEnum):
    """A run's status as a reader derives it (LEDGER.md, "Status of a run")."""

    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELED = "canceled"
    SUSPENDED = "suspended"
    ABANDONED = "abandoned"
    STALE = "stale"
    IDLE = "idle"
    """A coding agent's session that has not been written for a while and waits on nobody
    (:mod:`ledger_reader.sessions.status`): it has no end, and may be taken up again."""
    UNKNOWN = "unknown"
    """Nothing could be read from the ledger (empty, blank, or only damage): not running."""

    @property
    def is_live(self) -> bool:
        """Whether the run may still write events."""
        return self is RunStatus.RUNNING or self is RunStatus.AWAITING_APPROVAL

    @property
    def waits(self) -> bool:
        """Whether a pending approval is still being waited on (not by a dead or quiet writer)."""
        return self.is_live or self is RunStatus.SUSPENDED


_COMPLETED_STATUS: Final = {
    "ok": RunStatus.SUCCEEDED,
    "error": RunStatus.FAILED,
    "cancelled": RunStatus.CANCELED,
    "canceled": RunStatus.CANCELED,
    "suspended": RunStatus.SUSPENDED,
}


class PendingApproval(msgspec.Struct, kw_only=True):
    """An approval a run is waiting on."""

    approval_id: str
    prompt: str | None = None
    requested_at: str = ""
    timeout_seconds: float | None = None


class RunSummary(msgspec.Struct, kw_only=True):
    """One run at a glance, as ``runtop ls --json`` prints it."""

    run_id: str
    path: str | None = None
    status: RunStatus = RunStatus.RUNNING
    skill: str | None = None
    agent: str | None = None
    flavor: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    last_event_at: str | None = None
    event_count: int | None = 0
    """Events in the ledger; ``None`` when a head and tail read could not tell (no event
    in the tail), never a guess."""
    damaged_lines: int | None = 0
    """Damaged lines; ``None`` when only the head and tail were read (``partial``)."""
    warnings: list[str] = msgspec.field(default_factory=list)
    warning_count: int = 0
    parent_run_id: str | None = None
    resumed_from: str | None = None
    trace_id: str | None = None
    pending_approval: PendingApproval | None = None
    cancel_requested: bool = False
    """A cancel was asked for and the run has not stopped yet."""
    current_node: str | None = None
    error: str | None = None
    writer: str | None = None
    host: str | None = None
    session_id: str | None = None
    """The session, user, conversation, tags, metadata and service its ``run_started`` (or a
    later ``run_updated``) said: OpenTelemetry runs carry them from their spans."""
    user_id: str | None = None
    conversation_id: str | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    service: str | None = None
    pid: int | None = None
    input: Any = None
    last_seq: int = 0
    partial: bool = False
    """Built from the head and tail only: what the middle holds beyond the status and a
    pending approval is unknown, and counts that need it are ``None``."""
    prompt_tokens: int | None = None
    """Tokens the run's model calls were sent, summed, cache reads and writes included;
    ``None`` when none said (not 0)."""
    output_tokens: int | None = None
    """Tokens they answered with, summed; ``None`` when none said."""
    cache_read_tokens: int | None = None
    """The part of ``prompt_tokens`` read from the provider's prompt cache; ``None`` when
    none said."""
    cache_write_tokens: int | None = None
    """The part of ``prompt_tokens`` written to the cache; ``None`` when none said."""
    cost_usd: float | None = None
    """What the model calls cost, summed; ``None`` when none said (not $0)."""
    cost_estimated: bool = False
    """Some of ``cost_usd`` is an estimate from tokens and a price library (a coding
    agent's session says no prices)."""
    model: str | None = None
    """The model of the run's last model call that named one."""
    models: list[str] | None = None
    """Every model its model calls named, in the order first named (``None``: none did)."""
    model_calls: int | None = None
    """Its model calls, counted; ``None`` when only the head and tail were read."""
    project: str | None = None
    """The folder the run worked in, when its writer said (a coding agent's project)."""
    git_branch: str | None = None
    """The git branch checked out there, when its writer said."""
    budget: BudgetState | None = None
    """Its budget, when it has one: the limits as they stand, what was spent of them (its
    child runs' included) and its ``state``, as its last ``budget_updated`` (else its
    ``run_started``) said."""
    total: RunTotals | None = None
    """Its figures with its child runs' (and theirs) added, set by what lists it beside
    them (``runtop ls``: :func:`ledger_reader.totals.family_totals`): its own figures for
    a run without child runs; ``None`` where nothing did (a reader of one ledger)."""

    @property
    def totals(self) -> RunTotals:
        """Its model calls' figures summed (:mod:`ledger_reader.totals`), ``partial`` when
        its ledger was read at its head and tail only."""
        return RunTotals(**{name: getattr(self, name) for name in FIGURES}, partial=self.partial)

    @property
    def started(self) -> float:
        """Start time as a POSIX timestamp, for sorting (0 when unknown)."""
        parsed = parse_time(self.started_at or "")
        return parsed.timestamp() if parsed is not None else 0.0

    def duration(self, now: float | None = None) -> float | None:
        """Seconds the run lasted, by the one rule (:func:`ledger_reader.timespan.elapsed`):
        from its start to its last event, or to ``now`` (default: the clock) while it runs;
        ``None`` when its start is not known."""
        start = parse_time(self.started_at or "")
        if start is None:
            return None
        if self.status.is_live and not self.completed_at:
            return elapsed(start.timestamp(), time.time() if now is None else now)
        end = parse_time(self.last_event_at or self.completed_at or "")
        return elapsed(start.timestamp(), end.timestamp() if end is not None else None)


class SummaryBuilder:
    """Fold a run's events, in order, into a :class:`RunSummary`.

    Args:
        run_id: the run's id as the file names it (``<run_id>.jsonl``); when
            empty, the first event's id is taken.
        path: the ledger's path, reported as is.
    """

    def __init__(self, run_id: str = "", path: str | None = None) -> None:
        self.run_id = run_id
        self.path = path
        self._summary = RunSummary(run_id=run_id, path=path)
        self._last_seq: int | None = None
        self._counted = 0
        self._pending: dict[str, PendingApproval] = {}
        self._open_nodes: list[str] = []
        self._damaged = 0
        self._lines: int | None = 0
        """The ledger's lines folded, every one from the first (``None`` once some were not:
        a head and tail read, a summary resumed)."""
        self._totals = RunTotals()
        self._clock = ClockCheck()
        self.terminal = False
        self.tail_events = 0
        """Events folded since the last :meth:`skip_gap` (a head and tail read's tail)."""

    @property
    def writer(self) -> str | None:
        """The ``writer`` its ``run_started`` named (``"runtop"`` for runtop's own)."""
        return self._summary.writer

    def warn(self, message: str) -> None:
        summary = self._summary
        summary.warning_count += 1
        if len(summary.warnings) < MAX_WARNINGS:
            summary.warnings.append(message)

    @property
    def lines(self) -> int | None:
        """How many lines of its ledger were folded, every one from the first: the position
        after the last item folded, as a reader of the ledger's lines numbers them; ``None``
        when not every line was (a head and tail read, a summary resumed)."""
        return None if self._summary.partial else self._lines

    @property
    def last_seq(self) -> int:
        """The highest ``seq`` folded so far."""
        return self._summary.last_seq

    def resume_from(self, summary: RunSummary) -> None:
        """Continue from a summary read earlier, as if its events had been folded here."""
        self._summary = msgspec.structs.replace(
            summary,
            warnings=list(summary.warnings),
            models=list(summary.models) if summary.models is not None else None,
        )
        if not self.run_id:
            self.run_id = summary.run_id
        self._last_seq = summary.last_seq or None
        self._counted = summary.event_count or 0
        self._damaged = summary.damaged_lines or 0
        self._lines = None  # a summary counts events by their seq, not the ledger's lines
        self._totals = summary.totals
        self.tail_events = 1 if summary.event_count is not None else 0
        self._pending = (
            {summary.pending_approval.approval_id: summary.pending_approval}
            if summary.pending_approval is not None
            else {}
        )
        self._open_nodes = [summary.current_node] if summary.current_node else []
        self._clock = ClockCheck()
        self._clock.see(summary.last_event_at or "", summary.last_seq)
        self.terminal = summary.completed_at is not None
        if summary.partial:
            self._summary.partial = True

    def skip_gap(self) -> None:
        """Say that events were skipped (head and tail reads): do not flag the jump in ``seq``."""
        self._last_seq = None
        self._open_nodes.clear()
        self._clock.forget()
        self._summary.partial = True
        self.tail_events = 0

    def add_item(self, item: LedgerItem | None) -> None:
        """Add one line's item: an event, or a damaged line (and what it recovered); ``None``
        for a blank line (counted among the ledger's lines, as its line index counts it)."""
        if item is None:
            if self._lines is not None:
                self._lines += 1
            return
        if isinstance(item, DamagedLine):
            self._damaged += 1
            if item.recovered is not None:
                self.add(item.recovered)  # one line: counted as its event
            elif self._lines is not None:
                self._lines += 1
        else:
            self.add(item)

    def note(self, seq: int, run_id: str) -> None:
        """Count an event whose type does not change the summary, by its envelope alone."""
        self._counted += 1
        if self._lines is not None:
            self._lines += 1
        self.tail_events += 1
        if run_id != self.run_id:
            if not self.run_id and run_id:
                self.run_id = self._summary.run_id = run_id
            else:
                self.warn(f"seq {seq}: run_id {run_id!r} differs from the file's")
        if seq:
            last = self._last_seq
            if last is not None and seq != last + 1:
                kind = "gap" if seq > last + 1 else "repeat"
                self.warn(f"seq {kind}: {last} then {seq}")
            self._last_seq = seq
            if seq > self._summary.last_seq:
                self._summary.last_seq = seq

    def note_block(self, count: int, first_seq: int, run_id: str) -> bool:
        """Count ``count`` events with consecutive ``seq`` from ``first_seq``, all of ``run_id``.

        The bulk form of :meth:`note` for a block already known to be in order;
        returns ``False`` (counting nothing) when the block does not follow on.
        """
        if run_id != self.run_id and self.run_id:
            return False
        if first_seq <= 0 or (self._last_seq is not None and first_seq != self._last_seq + 1):
            return False
        if not self.run_id:
            self.run_id = self._summary.run_id = run_id
        self._counted += count
        if self._lines is not None:
            self._lines += count
        self.tail_events += count
        self._last_seq = first_seq + count - 1
        self._summary.last_seq = max(self._summary.last_seq, self._last_seq)
        return True

    def apply(self, event: RunEvent) -> None:
        """What ``event`` changes beyond the count (it has been counted already)."""
        if event.time:
            self._summary.last_event_at = event.time
        apply = self._APPLY.get(type(event))
        if apply is not None:
            apply(self, event)

    def add(self, event: RunEvent) -> None:
        """Add one event: count it, check its time against the last, then what it changes."""
        self.note(event.seq, event.run_id)
        if self._summary.writer != OTLP_WRITER:
            warning = self._clock.see(event.time, event.seq)
            if warning is not None:
                self.warn(warning)
        self.apply(event)

    def clock_block(self, times: list[str], first_seq: int) -> None:
        """Check the times of a block of events (``seq`` from ``first_seq``) counted by
        :meth:`note_block`. Times in order as written to the second (the usual block)
        are checked as a whole, at C speed; others one by one."""
        clock = self._clock
        if self._summary.writer == OTLP_WRITER:
            return
        if times == sorted(times) and all(map(str.endswith, times, itertools.repeat("Z"))):
            warning = clock.see(times[0], first_seq)  # the block against what came before
            if warning is not None:
                self.warn(warning)
            clock.see(times[-1], first_seq + len(times) - 1)
            return
        for number, moment in enumerate(times):
            warning = clock.see(moment, first_seq + number)
            if warning is not None:
                self.warn(warning)

    def _run_started(self, event: RunStarted) -> None:
        summary, payload = self._summary, event.payload
        summary.started_at = event.time or summary.started_at
        summary.skill = payload.skill
        summary.agent = payload.agent
        summary.flavor = payload.flavor
        summary.parent_run_id = payload.parent_run_id
        summary.resumed_from = payload.resumed_from
        summary.trace_id = payload.trace_id
        summary.writer = payload.writer
        summary.host = payload.host
        summary.pid = payload.pid
        summary.input = payload.input
        self._describe(payload)
        summary.project = payload.project or summary.project
        summary.git_branch = payload.git_branch or summary.git_branch
        if payload.budget is not None and summary.budget is None:
            limits = msgspec.structs.asdict(payload.budget)
            summary.budget = BudgetState(**limits, state="ok")

    def _budget_updated(self, event: BudgetUpdated) -> None:
        """The budget as it stands now replaces what was said before."""
        self._summary.budget = event.payload

    def _run_updated(self, event: RunUpdated) -> None:
        """What the writer learned of the run after it began: each field said replaces the
        one before (LEDGER.md's ``run_updated``)."""
        summary, payload = self._summary, event.payload
        if payload.skill is not None or payload.agent is not None:
            summary.skill, summary.agent = payload.skill, payload.agent
        if payload.input is not None:
            summary.input = payload.input
        self._describe(payload)

    def _describe(self, payload: RunDescribedPayload) -> None:
        """Who the run was for and which conversation it was: the fields said."""
        summary = self._summary
        for name in _DESCRIBED:
            value = getattr(payload, name)
            if value is not None:
                setattr(summary, name, value)

    def _run_completed(self, event: RunCompleted) -> None:
        summary, payload = self._summary, event.payload
        self.terminal = True
        summary.completed_at = event.time
        raw = payload.status or ""
        status = _COMPLETED_STATUS.get(raw)
        if status is None:
            self.warn(f"run_completed with unknown status {raw!r}")
            status = RunStatus.FAILED
        summary.status = status
        if payload.error:
            summary.error = payload.error
        if status is not RunStatus.SUSPENDED:
            self._pending.clear()  # a suspended run waits on its approval (gridctl says so too)
        self._open_nodes.clear()
        summary.cancel_requested = False

    def _error(self, event: ErrorEvent) -> None:
        self._summary.error = event.payload.message or self._summary.error

    def _approval_request(self, event: ApprovalRequest) -> None:
        payload = event.payload
        approval_id = payload.approval_id or f"seq-{event.seq}"
        self._pending[approval_id] = PendingApproval(
            approval_id=approval_id,
            prompt=payload.prompt,
            requested_at=event.time,
            timeout_seconds=payload.timeout_seconds,
        )

    def _approval_response(self, event: ApprovalResponse) -> None:
        if event.payload.approval_id is None:
            self._pending.clear()
        else:
            self._pending.pop(event.payload.approval_id, None)

    def _cancel_requested(self, event: CancelRequested) -> None:
        if not self.terminal:
            self._summary.cancel_requested = True

    def _llm_call(self, event: LlmCall) -> None:
        self.add_call(event.payload)

    def add_call(self, call: LlmCallPayload) -> None:
        """Count one model call: its figures (:mod:`ledger_reader.totals`), whether its cost
        is an estimate, its model (what it did not say stays unsaid). Every reader's path,
        the block fold's too, counts a call here."""
        self._totals.add_call(call)
        if call.cost_estimated and call.cost_usd is not None:
            self._summary.cost_estimated = True
        if call.model:
            summary = self._summary
            summary.model = call.model
            if summary.models is None:
                summary.models = [call.model]
            elif call.model not in summary.models:
                summary.models.append(call.model)

    def _node_enter(self, event: NodeEnter) -> None:
        if event.payload.node_id:
            self._open_nodes.append(event.payload.node_id)

    def _node_exit(self, event: NodeExit) -> None:
        if event.payload.node_id in self._open_nodes:
            self._open_nodes.remove(event.payload.node_id)

    _APPLY: Final[dict[type, Callable[[SummaryBuilder, Any], None]]] = {
        RunStarted: _run_started,
        RunUpdated: _run_updated,
        BudgetUpdated: _budget_updated,
        RunCompleted: _run_completed,
        ErrorEvent: _error,
        ApprovalRequest: _approval_request,
        ApprovalResponse: _approval_response,
        CancelRequested: _cancel_requested,
        NodeEnter: _node_enter,
        NodeExit: _node_exit,
        LlmCall: _llm_call,
    }
    """What each type of event changes; the other types only count."""

    def summary(self) -> RunSummary:
        """The summary so far (a copy: later events do not change it)."""
        summary = msgspec.structs.replace(
            self._summary,
            warnings=list(self._summary.warnings),
            models=list(self._summary.models) if self._summary.models is not None else None,
        )
        if summary.partial:
            # seq has no gaps, so the last one counts the events, if the tail held one.
            summary.event_count = summary.last_seq if self.tail_events else None
            summary.damaged_lines = None
            # The middle's model calls were not read: a sum of the rest would be a guess.
            totals = RunTotals()
            summary.cost_estimated = False
        else:
            summary.event_count = max(self._counted, summary.last_seq)
            summary.damaged_lines = self._damaged
            totals = self._totals.rounded()
            totals.model_calls = totals.model_calls or 0  # read whole: none is 0, known
        for name in FIGURES:
            setattr(summary, name, getattr(totals, name))
        summary.pending_approval = next(reversed(self._pending.values())) if self._pending else None
        summary.current_node = self._open_nodes[-1] if self._open_nodes else None
        if not self.terminal:
            if self._pending:
                summary.status = RunStatus.AWAITING_APPROVAL
            elif self._counted:
                summary.status = RunStatus.RUNNING
            else:
                summary.status = RunStatus.UNKNOWN  # not one event read: nothing is known
        return summary


def run_id_from_path(path: str | os.PathLike[str]) -> str:
    """The run id a ledger's name gives (``<run_id>.jsonl``), or ``""``."""
    name = path.rpartition(os.sep)[2] if isinstance(path, str) else os.path.basename(path)
    stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else os.path.splitext(name)[0]
    return stem if is_valid_run_id(stem) else ""
