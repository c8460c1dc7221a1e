"""One vocabulary and one way of writing a number, on every screen that says it.

A run's cost is written alike in its header, the table and a narrow column; a comparison
says what was not recorded as the run screen does; ``running`` and ``done`` are said one
way everywhere; runs that never said their tokens are not ``0 tok``; a denial is not
followed by a tick; a followed paragraph's newest text is in view. Each test here reads
what the screen shows.
"""

from __future__ import annotations

import io
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.app import App, ComposeResult

from inspector import LedgerDirectorySource, RunStore, RunView
from ledger_reader import RunStatus
from tests.conftest import REPO
from tests.inspector.test_sources_contract import until
from tests.tui_support import drawn_cells, events_read, loaded, open_run, sample_app, settle
from tui import textual_compat as compat
from tui.app import make_app
from tui.screens.compare import CompareScreen
from tui.screens.run import RunScreen
from tui.screens.tool_calls import ToolCallsScreen
from tui.settings import Settings
from tui.text import cost, duration, offset, tokens
from tui.text.runs import relative, tokens_and_cost
from tui.widgets.comparison_table import ComparisonTable, amount
from tui.widgets.detail import EventDetail
from tui.widgets.event_list import EventList
from tui.widgets.run_table import SORT_KEYS, RunTable
from tui.widgets.source_line import SourceLine

pytestmark = pytest.mark.timeout(60)

RESEARCH = "run_20261128T143000012_4f1a9c2e7b3d8a60"
"""The sample run with model calls: 2.9k tokens, $0.0102."""
CANCELED = "run_20261128T143000045_1f2e3d4c5b6a7980"
"""The sample run of skill ``summarize``, agent ``summarizer``; no model call said tokens."""
DEPLOY = "run_20261128T143000031_9c8b7a6f5e4d3c2b"
"""The sample run that failed on its ``shell`` call; no model call."""


def screen_lines(app: Any) -> list[str]:
    """The terminal as the user sees it: every widget composed, scroll bars included."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(compat.screen_update(app.screen))
    return console.export_text().splitlines()


def run_of(rows: RunTable, run_id: str) -> RunView:
    return next(run for run in rows.rows if run.run_id == run_id)


def header(screen: RunScreen) -> str:
    return str(screen.query_one("#run-header").render())


def event_lines(events: EventList) -> list[str]:
    return [
        "".join(segment.text for segment in events.render_line(y)).rstrip()
        for y in range(len(events.entries()))
    ]


def ledger_line(run_id: str, seq: int, at: float, kind: str, payload: dict[str, Any]) -> bytes:
    when = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    record = {"run_id": run_id, "seq": seq, "time": when, "type": kind, "payload": payload}
    return json.dumps(record).encode() + b"\n"


# -- 1. one cost writer, a narrow column never rounding a cost to zero -------------------------


async def test_a_cost_reads_the_same_in_the_table_the_header_and_the_source_line(
    fixtures: Path,
) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        assert cost(0.0102) == "$0.0102"
        assert drawn_cells(rows, run_of(rows, RESEARCH))["tokens"] == "2.9k $0.0102"
        assert "2.9k tok $0.0102" in str(app.screen.query_one(SourceLine).render())
        screen = await open_run(pilot, RESEARCH)
        assert "2.9k tokens $0.0102" in header(screen)  # was $0.010
        assert "$0.010 " not in header(screen)


def _ledger_with_a_cost(directory: Path, number: int, at: float) -> None:
    run_id = f"run_20261128T1431{number:05d}_{number:016x}"
    lines = [
        ledger_line(run_id, 1, at, "run_started", {"skill": "triage"}),
        ledger_line(
            run_id,
            2,
            at + 0.5,
            "llm_call",
            {"model": "m", "prompt_tokens": 1800, "output_tokens": 100, "cost_usd": 0.0082},
        ),
        ledger_line(run_id, 3, at + 0.6, "run_completed", {"status": "ok"}),
    ]
    path = directory / f"{run_id}.jsonl"
    path.write_bytes(b"".join(lines))
    path.chmod(0o600)


async def test_at_80x24_sorted_by_tokens_every_cost_shows_whole(fixtures: Path) -> None:
    """More runs than lines: the table's scroll bar shows, and it covers no cost."""
    start = datetime(2026, 11, 28, 14, 31, tzinfo=UTC).timestamp()
    for number in range(20):
        _ledger_with_a_cost(fixtures, number, start + number)
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        rows = await loaded(pilot, 26)
        await settle(pilot, lambda: rows.show_vertical_scrollbar, "the scroll bar")
        for _ in SORT_KEYS:  # s steps through the sortable columns
            if app.screen.sort == "tokens":  # type: ignore[attr-defined]
                break
            await pilot.press("s")
        assert app.screen.sort == "tokens"  # type: ignore[attr-defined]
        await pilot.pause()
        shown = screen_lines(app)
        assert "TOKENS / COST ▼" in shown[1]
        costs = [line for line in shown if "$0.0" in line and "✔ succeeded" in line]
        assert costs, shown
        for line in costs:
            assert "1.9k $0.0082" in line or "2.9k $0.0102" in line, line
        assert not any(line.rstrip(" ▁▂▃▄▅▆▇█").endswith("$0.00") for line in shown), shown


async def test_a_narrow_cell_drops_the_tokens_before_it_cuts_a_cost(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        research = run_of(rows, RESEARCH)
        said = {width: tokens_and_cost(research, width) for width in range(1, 16)}
        for width, text in said.items():
            assert len(text) <= width, (width, text)
            assert text in {"2.9k $0.0102", "$0.0102", "…"}, (width, text)
        assert said[12] == "2.9k $0.0102"
        assert said[7] == "$0.0102"
        assert said[6] == "…"


def test_one_writer_for_tokens() -> None:
    assert [tokens(n) for n in (0, 812, 1000, 1949, 14_500, 999_949, 999_950, 2_300_000)] == [
        "0",
        "812",
        "1.0k",
        "1.9k",
        "14.5k",
        "999.9k",
        "1.0M",
        "2.3M",
    ]


# -- 2. unknown is not zero: the comparison says what the run screen says ----------------------


async def test_compare_says_not_recorded_where_the_run_screen_says_no_tokens_recorded(
    fixtures: Path,
) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        screen = await open_run(pilot, DEPLOY)
        assert "no tokens recorded" in header(screen)
        await pilot.press("escape")
        for run_id in (DEPLOY, CANCELED):
            rows.select_key(run_of(rows, run_id).key)
            await pilot.press("space")
        await pilot.press("C")
        await settle(pilot, lambda: isinstance(app.screen, CompareScreen), "the comparison")
        table = app.screen.query_one(ComparisonTable)

        def said() -> str:
            return "\n".join(line.plain for line in table.lines(150))

        await settle(pilot, lambda: "cost" in said(), "the measures")
        text = said()
        measures = {line[:14].strip(): line[15:] for line in text.splitlines()}
        for name in ("prompt tokens", "output tokens", "cost"):
            assert measures[name].split() == [
                "not",
                "recorded",
                "not",
                "recorded",
                "?",
                "not",
                "known",
            ]
        assert "$0.0000" not in text
        assert "summarize / summarizer" in str(app.screen.query_one("#compare-header").render())


def test_a_comparison_writes_a_cost_as_everywhere() -> None:
    assert amount("cost_usd", 0.0102) == "$0.0102"
    assert amount("cost_usd", 0.00001) == "<$0.0001"  # a tiny difference is not $0.0000
    assert amount("cost_usd", None) == "not recorded"


# -- 3. running, never in flight; ok, never done --------------------------------------------


def _running_tool_call(directory: Path) -> str:
    """A run whose ``fetch`` call has no result yet: written now, its mtime set to now."""
    run_id = "run_20261201T000000002_b2b2b2b2b2b2b2b2"
    now = time.time()
    lines = [
        ledger_line(run_id, 1, now - 2, "run_started", {"skill": "crawl", "agent": "crawler"}),
        ledger_line(
            run_id,
            2,
            now - 1,
            "tool_call",
            {"call_id": "c1", "name": "fetch", "arguments": {"url": "https://example.org"}},
        ),
    ]
    path = directory / f"{run_id}.jsonl"
    path.write_bytes(b"".join(lines))
    os.utime(path, (now, now))
    return run_id


async def test_a_tool_call_is_ok_error_or_running_on_every_screen(fixtures: Path) -> None:
    app = sample_app(fixtures, clock=None)  # the samples an hour old
    crawl = _running_tool_call(fixtures)  # written now: live (it was aged with them, stale)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 7)
        assert run_of(rows, crawl).status is RunStatus.RUNNING
        await pilot.press("t")  # the tools, across runs
        await settle(pilot, lambda: app.screen.query("DataTable"), "the tools")
        tools = app.screen.query_one("DataTable")
        await settle(pilot, lambda: tools.row_count == 4, "four tools")  # type: ignore[attr-defined]
        titles = [str(column.label) for column in tools.columns.values()]  # type: ignore[attr-defined]
        assert "RUNNING" in titles
        assert "IN FLIGHT" not in titles
        outcomes = {}
        for tool in ("web_search", "shell", "fetch"):
            screen = ToolCallsScreen(app.store, tool)
            await app.push_screen(screen)
            await pilot.pause()
            table = screen.query_one("DataTable")
            assert str(list(table.columns.values())[1].label) == "SKILL / AGENT"  # type: ignore[attr-defined]
            row = [str(cell) for cell in table.get_row_at(0)]  # type: ignore[attr-defined]
            outcomes[tool] = row[4]
            if tool == "fetch":
                assert row[1] == "crawl / crawler"
            await pilot.press("escape")
        assert outcomes == {"web_search": "ok", "shell": "error", "fetch": "running"}
        await pilot.press("escape")
        screen = await open_run(pilot, crawl)
        events = await events_read(pilot, 1)
        await pilot.press("end")
        detail = screen.query_one(EventDetail)
        await settle(pilot, lambda: "tool fetch" in detail.text, "the call's detail")
        assert "tool fetch  ·  running  ·  …" in detail.text
        assert "in flight" not in detail.text
        assert any("fetch … running" in line for line in event_lines(events))


# -- 4. skill and agent, as the table says them ------------------------------------------------


async def test_the_run_header_names_skill_and_agent_as_the_table_does(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        assert drawn_cells(rows, run_of(rows, CANCELED))["agent"] == "summarize / summarizer"
        screen = await open_run(pilot, CANCELED)
        assert "summarize / summarizer" in header(screen).splitlines()[0]
        events = await events_read(pilot, 0)
        await settle(pilot, lambda: event_lines(events), "the events")
        assert "started summarize / summarizer input" in event_lines(events)[0]


# -- 5. one duration writer, one relative-time writer ------------------------------------------


def test_the_same_span_is_written_one_way() -> None:
    assert duration(0.0999) == duration(0.1) == "0.1s"  # never 0.100s beside 0.1s
    assert duration(0.012) == "0.012s"
    assert duration(0.0003) == "<0.001s"  # a model call that took time: not 'ok in 0s'
    assert duration(0) == "0s"
    assert duration(9.96) == duration(10.2) == "10s"  # never 10.0s
    assert duration(270) == "4m30s"
    assert relative(100.0, 100.0994) == "now"  # what duration writes in milliseconds
    assert relative(100.0, 100.0999) == "0.1s ago"  # as duration(0.0999) is 0.1s
    assert relative(100.0, 100.2) == "0.2s ago"
    # Under a minute a start is written by duration: "now" exactly where it writes ms.
    spans = [n / 1000 for n in range(0, 60_000, 7)]
    for span in spans:
        said = relative(0.0, span)  # the span exactly (1000 + span - 1000 is not)
        if said == "now":
            assert duration(span) in {"0s"} or duration(span).startswith("0.0"), span
        else:
            assert said == f"{duration(span)} ago", span
    # A longer span never reads shorter.
    seconds = [_seconds(duration(span)) for span in spans]
    assert seconds == sorted(seconds)
    assert offset(0.2) == "+0.200s"
    assert offset(-0.0001) == "+0.000s"


class _OneTable(App[None]):
    """A runs table alone: no screen ticks its clock, so the test sets the frame's instant."""

    def compose(self) -> ComposeResult:
        yield RunTable()


async def test_a_run_inserted_above_the_selection_is_drawn_at_an_instant_after_it(
    tmp_path: Path,
) -> None:
    """The selection moving down (a new run above it) redrew lines at the last tick's
    instant: a run that started and ended since read ``now`` beside a TIME of 0.2s."""
    directory = tmp_path / "runs"
    directory.mkdir()
    t0 = time.time() - 60
    for number, start in ((1, t0), (2, t0 + 1)):
        run_id = f"run_20261201T00000000{number}_{f'e{number}' * 8}"
        path = directory / f"{run_id}.jsonl"
        path.write_bytes(
            ledger_line(run_id, 1, start, "run_started", {"skill": "quick"})
            + ledger_line(run_id, 2, start + 0.2, "run_completed", {"status": "ok"})
        )
        os.utime(path, (t0 + 30, t0 + 30))
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(directory, name="runs"))
        await until(store, lambda s: len(s.runs) == 2, "both runs")
        older, newer = sorted(store.snapshot().runs, key=lambda run: run.started_at or 0.0)
    app = _OneTable()
    async with app.run_test(size=(160, 10)) as pilot:
        rows = app.query_one(RunTable)
        rows.set_rows([older])
        rows.select_key(older.key)
        rows.now = t0 + 0.5  # the last tick: after the first run, before the second
        await pilot.pause()
        rows.set_rows([newer, older])  # newest first: the selection moves down a line
        await pilot.pause()
        assert rows.cursor == 1
        assert rows.now >= (newer.last_event_at or 0.0)
        cells = drawn_cells(rows, newer)
        assert cells["duration"] == "0.2s"
        assert cells["started"] == relative(newer.started_at, rows.now) != "now"


def _seconds(written: str) -> float:
    if "m" in written:
        minutes, rest = written.split("m")
        return 60 * int(minutes) + float(rest.rstrip("s"))
    return float(written.rstrip("s"))


# -- 6. a denial reads as a denial, the run's end as the run's ---------------------------------

DENIED = "run_20261128T143100000_d3d3d3d3d3d3d3d3"


def _denied_then_succeeded(directory: Path) -> None:
    at = datetime(2026, 11, 28, 14, 31, tzinfo=UTC).timestamp()
    question = {"approval_id": "ap_1", "prompt": "Apply migration v42 to production?"}
    answer = {"approval_id": "ap_1", "approved": False, "source": "tui", "reason": "too risky"}
    lines = [
        ledger_line(DENIED, 1, at, "run_started", {"skill": "migrate", "agent": "migrator"}),
        ledger_line(DENIED, 2, at + 0.1, "approval_request", question),
        ledger_line(DENIED, 3, at + 5, "approval_response", answer),
        ledger_line(DENIED, 4, at + 5.1, "run_completed", {"status": "ok", "output": "skipped"}),
    ]
    path = directory / f"{DENIED}.jsonl"
    path.write_bytes(b"".join(lines))
    path.chmod(0o600)


async def test_a_denial_is_not_ticked_and_the_run_ends_as_the_run(fixtures: Path) -> None:
    _denied_then_succeeded(fixtures)
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 7)
        screen = await open_run(pilot, DENIED)
        events = await events_read(pilot, 3)
        await settle(pilot, lambda: len(event_lines(events)) == 4, "four events")
        shown = event_lines(events)
        denial, end = shown[2], shown[3]
        assert "⊗ approval ap_1 denied by tui: too risky" in denial
        assert not any(tick in denial for tick in "✔✓")
        assert "■ run succeeded: skipped" in end  # the run's outcome, said as the run's
        styles = [segment.style for segment in events.render_line(2) if "denied" in segment.text]
        warning = events.get_component_rich_style("eventlist--denied", partial=True)
        assert styles
        assert all(style is not None and style.color == warning.color for style in styles)
        assert header(screen).startswith("✔ succeeded")


# -- 7. the source line says nothing of tokens nobody recorded --------------------------------


async def test_the_source_line_says_no_tokens_for_runs_that_never_said_them(
    fixtures: Path,
) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        line = app.screen.query_one(SourceLine)
        assert "2.9k tok $0.0102" in str(line.render())
        await pilot.press("slash", *"status:failed,canceled,stale", "enter")
        await settle(pilot, lambda: "4 of 6 runs" in str(line.render()), "the filter")
        assert "tok" not in str(line.render())  # not "0 tok": none of them said
        assert " 0 " not in str(line.render())


# -- 8. following, the detail shows the newest text --------------------------------------------


async def test_following_a_long_paragraph_keeps_its_newest_text_in_view(tmp_path: Path) -> None:
    directory = tmp_path / "runs"
    directory.mkdir()
    run_id = "run_20261201T000000003_c3c3c3c3c3c3c3c3"
    start = time.time() - 10

    def chunk(seq: int) -> bytes:
        return ledger_line(run_id, seq, start + seq / 1000, "llm_chunk", {"delta": f"p{seq} "})

    path = directory / f"{run_id}.jsonl"
    # 1,100 chunks: more than the detail is handed (1,024) and than it shows (4,000 chars).
    path.write_bytes(
        ledger_line(run_id, 1, start, "run_started", {"skill": "write"})
        + b"".join(chunk(seq) for seq in range(2, 1102))
    )
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(directory, name="d")])
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 1)
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, RunScreen), "the run")
        events = app.screen.query_one(EventList)
        detail = app.screen.query_one(EventDetail)
        assert events.follow
        await settle(pilot, lambda: "p1101 " in detail.text, "the newest chunk in the detail")
        assert "earlier chunks (the newest text follows)" in detail.text
        assert "p2 " not in detail.text  # its start is what gave way
        await settle(pilot, lambda: detail.max_scroll_y > 0, "a detail longer than its pane")
        await settle(pilot, lambda: detail.scroll_y == detail.max_scroll_y, "its end in view")
        with path.open("ab") as ledger:
            ledger.write(b"".join(chunk(seq) for seq in range(1102, 1152)))
        await settle(pilot, lambda: "p1151 " in detail.text, "the chunks written since")
        await settle(pilot, lambda: detail.scroll_y == detail.max_scroll_y, "still its end")
        await pilot.press("f")  # follow paused: the paragraph from its start again
        assert not events.follow
        await settle(pilot, lambda: "p2 p3 " in detail.text, "the paragraph's start")
        assert "more chunks" in detail.text


# -- 9. the README says the app's words ---------------------------------------------------------


def test_the_readme_says_thinking_and_running_as_the_app_does() -> None:
    readme = "".join(
        path.read_text() for path in [REPO / "README.md", *(REPO / "docs").glob("*.md")]
    )
    assert "in flight" not in readme
    for at in range(len(readme)):
        if readme.startswith("reasoning", at):
            said = readme[max(0, at - 20) : at + 20]
            # The ledger's event name, or "thinking" explained once: the app's word.
            assert "reasoning_chunk" in said or "(a model's reasoning)" in said, said
    assert "thinking in italics" in readme
