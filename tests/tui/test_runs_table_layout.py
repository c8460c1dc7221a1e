"""The runs screen's layout on ``runtop demo``.

An empty table's bar greys Enter and space; the tree draws ``├`` beside all but the last
child; at 80 columns the source line keeps the runs by status before a reconnecting
source's words, and with ``?`` open STATUS gives its cells before SKILL does, and the keys
panel folds a path after a ``/``; the table says ``approval unanswered:`` as ``runtop ls``
does. Each test reads what the screen shows.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from inspector import LedgerDirectorySource, ManagerSource, RemoteSource
from run_manager import Manager
from tests.conftest import line
from tests.tui.test_interaction import screen_lines
from tests.tui.test_key_words import greyed, palette
from tests.tui_support import FROZEN, age, free_port, loaded, noticed, open_run, sample_app, settle
from tui.app import make_app
from tui.cli import main
from tui.settings import Settings
from tui.widgets.run_table import RunTable
from tui.widgets.source_line import SourceLine

pytestmark = pytest.mark.timeout(60)

MIGRATION = "run_20261128T143000052_a0b1c2d3e4f50617"
"""The sample run whose approval went unanswered (stale: its writer went quiet)."""


def source_line(app: Any) -> str:
    """The source line as the terminal shows it (not the keys panel beside it)."""
    return screen_lines(app)[app.screen.query_one(SourceLine).region.y].split("▏")[0]


def table_lines(app: Any) -> list[str]:
    """The runs table's lines as the terminal shows them, the column titles first."""
    top = app.screen.query_one("#header").region.y
    rows = app.screen.query_one(RunTable)
    return [line.split("▏")[0] for line in screen_lines(app)[top : top + 1 + len(rows.rows)]]


def keys_panel(app: Any) -> list[str]:
    """The keys panel's lines (``?``), as the terminal shows them beside the screen (not its
    scroll bar)."""
    return [line.split("▏", 1)[1].rstrip(" ▁▂▃▄▅▆▇█") for line in screen_lines(app) if "▏" in line]


# -- 1: an empty table greys the keys that act on a run ------------------------------------


async def test_enter_and_mark_are_greyed_and_not_offered_on_an_empty_table(
    fixtures: Path,
) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await loaded(pilot)
        assert not greyed(app, "⏎")
        assert not greyed(app, "space")
        assert {"Open", "Mark"} <= set(await palette(pilot))

        await pilot.press("slash", *"zzzz", "enter")
        await settle(pilot, lambda: "No run matches the filter" in "\n".join(screen_lines(app)), "")
        await settle(pilot, lambda: greyed(app, "⏎"), "Enter greyed")
        assert greyed(app, "space")
        offered = await palette(pilot)
        assert "Open" not in offered, offered
        assert "Mark" not in offered, offered
        await pilot.press("space")  # pressed anyway: it says why
        await noticed(pilot, "no run is selected to mark")

        await pilot.press("escape")  # every run again: the keys act again
        await settle(pilot, lambda: not greyed(app, "⏎"), "Enter bright again")
        assert not greyed(app, "space")


# -- 2: the tree's branches -----------------------------------------------------------------


def write_family(directory: Path) -> None:
    """A planner with two children, the first with a child of its own, who has one too; and
    a run of its own. Started in that order (the newest first in the table)."""
    family = [  # (run, parent, skill): skills short enough for 80 columns, deep down
        ("run_a", None, "plan"),
        ("run_c", "run_a", "review"),
        ("run_b", "run_a", "search"),
        ("run_d", "run_b", "sum"),
        ("run_f", "run_d", "tag"),
        ("run_e", None, "wx"),
    ]
    for second, (run_id, parent, skill) in enumerate(family, 1):
        at = f"2026-11-28T14:30:{second:02d}.000000Z"
        payload = {"skill": skill, **({"parent_run_id": parent} if parent else {})}
        (directory / f"{run_id}.jsonl").write_bytes(
            line(1, "run_started", payload, run_id=run_id, time=at)
            + line(2, "run_completed", {"status": "ok"}, run_id=run_id, time=at)
        )
    age(directory)


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_the_tree_draws_each_childs_branch(tmp_path: Path, size: tuple[int, int]) -> None:
    """Every child was drawn ``└``, the first of two children too, and a grandchild under
    it beside nothing that led on to its aunt below."""
    write_family(tmp_path)
    app = make_app(Settings(clock=FROZEN, flush_interval=0.01), [LedgerDirectorySource(tmp_path)])
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, 6)
        await pilot.press("T")
        await settle(pilot, lambda: "└ SKILL" in table_lines(app)[0], "the tree")
        lines = table_lines(app)
        column = lines[0].index("└ SKILL")
        said = {}
        for row in lines[1:]:
            skill = re.findall(r"\w+", row[column:])[0]
            said[skill] = row[column : row.index(skill, column)]
        assert said == {
            "wx": "",
            "plan": "",
            "search": "├ ",  # the first of two: more to come below
            "sum": "│ └ ",  # its parent's sibling is still to come: the line goes on
            "tag": "│   └ ",
            "review": "└ ",  # the last
        }, lines
        assert list(said) == ["wx", "plan", "search", "sum", "tag", "review"], lines
        # Every branch takes two cells a level: the next column starts where its title does.
        started = lines[0].index("STARTED")
        for row in lines[1:]:
            assert row[started - 1] == " ", lines
            assert row[started] != " ", lines


# -- 3: the source line keeps the runs by status -------------------------------------------


async def test_a_reconnecting_source_gives_its_words_before_the_runs_by_status(
    fixtures: Path,
) -> None:
    """At 80x24 a walk read ``127.0.0.1:8792: reconnecting in 2 s  4 runs``: the ``⊘3 ◌1``
    gone while the source said why it failed. How it stands stays, and the counts."""
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens here
    app = sample_app(fixtures, RemoteSource(url, "token", name=url, backoff_first=30))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await settle(pilot, lambda: "reconnecting" in source_line(app), "the source reconnecting")
        said = source_line(app)
        assert re.search(r"reconnecting in \d+ s  +6 runs  ✔2 ✘1 ⊘1 \?2", said), said


async def test_a_long_path_is_cut_in_its_middle_before_the_runs_by_status_go(
    fixtures: Path, tmp_path: Path
) -> None:
    """``demo (live, ledgers in /tmp/runtop-demo-…)``: the path gives way in its middle, its
    end kept, and the runs by status stay."""
    ledgers = tmp_path / "a-rather-long-directory-of-ledgers" / "runtop-demo-3msg2krr"
    ledgers.mkdir(parents=True)
    async with Manager(ledger_dir=ledgers) as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="demo"))
        async with app.run_test(size=(80, 24)) as pilot:
            await loaded(pilot)
            await settle(pilot, lambda: "ledgers in" in source_line(app), "the demo's source")
            said = source_line(app)
            assert "  6 runs  ✔2 ✘1 ⊘1 ?2" in said, said
            path = re.search(r"ledgers in (\S+)\)", said)
            assert path, said
            start, _, end = path.group(1).partition("…")
            assert end, said  # cut, in its middle: its start and its end are the path's
            assert str(ledgers).startswith(start), said
            assert str(ledgers).endswith(end), said
            assert end.endswith("2krr"), said


# -- 4: narrow, with the keys panel open ----------------------------------------------------


def write_waiting(directory: Path, skill: str) -> str:
    """A run of ``skill`` that asked an approval a minute ago (awaiting_approval)."""
    run_id = "run_20261201T000000001_b2b2b2b2b2b2b2b2"
    asked = time.time() - 60
    when = datetime.fromtimestamp(asked, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    question = {"approval_id": "ap_1", "prompt": "Ship it?", "timeout_seconds": 86400}
    (directory / f"{run_id}.jsonl").write_bytes(
        line(1, "run_started", {"skill": skill}, run_id=run_id, time=when)
        + line(2, "approval_request", question, run_id=run_id, time=when)
    )
    return run_id


def write_three(ledgers: Path) -> None:
    """A classifier awaiting approval, a summarizer and a researcher that succeeded."""
    ledgers.mkdir(parents=True)
    write_waiting(ledgers, "classifier")
    for seconds, skill in ((1, "summarizer"), (2, "researcher")):
        at = f"2026-11-28T14:30:{seconds:02d}.000000Z"
        (ledgers / f"run_{skill}.jsonl").write_bytes(
            line(1, "run_started", {"skill": skill}, run_id=f"run_{skill}", time=at)
            + line(2, "run_completed", {"status": "ok"}, run_id=f"run_{skill}", time=at)
        )


async def test_skill_keeps_its_room_beside_a_long_status_with_the_keys_open(
    tmp_path: Path,
) -> None:
    """At 80x24 with ``?`` open, STATUS kept 19 cells for one ``awaiting_approval`` and SKILL
    read ``classifi…``: the status gives cells (its glyph and its word's start) first."""
    write_three(tmp_path / "ledgers")
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path / "ledgers")])
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 3)
        await pilot.press("question_mark")
        await settle(pilot, lambda: app.screen.query("HelpPanel"), "the keys")
        await pilot.pause(0.2)
        lines = table_lines(app)
        for skill in ("classifier", "summarizer", "researcher"):  # its start, TIME whole
            assert any(f" {skill[:7]}" in row for row in lines), (skill, lines)
        assert any("◐ awaiting" in row for row in lines), lines
        assert "TIME" in lines[0], lines


def watched(app: Any) -> list[list[str]]:
    """What the keys panel says each source is, line by line (``from`` taken off)."""
    panel = [row.strip() for row in keys_panel(app)]
    sources: list[list[str]] = []
    for row in panel[: panel.index("")]:  # a blank line after the sources
        if row.startswith("from "):
            sources.append([])
        sources[-1].append(row.removeprefix("from").strip())
    return sources


async def test_the_keys_panel_folds_the_path_watched_after_a_slash(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """With ``?`` open at 80x24, the keys panel folded the path watched in the middle of a
    name (``/tmp/runtop-demo-3m`` over ``sg2krr``): it is whole, broken only after a ``/``
    or between words; a name wider than the panel is folded, on lines of its own."""
    # Each name narrower than the panel (pytest's own, named after the test, is not).
    ledgers = tmp_path_factory.mktemp("k") / "nightly-evals" / "runtop-demo-3msg2krr"
    write_three(ledgers)
    wide = tmp_path_factory.mktemp("k") / "runtop-demo-of-the-night-3msg2krr"
    write_three(wide)
    sources = [LedgerDirectorySource(ledgers), LedgerDirectorySource(wide, name="wide")]
    app = make_app(Settings(flush_interval=0.01), sources)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, 6)
        await pilot.press("question_mark")
        await settle(pilot, lambda: app.screen.query("HelpPanel"), "the keys")
        await pilot.pause(0.2)
        said, said_wide = watched(app)
        joined = "".join(piece if piece.endswith("/") else piece + " " for piece in said)
        assert f"runtop-demo-3msg2krr: the ledger directory {ledgers} " == joined, said
        names = set(re.findall(r"[^/ ]+", f"{ledgers}"))
        for piece in said:  # a directory's name on one line: never runtop-demo-3m over sg2krr
            cut = [name for name in re.findall(r"[^/ :]+", piece) if "-" in name]
            assert all(name in names for name in cut), said

        # Where the path before it folds depends on how long the temporary directory is;
        # wherever it does, the wide name starts a line of its own after the last slash.
        at = next(at for at, piece in enumerate(said_wide) if piece.startswith("runtop-demo"))
        before = "".join(said_wide[:at]).replace(" ", "")
        assert said_wide[at - 1].endswith("/"), said_wide
        assert before.endswith(f"{wide.parent}/".replace(" ", "")), said_wide
        assert "".join(said_wide[at:]) == wide.name, said_wide  # on lines of its own, whole


async def test_the_keys_panel_keeps_a_urls_scheme_whole(fixtures: Path) -> None:
    """A server that went away: the panel read ``http:/`` over ``/127.0.0.1:8793``."""
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens here
    app = sample_app(fixtures, RemoteSource(url, "token", name=url, backoff_first=30))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("question_mark")
        await settle(pilot, lambda: app.screen.query("HelpPanel"), "the keys")
        await settle(pilot, lambda: "reconnecting" in source_line(app), "the source reconnecting")
        await pilot.pause(0.2)
        said = next(lines for lines in watched(app) if "reconnecting" in " ".join(lines))
        assert "http://" in " ".join(said), said
        assert not any(line.endswith(":/") for line in said), said


# -- 5: an unanswered approval, said as runtop ls says it -----------------------------------


async def test_the_table_says_an_unanswered_approval_as_runtop_ls_does(
    fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ls", str(fixtures)]) == 0
    listed = next(row for row in capsys.readouterr().out.splitlines() if MIGRATION in row)
    said = re.search(r"\w+ unanswered: ", listed)
    assert said, listed

    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        row = next(row for row in table_lines(app) if MIGRATION[-12:] in row)
        assert f"{said.group(0)}Apply migration v42" in row, (listed, row)


async def test_a_narrow_table_gives_the_question_room_before_the_word_approval(
    fixtures: Path,
) -> None:
    """At 80 columns the cell read ``approval unanswer…``: the question gone, the status
    saying the rest. The word ``approval`` goes first; the run's header says it all. (At 80
    columns now the figures take DOING NOW's room: it is this narrow a little wider.)"""
    app = sample_app(fixtures)
    async with app.run_test(size=(116, 24)) as pilot:
        await loaded(pilot)
        row = next(row for row in table_lines(app) if MIGRATION[-12:] in row)
        assert "unanswered: Apply" in row, row
        assert "approval unanswer" not in row, row
        await open_run(pilot, MIGRATION)
        await pilot.pause(0.2)
        header = "\n".join(screen_lines(app)[:5])
        assert "approval unanswered: Apply migration v42" in header  # as the table's wide cell
