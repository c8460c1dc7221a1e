"""No node listed before the node it is inside, whatever order its spans were written in.

The runs are the conformance corpus's real recordings, written by the real ingest
in the orders exporters send them (as ended: the root last; batched; shuffled across
requests), and random trees of any depth in any order, some parents never arriving.
The order is checked after every event folded, as a live run is listed.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from inspector.ledger import LedgerItem, NodeEnter, NodeExit
from inspector.span_order import SpanOrder
from ledger_reader import iter_events, read_lines
from ledger_reader.events import NodeEnterPayload, NodeExitPayload

pytest.importorskip("opentelemetry.proto")

from tests.run_manager.otlp.test_corpus import NAMES, ORDERS, requests_in


def written(name: str, order: str, where: Path) -> list[LedgerItem]:
    """The events of the run the ingest writes for a recording sent in ``order``."""
    from run_manager.otlp.ingest import OtlpIngest
    from run_manager.otlp.spans import decode_protobuf

    ingest = OtlpIngest(where)
    for body in requests_in(order, name, bytes(range(16))):
        ingest.ingest(decode_protobuf(body))
    [path] = where.glob("*.jsonl")
    with path.open("rb") as file:
        lines = read_lines(file.fileno(), 0, path.stat().st_size)
        return list(iter_events(line.item for line in lines))


def owner(item: Any) -> str | None:
    node = getattr(item.payload, "node_id", None)
    return node if isinstance(node, str) else None


def check(items: list[LedgerItem], order: SpanOrder) -> list[int]:
    """The positions as listed, checked: each once, both maps agree, each node's events
    after its parent node's ``node_enter`` and after its own."""
    count = order.folded
    listed = [order.position(index) for index in range(count)]
    assert sorted(listed) == list(range(count))
    assert all(order.index(position) == index for index, position in enumerate(listed))
    parents_first([items[position] for position in listed])
    return listed


def parents_first(listed: list[Any]) -> None:
    """Each node's events listed after its parent node's ``node_enter`` and its own."""
    where: dict[str, int] = {}  # span -> index of its node_enter
    node_span: dict[str, str] = {}
    for index, item in enumerate(listed):
        if isinstance(item, NodeEnter) and item.payload.span_id:
            where.setdefault(item.payload.span_id, index)
            node_span[item.payload.node_id or ""] = item.payload.span_id
    for index, item in enumerate(listed):
        if isinstance(item, NodeEnter) and item.payload.parent_span_id in where:
            assert where[item.payload.parent_span_id] < index, f"{item} before its parent"
        node = owner(item)
        if node in node_span and not isinstance(item, NodeEnter):
            assert where[node_span[node]] < index, f"{item} before its node"


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("name", NAMES)
def test_each_recording_lists_parents_first_after_every_event(
    name: str, order: str, tmp_path: Path
) -> None:
    items = written(name, order, tmp_path)
    span_order = SpanOrder()
    for item in items:
        span_order.add(item)
        check(items, span_order)


def test_a_langgraph_run_sent_as_it_ended_lists_its_graph_first(tmp_path: Path) -> None:
    items = written("langgraph", "ended", tmp_path)
    order = SpanOrder()
    for item in items:
        order.add(item)
    assert order.moved > 0  # the root's chains came last
    listed = [items[position] for position in check(items, order)]
    entered = [item.payload.node_id for item in listed if isinstance(item, NodeEnter)]
    assert entered[:3] == ["agent:agent#1", "chain:RunnableSequence#1", "chain:Prompt#1"]
    assert entered.index("chain:tools#1") + 1 == entered.index("tool:get_weather#1")
    assert listed[0].type == "run_started"
    assert listed[-1].type == "run_completed"


def tree_run(rng: random.Random, spans: int) -> list[LedgerItem]:
    """A run of ``spans`` nested spans, each an enter and an exit written when it arrives,
    in a random order; some spans' parents never arrive."""
    parents: dict[str, str | None] = {}
    for number in range(spans):
        name = f"s{number}"
        parents[name] = rng.choice([None, *parents]) if parents else None
    lost = {name for name in parents if rng.random() < 0.1}
    arriving = [name for name in parents if name not in lost]
    rng.shuffle(arriving)
    items: list[LedgerItem] = []
    for name in arriving:
        node = f"chain:{name}#1"
        parent = parents[name] or "root"
        entered = NodeEnterPayload(node_id=node, span_id=name, parent_span_id=parent)
        moment = "2026-12-06T00:00:00.000000Z"
        items.append(NodeEnter(run_id="r", seq=len(items) + 1, time=moment, payload=entered))
        exited = NodeExitPayload(node_id=node, duration_micros=1, success=True)
        items.append(NodeExit(run_id="r", seq=len(items) + 1, time=moment, payload=exited))
    return items


@pytest.mark.parametrize("seed", range(40))
def test_any_tree_in_any_order_lists_parents_first(seed: int) -> None:
    rng = random.Random(seed)
    items = tree_run(rng, rng.randint(1, 60))
    order = SpanOrder()
    for item in items:
        order.add(item)
        check(items, order)


def test_a_parent_after_its_children_moves_only_its_own_head() -> None:
    """Each node's exit keeps its place: the list still reads as enter, inside, exit."""
    rng = random.Random(7)
    items = tree_run(rng, 0)
    for name, parent in [("c", "b"), ("b", "a"), ("a", "root")]:  # as ended: deepest first
        node = f"chain:{name}#1"
        moment = "2026-12-06T00:00:00.000000Z"
        entered = NodeEnterPayload(node_id=node, span_id=name, parent_span_id=parent)
        items.append(NodeEnter(run_id="r", seq=len(items) + 1, time=moment, payload=entered))
        exited = NodeExitPayload(node_id=node, duration_micros=1, success=True)
        items.append(NodeExit(run_id="r", seq=len(items) + 1, time=moment, payload=exited))
    order = SpanOrder()
    for item in items:
        order.add(item)
    said = [
        f"{item.type[5:]} {owner(item)}" for item in (items[order.position(n)] for n in range(6))
    ]
    assert said == [
        "enter chain:a#1",
        "enter chain:b#1",
        "enter chain:c#1",
        "exit chain:c#1",
        "exit chain:b#1",
        "exit chain:a#1",
    ]
