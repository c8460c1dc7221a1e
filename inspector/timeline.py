"""Where a run's time went: one node per model call, tool call, approval, step and child run.

A :class:`Timeline` is folded from a run's ledger items in the order the
ledger holds them (:meth:`Timeline.add`, :meth:`Timeline.extend`), so a
live run grows it batch by batch; child runs, which live in ledgers of
their own, are added by :meth:`Timeline.set_child_run`. Nothing here draws:
the TUI's timeline view, the comparison screen and ``runtop show
--timeline`` all read the same model.

What becomes a node, and how nodes nest: :mod:`inspector.timeline_nodes`.

Damage is shown, never hidden: a ``node_exit`` with no ``node_enter``
becomes a node that started ``duration_micros`` before it (or a point, if
no duration), a ``tool_result`` with no ``tool_call`` a point, a node
entered twice before it exits two nodes; each such node carries a note
(:attr:`TimelineNode.notes`). Events whose time cannot be read are left
out of the timing and counted (:attr:`Timeline.untimed`). Events out of
time order are placed by their own times: rows are ordered by start, not
by where the event sat in the file.

Nodes still open have ``end`` ``None`` (in flight). When the run's
``run_completed`` arrives, nodes still open are closed at the run's end
with the outcome ``unfinished`` (a later ``node_exit`` still closes them
properly); likewise where a run whose writer is gone stopped
(:meth:`Timeline.stop`).

Cost: one dictionary lookup or two per event, and rows kept in order by
appending (a node that belongs before the end marks the order stale, and
the next :meth:`Timeline.rows` rebuilds it once, in O(n)). 100,000 nodes
hold about 30 MB.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from inspector.timeline_nodes import (
    NodeKind,
    Outcome,
    TimelineNode,
    TimelineSummary,
    epoch_of,
    in_row_order,
    node_kind,
    nodes_json,
    outcome_of_status,
    summarise,
)
from ledger_reader import (
    ApprovalRequest,
    ApprovalResponse,
    CancelRequested,
    DamagedLine,
    ErrorEvent,
    LedgerItem,
    LlmCall,
    LlmChunk,
    NodeEnter,
    NodeExit,
    ReasoningChunk,
    RunCompleted,
    RunEvent,
    RunStarted,
    RunUpdated,
    ToolCall,
    ToolResult,
    UnknownEvent,
)
from ledger_reader.events import NodeEnterPayload
from ledger_reader.timespan import elapsed, model_answered

_UNTIMED_TYPES: Final = frozenset({LlmChunk, ReasoningChunk})
"""Events that add nothing to a timeline, skipped before their time is even read."""


class Timeline:
    """One run's nodes, folded from its ledger items in file order; see the module's docstring."""

    def __init__(self, run_id: str | None = None) -> None:
        self.run_id = run_id
        self.run_start: float | None = None
        """The ``run_started`` time (``None`` until it is read)."""
        self.run_end: float | None = None
        """The ``run_completed`` time; ``None`` while the run has not ended."""
        self.status: str | None = None
        """``run_completed``'s status, as written."""
        self.stopped_at: float | None = None
        """Where a run that stopped writing without ending (its writer gone: stale,
        abandoned) stopped, as :meth:`stop` was told; ``None`` otherwise."""
        self.name: str | None = None
        """The run's skill or agent, from ``run_started`` (untrusted text)."""
        self.items_read = 0
        """Ledger items folded so far: the position the next :meth:`add` takes."""
        self.damaged = 0
        """Damaged lines met (an event a damaged line recovered is still folded)."""
        self.untimed = 0
        """Events whose time could not be read, left out of the timing."""
        self.version = 0
        """Changes whenever anything here does (views redraw on it)."""
        self.earliest: float | None = None
        self.latest: float | None = None
        """The earliest and latest times of any event or node end folded."""
        self.first: float | None = None
        self.last: float | None = None
        """The times of the first and the last timed event, in file order: the run's span."""
        self._nodes: dict[str, TimelineNode] = {}
        self._rows: list[TimelineNode] = []
        self._rows_stale = False
        self._roots: list[TimelineNode] = []
        self._open: dict[str, TimelineNode] = {}
        """Nodes entered and not yet exited, by the ledger's node id."""
        self._open_steps: dict[TimelineNode, None] = {}
        """Steps open, in the order entered (a dict: the last is the innermost, removal O(1))."""
        self._open_models: dict[TimelineNode, None] = {}
        self._in_flight: dict[TimelineNode, None] = {}
        """Every node not yet ended (one entered twice is here twice over, under two ids)."""
        self._unasked: dict[TimelineNode, None] = {}
        """Approval nodes open and not yet given their ``approval_request``."""
        self._by_call: dict[str, TimelineNode] = {}
        self._started_by: dict[str, TimelineNode] = {}
        """Child runs' ids → the tool call node that started each (``child_run_id``)."""
        self._by_approval: dict[str, TimelineNode] = {}
        self._answer_closes: set[str] = set()
        """Nodes with no ``node_enter``, which their ``tool_result`` or response closes."""
        self._cancel_requested = False
        self._anonymous = 0
        self._by_span: dict[str, TimelineNode] = {}
        """An OTLP run's nodes by their span ids."""
        self._orphans: dict[str, list[TimelineNode]] = {}
        """Its nodes whose parent span has no node yet, by that span's id."""

    # -- reading ---------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._nodes)

    def node(self, node_id: str) -> TimelineNode | None:
        return self._nodes.get(node_id)

    def nodes(self) -> Iterable[TimelineNode]:
        """Every node, in the order they were made."""
        return self._nodes.values()

    def rows(self) -> Sequence[TimelineNode]:
        """The nodes as a view lists them: each under its parent, siblings by start time.

        The list is kept, not copied: do not change it. Each node's ``row`` is its index.
        """
        if self._rows_stale:
            self._rebuild_rows()
        return self._rows

    def span(self, now: float | None = None) -> tuple[float, float]:
        """The run's time axis: from its start to its last event, or to ``now`` while it runs.

        The one rule of :func:`ledger_reader.timespan.elapsed`, which ``runtop ls`` and the
        table follow too: from ``run_started`` (else the first event) to the last event in
        file order, never backwards. A clock that jumped leaves nodes off the axis (drawn
        cut at its edge) rather than stretching it: the run's warnings say the clock went
        back. ``now`` defaults to the last event's time (a run read after the fact lasts
        until its last event). Returns ``(0.0, 0.0)`` before any time is known.
        """
        start = self.run_start if self.run_start is not None else self.first
        if start is None:
            return (0.0, 0.0)
        end: float | None
        if self.run_end is None and self.stopped_at is not None:
            end = self.stopped_at  # its summary's last event (streamed text is not folded here)
        elif self.run_end is None and now is not None:
            end = now
        else:
            end = self.last if self.last is not None else self.run_end
        return (start, start + (elapsed(start, end) or 0.0))

    def summary(
        self, now: float | None = None, *, nodes: Iterable[TimelineNode] | None = None
    ) -> TimelineSummary:
        """Where the time went, each instant counted once (see :class:`TimelineSummary`).

        O(n log n) in the nodes: callers keep it while :attr:`version` stays the same.
        A caller that works it out in a thread while the timeline grows on its loop
        passes ``nodes``, a copy of :meth:`nodes` taken on the loop.
        """
        start, end = self.span(now)
        return summarise(list(self._nodes.values()) if nodes is None else list(nodes), start, end)

    def to_json(self, now: float | None = None) -> list[dict[str, Any]]:
        """The nodes in row order as plain JSON objects (``runtop show --timeline --json``).

        Times are RFC 3339 in UTC, with ``offset`` and ``end_offset`` in seconds from the
        start of the axis; ``end`` is ``null`` while in flight.
        """
        return nodes_json(self.rows(), self.span(now)[0])

    # -- folding ---------------------------------------------------------------

    def extend(self, items: Iterable[LedgerItem]) -> None:
        """Fold ledger items, in file order, from position :attr:`items_read` on."""
        for item in items:
            self.add(item)

    def add(self, item: LedgerItem) -> None:
        """Fold one ledger item (it takes position :attr:`items_read`)."""
        position = self.items_read
        self.items_read = position + 1
        if isinstance(item, DamagedLine):
            self.damaged += 1
            self.version += 1
            if item.recovered is None:
                return
            event: RunEvent = item.recovered
        else:
            event = item
            if type(event) in _UNTIMED_TYPES:
                self.version += 1
                return  # streamed text: inside a model node, nothing to place on the axis
        moment = epoch_of(event.time)
        self.version += 1
        if moment is None:
            self.untimed += 1
            return
        if self.earliest is None or moment < self.earliest:
            self.earliest = moment
        if self.latest is None or moment > self.latest:
            self.latest = moment
        if self.first is None:
            self.first = moment
        self.last = moment
        fold = _FOLDS.get(type(event))
        if fold is not None:
            fold(self, event, moment, position)
        elif isinstance(event, UnknownEvent) and event.type == "otel_span":
            self._otel_span(event, moment, position)

    def set_child_run(
        self,
        run_id: str,
        name: str | None,
        start: float,
        end: float | None,
        outcome: Outcome,
    ) -> TimelineNode:
        """Add a child run, or bring one added before up to date (it is still running, say)."""
        node_id = f"run:{run_id}"
        node = self._nodes.get(node_id)
        if node is None:
            node = TimelineNode(node_id, NodeKind.CHILD_RUN, name or run_id, start)
            node.run_id = run_id
            caller = self._started_by.get(run_id)
            if caller is not None:
                node.parent = caller
                node.depth = caller.depth + 1
            self._place(node)
        elif node.start != start:
            node.start = start
            self._rows_stale = True
        node.name = name or run_id
        node.end = end
        node.outcome = outcome
        self._widen(start)
        if end is not None:
            self._widen(end)
        self.version += 1
        return node

    # -- the events --------------------------------------------------------------

    def _fold_enter(self, event: NodeEnter, moment: float, position: int) -> None:
        payload = event.payload
        node = self._enter(payload.node_id, payload.node_name, moment, position, spans=payload)
        if payload.span_id is not None and payload.parent_span_id is not None:
            self._nest_by_span(node, payload.span_id, payload.parent_span_id)

    def _nest_by_span(self, node: TimelineNode, span_id: str, parent_span_id: str) -> None:
        """Nest an OTLP run's node by its spans (``parent_span_id``), not by the order of
        its lines: spans arrive as they end, a node's before the one it is inside, which
        then takes in the nodes written before it that are its children."""
        self._by_span[span_id] = node
        waiting = self._orphans.pop(span_id, None)
        for child in waiting or ():
            self._adopt(node, child)
        if node.parent is None and parent_span_id not in self._by_span:
            self._orphans.setdefault(parent_span_id, []).append(node)

    def _adopt(self, parent: TimelineNode, child: TimelineNode) -> None:
        """Move ``child`` (and what it holds) under ``parent``."""
        if child.parent is None:
            with contextlib.suppress(ValueError):
                self._roots.remove(child)
        else:
            held = child.parent.children
            if isinstance(held, list):
                with contextlib.suppress(ValueError):
                    held.remove(child)
        child.parent = parent
        held = parent.children
        siblings = held if isinstance(held, list) else []
        siblings.append(child)
        parent.children = siblings
        moved = [child]
        while moved:
            node = moved.pop()
            node.depth = 0 if node.parent is None else node.parent.depth + 1
            moved.extend(node.children)
        self._rows_stale = True

    def _fold_exit(self, event: NodeExit, moment: float, position: int) -> None:
        payload = event.payload
        self._exit(payload.node_id, payload.duration_micros, payload.success, moment, position)

    def _fold_tool_call(self, event: ToolCall, moment: float, position: int) -> None:
        payload = event.payload
        self._tool_call(payload.call_id, payload.node_id, payload.name, moment, position)

    def _fold_tool_result(self, event: ToolResult, moment: float, position: int) -> None:
        payload = event.payload
        node = self._tool_result(
            payload.call_id, payload.node_id, payload.is_error, moment, position
        )
        if payload.child_run_id:
            self._started_by[payload.child_run_id] = node
            child = self._nodes.get(f"run:{payload.child_run_id}")
            if child is not None and child.parent is not node:
                self._adopt(node, child)  # added before its call's result was read

    def _fold_approval_request(self, event: ApprovalRequest, moment: float, position: int) -> None:
        self._approval_request(event.payload.approval_id, moment, position)

    def _fold_approval_response(
        self, event: ApprovalResponse, moment: float, position: int
    ) -> None:
        payload = event.payload
        self._approval_response(payload.approval_id, payload.approved, moment, position)

    def _fold_error(self, event: ErrorEvent, moment: float, position: int) -> None:
        node = self._open.get(event.payload.node_id or "")
        if node is not None:
            node.outcome = Outcome.ERROR

    def _fold_cancel(self, event: CancelRequested, moment: float, position: int) -> None:
        self._cancel_requested = True

    def _fold_started(self, event: RunStarted, moment: float, position: int) -> None:
        if self.run_start is None:
            self.run_start = moment
            self.name = event.payload.skill or event.payload.agent
        if self.run_id is None:
            self.run_id = event.run_id or None

    def _fold_updated(self, event: RunUpdated, moment: float, position: int) -> None:
        """A name its writer learned after the run began (an OTLP run's own span, last)."""
        if event.payload.skill or event.payload.agent:
            self.name = event.payload.skill or event.payload.agent

    def _fold_completed(self, event: RunCompleted, moment: float, position: int) -> None:
        self._completed(event.payload.status, moment)

    def _enter(
        self,
        ledger_id: str | None,
        name: str | None,
        moment: float,
        position: int,
        kind: NodeKind | None = None,
        spans: NodeEnterPayload | None = None,
    ) -> TimelineNode:
        """Open a node (``kind`` from the id's prefix unless given), inside the innermost
        step open, or where its ``spans`` say (an OTLP run's node: the node of its parent
        span, once that is known)."""
        key = ledger_id or self._anonymous_id()
        _, _, rest = key.partition(":")
        if kind is None:
            kind = node_kind(key)
        label = name or (rest.rpartition("#")[0] or rest if rest else key)
        if spans is not None and spans.parent_span_id is not None:
            parent = self._by_span.get(spans.parent_span_id)
        else:
            parent = next(reversed(self._open_steps)) if self._open_steps else None
        node = TimelineNode(
            self._unique(key), kind, label, moment, parent=parent, position=position
        )
        node.ledger_id = key
        previous = self._open.get(key)
        if previous is not None:
            node.notes += (f"entered again before {key} exited",)
        self._open[key] = node
        self._in_flight[node] = None
        if kind is NodeKind.STEP:
            self._open_steps[node] = None
        elif kind is NodeKind.MODEL:
            self._open_models[node] = None
        elif kind is NodeKind.APPROVAL:
            self._unasked[node] = None
        self._place(node)
        return node

    def _exit(
        self,
        ledger_id: str | None,
        duration_micros: int | None,
        success: bool | None,
        moment: float,
        position: int,
    ) -> None:
        key = ledger_id or ""
        node = self._open.pop(key, None)
        if node is None:
            ended = self._nodes.get(key)
            if ended is not None and ended.outcome is Outcome.UNFINISHED:
                node = ended  # closed by run_completed, then its exit arrived after all
            else:
                begin = moment - duration_micros / 1e6 if duration_micros else moment
                node = self._enter(ledger_id, None, begin, position)
                self._forget_open(node)
                note = (
                    "no node_enter: start worked out from its duration"
                    if duration_micros
                    else "no node_enter and no duration: start unknown"
                )
                node.notes += (note,)
        self._close(node, moment)
        if success is False:
            if self._cancel_requested:
                node.outcome = Outcome.CANCELED
            elif node.kind is NodeKind.APPROVAL:
                node.outcome = Outcome.DENIED
            else:
                node.outcome = Outcome.ERROR
        elif node.outcome in (Outcome.RUNNING, Outcome.UNFINISHED):
            node.outcome = Outcome.OK  # a result or an error event said more: it stands

    def _tool_call(
        self,
        call_id: str | None,
        ledger_id: str | None,
        name: str | None,
        moment: float,
        position: int,
    ) -> None:
        node = self._open.get(ledger_id) if ledger_id else None
        if node is None or node.kind is not NodeKind.TOOL or node.call_id is not None:
            key = ledger_id or f"call:{call_id or self._anonymous_id()}"
            node = self._enter(key, name, moment, position, NodeKind.TOOL)
            node.notes += ("no node_enter: from its tool_call to its tool_result",)
            self._answer_closes.add(node.id)
        node.call_id = call_id
        node.called = moment
        if name:
            node.name = name
        node.detail_position = position
        if call_id:
            self._by_call[call_id] = node

    def _tool_result(
        self,
        call_id: str | None,
        ledger_id: str | None,
        is_error: bool | None,
        moment: float,
        position: int,
    ) -> TimelineNode:
        node = self._by_call.pop(call_id, None) if call_id else None
        if node is None and ledger_id:
            node = self._open.get(ledger_id)
        if node is None:
            key = ledger_id or f"call:{call_id or self._anonymous_id()}"
            node = self._enter(key, None, moment, position, NodeKind.TOOL)
            node.call_id = call_id
            node.notes += ("tool_result with no tool_call: start unknown",)
            self._end_without_exit(node, moment)
        elif node.id in self._answer_closes:
            self._end_without_exit(node, moment)
        node.answered = moment
        node.outcome = Outcome.ERROR if is_error else Outcome.OK
        return node

    def _llm_call(self, event: LlmCall, moment: float, position: int) -> None:
        payload = event.payload
        node = self._open.get(payload.node_id) if payload.node_id else None
        if node is None and self._open_models:
            node = next(reversed(self._open_models))
        if node is None:
            node = self._enter(None, payload.model or "model", moment, position, NodeKind.MODEL)
            node.notes += ("llm_call with no model node open: start unknown",)
            self._end_without_exit(node, moment)
            node.outcome = Outcome.OK
        answered = model_answered(event)
        # From the request to the answer (which a coding agent's call may say came earlier).
        node.called, node.answered = node.start, moment if answered is None else answered
        node.model = payload.model
        if payload.model and node.name in ("default", "model"):
            node.name = payload.model
        node.prompt_tokens = payload.prompt_tokens
        node.output_tokens = payload.output_tokens
        node.cost_usd = payload.cost_usd
        node.detail_position = position

    def _approval_request(self, approval_id: str | None, moment: float, position: int) -> None:
        node = next(reversed(self._unasked)) if self._unasked else None
        if node is None:
            key = f"approval:{approval_id or self._anonymous_id()}"
            node = self._enter(key, "approval", moment, position, NodeKind.APPROVAL)
            node.notes += ("no node_enter: from its request to its response",)
            self._answer_closes.add(node.id)
        node.approval_id = approval_id
        node.detail_position = position
        self._unasked.pop(node, None)
        if approval_id:
            self._by_approval[approval_id] = node

    def _approval_response(
        self, approval_id: str | None, approved: bool | None, moment: float, position: int
    ) -> None:
        node = self._by_approval.pop(approval_id, None) if approval_id else None
        if node is None:
            key = f"approval:{approval_id or self._anonymous_id()}"
            node = self._enter(key, "approval", moment, position, NodeKind.APPROVAL)
            node.approval_id = approval_id
            node.notes += ("approval_response with no request: start unknown",)
            self._end_without_exit(node, moment)
        elif node.id in self._answer_closes:
            self._end_without_exit(node, moment)
        node.outcome = Outcome.OK if approved else Outcome.DENIED

    def _otel_span(self, event: UnknownEvent, moment: float, position: int) -> None:
        payload = event.payload if isinstance(event.payload, dict) else {}
        name = payload.get("name")
        micros = payload.get("duration_micros")
        node = self._enter(None, name if isinstance(name, str) else "span", moment, position)
        self._forget_open(node)
        if isinstance(micros, int) and not isinstance(micros, bool) and micros >= 0:
            self._close(node, moment + micros / 1e6)
            node.outcome = Outcome.ERROR if payload.get("status") == "error" else Outcome.OK
        else:
            node.notes += ("otel_span with no duration",)
            self._close(node, moment)
            node.outcome = Outcome.UNFINISHED

    def _completed(self, status: str | None, moment: float) -> None:
        self.run_end = moment
        self.status = status
        cancelled = status in ("cancelled", "canceled")
        for node in list(self._in_flight):
            self._close(node, moment)
            node.outcome = Outcome.CANCELED if cancelled else Outcome.UNFINISHED
            node.notes += ("never exited: ended with the run",)
        self._open.clear()
        self._answer_closes.clear()
        self._by_call.clear()
        self._by_approval.clear()

    def stop(self, at: float) -> None:
        """The run stopped writing at ``at`` without ending: its writer is gone (a stale
        or abandoned run), and nothing of it is running.

        Its axis ends there, where the run's own duration ends (its last event:
        streamed text, which the timeline does not time, included), and nodes still
        open are closed there, ``unfinished``, as at a ``run_completed``. A run that
        ended is left as it is. A reader that sees the run write again reads it anew.
        """
        if self.run_end is not None:
            return
        self.stopped_at = at
        self._widen(at)
        for node in list(self._in_flight):
            self._close(node, at)
            node.outcome = Outcome.UNFINISHED
            node.notes += ("never exited: the run stopped writing",)
        self.version += 1

    # -- bookkeeping -------------------------------------------------------------

    def _end_without_exit(self, node: TimelineNode, moment: float) -> None:
        """Close a node that no ``node_exit`` will close (it had no ``node_enter``)."""
        self._forget_open(node)
        self._answer_closes.discard(node.id)
        self._close(node, moment)

    def _forget_open(self, node: TimelineNode) -> None:
        """No ``node_exit`` will close this node: stop looking for one (and nesting in it)."""
        if self._open.get(node.ledger_id) is node:
            del self._open[node.ledger_id]
        self._open_steps.pop(node, None)
        self._open_models.pop(node, None)

    def _close(self, node: TimelineNode, moment: float) -> None:
        node.end = max(moment, node.start)
        self._open_steps.pop(node, None)
        self._open_models.pop(node, None)
        self._unasked.pop(node, None)
        self._in_flight.pop(node, None)
        self._widen(node.end)

    def _widen(self, moment: float) -> None:
        if self.earliest is None or moment < self.earliest:
            self.earliest = moment
        if self.latest is None or moment > self.latest:
            self.latest = moment

    def _anonymous_id(self) -> str:
        self._anonymous += 1
        return f"node#{self._anonymous}"

    def _unique(self, key: str) -> str:
        if key not in self._nodes:
            return key
        count = 2
        while f"{key}~{count}" in self._nodes:
            count += 1
        return f"{key}~{count}"

    def _place(self, node: TimelineNode) -> None:
        """Keep the node and its row: appended when it belongs at the end, else rows go stale."""
        self._nodes[node.id] = node
        if node.parent is None:
            siblings = self._roots
        else:
            held = node.parent.children
            siblings = held if isinstance(held, list) else []
            node.parent.children = siblings
        in_order = not siblings or siblings[-1].start <= node.start
        siblings.append(node)
        if self._rows_stale:
            return
        if not in_order:
            self._rows_stale = True
            return
        if self._rows and node.parent is not None:
            last: TimelineNode | None = self._rows[-1]
            while last is not None and last is not node.parent:
                last = last.parent
            if last is None:
                self._rows_stale = True
                return
        node.row = len(self._rows)
        self._rows.append(node)

    def _rebuild_rows(self) -> None:
        self._rows = in_row_order(self._roots)
        self._rows_stale = False


_FOLDS: Final[dict[type[Any], Callable[[Timeline, Any, float, int], None]]] = {
    NodeEnter: Timeline._fold_enter,
    NodeExit: Timeline._fold_exit,
    ToolCall: Timeline._fold_tool_call,
    ToolResult: Timeline._fold_tool_result,
    LlmCall: Timeline._llm_call,
    ApprovalRequest: Timeline._fold_approval_request,
    ApprovalResponse: Timeline._fold_approval_response,
    ErrorEvent: Timeline._fold_error,
    CancelRequested: Timeline._fold_cancel,
    RunStarted: Timeline._fold_started,
    RunUpdated: Timeline._fold_updated,
    RunCompleted: Timeline._fold_completed,
}
"""What each event type does to a timeline (a dictionary: a match over a dozen classes
cost more than the rest of the fold)."""

__all__ = [
    "NodeKind",
    "Outcome",
    "Timeline",
    "TimelineNode",
    "TimelineSummary",
    "outcome_of_status",
]
