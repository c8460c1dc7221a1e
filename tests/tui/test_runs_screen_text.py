"""The runs screen's words: the source line, the filter box, the column titles, the
table's lines, each checked on what the screen shows.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from textual.events import Key

from inspector import (
    LedgerDirectorySource,
    RemoteSource,
    ReplaySource,
    RunFilter,
)
from inspector.filters import FIELDS
from inspector.status_words import WORDS
from tests.conftest import line
from tests.test_readme import filter_examples, passing
from tests.tui.test_interaction import screen_lines
from tests.tui_support import (
    FROZEN,
    SERVER_RUN,
    GoesAway,
    age,
    free_port,
    loaded,
    sample_app,
    settle,
)
from tui.app import make_app
from tui.settings import Settings
from tui.text.runs import short_id
from tui.widgets.run_table import RunTable
from tui.widgets.source_line import SourceLine

pytestmark = pytest.mark.timeout(60)

FAILED = "run_20261128T143000031_9c8b7a6f5e4d3c2b"
"""The one sample run that failed (started at 14:30:10, ended at 14:30:40)."""
RESEARCH = "run_20261128T143000012_4f1a9c2e7b3d8a60"
"""A sample run that succeeded, started at 14:30:00."""

KEY_NAMES = {
    "/": "slash",
    ":": "colon",
    "-": "minus",
    "?": "question_mark",
    "^": "circumflex_accent",
}
KEY_NAMES |= {"[": "left_square_bracket", "]": "right_square_bracket", '"': "quotation_mark"}
KEY_NAMES |= {" ": "space", ",": "comma", ".": "full_stop"}


def source_line(app: Any) -> str:
    return screen_lines(app)[app.screen.query_one(SourceLine).region.y]


def titles(app: Any) -> str:
    return screen_lines(app)[app.screen.query_one("#header").region.y]


async def until(pilot: Any, check: Any, turns: int = 50) -> None:
    """Let the app run until ``check()`` is truthy, or 20 ms ``turns`` times (what the
    screen shows then is asserted)."""
    for _ in range(turns):
        if check():
            return
        await pilot.pause(0.02)


def box_shown(app: Any) -> bool:
    """Whether the filter box is on screen (its border's top line drawn)."""
    return any(line.startswith("▊▔▔▔") for line in screen_lines(app))


def shown(app: Any) -> list[str]:
    return [run.run_id for run in app.screen.query_one(RunTable).rows]


async def from_the_terminal(app: Any, keys: list[str], gaps: list[int]) -> None:
    """``keys`` (characters, or a key's name) as the terminal's driver hands them to the
    app: posted to it, the app's loop let run ``gaps[i]`` turns after the i-th. The keys
    of a burst are on their way while the app opens the box and moves focus."""
    for at, key in enumerate(keys):
        name = KEY_NAMES.get(key, key)
        character = {"enter": "\r", "ctrl+j": "\n"}.get(key, key if len(key) == 1 else None)
        event = Key(name, character)
        event.set_sender(app)
        app.post_message(event)
        for _ in range(gaps[at % len(gaps)]):
            await asyncio.sleep(0)


# -- 1: the first Enter in the filter box -------------------------------------------------

BURSTS = [[0], [1], [2], [3], [0, 4], [5, 0, 1], [8], [0, 0, 12], [20, 1], [2, 30]]
"""Turns of the app's loop between keys: a whole burst at once, a fast typist, a paste
read in pieces; each puts the moment the box takes focus between other keys."""


@pytest.mark.parametrize("fresh", [0, 1, 2])
async def test_slash_a_filter_and_enter_in_one_burst_apply_the_filter(
    fixtures: Path, fresh: int
) -> None:
    """``/status:failed`` and Enter, typed in one burst (tmux's send-keys), in a fresh
    session and again: the filter applies, the box closes. In one of five sessions a walk
    saw Enter reach the box before the letters typed before it (they came to the box by
    way of the table): an empty filter applied, then ``status:failed`` run as the table's
    keys (``s`` sorted twice); or the letters typed out of order, the box left open."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        for attempt, gaps in enumerate(BURSTS[fresh::3] if fresh else BURSTS):
            keys = ["/", *"status:failed", "enter"]
            await from_the_terminal(app, keys, gaps)
            await until(pilot, lambda: "filter: status:failed" in source_line(app))
            await pilot.pause(0.05)
            said = source_line(app)
            assert "1 of 6 runs" in said, (attempt, gaps, said)
            assert said.rstrip().endswith("filter: status:failed"), (attempt, gaps, said)
            assert not box_shown(app), (attempt, gaps, screen_lines(app)[:4])
            assert "STARTED ▼" in titles(app), (attempt, gaps, titles(app))  # not sorted
            assert shown(app) == [FAILED]
            await pilot.press("escape")  # every run again, for the next burst
            await settle(pilot, lambda: len(shown(app)) == 6, "every run")


async def test_enter_typed_before_the_terminal_was_raw_applies_the_filter(fixtures: Path) -> None:
    """Typed as the app starts, before it sets the terminal to raw, Enter comes as a line
    feed (``ctrl+j``: the terminal turns a return into one). A walk typed ``/``, a filter
    and Enter in a fresh session: the box took the filter and stayed, Enter did nothing."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await from_the_terminal(app, ["/", *"status:failed", "ctrl+j"], [0])
        await until(pilot, lambda: "filter: status:failed" in source_line(app))
        await pilot.pause(0.05)
        assert not box_shown(app), screen_lines(app)[:4]
        said = source_line(app)
        assert "1 of 6 runs" in said, said
        assert said.rstrip().endswith("filter: status:failed"), said
        assert shown(app) == [FAILED]


# -- 2: why a filter is not applied, read whole at 80 columns ------------------------------


def said_under_the_box(app: Any) -> str:
    """What the screen shows from the filter box's bottom line to the column titles."""
    box = app.screen.query_one("#filter")
    lines = screen_lines(app)
    return "\n".join(lines[box.region.bottom - 1 : app.screen.query_one("#header").region.y])


@pytest.mark.parametrize("keys_help", [False, True])
async def test_every_word_a_refused_filter_offers_is_read_whole_at_80_columns(
    fixtures: Path, keys_help: bool
) -> None:
    """``status:bogus`` at 80x24: the box's bottom line named the statuses there are and
    was cut after ``awaiting_approval, s…``; ``bogus:x`` cut the fields after ``source…``.
    What the line has no room for goes under it, words whole; with the keys help open
    beside the box (narrower) too."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        if keys_help:
            await pilot.press("question_mark")
            await settle(pilot, lambda: app.screen.query("HelpPanel"), "the keys")
        for typed, named in [("status:bogus", WORDS), ("bogus:x", [f"{f}:" for f in FIELDS])]:
            await pilot.press("slash", "ctrl+u", *typed)
            await settle(pilot, lambda: "not applied: " in said_under_the_box(app), typed)
            await pilot.pause(0.1)
            said = said_under_the_box(app)
            words = set(re.findall(r"[\w:]+", said))
            assert set(named) <= words, (set(named) - words, said)
            assert all(len(line.rstrip()) <= 80 for line in screen_lines(app))
        await pilot.press("ctrl+u", *"status:fail")  # one that applies: nothing more is said
        await settle(pilot, lambda: shown(app) == [FAILED], "the filter applied")
        await pilot.pause(0.1)
        assert "not applied" not in "\n".join(screen_lines(app))
        assert "suspended" not in "\n".join(screen_lines(app))


# -- 3: the README's filters, typed as written ----------------------------------------------


async def test_every_filter_in_the_readme_typed_as_written_is_the_filter_applied(
    fixtures: Path,
) -> None:
    """The README's ``/^summari[sz]e/``, typed after the ``/`` that opens the box, lost its
    first slash (a slash typed first is the opening key again): ``^summari[sz]e/`` found
    nothing. Each example of the keys table is typed here key by key, and Enter: the box
    held it as written, and the table shows the runs it lets through."""
    ledgers = fixtures.rename(fixtures.parent / "ledgers")  # named as in the README
    app = make_app(Settings(clock=FROZEN, flush_interval=0.01), [LedgerDirectorySource(ledgers)])
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        everything = app.store.snapshot()
        for example in filter_examples():
            await from_the_terminal(app, ["/", *example, "enter"], [1])
            applied = f"filter: {example}"
            await until(pilot, lambda: source_line(app).rstrip().endswith(applied))  # noqa: B023
            await pilot.pause(0.05)
            said = source_line(app)
            assert said.rstrip().endswith(applied), (example, said)
            assert not box_shown(app), example  # applied: the box closed
            wanted = passing(everything, RunFilter.parse(example, now=FROZEN))
            assert wanted, example
            assert sorted(shown(app)) == sorted(run.run_id for run in wanted), example


# -- 4: DOING NOW has the room empty columns do not need -----------------------------------

WHY = "timed out waiting for the canary in eu-west-2 to report healthy"


def write_runs(directory: Path) -> None:
    """A run that failed (its DOING NOW says why, at length) and one that succeeded: no
    model call said tokens, no line is damaged (TOKENS and DAMAGED are empty)."""
    directory.mkdir()
    for at, (run_id, end) in enumerate(
        [
            ("run_20261128T143000001_aaaaaaaaaaaaaaaa", {"status": "error", "error": WHY}),
            ("run_20261128T143000002_bbbbbbbbbbbbbbbb", {"status": "ok"}),
        ]
    ):
        moment = f"2026-11-28T14:30:{10 * at:02d}"
        lines = [
            line(1, "run_started", {"skill": "deploy"}, run_id=run_id, time=f"{moment}.0Z"),
            line(2, "run_completed", end, run_id=run_id, time=f"{moment}.5Z"),
        ]
        (directory / f"{run_id}.jsonl").write_bytes(b"".join(lines))
    age(directory)


async def test_doing_now_takes_the_room_of_columns_with_nothing_in_them(tmp_path: Path) -> None:
    """At 160 columns a walk saw DOING NOW cut mid-word (``…canary in eu-w…``) beside
    TOKENS / COST and DAMAGED with nothing in them for any run."""
    write_runs(tmp_path / "ledgers")
    app = make_app(
        Settings(clock=FROZEN, flush_interval=0.01), [LedgerDirectorySource(tmp_path / "ledgers")]
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 2)
        lines = screen_lines(app)
        failed = next(text for text in lines if "✘ failed" in text)
        assert WHY in failed, failed
        assert "TOKENS" not in titles(app), titles(app)  # nothing in it: its room is DOING NOW's
        assert "DAMAGED" not in titles(app), titles(app)
        for title in ("STATUS", "RUN", "STARTED", "TIME", "EVENTS", "DOING NOW"):
            assert title in titles(app), titles(app)  # the columns with something in them stay


# -- 5: a run whose source is down is not shown doing anything now -------------------------


async def test_a_run_of_a_source_down_is_not_shown_doing_what_it_last_did() -> None:
    """The server went away: the run's status is ``unknown``, and DOING NOW still said
    ``llm default``, as if the run were calling a model now; the preview under the table
    said ``running``."""
    source = GoesAway(current_node="llm:default#1")
    app = make_app(Settings(flush_interval=0.01), [source])
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 1)

        def row() -> str:
            return next((text for text in screen_lines(app) if "…708192a3b4c5" in text), "")

        def preview() -> str:
            region = app.screen.query_one("RunPreview").region
            return "\n".join(screen_lines(app)[region.y : region.bottom])

        await settle(pilot, lambda: "llm default" in row(), "the run calling a model")
        assert f"{SERVER_RUN}  running" in preview()
        source.away.set()
        await settle(pilot, lambda: "unknown" in row(), "the run unknown")
        await pilot.pause(0.1)
        said = row()
        assert re.search(r"(?<!last known: )llm default", said) is None, said
        assert "last known: llm default" in said, said
        assert f"{SERVER_RUN}  unknown" in preview(), preview()
        assert f"{SERVER_RUN}  running" not in preview(), preview()


# -- 6: a source reconnecting says so, however narrow the line ------------------------------


@pytest.mark.parametrize("filtered", [False, True])
async def test_a_source_reconnecting_says_in_how_long_with_the_keys_help_open(
    fixtures: Path, filtered: bool
) -> None:
    """Attached to a server that is not there, at 80x24 with ``?`` open beside the table:
    the source line said ``http://127.0.0.1:PORT: reconnecting…`` or left the server out
    altogether. Its name and why it failed give way first: ``reconnecting in 30 s`` stays."""
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens here
    app = sample_app(fixtures, RemoteSource(url, "token", name=url, backoff_first=30))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        if filtered:
            await pilot.press("slash", *"status:failed", "enter")
            await settle(pilot, lambda: shown(app) == [FAILED], "the filter applied")
        await pilot.press("question_mark")
        await settle(pilot, lambda: app.screen.query("HelpPanel"), "the keys")
        await settle(pilot, lambda: "reconnecting" in source_line(app), "the source reconnecting")
        said = source_line(app).split("▏")[0]  # the line, not the keys help beside it
        assert re.search(r"reconnecting in \d+ s", said), said
        assert ("1 of 6 runs" if filtered else "  6 runs") in said, said
        if not filtered:  # room for the server's port too: which one it is
            assert url.rsplit(":", 1)[1] in said, said


# -- 7: a replay's runs started as long before the moment replayed -------------------------


async def test_a_replays_runs_started_before_the_moment_the_source_line_says(
    fixtures: Path,
) -> None:
    """A replay of runs of 14:30 showed STARTED ``3d ago`` (from the wall clock) beside a
    TIME of 0.1s. The source line says the moment replayed (its last event played), and
    STARTED counts from there."""
    ledgers = [next(fixtures.glob(f"{run_id}.jsonl")) for run_id in (RESEARCH, FAILED)]
    replay = ReplaySource(ledgers, speed=0, name="replay")
    app = make_app(Settings(clock=FROZEN, flush_interval=0.01), [replay])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, lambda: "played to the end" in source_line(app), "the replay played")
        await loaded(pilot, 2)
        await pilot.pause(0.1)
        said = re.search(
            r"replay \(played to the end, at once\) at (\d\d):(\d\d):(\d\d) UTC", source_line(app)
        )
        assert said, source_line(app)
        hours, minutes, seconds = (int(part) for part in said.groups())
        assert (hours, minutes) == (14, 30)  # the last event played: the failed run's end
        lines = screen_lines(app)
        research = next(text for text in lines if short_id(RESEARCH) in text)
        started = re.search(r"(\d+)s ago", research)  # it started at 14:30:00
        assert started, research
        assert int(started.group(1)) in {seconds, seconds + 1}, (research, said.group())
        failed = next(text for text in lines if short_id(FAILED) in text)
        assert re.search(rf"\b{seconds - 10}s ago|\b{seconds - 9}s ago", failed), failed
        assert not any(re.search(r"\d+[mhd] ago", text) for text in lines), lines


def test_a_short_id_is_the_distinctive_end_of_any_writers_id() -> None:
    """A session's id showed its start: a Claude Code session and its sub-agent read the
    same (``ae4a77f8-aedd…`` twice), and Codex's time-ordered ids share their starts."""
    from tui.text.runs import short_id

    session = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
    assert short_id("run_20261128T143000012_4f1a9c2e7b3d8a60") == "…9c2e7b3d8a60"
    assert short_id(session) == "…c94edc91af04"
    assert short_id(f"{session}.agent-aac57f5") == "agent-aac57f5"
    codex = ["019b04ae-b1c6-7c72-a134-a4c2de66058c", "019b04ae-b1c7-7000-8000-0123456789ab"]
    assert len({short_id(run_id) for run_id in codex}) == 2
    assert short_id("my.run.v1") == "my.run.v1"  # short ids whole, dots and all
