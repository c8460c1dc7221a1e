"""One tool call, one duration: the event list, the timeline (its number and its detail),
the store's tool call and ``runtop show`` all say the time from its ``tool_call`` to its
``tool_result``, rounded once (``tui.text.duration``: half up, from whole microseconds).

A tool's node is entered a little before its call and left a little after, and its exit
may say a third figure (``duration_micros``): the event list said 1.4 s where the
timeline said 1.5 s for the research sample's first search.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inspector.ledger import LedgerItem, ToolCall, ToolResult, read_ledger_lines
from inspector.model import RunKey, ToolCallView
from inspector.timeline import Timeline
from inspector.timeline_nodes import NodeKind
from tests.conftest import RUN_ID, line
from tui.cli import main
from tui.text import duration
from tui.text.events import describe_entry
from tui.text.timeline import node_facts, numbers

pytestmark = pytest.mark.timeout(30)

SAMPLES = Path(__file__).resolve().parents[2] / "tui" / "samples"


def at(seconds: float) -> str:
    return f"2026-11-28T14:30:{seconds:09.6f}Z"


NODE = "tool:search#1"


def tool_ledger(path: Path) -> Path:
    """A run with one tool call: its node 1.47 s, its call to its result 1.45 s (a half:
    rounded one way from two datetimes and another from two floats), its exit 1.46 s."""
    lines = [
        line(1, "run_started", {"skill": "s", "input": "q"}, time=at(0)),
        line(2, "node_enter", {"node_id": NODE}, time=at(1.0)),
        line(3, "tool_call", {"call_id": "c1", "node_id": NODE, "name": "search"}, time=at(1.01)),
        line(4, "tool_result", {"call_id": "c1", "node_id": NODE, "output": "x"}, time=at(2.46)),
        line(5, "node_exit", {"node_id": NODE, "duration_micros": 1_460_000}, time=at(2.47)),
        line(6, "run_completed", {"status": "ok"}, time=at(3)),
    ]
    ledger = path / f"{RUN_ID}.jsonl"
    ledger.write_bytes(b"".join(lines))
    return ledger


def items_of(ledger: Path) -> list[LedgerItem]:
    return [found.item for found in read_ledger_lines(str(ledger), 0, 1 << 62) if found.item]


def said_by_each_view(items: list[LedgerItem]) -> dict[str, set[str]]:
    """Each tool call's duration as each view writes it, by its call id."""
    said: dict[str, set[str]] = {}
    timeline = Timeline()
    timeline.extend(items)
    calls = [(at, item) for at, item in enumerate(items) if isinstance(item, ToolCall)]
    for at, call in calls:
        call_id = call.payload.call_id or ""
        # The event list: the call's entry, its node's enter and exit around it.
        entry = [
            item
            for item in items[max(0, at - 1) : at + 3]
            if getattr(getattr(item, "payload", None), "node_id", None) == call.payload.node_id
        ]
        _, text = describe_entry(entry, live=True)
        said.setdefault(call_id, set()).add(re.search(r"(?:✔|✘ error) (\S+)", text)[1])  # type: ignore[index]
        node = next(n for n in timeline.nodes() if n.kind is NodeKind.TOOL and n.call_id == call_id)
        said[call_id].add(numbers(node, 12).split()[0])
        said[call_id].add(re.search(r"·  (\S+)$", node_facts(node, 0.0)[0])[1])  # type: ignore[index]
        result = next(
            item
            for item in items
            if isinstance(item, ToolResult) and item.payload.call_id == call_id
        )
        assert call.timestamp is not None
        assert result.timestamp is not None
        view = ToolCallView(
            run=RunKey("dir", RUN_ID),
            call_id=call_id,
            name="",
            node_id=None,
            arguments=None,
            arguments_truncated=False,
            started_at=call.timestamp.timestamp(),
            seq=call.seq,
            ended_at=result.timestamp.timestamp(),
            result_seq=result.seq,
        )
        said[call_id].add(duration(view.duration))
    return said


def test_a_half_reads_the_same_in_every_view(tmp_path: Path) -> None:
    said = said_by_each_view(items_of(tool_ledger(tmp_path)))
    assert said == {"c1": {"1.5s"}}


@pytest.mark.parametrize("ledger", sorted(SAMPLES.glob("*.jsonl")), ids=lambda path: path.stem)
def test_each_sample_tool_call_reads_the_same_in_every_view(ledger: Path) -> None:
    for call_id, words in said_by_each_view(items_of(ledger)).items():
        assert len(words) == 1, (call_id, words)


def test_show_says_it_as_the_app_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tool_ledger(tmp_path)
    assert main(["show", RUN_ID, "--from", str(tmp_path)]) == 0
    events = capsys.readouterr().out
    assert main(["show", RUN_ID, "--from", str(tmp_path), "--timeline"]) == 0
    timeline = capsys.readouterr().out
    assert "search ✔ 1.5s" in events
    assert re.search(r"search\s+1\.5s", timeline), timeline


@pytest.mark.parametrize(
    ("seconds", "written"),
    [
        (1.45, "1.5s"),  # a half, from two datetimes exactly
        (1.4500000476837158, "1.5s"),  # the same half, from two floats
        (1.4499999523162842, "1.5s"),  # and a few tenths of a microsecond under
        (0.0995, "0.1s"),
        (0.0005, "0.001s"),
        (9.95, "10s"),
    ],
)
def test_a_duration_is_rounded_once_half_up(seconds: float, written: str) -> None:
    assert duration(seconds) == written
