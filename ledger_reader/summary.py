"""What a reader derives from a run's events: its summary and status.

:class:`SummaryBuilder` folds events one at a time, so the same code
summarises a whole small file, the head and tail of a large one, and a
live ledger as lines land. :func:`summarize_ledger` does the reading: a
file under :data:`WHOLE_FILE_BYTES` is read whole, a larger one only at its
head and tail (``seq`` has no gaps, so the last ``seq`` is the count).
"""

from __future__ import annotations

import os
import socket
import time as time_module
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

import msgspec

from ledger_reader.errors import LedgerUnreadable
from ledger_reader.events import (
    MAX_LINE_BYTES,
    ApprovalRequest,
    ApprovalResponse,
    CancelRequested,
    DamagedLine,
    ErrorEvent,
    LedgerItem,
    NodeEnter,
    NodeExit,
    RunCompleted,
    RunEvent,
    RunStarted,
    is_valid_run_id,
    parse_time,
)
from ledger_reader.file import open_ledger_fd
from ledger_reader.liveness import ledger_lock_held, writer_holds_lock
from ledger_reader.tail import LineAssembler

WHOLE_FILE_BYTES: Final = 256 * 1024
"""Ledgers up to this size are summarised from every line, larger ones from head and tail."""

HEAD_BYTES: Final = 64 * 1024
TAIL_BYTES: Final = 64 * 1024
MAX_WARNINGS: Final = 20
"""Warnings kept per run; the rest are only counted, so a damaged file cannot grow memory."""

DEFAULT_STALE_AFTER: Final = 300.0
"""Seconds without a write after which another writer's unfinished run is ``stale``."""


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

    @property
    def is_live(self) -> bool:
        """Whether the run may still write events."""
        return self in {RunStatus.RUNNING, RunStatus.AWAITING_APPROVAL}


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
    event_count: int = 0
    damaged_lines: int = 0
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
    pid: int | None = None
    input: Any = None
    last_seq: int = 0
    partial: bool = False
    """Built from the head and tail only: damage in the middle is not counted yet."""

    @property
    def started(self) -> float:
        """Start time as a POSIX timestamp, for sorting (0 when unknown)."""
        parsed = parse_time(self.started_at or "")
        return parsed.timestamp() if parsed is not None else 0.0


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
        self.terminal = False

    def warn(self, message: str) -> None:
        summary = self._summary
        summary.warning_count += 1
        if len(summary.warnings) < MAX_WARNINGS:
            summary.warnings.append(message)

    def skip_gap(self) -> None:
        """Say that events were skipped (head and tail reads): do not flag the jump in ``seq``."""
        self._last_seq = None
        self._open_nodes.clear()
        self._summary.partial = True

    def add_item(self, item: LedgerItem | None) -> None:
        """Add one line's item: an event, or a damaged line (and what it recovered)."""
        if item is None:
            return
        if isinstance(item, DamagedLine):
            self._summary.damaged_lines += 1
            if item.recovered is not None:
                self.add(item.recovered)
        else:
            self.add(item)

    def add(self, event: RunEvent) -> None:
        """Add one event."""
        summary = self._summary
        self._counted += 1
        if not self.run_id and event.run_id:
            self.run_id = summary.run_id = event.run_id
        elif event.run_id != self.run_id:
            self.warn(f"seq {event.seq}: run_id {event.run_id!r} differs from the file's")
        if event.seq:
            if self._last_seq is not None and event.seq != self._last_seq + 1:
                kind = "gap" if event.seq > self._last_seq + 1 else "repeat"
                self.warn(f"seq {kind}: {self._last_seq} then {event.seq}")
            self._last_seq = event.seq
            summary.last_seq = max(summary.last_seq, event.seq)
        if event.time:
            summary.last_event_at = event.time
        match event:
            case RunStarted(payload=payload):
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
            case RunCompleted(payload=payload):
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
                self._pending.clear()
                self._open_nodes.clear()
                summary.cancel_requested = False
            case ErrorEvent(payload=payload):
                summary.error = payload.message or summary.error
            case ApprovalRequest(payload=payload):
                approval_id = payload.approval_id or f"seq-{event.seq}"
                self._pending[approval_id] = PendingApproval(
                    approval_id=approval_id,
                    prompt=payload.prompt,
                    requested_at=event.time,
                    timeout_seconds=payload.timeout_seconds,
                )
            case ApprovalResponse(payload=payload):
                if payload.approval_id is None:
                    self._pending.clear()
                else:
                    self._pending.pop(payload.approval_id, None)
            case CancelRequested():
                if not self.terminal:
                    summary.cancel_requested = True
            case NodeEnter(payload=payload):
                if payload.node_id:
                    self._open_nodes.append(payload.node_id)
            case NodeExit(payload=payload):
                if payload.node_id in self._open_nodes:
                    self._open_nodes.remove(payload.node_id)
            case _:
                pass

    def summary(self) -> RunSummary:
        """The summary so far (a copy: later events do not change it)."""
        summary = msgspec.structs.replace(self._summary, warnings=list(self._summary.warnings))
        summary.event_count = summary.last_seq if summary.partial else self._counted
        if summary.last_seq > summary.event_count:
            summary.event_count = summary.last_seq
        summary.pending_approval = next(reversed(self._pending.values())) if self._pending else None
        summary.current_node = self._open_nodes[-1] if self._open_nodes else None
        if not self.terminal:
            summary.status = RunStatus.AWAITING_APPROVAL if self._pending else RunStatus.RUNNING
        return summary


def judge_liveness(
    summary: RunSummary,
    *,
    mtime: float,
    lock_held: bool | None,
    now: float | None = None,
    stale_after: float = DEFAULT_STALE_AFTER,
    host: str | None = None,
) -> RunStatus:
    """The status of an unfinished run once its writer's liveness is known.

    A runtop writer on this host holds an exclusive ``flock`` while its run
    lives, so a free lock means it is gone (``abandoned``). For any other
    writer only time tells: no write for ``stale_after`` seconds (or past a
    pending approval's own timeout) makes the run ``stale``.
    """
    if not summary.status.is_live:
        return summary.status
    local = summary.host is None or summary.host == (host or socket.gethostname())
    if summary.writer == "runtop" and local and lock_held is not None:
        return summary.status if lock_held else RunStatus.ABANDONED
    quiet = (now if now is not None else time_module.time()) - mtime
    limit = stale_after
    approval = summary.pending_approval
    if approval is not None and approval.timeout_seconds:
        limit = max(limit, approval.timeout_seconds)
    return RunStatus.STALE if quiet > limit else summary.status


def run_id_from_path(path: Path) -> str:
    """The run id a ledger's name gives (``<run_id>.jsonl``), or ``""``."""
    stem = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.stem
    return stem if is_valid_run_id(stem) else ""


def summarize_ledger(
    path: str | os.PathLike[str],
    *,
    now: float | None = None,
    stale_after: float = DEFAULT_STALE_AFTER,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> RunSummary:
    """Summarise one ledger from its head and tail (small files: from every line).

    Raises:
        LedgerGone, LedgerUnreadable: the file vanished or cannot be read.
    """
    state = read_ledger_state(path, stale_after=stale_after, max_line_bytes=max_line_bytes)
    return state.summary(now)


class LedgerState:
    """A ledger's summary in the making, and where a follower picks up from."""

    def __init__(
        self,
        builder: SummaryBuilder,
        *,
        complete_end: int,
        mtime: float,
        stale_after: float = DEFAULT_STALE_AFTER,
    ) -> None:
        self.builder = builder
        self.complete_end = complete_end
        """Just past the last ``\\n``: a follower starts here, so a torn tail is read once whole."""
        self.mtime = mtime
        self.lock_held: bool | None = None
        self.stale_after = stale_after

    def summary(self, now: float | None = None) -> RunSummary:
        """The summary, with liveness judged from the last probe and write time."""
        summary = self.builder.summary()
        if summary.status.is_live:
            summary.status = judge_liveness(
                summary,
                mtime=self.mtime,
                lock_held=self.lock_held,
                now=now,
                stale_after=self.stale_after,
            )
        return summary

    def probe(self, fd: int | None = None) -> None:
        """Probe the writer's lock again (only runtop writers hold one)."""
        summary = self.builder.summary()
        if summary.writer != "runtop" or not summary.status.is_live:
            self.lock_held = None
        elif fd is not None:
            self.lock_held = writer_holds_lock(fd)
        else:
            self.lock_held = ledger_lock_held(self.builder.path or "")


def read_ledger_state(
    path: str | os.PathLike[str],
    *,
    stale_after: float = DEFAULT_STALE_AFTER,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> LedgerState:
    """Read a ledger's head and tail into a :class:`LedgerState`.

    Raises:
        LedgerGone, LedgerUnreadable: the file vanished or cannot be read.
    """
    path = Path(path)
    fd, stat = open_ledger_fd(path)
    try:
        builder = SummaryBuilder(run_id_from_path(path), str(path))
        complete_end = _fold_head_and_tail(fd, stat.st_size, builder, max_line_bytes)
        state = LedgerState(
            builder, complete_end=complete_end, mtime=stat.st_mtime, stale_after=stale_after
        )
        state.probe(fd)
        return state
    except OSError as error:
        raise LedgerUnreadable(path, error) from error
    finally:
        os.close(fd)


def _fold_head_and_tail(fd: int, size: int, builder: SummaryBuilder, max_line_bytes: int) -> int:
    """Feed a ledger's lines (all, or head and tail) to ``builder``; return the complete end."""
    if size <= WHOLE_FILE_BYTES:
        assembler = LineAssembler(0, max_line_bytes=max_line_bytes)
        for line in assembler.feed(os.pread(fd, size, 0)):
            builder.add_item(line.item)
        return assembler.offset
    head = LineAssembler(0, max_line_bytes=max_line_bytes)
    lines = head.feed(os.pread(fd, HEAD_BYTES, 0))
    position = HEAD_BYTES
    # The first line holds the run's input (up to the 64 KiB cap): read on until it ends.
    while not lines and position < size and head.pending_bytes <= max_line_bytes:
        lines = head.feed(os.pread(fd, HEAD_BYTES, position))
        position += HEAD_BYTES
    for line in lines:
        builder.add_item(line.item)
    tail_start = max(position, size - TAIL_BYTES)
    chunk = os.pread(fd, size - tail_start, tail_start)
    first_newline = chunk.find(b"\n")
    if first_newline == -1:
        return head.offset
    tail = LineAssembler(tail_start + first_newline + 1, max_line_bytes=max_line_bytes)
    tail_lines = tail.feed(chunk[first_newline + 1 :])
    if tail_lines:
        builder.skip_gap()
    for line in tail_lines:
        builder.add_item(line.item)
    return tail.offset
