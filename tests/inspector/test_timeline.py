"""The timeline model: nodes, nesting, the summary, growth, and what damaged ledgers hold."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from inspector.timeline import NodeKind, Outcome, Timeline, outcome_of_status
from ledger_reader import LedgerItem
from ledger_reader.decode import decode_line
from ledger_reader.lines import read_ledger_lines
from tests.conftest import FIXTURES

BASE = datetime(2026, 11, 29, 6, 45, tzinfo=UTC)
RUN = "run_20261129T064500000_7171717171717171"


class Ledger:
    """Ledger lines written as a writer would, each at a time given in seconds from BASE."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def add(self, at: float | None, kind: str, **payload: Any) -> Ledger:
        moment = "not a time" if at is None else (BASE + timedelta(seconds=at)).isoformat()
        record = {
            "run_id": RUN,
            "seq": len(self.lines) + 1,
            "time": moment.replace("+00:00", "Z"),
            "type": kind,
            "payload": payload,
        }
        self.lines.append(json.dumps(record).encode() + b"\n")
        return self

    def raw(self, data: bytes) -> Ledger:
        self.lines.append(data)
        return self

    def tool(self, at: float, until: float, name: str, number: int, *, error: bool = False) -> None:
        node, call = f"tool:{name}#{number}", f"call_{name}{number}"
        self.add(at, "node_enter", node_id=node, node_name=name)
        self.add(at, "tool_call", call_id=call, node_id=node, name=name, arguments={})
        self.add(until, "tool_result", call_id=call, node_id=node, output="x", is_error=error)
        self.add(until, "node_exit", node_id=node, success=not error)

    def items(self) -> list[LedgerItem]:
        found = [decode_line(line.rstrip(b"\n")) for line in self.lines]
        return [item for item in found if item is not None]


def at(seconds: float) -> float:
    return (BASE + timedelta(seconds=seconds)).timestamp()


def parallel_run() -> Ledger:
    """A model call, three tool calls at once under a step, a second model call, an approval."""
    ledger = Ledger()
    ledger.add(0, "run_started", skill="research")
    ledger.add(1, "node_enter", node_id="llm:default#1", node_name="default")
    ledger.add(2, "llm_chunk", index=0, delta="thinking")
    ledger.add(4, "llm_call", model="sonnet", prompt_tokens=800, output_tokens=40, cost_usd=0.01)
    ledger.add(4, "node_exit", node_id="llm:default#1", success=True)
    ledger.add(5, "node_enter", node_id="plan:gather#1", node_name="gather")
    ledger.add(5, "node_enter", node_id="tool:search#1", node_name="search")
    ledger.add(5, "tool_call", call_id="c1", node_id="tool:search#1", name="search")
    ledger.add(5.5, "node_enter", node_id="tool:fetch#1", node_name="fetch")
    ledger.add(5.5, "tool_call", call_id="c2", node_id="tool:fetch#1", name="fetch")
    ledger.add(6, "node_enter", node_id="tool:fetch#2", node_name="fetch")
    ledger.add(6, "tool_call", call_id="c3", node_id="tool:fetch#2", name="fetch")
    ledger.add(7, "tool_result", call_id="c1", node_id="tool:search#1", output="a")
    ledger.add(7, "node_exit", node_id="tool:search#1", success=True)
    ledger.add(7.5, "tool_result", call_id="c3", node_id="tool:fetch#2", output="b", is_error=True)
    ledger.add(7.5, "node_exit", node_id="tool:fetch#2", success=False)
    ledger.add(8, "tool_result", call_id="c2", node_id="tool:fetch#1", output="c")
    ledger.add(8, "node_exit", node_id="tool:fetch#1", success=True)
    ledger.add(8, "node_exit", node_id="plan:gather#1", success=True)
    ledger.add(9, "node_enter", node_id="approval:publish#1", node_name="publish")
    ledger.add(9, "approval_request", approval_id="ap1", prompt="Publish?")
    ledger.add(12, "approval_response", approval_id="ap1", approved=False, reason="no")
    ledger.add(12, "node_exit", node_id="approval:publish#1", success=False)
    ledger.add(13, "node_enter", node_id="llm:default#2", node_name="default")
    ledger.add(
        15, "llm_call", model="sonnet", prompt_tokens=900, output_tokens=60, node_id="llm:default#2"
    )
    ledger.add(15, "node_exit", node_id="llm:default#2", success=True)
    ledger.add(16, "run_completed", status="ok")
    return ledger


def test_parallel_run_nodes_nesting_and_positions() -> None:
    ledger = parallel_run()
    timeline = Timeline()
    timeline.extend(ledger.items())
    rows = timeline.rows()
    assert [(node.id, node.depth, node.parent_id) for node in rows] == [
        ("llm:default#1", 0, None),
        ("plan:gather#1", 0, None),
        ("tool:search#1", 1, "plan:gather#1"),
        ("tool:fetch#1", 1, "plan:gather#1"),
        ("tool:fetch#2", 1, "plan:gather#1"),
        ("approval:publish#1", 0, None),
        ("llm:default#2", 0, None),
    ]
    assert [node.row for node in rows] == list(range(7))
    model, step, search, fetch1, fetch2, gate, model2 = rows
    assert (model.kind, model.name, model.start, model.end) == (
        NodeKind.MODEL,
        "sonnet",
        at(1),
        at(4),
    )
    assert (model.prompt_tokens, model.output_tokens, model.tokens, model.cost_usd) == (
        800,
        40,
        840,
        0.01,
    )
    assert model.position == 1
    assert model.detail_position == 3
    assert step.kind is NodeKind.STEP
    assert step.name == "gather"
    assert (search.call_id, search.outcome, search.duration) == ("c1", Outcome.OK, 2.0)
    assert fetch2.outcome is Outcome.ERROR
    assert fetch1.outcome is Outcome.OK
    assert search.detail_position == 7  # its tool_call
    assert (gate.kind, gate.approval_id, gate.outcome) == (NodeKind.APPROVAL, "ap1", Outcome.DENIED)
    assert model2.tokens == 960
    assert timeline.span() == (at(0), at(16))
    assert timeline.run_end == at(16)
    assert timeline.status == "ok"
    assert timeline.name == "research"
    assert all(not node.notes for node in rows)


def test_summary_counts_parallel_time_once() -> None:
    timeline = Timeline()
    timeline.extend(parallel_run().items())
    summary = timeline.summary()
    assert summary.wall == pytest.approx(16)
    # tools 5..8 at once count 3 s, not their 2 + 2.5 + 1.5 = 6 s
    assert summary.tools == pytest.approx(3)
    assert summary.tool_time == pytest.approx(6)
    assert summary.model == pytest.approx(3 + 2)
    assert summary.approvals == pytest.approx(3)
    assert summary.steps == pytest.approx(0)  # the step holds only tool time
    assert summary.idle == pytest.approx(16 - 3 - 5 - 3)
    assert summary.wall == pytest.approx(
        summary.model
        + summary.tools
        + summary.approvals
        + summary.child_runs
        + summary.steps
        + summary.idle
    )
    assert (summary.tool_calls, summary.tool_errors, summary.model_calls) == (3, 1, 2)
    assert (summary.prompt_tokens, summary.output_tokens) == (1700, 100)
    assert summary.in_flight == 0
    assert summary.nodes == 7


def test_overlap_between_kinds_goes_to_the_first_in_priority() -> None:
    ledger = Ledger()
    ledger.add(0, "run_started")
    ledger.add(0, "node_enter", node_id="llm:m#1")
    ledger.tool(1, 3, "search", 1)  # a tool while the model streams
    ledger.add(4, "node_exit", node_id="llm:m#1", success=True)
    ledger.add(4, "run_completed", status="ok")
    timeline = Timeline()
    timeline.extend(ledger.items())
    summary = timeline.summary()
    assert (summary.tools, summary.model, summary.idle) == pytest.approx((2, 2, 0))
    assert summary.model_time == pytest.approx(4)


def test_live_run_grows_and_in_flight_nodes_are_open_ended() -> None:
    ledger = parallel_run()
    items = ledger.items()
    whole = Timeline()
    whole.extend(items)
    growing = Timeline()
    for count in range(len(items)):
        growing.add(items[count])
        if count == 9:  # search and fetch#1 in flight
            open_ids = [node.id for node in growing.rows() if node.in_flight]
            assert open_ids == ["plan:gather#1", "tool:search#1", "tool:fetch#1"]
            assert growing.rows()[2].end_or(at(6.5)) == at(6.5)
            assert growing.span(at(6.5)) == (at(0), at(6.5))
            assert growing.summary(at(6.5)).in_flight == 3
            assert growing.run_end is None
            assert growing.items_read == 10
    assert [(n.id, n.start, n.end, n.outcome) for n in growing.rows()] == [
        (n.id, n.start, n.end, n.outcome) for n in whole.rows()
    ]


def test_version_changes_with_every_item() -> None:
    timeline = Timeline()
    versions = []
    for item in parallel_run().items():
        timeline.add(item)
        versions.append(timeline.version)
    assert all(later > earlier for earlier, later in itertools.pairwise(versions))


def test_child_runs_sit_under_the_run_in_start_order() -> None:
    timeline = Timeline()
    timeline.extend(parallel_run().items())
    child = timeline.set_child_run("run_child", "summarizer", at(5.2), None, Outcome.RUNNING)
    rows = timeline.rows()
    assert child.parent is None
    assert child.kind is NodeKind.CHILD_RUN
    assert child.depth == 0
    # after the step that started before it, and that step's nodes
    assert [node.id for node in rows][4:7] == [
        "tool:fetch#2",
        "run:run_child",
        "approval:publish#1",
    ]
    assert child.row == 5
    # the same child again, finished: updated, not added twice
    timeline.set_child_run(
        "run_child", "summarizer", at(5.2), at(10), outcome_of_status("succeeded")
    )
    assert len([n for n in timeline.rows() if n.kind is NodeKind.CHILD_RUN]) == 1
    assert (child.end, child.outcome) == (at(10), Outcome.OK)
    assert timeline.summary().child_run_count == 1


def test_run_completed_closes_what_is_still_open() -> None:
    ledger = Ledger()
    ledger.add(0, "run_started")
    ledger.add(1, "node_enter", node_id="tool:slow#1", node_name="slow")
    ledger.add(1, "tool_call", call_id="c1", node_id="tool:slow#1", name="slow")
    ledger.add(2, "cancel_requested", reason="user")
    ledger.add(3, "run_completed", status="cancelled")
    timeline = Timeline()
    timeline.extend(ledger.items())
    (node,) = timeline.rows()
    assert (node.end, node.outcome) == (at(3), Outcome.CANCELED)
    assert node.notes == ("never exited: ended with the run",)


def test_cancelled_node_exit_after_a_cancel_request() -> None:
    timeline = Timeline()
    path = FIXTURES / "run_20261128T143000045_1f2e3d4c5b6a7980.jsonl"
    timeline.extend(line.item for line in read_ledger_lines(path) if line.item is not None)
    (node,) = timeline.rows()
    assert node.kind is NodeKind.MODEL
    assert node.outcome is Outcome.CANCELED
    assert node.duration == pytest.approx(1.95)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.name[:28])
def test_every_sample_ledger_folds(path: Path) -> None:
    items = [line.item for line in read_ledger_lines(path) if line.item is not None]
    timeline = Timeline()
    timeline.extend(items)
    assert timeline.items_read == len(items)
    start, end = timeline.span()
    assert start <= end
    for node in timeline.rows():
        assert start <= node.start <= node.end_or(end) <= end


def test_research_sample_has_its_calls_and_tokens() -> None:
    path = FIXTURES / "run_20261128T143000012_4f1a9c2e7b3d8a60.jsonl"
    timeline = Timeline()
    timeline.extend(line.item for line in read_ledger_lines(path) if line.item is not None)
    kinds = [(node.kind, node.name) for node in timeline.rows()]
    assert kinds == [
        (NodeKind.MODEL, "claude-sonnet"),
        (NodeKind.TOOL, "web_search"),
        (NodeKind.TOOL, "read_page"),
        (NodeKind.MODEL, "claude-sonnet"),
    ]
    summary = timeline.summary()
    assert (summary.prompt_tokens, summary.output_tokens) == (812 + 1930, 41 + 88)
    assert summary.wall == pytest.approx(4.85)


# -- bad input --------------------------------------------------------------------


def test_damaged_lines_are_counted_and_a_recovered_event_folded() -> None:
    ledger = Ledger()
    ledger.add(0, "run_started")
    ledger.raw(b"{not json at all\n")
    torn = Ledger().add(1, "node_enter", node_id="tool:a#1", node_name="a").lines[0]
    ledger.raw(b'{"run_id":"x","seq":3,"ti' + torn)  # a torn line with a whole event after it
    ledger.add(2, "node_exit", node_id="tool:a#1", success=True)
    timeline = Timeline()
    items = ledger.items()
    timeline.extend(items)
    assert timeline.damaged == 2
    assert timeline.items_read == len(items) == 4
    (node,) = timeline.rows()
    assert (node.id, node.start, node.end, node.position) == ("tool:a#1", at(1), at(2), 2)


def test_tool_result_without_a_call_is_a_point_with_a_note() -> None:
    ledger = Ledger()
    ledger.add(0, "run_started")
    ledger.add(3, "tool_result", call_id="ghost", output="?", is_error=True)
    timeline = Timeline()
    timeline.extend(ledger.items())
    (node,) = timeline.rows()
    assert (node.kind, node.start, node.end, node.outcome) == (
        NodeKind.TOOL,
        at(3),
        at(3),
        Outcome.ERROR,
    )
    assert node.call_id == "ghost"
    assert node.notes == ("tool_result with no tool_call: start unknown",)


def test_tool_call_without_node_enter_runs_to_its_result() -> None:
    ledger = Ledger()  # as gridctl's persist package writes some
    ledger.add(0, "run_started")
    ledger.add(1, "tool_call", call_id="c1", name="fetch")
    ledger.add(2, "node_enter", node_id="llm:m#1")  # not nested in the tool
    ledger.add(4, "tool_result", call_id="c1", output="x")
    ledger.add(5, "node_exit", node_id="llm:m#1", success=True)
    timeline = Timeline()
    timeline.extend(ledger.items())
    tool, model = timeline.rows()
    assert (tool.id, tool.kind, tool.name, tool.start, tool.end) == (
        "call:c1",
        NodeKind.TOOL,
        "fetch",
        at(1),
        at(4),
    )
    assert model.parent is None
    assert model.end == at(5)


def test_node_exit_without_enter_starts_from_its_duration() -> None:
    ledger = Ledger()
    ledger.add(0, "run_started")
    ledger.add(5, "node_exit", node_id="tool:orphan#1", duration_micros=2_000_000, success=True)
    ledger.add(6, "node_exit", node_id="llm:m#1", success=False)
    timeline = Timeline()
    timeline.extend(ledger.items())
    orphan, bare = timeline.rows()
    assert (orphan.kind, orphan.start, orphan.end, orphan.outcome) == (
        NodeKind.TOOL,
        at(3),
        at(5),
        Outcome.OK,
    )
    assert orphan.notes == ("no node_enter: start worked out from its duration",)
    assert (bare.start, bare.end, bare.outcome) == (at(6), at(6), Outcome.ERROR)
    assert bare.notes == ("no node_enter and no duration: start unknown",)
    assert timeline.summary().in_flight == 0


def test_events_out_of_time_order_are_placed_by_their_times() -> None:
    ledger = Ledger()  # as OTLP ingest writes spans that arrive children first
    ledger.add(0, "run_started")
    ledger.tool(5, 6, "late", 1)
    ledger.tool(1, 2, "early", 1)
    ledger.add(3, "node_exit", node_id="llm:m#1", duration_micros=1_000_000, success=True)
    ledger.add(7, "run_completed", status="ok")
    timeline = Timeline()
    timeline.extend(ledger.items())
    assert [node.id for node in timeline.rows()] == ["tool:early#1", "llm:m#1", "tool:late#1"]
    assert [node.row for node in timeline.rows()] == [0, 1, 2]
    assert timeline.summary().tools == pytest.approx(2)


def test_node_entered_twice_is_two_nodes() -> None:
    ledger = Ledger()
    ledger.add(0, "run_started")
    ledger.add(1, "node_enter", node_id="tool:a#1")
    ledger.add(2, "node_enter", node_id="tool:a#1")
    ledger.add(3, "node_exit", node_id="tool:a#1", success=True)
    ledger.add(4, "run_completed", status="ok")
    timeline = Timeline()
    timeline.extend(ledger.items())
    first, second = timeline.rows()
    assert (first.id, second.id) == ("tool:a#1", "tool:a#1~2")
    assert second.notes == ("entered again before tool:a#1 exited",)
    assert (second.end, second.outcome) == (at(3), Outcome.OK)
    assert (first.end, first.outcome) == (at(4), Outcome.UNFINISHED)


def test_untimed_events_are_counted_not_placed() -> None:
    ledger = Ledger()
    ledger.add(0, "run_started")
    ledger.add(None, "node_enter", node_id="tool:a#1")
    ledger.add(2, "node_exit", node_id="tool:a#1", duration_micros=500_000, success=True)
    timeline = Timeline()
    timeline.extend(ledger.items())
    assert timeline.untimed == 1
    (node,) = timeline.rows()
    assert (node.start, node.end) == (at(1.5), at(2))


def test_llm_call_with_no_model_node_is_a_point_with_its_tokens() -> None:
    ledger = Ledger()
    ledger.add(0, "run_started")
    ledger.add(2, "llm_call", model="gpt", prompt_tokens=10, output_tokens=5)
    timeline = Timeline()
    timeline.extend(ledger.items())
    (node,) = timeline.rows()
    assert (node.kind, node.name, node.tokens, node.duration) == (NodeKind.MODEL, "gpt", 15, 0.0)
    assert node.notes == ("llm_call with no model node open: start unknown",)


def test_approval_without_node_enter_runs_from_request_to_response() -> None:
    ledger = Ledger()
    ledger.add(0, "run_started")
    ledger.add(1, "approval_request", approval_id="ap1", prompt="ok?")
    ledger.add(4, "approval_response", approval_id="ap1", approved=True)
    ledger.add(5, "approval_response", approval_id="ap9", approved=False)
    timeline = Timeline()
    timeline.extend(ledger.items())
    gate, stray = timeline.rows()
    assert (gate.start, gate.end, gate.outcome) == (at(1), at(4), Outcome.OK)
    assert (stray.start, stray.end, stray.outcome) == (at(5), at(5), Outcome.DENIED)
    assert stray.notes == ("approval_response with no request: start unknown",)


def test_otel_span_is_a_step_with_its_duration() -> None:
    ledger = Ledger()
    ledger.add(0, "run_started")
    ledger.add(1, "otel_span", name="retrieve", span_id="ab", duration_micros=1_500_000)
    ledger.add(2, "otel_span", name="broken", duration_micros="long")
    timeline = Timeline()
    timeline.extend(ledger.items())
    span, broken = timeline.rows()
    assert (span.kind, span.name, span.start, span.end, span.outcome) == (
        NodeKind.STEP,
        "retrieve",
        at(1),
        at(2.5),
        Outcome.OK,
    )
    assert broken.notes == ("otel_span with no duration",)
    # a span closed at once holds nothing: the next node is not nested in it
    ledger.tool(3, 4, "t", 1)
    timeline = Timeline()
    timeline.extend(ledger.items())
    assert timeline.rows()[-1].parent is None


def test_hostile_names_and_ids_are_kept_as_text() -> None:
    ledger = Ledger()
    ledger.add(0, "run_started")
    ledger.add(1, "node_enter", node_id="tool:[bold]x\x1b[31m#1", node_name="[red]boom\x1b]0;t\x07")
    ledger.add(2, "node_enter")  # no node id at all
    timeline = Timeline()
    timeline.extend(ledger.items())
    named, anonymous = timeline.rows()
    assert named.name == "[red]boom\x1b]0;t\x07"
    assert named.kind is NodeKind.TOOL
    assert anonymous.id == "node#1"
    assert anonymous.kind is NodeKind.STEP


def test_to_json_gives_start_end_and_parent() -> None:
    timeline = Timeline()
    timeline.extend(parallel_run().items())
    nodes = timeline.to_json()
    search = nodes[2]
    assert search["id"] == "tool:search#1"
    assert search["parent"] == "plan:gather#1"
    assert (search["start"], search["end"]) == (
        "2026-11-29T06:45:05.000000Z",
        "2026-11-29T06:45:07.000000Z",
    )
    assert (search["offset"], search["end_offset"], search["duration"]) == (5.0, 7.0, 2.0)
    assert nodes[0]["prompt_tokens"] == 800
    assert nodes[0]["kind"] == "model"
    json.dumps(nodes)  # plain JSON all through


def test_many_nodes_in_order_stay_appended() -> None:
    ledger = Ledger()
    ledger.add(0, "run_started")
    for number in range(2000):
        ledger.tool(number, number + 0.5, "t", number)
    timeline = Timeline()
    timeline.extend(ledger.items())
    rows = timeline.rows()
    assert len(rows) == len(timeline) == 2000
    assert all(node.row == index for index, node in enumerate(rows))
    assert not timeline._rows_stale


# -- filled from a store ------------------------------------------------------------


async def test_fill_timeline_reads_a_run_and_its_child_runs_from_a_directory(
    tmp_path: Path,
) -> None:
    from inspector import LedgerDirectorySource, RunKey, RunStore
    from inspector.timeline_fill import fill_timeline
    from tests.inspector.test_sources_contract import until

    parent = parallel_run()
    (tmp_path / f"{RUN}.jsonl").write_bytes(b"".join(parent.lines))
    child_id = "run_20261129T064505000_c0c0c0c0c0c0c0c0"
    child = Ledger()
    child.add(5.2, "run_started", skill="summarize", parent_run_id=RUN)
    child.add(9.5, "run_completed", status="error", error="boom")
    lines = [
        line.replace(b'"run_id": "' + RUN.encode(), b'"run_id": "' + child_id.encode())
        for line in child.lines
    ]
    (tmp_path / f"{child_id}.jsonl").write_bytes(b"".join(lines))
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(tmp_path, name="dir"))
        await until(store, lambda s: len(s.runs) == 2, "both runs")
        timeline = Timeline()
        folded = await fill_timeline(store, RunKey("dir", RUN), timeline, page=4)
        assert folded == timeline.items_read == len(parent.lines)
        again = await fill_timeline(store, RunKey("dir", RUN), timeline, page=4)
    assert again == 0
    runs = [node for node in timeline.rows() if node.kind is NodeKind.CHILD_RUN]
    assert [(n.run_id, n.name, n.start, n.end, n.outcome) for n in runs] == [
        (child_id, "summarize", at(5.2), at(9.5), Outcome.ERROR)
    ]
    assert len(timeline) == 8
    summary = timeline.summary()
    # 8 to 9 the child ran alone (9 to 9.5 an approval was open): its time, not idle
    assert summary.child_runs == pytest.approx(1.0)


def test_the_summary_says_one_node_and_canceled_in_the_projects_spelling() -> None:
    """One node is "1 node", not "1 nodes"; a canceled node says "canceled", the word
    every other screen uses (the ledger's "cancelled" is only read, never shown)."""
    import msgspec

    from tui.text.timeline import OUTCOME_WORDS, summary_text

    timeline = Timeline()
    timeline.extend(parallel_run().items())
    summary = timeline.summary()
    assert "1 node," in summary_text(msgspec.structs.replace(summary, nodes=1)) + ","
    assert " 1 nodes" not in summary_text(msgspec.structs.replace(summary, nodes=1))
    assert f"{summary.nodes:,} nodes" in summary_text(summary)
    assert OUTCOME_WORDS[Outcome.CANCELED] == "canceled"
