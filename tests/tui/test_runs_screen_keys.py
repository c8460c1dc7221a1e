"""The runs screen and the app's keys.

Each test asserts what the screen shows: the key bar, the ``?`` panel, the source line,
the table's cells, the notices.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual import events
from textual.widgets import Input

from inspector import LedgerDirectorySource, ManagerSource, ReplaySource
from run_manager import Manager
from tests.conftest import written_ago
from tests.tui_support import (
    FROZEN,
    age,
    awaiting_approval,
    drawn_cells,
    loaded,
    noticed,
    sample_app,
    settle,
)
from tui.app import make_app
from tui.cli import main
from tui.screens.runs import RunsScreen
from tui.settings import Settings
from tui.widgets.key_bar import KeyBar
from tui.widgets.source_line import SourceLine

pytestmark = pytest.mark.timeout(60)


def bar(app: Any) -> str:
    """The key bar as drawn."""
    return app.screen.query_one(KeyBar).render().plain  # type: ignore[no-any-return]


def source_line(app: Any) -> str:
    return str(app.screen.query_one(SourceLine).render())


def keys_panel(app: Any) -> list[str]:
    """The ``?`` panel's lines as drawn (key, then what it does), blanks squeezed."""
    panel = app.screen.query_one("HelpPanel")
    console = Console(width=panel.size.width or 40, record=True, color_system=None)
    for widget in panel.query("*"):
        if widget.is_container:
            continue
        console.print(widget.render())
    return [" ".join(line.split()) for line in console.export_text().splitlines() if line.strip()]


def select(app: Any, run_id: str) -> None:
    rows = app.screen.query_one("RunTable")
    rows.cursor = next(n for n, run in enumerate(rows.rows) if run.run_id == run_id)


def ledger(directory: Path, run_id: str, *events: tuple[str, dict[str, Any]]) -> None:
    """A finished run's ledger: ``run_started``, ``events``, ``run_completed``."""
    lines = [("run_started", {"skill": "cost"}), *events, ("run_completed", {"status": "ok"})]
    (directory / f"{run_id}.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "run_id": run_id,
                    "seq": seq,
                    "time": f"2026-11-28T14:31:{seq:02d}Z",
                    "type": kind,
                    "payload": payload,
                }
            )
            + "\n"
            for seq, (kind, payload) in enumerate(lines, 1)
        )
    )


async def test_compare_says_a_marked_run_is_one_the_filter_hides(fixtures: Path) -> None:
    """Marks outlive a filter (mark one, filter to find the other, mark it): C compared a
    run the table no longer showed, without a word."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        rows = await loaded(pilot)
        failed = next(run for run in rows.rows if run.status.value == "failed")
        select(app, "run_20261128T143000012_4f1a9c2e7b3d8a60")
        await pilot.press("space")
        await pilot.press("slash", *"status:failed", "enter")
        await settle(pilot, lambda: len(rows.rows) == 1, "the failed run alone")
        await pilot.press("space", "C")
        said = await noticed(pilot, "which the filter hides")
        assert "…4f1a9c2e7b3d8a60"[-12:] in said, said
        assert failed.run_id[-12:] not in said, said  # the run shown is not named


async def test_a_narrow_key_bar_keeps_the_keys_that_apply_now(fixtures: Path) -> None:
    """At 80x24 with ``?`` open, the bar kept Mark and dropped the approval's ``a`` and
    ``d`` and the filter's ``/``; on the run screen, ``/ Search`` went first."""
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(80, 24)) as pilot:
            _, waiting = await awaiting_approval(pilot, manager)
            select(app, waiting.run_id)
            await settle(pilot, lambda: "a Approve" in bar(app), "a in the bar")
            drawn = bar(app)
            for key in ("a Approve", "d Deny", "/ Filter", "? Keys", "q Quit"):
                assert key in drawn, drawn
            assert "s Sort" not in drawn, drawn  # listed by ?, it gives way first
            assert "T Tree" not in drawn, drawn
            assert drawn.rstrip().endswith("? Keys  q Quit"), drawn
            await pilot.press("question_mark")  # the bar has 50 columns left
            await settle(pilot, lambda: "Open" not in bar(app), "a narrower bar")
            drawn = bar(app)
            for key in ("a Approve", "d Deny", "? Keys", "q Quit"):
                assert key in drawn, drawn
            await pilot.press("question_mark", "enter")
            await settle(pilot, lambda: "Search" in bar(app), "the run's keys")
            drawn = bar(app)
            for key in ("a Approve", "d Deny", "/ Search", "? Keys", "q Quit"):
                assert key in drawn, drawn
            await pilot.press("escape")
            await pilot.press("a", "enter")
            assert await asyncio.wait_for(waiting.result(), 5) == "approved"


async def test_a_replays_bar_marks_with_m_and_ends_with_keys_and_quit(fixtures: Path) -> None:
    ledger_path = next(fixtures.glob("run_20261128T143000012_*.jsonl"))
    replay = ReplaySource([ledger_path], step=True, name="replay")
    app = make_app(Settings(clock=FROZEN, flush_interval=0.01), [replay])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        await loaded(pilot, 1)
        drawn = bar(app)
        assert "m Mark" in drawn, drawn
        assert "space Mark" not in drawn, drawn  # space pauses and plays the replay
        assert drawn.index("space Pause/play") < drawn.index("? Keys"), drawn
        assert drawn.rstrip().endswith("? Keys  q Quit"), drawn


async def test_the_keys_panel_lists_ours_first_each_action_once(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("question_mark")
        await settle(pilot, lambda: app.screen.query("HelpPanel"), "the keys")
        await pilot.pause()
        lines = keys_panel(app)
        first = lines.index("⏎ Open")  # the first key: above it, only what is watched
        assert " ".join(lines[:first]).startswith("from samples: the ledger directory"), lines
        assert first < lines.index("/ Filter"), lines
        said = "\n".join(lines)
        for textual_own in ("Scroll Left", "Page Right", "Focus Next", "^q", "selected text"):
            assert textual_own not in said, lines
        marks = [line for line in lines if line.endswith("Mark")]
        assert marks == ["space Mark"], lines
        assert "q Quit" in lines, lines
        assert lines.index("q Quit") < lines.index("↑ k Up"), lines  # ours, then moving


async def test_the_source_line_gives_way_by_parts_never_mid_word(fixtures: Path) -> None:
    """At 80x24 the line was cut at its end: the cost, then the filter."""
    age(fixtures)
    source = LedgerDirectorySource(fixtures, name="nightly-evaluation-ledgers")
    app = make_app(Settings(clock=FROZEN, flush_interval=0.01), [source])
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("slash", *"-status:succeeded", "enter")
        await settle(pilot, lambda: "4 of 6 runs" in source_line(app), "the filter")
        line = source_line(app)
        assert "nightly-evaluation-ledgers (live)" in line, line
        assert line.rstrip().endswith("filter: -status:succeeded"), line
        assert "…" not in line, line
        assert "tok" not in line, line  # the tokens and cost gave way first
        await pilot.press("T")  # no room to say it in the line: the filter stays
        line = source_line(app)
        assert line.rstrip().endswith("filter: -status:succeeded"), line
        assert "└ SKILL" in str(app.screen.query_one("#header").render())


async def test_the_tree_says_it_is_on(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        assert "T Tree" in bar(app)
        assert "tree" not in source_line(app)
        await pilot.press("T")
        assert "as a tree" in source_line(app)
        assert "└ SKILL / AGENT" in str(app.screen.query_one("#header").render())
        await settle(pilot, lambda: "T List" in bar(app), "T's other way")
        await pilot.press("T")
        await settle(pilot, lambda: "T Tree" in bar(app), "the list again")
        assert "tree" not in source_line(app)


async def test_one_cost_format_and_a_cost_never_recorded_is_not_zero(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    call = {"model": "m", "prompt_tokens": 900, "output_tokens": 12}
    ledger(
        runs, "run_20261128T143100001_aaaaaaaaaaaaaaa1", ("llm_call", {**call, "cost_usd": 0.003})
    )
    ledger(runs, "run_20261128T143100002_aaaaaaaaaaaaaaa2", ("llm_call", {**call, "cost_usd": 0.0}))
    ledger(runs, "run_20261128T143100003_aaaaaaaaaaaaaaa3", ("llm_call", call))
    age(runs)
    app = make_app(
        Settings(clock=FROZEN, flush_interval=0.01), [LedgerDirectorySource(runs, name="r")]
    )
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 3)
        cells = {run.run_id[-1]: drawn_cells(rows, run)["tokens"] for run in rows.rows}
        assert cells == {"1": "912 $0.0030", "2": "912 $0", "3": "912"}, cells
        assert "2.7k tok $0.0030" in source_line(app)
        preview = app.screen.query_one("RunPreview")
        select(app, "run_20261128T143100001_aaaaaaaaaaaaaaa1")
        await settle(pilot, lambda: "$0.0030" in str(preview.render()), "the call's cost")
        select(app, "run_20261128T143100003_aaaaaaaaaaaaaaa3")
        await settle(
            pilot,
            lambda: "aaa3" in str(preview.render()) and "12 out" in str(preview.render()),
            "the other run's call",
        )
        assert "$" not in str(preview.render())


def test_a_tool_call_still_going_is_running_in_every_word(tmp_path: Path, capsys: Any) -> None:
    run_id = "run_20261128T143100004_bbbbbbbbbbbbbbb4"
    path = tmp_path / f"{run_id}.jsonl"
    path.write_text(
        "".join(
            json.dumps({"run_id": run_id, "seq": seq, "time": when, "type": kind, "payload": p})
            + "\n"
            for seq, when, kind, p in (
                (1, written_ago(2), "run_started", {"skill": "s"}),
                (2, written_ago(1), "tool_call", {"name": "fetch", "call_id": "c1"}),
            )
        )
    )
    assert main(["show", str(path), "--timeline"]) == 0
    out = capsys.readouterr().out
    assert "1 running" in out, out
    assert "in flight" not in out, out


async def test_ls_and_the_table_say_skill_agent_and_damage_alike(
    fixtures: Path, capsys: Any
) -> None:
    assert main(["ls", str(fixtures)]) == 0
    listed = capsys.readouterr().out.splitlines()
    header = listed[0]
    assert "SKILL / AGENT" in header
    assert "DAMAGED" in header
    canceled = next(line for line in listed if "143000045" in line)
    assert "summarize / summarizer" in canceled
    at = header.index("DAMAGED")

    def damaged_cell(line: str) -> str:
        return line[at : at + len("DAMAGED")].strip()

    damaged = next(line for line in listed if "143000063" in line)
    assert damaged_cell(damaged) == "1", damaged  # one damaged line
    assert not damaged[at + len("DAMAGED") :].strip(), damaged  # and no note
    clean = next(line for line in listed if "143000012" in line)
    assert damaged_cell(clean) == "", clean  # none: an empty cell, as the table says

    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        titles = str(app.screen.query_one("#header").render())
        assert "SKILL / AGENT" in titles, titles
        assert "DAMAGED" in titles, titles
        by_id = {run.run_id[-16:]: drawn_cells(rows, run) for run in rows.rows}
        assert by_id["1f2e3d4c5b6a7980"]["agent"] == "summarize / summarizer"
        assert by_id["c5b4a39281706f5e"]["damaged"] == "1"
        assert by_id["4f1a9c2e7b3d8a60"]["damaged"] == ""
        damaged_row = next(
            n for n, run in enumerate(rows.rows) if run.run_id.endswith("c5b4a39281706f5e")
        )
        assert " 1 " in rows.render_line(damaged_row - rows.scroll_offset.y).text

    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:  # a figure: DOING NOW gives way first
        rows = await loaded(pilot)
        assert "DAMAGED" in str(app.screen.query_one("#header").render())
        damaged = next(run for run in rows.rows if run.run_id.endswith("c5b4a39281706f5e"))
        assert drawn_cells(rows, damaged)["damaged"] == "1"


async def test_column_titles_follow_the_terminals_width(fixtures: Path) -> None:
    """Resized from 80x24 to 160x48 with nothing new to show, the titles stayed laid out
    for 80 columns over a table laid out for 160."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        assert "DOING NOW" not in str(app.screen.query_one("#header").render())
        await pilot.resize_terminal(160, 48)
        await settle(
            pilot,
            lambda: "DOING NOW" in str(app.screen.query_one("#header").render()),
            "the wide titles",
        )


async def test_keys_typed_in_one_burst_after_slash_go_into_the_filter(fixtures: Path) -> None:
    """``/status:failed`` typed fast (as tmux sends it, or a paste) reached the table:
    ``s`` sorted, ``t`` opened the tool calls, ``c`` a cancel; the box stayed empty.
    A terminal hands the app every key of a burst at once, as posted here."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        rows = await loaded(pilot)
        keys = [("slash", "/")] + [({":": "colon"}.get(c, c), c) for c in "status:failed"]
        for key, character in [*keys, ("enter", "\r")]:
            app.post_message(events.Key(key, character))
        await settle(pilot, lambda: len(rows.rows) == 1, "the failed run alone")
        assert isinstance(app.screen, RunsScreen)
        assert app.screen.query_one("#filter", Input).value == "status:failed"
        assert "STARTED ▼" in str(app.screen.query_one("#header").render())  # not sorted
        await settle(pilot, lambda: rows.has_focus, "the table again")  # Enter applied it
        await pilot.press("s")  # the table's keys again
        assert "STATUS ▲" in str(app.screen.query_one("#header").render())


async def test_a_source_name_longer_than_the_line_is_cut_in_its_path(fixtures: Path) -> None:
    """The name's path gives way, in its middle (its start and its end kept), to the runs
    counted and the runs by status: they stay whole (a walk saw the runs by status go
    while a source's long words stayed)."""
    age(fixtures)
    name = "ledgers in /srv/evaluations/nightly/2026-11-28/research-team/shared-disk/ledgers"
    source = LedgerDirectorySource(fixtures, name=name)
    app = make_app(Settings(clock=FROZEN, flush_interval=0.01), [source])
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        line = source_line(app).strip()
        assert line.endswith(" (live)   6 runs  ✔2 ✘1 ⊘1 ?2"), line
        assert len(line) <= 78, line
        start, _, end = line.split(" (live)")[0].partition("…")
        assert end, line  # cut, in its middle
        assert name.startswith(start), line
        assert name.endswith(end), line
        assert start.startswith("ledgers in /srv/"), line  # whole words, then the path


async def test_the_run_keys_are_the_screens_and_the_app_keeps_the_app_wide_ones(
    fixtures: Path,
) -> None:
    """``c``, ``r``, ``a``, ``d``, ``y`` and ``t`` are bound where they act, on the screen
    with a run, greyed there by its ``check_action``; the app binds quit, ``?``, the
    palette and the replay's keys."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        active = app.screen.active_bindings
        for key in ("c", "r", "a", "d", "y", "t"):
            assert active[key].node is app.screen, key
        assert active["c"].enabled is False  # the run selected ended: greyed, said why
        assert active["t"].enabled is True
        app_keys = {
            key for key, bound in active.items() if bound.node is app and bound.binding.show
        }
        assert app_keys <= {"q", "question_mark", "space", "n", "x", "R"}, sorted(app_keys)
