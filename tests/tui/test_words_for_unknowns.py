"""Words and marks say no more than is known, and one thing one way.

- The event stream, the comparison, the table, the header and the timeline write a model
  call's tokens alike (``1.8k``).
- A comparison against a run still going gives no verdict in words, and of a tool the live
  run may still call says it is not decided yet.
- Zoomed in, a finished bar cut at the window's right edge does not end in ``▸``, the mark
  of a node still running.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult

from inspector.comparison import RunFacts, ToolUse, compare
from inspector.model import RunKey
from ledger_reader import LlmCall
from ledger_reader.events import LlmCallPayload
from tests.conftest import RUN_ID
from tui.text.events import describe
from tui.text.timeline import OPEN_END, BarCells, bar_text
from tui.widgets.comparison_table import ComparisonTable

pytestmark = pytest.mark.timeout(30)


def test_a_model_calls_tokens_are_written_as_everywhere_else() -> None:
    call = LlmCall(
        run_id="run_x",
        seq=3,
        time="2026-12-02T00:00:00Z",
        payload=LlmCallPayload(model="m", prompt_tokens=1800, output_tokens=64, cost_usd=0.0082),
    )
    assert describe(call) == "model m 1.8k in / 64 out $0.0082"
    half = LlmCall(run_id="run_x", seq=4, payload=LlmCallPayload(model="m", output_tokens=12))
    assert describe(half) == "model m ? in / 12 out"  # not "0 in": it was never said


def facts(run_id: str, *, ended: bool, seconds: float, tools: tuple[ToolUse, ...]) -> RunFacts:
    return RunFacts(
        key=RunKey("runs", run_id),
        status="succeeded" if ended else "running",
        succeeded=ended,
        settled=ended,
        ended=ended,
        duration=seconds,
        prompt_tokens=2742,
        output_tokens=None if not ended else 300,
        cost_usd=None,
        model_calls=1,
        tool_calls=len(tools),
        tools=tools,
        errors=0,
        error=None,
        events_read=10,
        events_total=10 if ended else None,
    )


class Shown(App[None]):
    def compose(self) -> ComposeResult:
        yield ComparisonTable()


async def table_text(left: RunFacts, right: RunFacts) -> str:
    app = Shown()
    async with app.run_test(size=(160, 30)):
        table = app.query_one(ComparisonTable)
        table.show(compare(left, right))
        return "\n".join(line.plain for line in table.lines(160))


async def test_no_verdict_in_words_against_a_run_still_going() -> None:
    plan = ToolUse("plan", calls=1, seconds=0.3)
    apply = ToolUse("apply", calls=1, seconds=190.0)
    finished = facts("run_a", ended=True, seconds=193.0, tools=(plan, apply))
    going = facts("run_b", ended=False, seconds=6.0, tools=(plan,))
    text = await table_text(finished, going)
    duration = next(line for line in text.splitlines() if line.startswith("duration"))
    assert "faster" not in duration
    assert duration.rstrip().endswith("? not decided yet")
    assert "6.0s so far" in duration  # the figure still says what is known
    tool = next(line for line in text.splitlines() if line.strip().startswith("apply"))
    assert tool.rstrip().endswith("? only in A so far")
    tokens = next(line for line in text.splitlines() if line.startswith("prompt tokens"))
    assert "2.7k" in tokens
    assert "2,742" not in tokens
    ended = facts("run_b", ended=True, seconds=6.0, tools=(plan,))
    text = await table_text(finished, ended)
    tool = next(line for line in text.splitlines() if line.strip().startswith("apply"))
    assert tool.rstrip().endswith("≠ only in A")  # decided: B ended without calling it


def test_a_bar_cut_at_the_edge_is_not_drawn_as_running() -> None:
    cut = BarCells(0, 6, before=False, after=True, point=False)
    assert not bar_text(cut, in_flight=False).endswith(OPEN_END)
    assert bar_text(cut, in_flight=False).endswith("→")
    running = BarCells(0, 6, before=False, after=False, point=False)
    assert bar_text(running, in_flight=True).endswith(OPEN_END)
    assert bar_text(BarCells(0, 6, True, False, False), in_flight=False).startswith("←")


def test_a_running_nodes_facts_say_running_once() -> None:
    """The timeline's detail read `model claude-haiku  ·  running  ·  running`."""
    from inspector.timeline import Timeline
    from ledger_reader import decode_line
    from tests.conftest import line
    from tui.text.timeline import node_facts

    timeline = Timeline("run_x")
    raw = [
        line(1, "run_started", {"skill": "s"}, run_id="run_x"),
        line(2, "node_enter", {"node_id": "llm:m#1", "node_name": "m"}, run_id="run_x"),
        line(
            3,
            "llm_call",
            {"node_id": "llm:m#1", "model": "m", "prompt_tokens": 1800},
            run_id="run_x",
        ),
    ]
    timeline.extend([decode_line(text.rstrip(b"\n")) for text in raw])
    node = timeline.node("llm:m#1")
    assert node is not None
    facts = node_facts(node, origin=node.start)
    assert facts[0].count("running") == 1, facts[0]
    assert "1.8k prompt + ? output tokens" in "\n".join(facts)


async def test_an_action_says_it_came_from_runtop_whichever_source_carries_it(
    tmp_path: Path,
) -> None:
    """A cancel from the app was recorded `by tui` in one place and `by runtop` over the
    attach API: one name, so a ledger reads the same whoever carried the request."""
    import asyncio
    import json

    from inspector import LedgerDirectorySource, ManagerSource
    from ledger_reader import CancelRequested, decode_line, iter_events
    from run_manager import Manager
    from tests.agents import Sleeper
    from tests.conftest import started

    async with Manager(ledger_dir=tmp_path / "managed") as manager:
        handle = manager.start(Sleeper(), "30")
        await asyncio.sleep(0.05)
        await ManagerSource(manager, name="local").cancel(handle.run_id, "too slow")
        await handle.wait()
        ledger = tmp_path / "managed" / f"{handle.run_id}.jsonl"
        lines = ledger.read_bytes().splitlines()
        asked = [e for e in iter_events(map(decode_line, lines)) if isinstance(e, CancelRequested)]
        assert [e.payload.source for e in asked] == ["runtop"]

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / f"{RUN_ID}.jsonl").write_bytes(started())
    source = LedgerDirectorySource(runs, name="runs")
    updates = source.updates()
    await anext(updates)  # the ledger read: its path known
    await source.cancel(RUN_ID, "too slow")
    request = json.loads(next((runs / ".control").glob("*.cancel")).read_text())
    assert request["source"] == "runtop"
    await updates.aclose()
    await source.close()


async def test_a_refused_cancel_is_said_one_way(fixtures: Path) -> None:
    """The greyed key said `cannot cancel: the run already ended (succeeded)`, a cancel
    confirmed as the run ended `cannot cancel run_…: the run already ended (succeeded)`."""
    from inspector import ActionRefused
    from tests.tui_support import loaded, noticed, sample_app

    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        rows = await loaded(pilot)
        ended = next(run for run in rows.rows if not run.live)
        rows.select_key(ended.key)
        await pilot.press("c")
        said = await noticed(pilot, "cannot cancel")
        with pytest.raises(ActionRefused) as refused:
            await app.store.cancel(ended.key, None)
        assert str(refused.value) == said


def test_a_node_that_failed_says_error_as_a_tool_call_does() -> None:
    """`← exit llm:claude-haiku#1 failed in 2.9s` beside `✘ error` and `ok`: one word."""
    from ledger_reader import NodeExit
    from ledger_reader.events import NodeExitPayload

    failed = NodeExit(
        run_id="run_x",
        seq=5,
        payload=NodeExitPayload(node_id="llm:m#1", duration_micros=2_900_000, success=False),
    )
    assert describe(failed) == "exit llm:m#1 error in 2.9s"
