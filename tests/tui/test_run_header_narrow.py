"""A run's header at 80 columns says what matters whole: its clock, tokens and cost, tool
calls (the status is on the line above), shorter forms and the least useful parts giving
way first, never a figure cut in its middle."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest
from rich.cells import cell_len

from inspector import LedgerDirectorySource
from inspector.model import RunExtras, RunKey, RunView, make_view
from ledger_reader import RunStatus, RunSummary, RunTotals
from tests.family_runs import family
from tests.tui.test_interaction import screen_lines
from tests.tui_support import loaded, open_run, settle
from tui.app import make_app
from tui.screens.run_header import counts_line
from tui.settings import Settings

pytestmark = pytest.mark.timeout(60)

FIGURE = re.compile(r"\$\d+\.\d{4}|\$\d+\.\d{2}|\$0\b")
"""A cost written whole (``$0.0242``, ``$1.25``, ``$0``)."""


def running_parent(calls: int = 12, errors: int = 3) -> RunView:
    """A live parent run in a model call, its tokens in the hundreds of thousands."""
    summary = RunSummary(
        run_id="run-1", status=RunStatus.RUNNING, current_node="llm:default#2", event_count=4812
    )
    own = RunTotals(prompt_tokens=91_200, output_tokens=4_400, cost_usd=0.4102)
    extras = RunExtras(totals=own, tool_calls=calls, tool_errors=errors)
    view = make_view(RunKey("here", "run-1"), summary, extras, detailed=True)
    family_totals = RunTotals(prompt_tokens=512_000, output_tokens=40_100, cost_usd=12.3456)
    return msgspec.structs.replace(view, with_children=family_totals)


def said(view: RunView, room: int, took: str = "1h 12m") -> str:
    return counts_line(view, took, following=True, down=False, room=room).plain


@pytest.mark.parametrize("room", [66, 70, 78, 98])
def test_the_counts_keep_clock_spending_and_tool_calls_whole(room: int) -> None:
    line = said(running_parent(), room)
    assert cell_len(line) <= room, line
    for whole in ("1h 12m", "Σ552.1k", "$12.35", "model call running", "following"):
        assert whole in line, line
    assert "12" in line.rsplit("  ", 1)[-1], line  # the tool calls, last
    assert "…" not in line, line


def test_with_room_the_counts_are_said_in_full() -> None:
    line = said(running_parent(), 200)
    assert "with its child runs (own 95.6k tokens $0.4102)" in line, line
    assert "4,812 events" in line, line  # counts as the source line says 5,080 runs
    assert line.endswith("12 tool calls (3 errors)"), line
    assert said(running_parent(50_000, 516), 200).endswith("50,000 tool calls (516 errors)")


def test_the_least_useful_parts_give_way_first() -> None:
    """The tokens' words are shortened before anything goes, then the parent's own
    spending and the count of events go; the tool calls are said by their glyphs last."""
    lines = [said(running_parent(), room) for room in range(200, 50, -1)]
    order = ["with its child runs", "(own", "events", "tool calls"]
    gone_at = [next(n for n, line in enumerate(lines) if part not in line) for part in order]
    assert gone_at == sorted(gone_at), dict(zip(order, gone_at, strict=True))


async def test_a_parent_runs_header_at_80x24_says_its_tool_calls(tmp_path: Path) -> None:
    """It read ``5.9k tokens $0.0242 with its child runs (own 912 tokens $0.00…``: the own
    cost cut mid-figure and the tool calls gone."""
    parent = await family(tmp_path)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path, name="dir")])
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, parent)
        await settle(pilot, lambda: "tool call" in screen_lines(app)[1], "the tool calls")
        counts = screen_lines(app)[1]
        assert "Σ" in counts, counts
        assert "…" not in counts, counts
        assert all(FIGURE.fullmatch(cost) for cost in re.findall(r"\$[\d.]+", counts)), counts

        await pilot.resize_terminal(160, 48)  # room again: every word
        await settle(pilot, lambda: "with its child runs" in screen_lines(app)[1], "in full")
        assert "(own 110 tokens $0.0100)" in screen_lines(app)[1]


async def test_a_child_runs_link_to_its_parent_stays_whole_at_80x24(tmp_path: Path) -> None:
    """A long source and the input took the line, and ``parent run_2026… (p)`` was cut
    off: the link says its id's end and the source its path's, before the input is cut."""
    parent = await family(tmp_path)
    source = LedgerDirectorySource(tmp_path, name=f"{tmp_path}/nightly/ledgers")
    app = make_app(Settings(flush_interval=0.01), [source])
    async with app.run_test(size=(80, 24)) as pilot:
        rows = await loaded(pilot, 4)
        child = next(run for run in rows.rows if run.parent_run_id == parent)
        await open_run(pilot, child.run_id)
        await settle(pilot, lambda: "(p)" in screen_lines(app)[2], "the parent's link")
        links = screen_lines(app)[2]
        assert f"parent …{parent[-12:]} (p)" in links, links
        assert "/ledgers (live)" in links, links


async def test_with_the_keys_help_open_the_header_fits_the_cells_it_has(tmp_path: Path) -> None:
    """``?`` opened beside the run narrows its header while the screen keeps its 80
    columns: laid out for the screen, the counts were cut mid-figure (``$0.80…``)."""
    parent = await family(tmp_path)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path, name="dir")])
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, parent)
        await settle(pilot, lambda: "tool call" in screen_lines(app)[1], "the counts")
        await pilot.press("question_mark")
        await settle(pilot, lambda: "▏" in screen_lines(app)[1], "the keys help")

        def header(row: int) -> str:
            return screen_lines(app)[row].split("▏")[0]

        await settle(pilot, lambda: "(own" not in header(1), "the counts said short")
        assert "Σ" in header(1), header(1)
        assert "0 tool calls" in header(1), header(1)
        for row in (0, 1):  # nothing cut at the edge
            assert not header(row).rstrip().endswith("…"), header(row)
        assert all(FIGURE.fullmatch(cost) for cost in re.findall(r"\$[\d.]+", header(1)))
        assert f"…{parent[-12:]}" in header(0), header(0)
