"""What a reader derives from a run's events: its summary and status.

:class:`SummaryBuilder` folds events one at a time, so the same code
summarises a whole small file, the head and tail of a large one, and a
live ledger as lines land. :func:`summarize_ledger` does the reading: a
file under :data:`WHOLE_FILE_BYTES` is read whole, a larger one only at its
head and tail (``seq`` has no gaps, so the last ``seq`` is the count).
"""

from __future__ import annotations

import operator
import os
import socket
import time as time_module
from collections.abc import Callable
from enum import StrEnum
from typing import Any, Final

import msgspec

from ledger_reader.decode import decode_line
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
from ledger_reader.lines import LineAssembler
from ledger_reader.liveness import ledger_lock_held, writer_holds_lock

WHOLE_FILE_BYTES: Final = 256 * 1024
"""Ledgers up to this size are summarised from every line, larger ones from head and tail."""

HEAD_BYTES: Final = 64 * 1024
TAIL_BYTES: Final = 64 * 1024
MAX_WARNINGS: Final = 20
"""Warnings kept per run; the rest are only counted, so a damaged file cannot grow memory."""

_HOST: Final = socket.gethostname()

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
        return self is RunStatus.RUNNING or self is RunStatus.AWAITING_APPROVAL


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
    def last_seq(self) -> int:
        """The highest ``seq`` folded so far."""
        return self._summary.last_seq

    def resume_from(self, summary: RunSummary) -> None:
        """Continue from a summary read earlier, as if its events had been folded here."""
        self._summary = msgspec.structs.replace(summary, warnings=list(summary.warnings))
        if not self.run_id:
            self.run_id = summary.run_id
        self._last_seq = summary.last_seq or None
        self._counted = summary.event_count
        self._pending = (
            {summary.pending_approval.approval_id: summary.pending_approval}
            if summary.pending_approval is not None
            else {}
        )
        self._open_nodes = [summary.current_node] if summary.current_node else []
        self.terminal = summary.completed_at is not None
        if summary.partial:
            self._summary.partial = True

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

    def note(self, seq: int, run_id: str) -> None:
        """Count an event whose type does not change the summary, by its envelope alone."""
        self._counted += 1
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
        """Add one event."""
        self.note(event.seq, event.run_id)
        if event.time:
            self._summary.last_event_at = event.time
        apply = self._APPLY.get(type(event))
        if apply is not None:
            apply(self, event)

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
        self._pending.clear()
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

    def _node_enter(self, event: NodeEnter) -> None:
        if event.payload.node_id:
            self._open_nodes.append(event.payload.node_id)

    def _node_exit(self, event: NodeExit) -> None:
        if event.payload.node_id in self._open_nodes:
            self._open_nodes.remove(event.payload.node_id)

    _APPLY: Final[dict[type, Callable[[SummaryBuilder, Any], None]]] = {
        RunStarted: _run_started,
        RunCompleted: _run_completed,
        ErrorEvent: _error,
        ApprovalRequest: _approval_request,
        ApprovalResponse: _approval_response,
        CancelRequested: _cancel_requested,
        NodeEnter: _node_enter,
        NodeExit: _node_exit,
    }
    """What each type of event changes; the other types only count."""

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
    local = summary.host is None or summary.host == (host or _HOST)
    if summary.writer == "runtop" and local and lock_held is not None:
        return summary.status if lock_held else RunStatus.ABANDONED
    quiet = (now if now is not None else time_module.time()) - mtime
    limit = stale_after
    approval = summary.pending_approval
    if approval is not None and approval.timeout_seconds:
        limit = max(limit, approval.timeout_seconds)
    return RunStatus.STALE if quiet > limit else summary.status


def run_id_from_path(path: str | os.PathLike[str]) -> str:
    """The run id a ledger's name gives (``<run_id>.jsonl``), or ``""``."""
    name = os.path.basename(path)
    stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else os.path.splitext(name)[0]
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
        if self.builder.writer != "runtop" or self.builder.terminal:
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
    path = os.fspath(path)  # plain strings: pathlib costs more than the read here
    fd, stat = open_ledger_fd(path)
    try:
        builder = SummaryBuilder(run_id_from_path(path), path)
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


class _Probe(msgspec.Struct, gc=False):
    """Just enough of a line to count it and decide whether to decode it whole.

    Decoding into this validates the whole line (it is damaged exactly when
    this fails) while building almost nothing, so msgspec's ``decode_lines``
    checks a whole small ledger at C speed.
    """

    type: str
    seq: int = 0
    run_id: str = ""


_probe = msgspec.json.Decoder(_Probe)
_TYPE_OF: Final = operator.attrgetter("type")
_SEQ_OF: Final = operator.attrgetter("seq")
_RUN_ID_OF: Final = operator.attrgetter("run_id")

_SUMMARY_TYPES: Final = (
    "run_started",
    "run_completed",
    "error",
    "approval_request",
    "approval_response",
    "cancel_requested",
)
"""Types whose payload a summary needs; node types too while the run is unfinished."""

_SLICED_FROM_END: Final = 8
"""Lines this close to the end are sliced out directly, without splitting the block."""


def fold_block(data: bytes, start: int, builder: SummaryBuilder) -> None:
    """Fold the complete lines of ``data`` (which starts at file offset ``start``).

    Every line is validated, counted and checked for ``seq`` order; only the
    lines whose type a summary needs are decoded whole. Where any line is
    damaged the block is folded line by line, so the damage is counted with
    its offset and an event glued to a torn line is recovered.
    """
    try:
        probes = _probe.decode_lines(data)
    except (msgspec.DecodeError, RecursionError, ValueError, OverflowError):
        _fold_line_by_line(data, start, builder)
        return
    count = len(probes)
    if not count:
        return
    types = list(map(_TYPE_OF, probes))
    needed = [
        number for kind in _SUMMARY_TYPES if kind in types for number in _positions(types, kind)
    ]
    if "run_completed" not in types:
        node = _innermost_open_node(types)
        if node is not None:
            needed.append(node)
    needed.sort()
    if not needed or needed[-1] != count - 1:
        needed.append(count - 1)
    lines = _pick_lines(data, count, needed)
    if lines is None:
        _fold_line_by_line(data, start, builder)
        return
    seqs = list(map(_SEQ_OF, probes))
    run_ids = set(map(_RUN_ID_OF, probes))
    first = seqs[0]
    if (
        len(run_ids) == 1
        and seqs == list(range(first, first + count))
        and builder.note_block(count, first, run_ids.pop())
    ):
        # The usual case: one run, in order. Count it at once; decode only what matters.
        for number in needed:
            event = decode_line(lines[number])
            if event is not None and not isinstance(event, DamagedLine):
                builder.apply(event)
        return
    for number, probe in enumerate(probes):
        if number in lines:
            builder.add_item(decode_line(lines[number]))
        else:
            builder.note(probe.seq, probe.run_id)


def _positions(items: list[str], wanted: str) -> list[int]:
    """Where ``wanted`` occurs in ``items`` (``list.index`` scans in C: most kinds are absent)."""
    found: list[int] = []
    at = -1
    try:
        while True:
            at = items.index(wanted, at + 1)
            found.append(at)
    except ValueError:
        return found


def _innermost_open_node(types: list[str]) -> int | None:
    """The line of the node still open at the end (nodes nest: enter A, enter B, exit B, exit A)."""
    depth = 0
    for number in range(len(types) - 1, -1, -1):
        kind = types[number]
        if kind == "node_exit":
            depth += 1
        elif kind == "node_enter":
            if depth == 0:
                return number
            depth -= 1
    return None


def _pick_lines(data: bytes, count: int, needed: list[int]) -> dict[int, bytes] | None:
    """The bytes of the ``needed`` non-blank lines of ``data`` (which holds ``count`` of them).

    The first and the last line are sliced out directly; only a block whose
    summary needs a line in the middle is split whole. ``None`` if the lines
    do not match the count (the caller then goes line by line).
    """
    lowest = needed[1] if needed[0] == 0 and len(needed) > 1 else needed[0]
    if lowest >= count - _SLICED_FROM_END and data[:1] == b"{" and data[-2:] == b"}\n":
        picked: dict[int, bytes] = {}
        end = len(data) - 1
        for number in range(count - 1, lowest - 1, -1):
            start = data.rfind(b"\n", 0, end) + 1
            if data[start : start + 1] != b"{":
                break  # a blank line: the slow way below
            picked[number] = data[start:end]
            end = start - 1
        else:
            if needed[0] == 0:
                picked[0] = data[: data.find(b"\n")]
            return picked
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    if len(lines) != count:  # blank lines: decode_lines skipped them
        lines = [raw for raw in lines if raw.strip()]
    if len(lines) != count:
        return None
    return {number: lines[number] for number in needed}


def _fold_line_by_line(data: bytes, start: int, builder: SummaryBuilder) -> None:
    assembler = LineAssembler(start)
    for line in assembler.feed(data):
        builder.add_item(line.item)


def _fold_head_and_tail(fd: int, size: int, builder: SummaryBuilder, max_line_bytes: int) -> int:
    """Feed a ledger's lines (all, or head and tail) to ``builder``; return the complete end."""
    if size <= WHOLE_FILE_BYTES:
        data = os.pread(fd, size, 0)
        complete_end = data.rfind(b"\n") + 1
        fold_block(data[:complete_end] if complete_end < len(data) else data, 0, builder)
        return complete_end
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
    last_newline = chunk.rfind(b"\n")
    if first_newline == -1 or first_newline == last_newline:
        return head.offset
    builder.skip_gap()
    fold_block(chunk[first_newline + 1 : last_newline + 1], tail_start + first_newline + 1, builder)
    return tail_start + last_newline + 1
