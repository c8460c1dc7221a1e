"""The runs screen's source line and filter box.

At 80x24 the runs counted stay on the source line beside a source reconnecting; a filter
that does not parse leaves the one before applied and says which, beside the count; a
filter applied is offered again (``up``). Each test asserts what the screen shows: the
source line, the box, the rows. Keys typed into the box in one burst are checked in
``test_typed_ahead``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector import RemoteSource
from tests.tui.test_interaction import screen_lines
from tests.tui_support import free_port, loaded, sample_app, settle
from tui import textual_compat as compat
from tui.screens.runs import BOX_KEYS
from tui.widgets.filter_box import FilterBox
from tui.widgets.run_table import RunTable
from tui.widgets.source_line import SourceLine

pytestmark = pytest.mark.timeout(60)

FAILED = "run_20261128T143000031_9c8b7a6f5e4d3c2b"
"""The one sample run that failed."""
CANCELED = "run_20261128T143000045_1f2e3d4c5b6a7980"
"""The one sample run that was canceled."""


def line(app: Any) -> str:
    """The source line as drawn."""
    return str(app.screen.query_one(SourceLine).render())


def shown(app: Any) -> list[str]:
    """The run ids the table lists."""
    return [run.run_id for run in app.screen.query_one(RunTable).rows]


def box(app: Any) -> FilterBox:
    return app.screen.query_one(FilterBox)  # type: ignore[no-any-return]


def box_lines(app: Any) -> str:
    """The filter box's three lines as drawn (its text, and what its border says)."""
    region = box(app).region
    return "\n".join(screen_lines(app)[region.y : region.bottom])


def burst(widget: Any, *keys: str) -> None:
    """``keys`` queued for ``widget`` all at once, as a terminal delivers a paste or tmux's
    send-keys: the app hands each to the widget focused, before the first is handled."""
    for key in keys:
        character = key if len(key) == 1 else None
        name = {"/": "slash", ":": "colon", "-": "minus", "?": "question_mark"}.get(key, key)
        widget.post_message(compat.forwarded_key(name, character))


def typed(text: str) -> list[str]:
    return list(text)


async def apply(pilot: Any, text: str) -> None:
    """Type ``text`` in the filter box, key by key, and press Enter."""
    await pilot.press("slash")
    await settle(pilot, lambda: pilot.app.screen.query(FilterBox) and box(pilot.app).has_focus, "")
    await pilot.press("ctrl+u", *typed(text), "enter")
    await settle(pilot, lambda: pilot.app.screen.filter_text == text, f"the filter {text}")


# -- 1: the runs counted stay whole ---------------------------------------------------------


async def test_the_runs_counted_stay_whole_beside_a_source_that_is_reconnecting(
    fixtures: Path,
) -> None:
    """Attached to a server that is not there: its source says ``reconnecting in 30 s:
    … cannot be reached (…)``, longer than the line at 80x24. The sources are cut, then
    the filter; never ``6 runs`` / ``1 of 6 runs``, nor with ``?`` open beside them."""
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens here
    app = sample_app(fixtures, RemoteSource(url, "token", name=url, backoff_first=30))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await settle(pilot, lambda: "reconnecting" in line(app), "the source reconnecting")
        said = line(app)
        assert "  6 runs" in said, said
        assert said.startswith(" samples (live)"), said
        await apply(pilot, "status:failed")
        said = line(app)
        assert "  1 of 6 runs  " in said, said
        assert said.rstrip().endswith("filter: status:failed"), said  # room: it is whole
        assert len(said) <= 78, said
        await pilot.press("question_mark")
        await settle(pilot, lambda: app.screen.query("HelpPanel"), "the keys")
        await pilot.pause()
        said = line(app)
        assert "  1 of 6 runs  filter: st" in said, said  # the filter is cut after the sources
        assert len(said) <= app.screen.query_one(SourceLine).content_size.width, said


async def test_a_source_line_too_narrow_for_its_filter_keeps_the_count(fixtures: Path) -> None:
    """A filter longer than the line is cut (``…``), the runs counted are not."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        long = "-status:running -status:awaiting_approval -status:succeeded -status:canceled"
        await apply(pilot, long)
        said = line(app).rstrip()
        assert "  3 of 6 runs  filter: -status:running -status:" in said, said
        assert said.endswith("…"), said
        assert len(said) <= 78, said


def test_the_runs_screen_passes_the_keys_the_box_edits_with() -> None:
    """The runs screen names the box's editing keys without importing it (at launch)."""
    assert frozenset(FilterBox.EDITING) | FilterBox.RECALLING == BOX_KEYS


# -- 3: a filter that does not parse --------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_a_number_that_is_none_is_named_in_the_box(
    fixtures: Path, size: tuple[int, int]
) -> None:
    """``cost:>abc`` is refused, the term named; the numbers that parse select runs."""
    app = sample_app(fixtures)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        await apply(pilot, "cost:>0.01")
        assert shown(app) == ["run_20261128T143000012_4f1a9c2e7b3d8a60"]  # $0.0102
        await pilot.press("slash", *typed("duration:>20x"))
        await settle(pilot, lambda: "20x" in line(app), "the filter not applied")
        assert "not applied: duration:>20x: '20x' is not a duration" in box_lines(app)
        assert shown(app) == ["run_20261128T143000012_4f1a9c2e7b3d8a60"]
        await pilot.press("ctrl+u", *typed("duration:>20s"), "enter")
        await settle(pilot, lambda: shown(app) == [FAILED], "the run that took 30 s")


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_a_filter_that_does_not_parse_is_named_beside_the_one_applied(
    fixtures: Path, size: tuple[int, int]
) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        await apply(pilot, "status:failed")
        await pilot.press("slash", *typed("status:bogus"))  # the last filter selected: replaced
        await settle(pilot, lambda: "bogus" in line(app), "the filter not applied")
        drawn = box_lines(app)
        assert "status:bogus" in drawn
        assert "not applied: unknown status 'bogus': one of running," in drawn, drawn
        said = line(app)
        assert "1 of 6 runs  " in said, said
        assert "  filter: status:failed (status:bogus not" in said, said
        if size[0] > 80:  # at 80x24 its last letters give way
            assert "filter: status:failed (status:bogus not applied)" in said, said
        assert shown(app) == [FAILED]
        await pilot.press("enter")  # not applied on Enter either: the box stays, and says so
        await pilot.pause(0.1)
        assert "not applied: unknown status" in box_lines(app)
        assert box(app).has_focus
        await pilot.press("ctrl+u", *typed("foo:bar"))
        await settle(pilot, lambda: "foo:bar not applied" in line(app), "foo:bar not applied")
        assert "not applied: unknown field foo: (one of status:, skill:" in box_lines(app)
        assert "filter: status:failed (foo:bar not applied)" in line(app)
        assert shown(app) == [FAILED]
        await pilot.press("ctrl+u", *typed("status:cancel"))
        await settle(pilot, lambda: shown(app) == [CANCELED], "the filter applied")
        assert "not applied" not in box_lines(app) + line(app)
        assert "1 of 6 runs  ⊘1  filter: status:cancel" in line(app)


async def test_a_filter_that_does_not_parse_with_none_applied_says_no_filter(
    fixtures: Path,
) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("slash", *typed("foo:bar"))
        await settle(pilot, lambda: "foo:bar" in line(app), "the filter not applied")
        said = line(app)
        assert said.startswith(" samples (live)   6 runs"), said
        assert "no filter (foo:bar not applied)" in said, said
        assert len(shown(app)) == 6


# -- 4: the filters applied before ----------------------------------------------------------


async def test_up_in_the_filter_box_recalls_the_filters_applied_before(fixtures: Path) -> None:
    """As a shell's history: ``up`` goes back through the filters applied this session
    (newest first, each once), ``down`` comes back to what was typed."""
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await apply(pilot, "status:failed")
        await apply(pilot, "status:canceled")
        await apply(pilot, "status:failed")
        await pilot.press("escape")  # cleared: every run again, the box empty
        await settle(pilot, lambda: len(shown(app)) == 6, "every run")
        await pilot.press("slash")
        await settle(pilot, lambda: box(app).has_focus, "the box")
        assert box(app).value == ""
        await pilot.press("up")
        await settle(pilot, lambda: shown(app) == [FAILED], "the last filter applied")
        assert box(app).value == "status:failed"
        assert "filter: status:failed" in line(app)
        await pilot.press("up")
        await settle(pilot, lambda: shown(app) == [CANCELED], "the one before")
        assert box(app).value == "status:canceled"
        await pilot.press("up")  # the oldest: stays
        await pilot.pause(0.1)
        assert box(app).value == "status:canceled"
        await pilot.press("down")
        await settle(pilot, lambda: box(app).value == "status:failed", "the newer one")
        await pilot.press("down")  # back to what was typed: nothing
        await settle(pilot, lambda: len(shown(app)) == 6, "every run again")
        assert box(app).value == ""
        await pilot.press(*typed("dep"), "up")  # typed over: up starts from the newest
        await settle(pilot, lambda: box(app).value == "status:failed", "the newest again")
        await pilot.press("down")
        await settle(pilot, lambda: box(app).value == "dep", "what was typed")
