"""A timeline's nodes (one per model call, tool call, approval, step and child run), where a
run's time went (:class:`TimelineSummary`), and the nodes as JSON; :mod:`inspector.timeline`
folds them from a ledger.

What becomes a node (LEDGER.md's event types):

- ``node_enter`` opens a node and ``node_exit`` closes it. The kind comes
  from the node id's prefix (``llm:`` a model call, ``tool:`` a tool call,
  ``approval:`` an approval; anything else is a *step*: a graph node, a
  handoff). A ``tool_call``, ``llm_call`` or ``approval_request`` inside
  it adds its call id, tokens or question to it.
- A ``tool_call`` with no ``node_enter`` (gridctl writes some that way)
  is a node of its own, from the call to its ``tool_result``; likewise an
  ``approval_request`` to its ``approval_response``. An ``llm_call`` with
  no model node open is a model call whose start is not known: it is a
  node of no length at the time of the ``llm_call``, with a note saying so.
- An ``otel_span`` event (a span OTLP ingest kept as it was) is a step
  from its time for its ``duration_micros``.
- A child run is a node from its start to its end (:meth:`set_child_run`).

Nesting: a node's parent is the innermost *step* open when it entered
(the ledger names no parent node; steps are the only nodes that hold
others, so two tool calls running at once are siblings, never one inside
the other). Child runs sit under the run itself (a child's ledger names
its parent run, not the node that started it), or under the tool call whose
``tool_result`` names the child (``child_run_id``: a coding agent's sub-agent).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Final

import msgspec

from ledger_reader import (
    parse_time,
)
from ledger_reader.timespan import call_seconds, elapsed, offset_in_run


class NodeKind(StrEnum):
    """What a node is."""

    MODEL = "model"
    TOOL = "tool"
    APPROVAL = "approval"
    STEP = "step"
    """A graph node, a handoff, an OpenTelemetry span of no known kind: a node that holds others."""
    CHILD_RUN = "child_run"


class Outcome(StrEnum):
    """How a node ended (or that it has not)."""

    RUNNING = "running"
    """In flight: no end yet."""
    OK = "ok"
    ERROR = "error"
    DENIED = "denied"
    """An approval answered no (or that timed out)."""
    CANCELED = "canceled"
    UNFINISHED = "unfinished"
    """Never exited: the run ended (or its writer died) with the node open."""


KIND_OF_PREFIX: Final = {
    "llm": NodeKind.MODEL,
    "tool": NodeKind.TOOL,
    "approval": NodeKind.APPROVAL,
}


def node_kind(node_id: str | None) -> NodeKind:
    """What a node is, from its id's prefix (``llm:``, ``tool:``, ``approval:``): any other
    node is a step (a graph node, a chain, a handoff, a span of another kind)."""
    prefix, _, rest = (node_id or "").partition(":")
    return KIND_OF_PREFIX.get(prefix, NodeKind.STEP) if rest else NodeKind.STEP


class TimelineNode:
    """One bar of the timeline. The timeline changes it as events arrive; readers only read.

    Times are Unix seconds (floats). ``position`` is where the node's first
    event sits among the run's ledger items (the index the event stream and
    ``RunStore.events`` use), ``detail_position`` the event that says most
    about it (the ``tool_call``, the ``llm_call``, the ``approval_request``).
    """

    __slots__ = (
        "answered",
        "approval_id",
        "call_id",
        "called",
        "children",
        "cost_usd",
        "depth",
        "detail_position",
        "end",
        "id",
        "kind",
        "ledger_id",
        "model",
        "name",
        "notes",
        "outcome",
        "output_tokens",
        "parent",
        "position",
        "prompt_tokens",
        "row",
        "run_id",
        "start",
    )

    def __init__(
        self,
        node_id: str,
        kind: NodeKind,
        name: str,
        start: float,
        *,
        parent: TimelineNode | None = None,
        position: int | None = None,
    ) -> None:
        self.id = node_id
        """Unique in its timeline: the ledger's node id (``tool:search#2``), ``call:<id>`` for
        a tool call with no node, ``run:<id>`` for a child run; ``~2`` added to a repeat."""
        self.ledger_id = node_id
        """The node id as the ledger wrote it (``id`` may add ``~2`` to a repeat)."""
        self.kind = kind
        self.name = name
        """Untrusted text from the ledger: show it inert."""
        self.start = start
        self.end: float | None = None
        """``None`` while in flight."""
        self.outcome = Outcome.RUNNING
        self.parent = parent
        """The step it is nested in; ``None`` for a node directly under the run."""
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.children: Sequence[TimelineNode] = ()
        """The nodes nested in it, by start (only a step holds any). Nodes and empty
        tuples: few objects for the cyclic collector to walk, 100,000 nodes loaded."""
        self.position = position
        self.detail_position = position
        self.call_id: str | None = None
        self.called: float | None = None
        """When its request went out: a tool call's ``tool_call``, a model call's node
        entered."""
        self.answered: float | None = None
        """When it was answered: a tool call's ``tool_result``, a model call's
        ``llm_call``."""
        self.approval_id: str | None = None
        self.run_id: str | None = None
        """The child run's id, for a child run."""
        self.model: str | None = None
        self.prompt_tokens: int | None = None
        self.output_tokens: int | None = None
        self.cost_usd: float | None = None
        self.notes: tuple[str, ...] = ()
        """What was odd about it in the ledger (an exit with no enter, ...), for display."""
        self.row = -1
        """Its index in :meth:`Timeline.rows` (kept by the timeline)."""

    @property
    def parent_id(self) -> str | None:
        return None if self.parent is None else self.parent.id

    @property
    def in_flight(self) -> bool:
        return self.end is None

    @property
    def duration(self) -> float | None:
        """Seconds from start to end; ``None`` while in flight. A call's is from its
        request to its answer, as every view of a call says it
        (:func:`ledger_reader.timespan.call_seconds`); its bar spans its node."""
        if self.end is None:
            return None
        if self.answered is not None:
            return call_seconds(self.called, self.answered)
        return elapsed(self.start, self.end)

    def end_or(self, now: float) -> float:
        """Its end, or ``now`` for a node in flight (an open-ended bar drawn to now)."""
        return self.end if self.end is not None else max(now, self.start)

    @property
    def tokens(self) -> int | None:
        """Prompt and output tokens together, for a model call that reported any."""
        if self.prompt_tokens is None and self.output_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.output_tokens or 0)

    def __repr__(self) -> str:
        return f"TimelineNode({self.id!r}, {self.kind}, {self.outcome}, {self.start}, {self.end})"


class TimelineSummary(msgspec.Struct, frozen=True, kw_only=True):
    """Where the wall time went, each instant counted once.

    Nodes overlap (parallel tool calls, a tool running while the model
    streams), so time is not added up node by node. Each instant of the
    run, from its start to its end (``now`` while live), is given to one
    category: ``approvals`` if any approval is open then, else ``tools`` if
    any tool call is, else ``model`` if any model call is, else
    ``child_runs`` if a child run is, else ``steps`` if only a step (a
    graph node) is, else ``idle``. The six add up to ``wall``, and three
    tool calls in parallel for 2 s count 2 s, not 6. ``tool_time`` and
    ``model_time`` are the plain sums of the nodes' durations beside it
    (6 s in that example), so ``tool_time / tools`` says how parallel they were.
    ``child_runs_outside`` is the time of child runs that falls outside the axis (a
    coding agent's sub-agent that ran before its session's first record): none of the
    run's wall time, but not nothing either (``child runs 0s`` said of a child that ran
    6 s before its parent).
    """

    wall: float
    model: float
    tools: float
    approvals: float
    child_runs: float
    steps: float
    idle: float
    tool_time: float
    model_time: float
    child_runs_outside: float = 0.0
    nodes: int
    model_calls: int
    tool_calls: int
    tool_errors: int
    approval_count: int
    child_run_count: int
    in_flight: int
    prompt_tokens: int
    output_tokens: int
    cost_usd: float


_PRIORITY: Final = (
    NodeKind.APPROVAL,
    NodeKind.TOOL,
    NodeKind.MODEL,
    NodeKind.CHILD_RUN,
    NodeKind.STEP,
)


def summarise(chosen: list[TimelineNode], start: float, end: float) -> TimelineSummary:
    """Where the time of ``chosen`` went on the axis from ``start`` to ``end`` (see
    :class:`TimelineSummary`); O(n log n) in the nodes."""
    edges: list[tuple[float, int, int]] = []
    rank = {kind: index for index, kind in enumerate(_PRIORITY)}
    tool_time = model_time = outside = 0.0
    prompt = output = 0
    cost = 0.0
    counts = dict.fromkeys(NodeKind, 0)
    tool_errors = in_flight = 0
    for node in chosen:
        counts[node.kind] += 1
        node_end = node.end_or(end)
        if node.end is None:
            in_flight += 1
        if node.kind is NodeKind.TOOL:
            tool_time += max(0.0, node_end - node.start)
            if node.outcome is Outcome.ERROR:
                tool_errors += 1
        elif node.kind is NodeKind.MODEL:
            model_time += max(0.0, node_end - node.start)
            prompt += node.prompt_tokens or 0
            output += node.output_tokens or 0
            cost += node.cost_usd or 0.0
        low, high = max(node.start, start), min(node_end, end)
        if node.kind is NodeKind.CHILD_RUN:
            outside += max(0.0, node_end - node.start) - max(0.0, high - low)
        if high > low:
            index = rank[node.kind]
            edges.append((low, 1, index))
            edges.append((high, -1, index))
    edges.sort()
    busy = [0.0] * len(_PRIORITY)
    open_counts = [0] * len(_PRIORITY)
    previous = start
    for moment, step, index in edges:
        if moment > previous:
            for category, count in enumerate(open_counts):
                if count:
                    busy[category] += moment - previous
                    break
            previous = moment
        open_counts[index] += step
    wall = max(0.0, end - start)
    return TimelineSummary(
        wall=wall,
        approvals=busy[0],
        tools=busy[1],
        model=busy[2],
        child_runs=busy[3],
        steps=busy[4],
        idle=max(0.0, wall - sum(busy)),
        tool_time=tool_time,
        model_time=model_time,
        child_runs_outside=outside,
        nodes=len(chosen),
        model_calls=counts[NodeKind.MODEL],
        tool_calls=counts[NodeKind.TOOL],
        tool_errors=tool_errors,
        approval_count=counts[NodeKind.APPROVAL],
        child_run_count=counts[NodeKind.CHILD_RUN],
        in_flight=in_flight,
        prompt_tokens=prompt,
        output_tokens=output,
        cost_usd=cost,
    )


def nodes_json(rows: Iterable[TimelineNode], origin: float) -> list[dict[str, Any]]:
    """``rows`` as plain JSON objects, offsets from ``origin`` (see :meth:`Timeline.to_json`)."""
    return [
        {
            "id": node.id,
            "kind": str(node.kind),
            "name": node.name,
            "parent": node.parent_id,
            "depth": node.depth,
            "start": _rfc3339(node.start),
            "end": None if node.end is None else _rfc3339(node.end),
            "offset": round(offset_in_run(node.start, origin), 6),
            "end_offset": None if node.end is None else round(offset_in_run(node.end, origin), 6),
            "duration": None if node.duration is None else round(node.duration, 6),
            "outcome": str(node.outcome),
            "position": node.position,
            "call_id": node.call_id,
            "approval_id": node.approval_id,
            "run_id": node.run_id,
            "model": node.model,
            "prompt_tokens": node.prompt_tokens,
            "output_tokens": node.output_tokens,
            "cost_usd": node.cost_usd,
            "notes": list(node.notes),
        }
        for node in rows
    ]


_SECONDS: dict[str, float] = {}
"""Unix time of each ``YYYY-MM-DDTHH:MM:SS`` seen: a run's events share their seconds."""


def epoch_of(text: str) -> float | None:
    """An RFC 3339 time as Unix seconds, or ``None`` when it cannot be read.

    The usual form (``2026-11-29T06:45:00.4512Z``: UTC, a fraction) is read
    from a cache of whole seconds plus its fraction; anything else goes
    through :func:`ledger_reader.parse_time`.
    """
    if len(text) > 20 and text[-1] == "Z" and text[19] == "." and text[20:-1].isdigit():
        whole = _SECONDS.get(text[:19])
        if whole is None:
            parsed = parse_time(text[:19] + "Z")
            if parsed is None:
                return None
            if len(_SECONDS) > 100_000:
                _SECONDS.clear()
            whole = _SECONDS[text[:19]] = parsed.timestamp()
        return whole + float("0" + text[19:-1])
    parsed = parse_time(text) if text else None
    return None if parsed is None else parsed.timestamp()


def _start_key(node: TimelineNode) -> tuple[float, int]:
    return (node.start, node.position if node.position is not None else -1)


def _rfc3339(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def outcome_of_status(status: str) -> Outcome:
    """A child run's outcome from its status word (``RunStatus``'s values).

    An ``idle`` one is a coding agent's sub-agent that has answered (a session has no
    end record; idle is how it rests: :mod:`ledger_reader.sessions.status`), not one
    cut off: the call that started it says how that went. Stale and abandoned runs
    stopped without ending: ``unfinished``.
    """
    return {
        "running": Outcome.RUNNING,
        "awaiting_approval": Outcome.RUNNING,
        "succeeded": Outcome.OK,
        "idle": Outcome.OK,
        "failed": Outcome.ERROR,
        "canceled": Outcome.CANCELED,
    }.get(status, Outcome.UNFINISHED)


def in_row_order(roots: list[TimelineNode]) -> list[TimelineNode]:
    """The nodes under ``roots`` as a view lists them: each under its parent, siblings by
    start time (``roots`` and each node's children are sorted in place); each node's
    ``row`` is set to its index."""
    rows: list[TimelineNode] = []
    roots.sort(key=_start_key)
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        node.row = len(rows)
        rows.append(node)
        children = node.children
        if isinstance(children, list) and children:
            children.sort(key=_start_key)
            stack.extend(reversed(children))
    return rows
