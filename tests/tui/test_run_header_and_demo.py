"""``runtop demo`` and a run's header say what is so: a model call streaming is not ``no
tokens recorded``; the filter box keeps the slash of a bare regular expression typed
first; the demo's agents think, search and answer about what they were asked, and a denied
migration does not end ``succeeded``; the translator asks on its budget, and goes on
or is canceled as answered. Each is checked on what the screen shows.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from inspector import ManagerSource, RunFilter, RunView
from run_manager import Manager
from tests.tui.test_interaction import screen_lines
from tests.tui.test_status_words import _event_lines
from tests.tui_support import loaded, open_run, sample_app, settle
from tui.app import RuntopApp, make_app
from tui.demo import (
    Migrator,
    Planner,
    Researcher,
    Summarizer,
    Triager,
    start_demo,
    weather_agent,
)
from tui.screens.approval import ApprovalScreen
from tui.settings import Settings
from tui.widgets.run_table import RunTable

pytestmark = pytest.mark.timeout(60)


def header(app: RuntopApp) -> str:
    return str(app.screen.query_one("#run-header", Static).render())


def demo_app(manager: Manager) -> RuntopApp:
    return make_app(Settings(flush_interval=0.01), [ManagerSource(manager, name="demo")])


async def run_to_the_end(manager: Manager, agent: object, question: str) -> str:
    handle = manager.stream(agent, question)
    await asyncio.wait_for(handle.result(), 30)
    return handle.run_id


# -- 1: a model call under way is said in the run's header ----------------------------------


async def test_a_runs_header_says_its_model_call_is_running_not_no_tokens(
    tmp_path: Path,
) -> None:
    """A call under way is said to be running, not to have recorded no tokens; the
    summarizer cancelled as a runaway then says what it had spent."""
    async with Manager(ledger_dir=tmp_path) as manager:
        app = demo_app(manager)
        async with app.run_test(size=(160, 48)) as pilot:
            handle = manager.start(Summarizer(1.0), "logs/2026-11-28.txt")
            await open_run(pilot, handle.run_id)
            await settle(pilot, lambda: "model call running" in header(app), "the call running")
            assert "no tokens recorded" not in header(app)
            assert "model call running" in "\n".join(screen_lines(app)[:3])  # at 160x48
            manager.cancel(handle.run_id, reason="enough")
            await settle(pilot, lambda: "canceled" in header(app), "the run canceled")
            await settle(pilot, lambda: "52.0k" in header(app), "the tokens spent")
            assert "running" not in header(app)
            assert "no tokens recorded" not in header(app)


# -- 2: a bare regular expression typed first -----------------------------------------------


@pytest.mark.parametrize("burst", [True, False])
async def test_a_bare_regular_expression_typed_after_the_opening_slash_is_kept(
    fixtures: Path, burst: bool
) -> None:
    """``/`` then ``/^summ/``: the box held ``^summ/`` (its first slash taken for the opening
    key again), free text that matched nothing, and nothing was said. What is typed is in
    the box, and the table shows the runs the expression lets through."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        everything = app.store.snapshot()
        box = app.screen.query_one("#filter")
        if burst:
            await pilot.press("slash", "slash", *"^summ/")
        else:
            await pilot.press("slash")
            await settle(pilot, lambda: box.has_focus, "the box focused")
            await pilot.press("slash", *"^summ/")
        await settle(pilot, lambda: box.value == "/^summ/", "/^summ/ in the box")  # type: ignore[attr-defined]
        wanted = sorted(r.run_id for r in everything.filtered(RunFilter.parse("/^summ/")))
        assert wanted  # the samples have a summarize run
        await settle(pilot, lambda: sorted(r.run_id for r in rows.rows) == wanted, "its runs")
        lines = screen_lines(app)
        assert any(line.strip("▊▎ ") == "/^summ/" for line in lines[:4]), lines[:4]
        await pilot.press("enter")
        await settle(pilot, lambda: "filter: /^summ/" in screen_lines(app)[0], "applied")


async def test_a_bare_regular_expression_that_does_not_parse_is_named_in_the_box(
    fixtures: Path,
) -> None:
    """``/`` then ``/[/``: the box held ``[/``, text that matched nothing. The expression
    is the box's, and why it is not applied is said there."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("slash", "slash", "[", "slash")
        box = app.screen.query_one("#filter")
        await settle(pilot, lambda: box.value == "/[/", "/[/ in the box")  # type: ignore[attr-defined]
        said = "not applied: bad regular expression /[/"
        await settle(pilot, lambda: said in "\n".join(screen_lines(app)[:6]), said)


# -- 3: the demo's agents say what follows from their input ---------------------------------


async def test_the_researcher_thinks_searches_reads_and_answers_about_its_question(
    tmp_path: Path,
) -> None:
    """Asked about inotify, the researcher thought ``The textual docs describe mouse
    events``, called ``read_page`` with the search's query (``{"query": …, "page": 1}``),
    and answered about Textual's mouse events."""
    async with Manager(ledger_dir=tmp_path) as manager:
        app = demo_app(manager)
        async with app.run_test(size=(160, 48)) as pilot:
            run_id = await run_to_the_end(manager, Researcher(0.01), "inotify limits")
            await open_run(pilot, run_id)
            await settle(pilot, lambda: "run succeeded" in _event_lines(app), "its end")
            lines = _event_lines(app)
            thinking = next(line for line in lines.splitlines() if "thinking" in line)
            assert "inotify limits" in thinking, thinking
            search = next(line for line in lines.splitlines() if "⚙ web_search" in line)
            assert '{"query":"inotify limits"}' in search, search
            read = next(line for line in lines.splitlines() if "⚙ read_page" in line)
            assert '{"url":"https://example.com/inotify-limits"}' in read, read
            assert "query" not in read, read
            end = next(line for line in lines.splitlines() if "run succeeded" in line)
            assert "inotify" in end, end
            for elsewhere in ("textual", "mouse"):
                assert elsewhere not in lines.lower(), lines


async def test_a_question_the_researcher_has_no_answer_to_gets_none(tmp_path: Path) -> None:
    """Anything the demo had no answer for was answered with the mouse events text."""
    async with Manager(ledger_dir=tmp_path) as manager:
        app = demo_app(manager)
        async with app.run_test(size=(160, 48)) as pilot:
            run_id = await run_to_the_end(manager, Researcher(0.01), "rust borrow checker")
            await open_run(pilot, run_id)
            await settle(pilot, lambda: "run succeeded" in _event_lines(app), "its end")
            end = next(line for line in _event_lines(app).splitlines() if "run succeeded" in line)
            assert "rust borrow checker" in end, end
            assert "mouse" not in _event_lines(app)


async def test_a_denied_migration_ends_failed_saying_it_was_denied(tmp_path: Path) -> None:
    """Denied, the migrator ended ``✔ succeeded`` with ``not applied: …``: a run that did
    not do what it was for, shown as done."""
    async with Manager(ledger_dir=tmp_path) as manager:
        app = demo_app(manager)
        async with app.run_test(size=(160, 48)) as pilot:
            handle = manager.start(Migrator(0.01), "v42")
            rows = app.screen.query_one(RunTable)
            await settle(
                pilot,
                lambda: any(r.pending_approval for r in rows.rows if r.run_id == handle.run_id),
                "the approval",
            )
            rows.select_key(next(r.key for r in rows.rows if r.run_id == handle.run_id))
            await pilot.press("d")
            await pilot.press(*"not during the freeze", "enter")
            await settle(pilot, lambda: handle.status.value == "failed", "the run failed")
            row = "migration denied: not during the freeze"
            await settle(pilot, lambda: any(row in line for line in screen_lines(app)), row)
            line = next(line for line in screen_lines(app) if row in line)
            assert "✘ failed" in line, line
            assert "succeeded" not in line, line
            await open_run(pilot, handle.run_id)
            await settle(pilot, lambda: "run failed" in _event_lines(app), "its end")
            end = next(line for line in _event_lines(app).splitlines() if "run failed" in line)
            assert "migration denied: not during the freeze" in end, end
            assert "✘ failed" in header(app)
            assert "apply_migration" not in _event_lines(app)  # nothing was applied


async def test_the_triager_and_the_planner_speak_of_their_own_input(tmp_path: Path) -> None:
    """The triager (the classifier's subclass) sorted ``alert: disk 91% on db-2`` as
    ``billing``; the planner planned ``Two parts: the widgets, then the events.`` of any
    input."""
    async with Manager(ledger_dir=tmp_path) as manager:
        app = demo_app(manager)
        async with app.run_test(size=(160, 48)) as pilot:
            triage = manager.start(Triager(0.01), "alert: disk 91% on db-2")
            plan = manager.start(Planner(0.01, manager), "textual")
            for handle in (triage, plan):
                await asyncio.wait_for(handle.result(), 30)
            await open_run(pilot, triage.run_id)
            await settle(pilot, lambda: "run succeeded" in _event_lines(app), "its end")
            end = next(line for line in _event_lines(app).splitlines() if "run succeeded" in line)
            assert "run succeeded: urgent" in end, end
            assert "billing" not in _event_lines(app)
            await pilot.press("escape")
            await open_run(pilot, plan.run_id)
            await settle(pilot, lambda: "run succeeded" in _event_lines(app), "its end")
            assert "Two parts of textual" in _event_lines(app)


async def test_the_weather_agent_forecasts_the_city_it_is_asked_about(tmp_path: Path) -> None:
    """On PydanticAI's test model the weather agent asked the forecast of ``a``, and
    answered ``{"get_forecast":"sunny in a, 21 °C"}`` to "What's the weather in Oslo?"."""
    agent = weather_agent(pace=0.001)
    assert agent is not None
    async with Manager(ledger_dir=tmp_path) as manager:
        app = demo_app(manager)
        async with app.run_test(size=(160, 48)) as pilot:
            run_id = await run_to_the_end(manager, agent, "What's the weather in Oslo?")
            await open_run(pilot, run_id)
            await settle(pilot, lambda: "run succeeded" in _event_lines(app), "its end")
            lines = _event_lines(app)
            call = next(line for line in lines.splitlines() if "⚙ get_forecast" in line)
            assert '{"city":"Oslo"}' in call, call
            end = next(line for line in lines.splitlines() if "run succeeded" in line)
            assert "Oslo: light snow" in end, end
            assert "sunny" not in lines


# -- 4: the demo's translator asks to spend more of its budget ------------------------------


def translator(app: RuntopApp) -> RunView | None:
    rows = app.screen.query_one(RunTable).rows
    return next((r for r in rows if r.agent == "translator"), None)


async def answer_the_translator(pilot: Any, app: RuntopApp, key: str) -> RunView:
    """The demo started: its translator's budget question on the screen, answered with
    ``key`` (``a`` or ``d``) and Enter; the translator's row."""
    asked = "budget: $0.80 of $1.00 spent; continue?"

    def waiting() -> bool:
        run = translator(app)
        return run is not None and run.status.value == "awaiting_approval"

    await settle(pilot, waiting, "the translator's question")
    run = translator(app)
    assert run is not None
    await settle(pilot, lambda: any(asked in line for line in screen_lines(app)), asked)
    rows = app.screen.query_one(RunTable)
    rows.select_key(run.key)
    await pilot.press(key)
    assert isinstance(app.screen, ApprovalScreen)
    await pilot.press("enter")
    return run


async def test_the_demos_translator_asks_on_its_budget_and_goes_on_when_approved(
    tmp_path: Path,
) -> None:
    """The demo had no run with a budget: a new user never met its question. Its
    translator asks a few seconds in; approved, it goes on and asks again at $1.60."""
    async with Manager(ledger_dir=tmp_path) as manager:
        app = demo_app(manager)
        async with app.run_test(size=(160, 48)) as pilot:
            demo = asyncio.create_task(start_demo(manager, pace=0.05, forever=False))
            run = await answer_the_translator(pilot, app, "a")
            again = "budget: $1.60 of $2.00 spent; continue?"
            await settle(pilot, lambda: any(again in line for line in screen_lines(app)), again)
            assert manager.get(run.run_id).info().budget is not None
            await demo
            manager.cancel_all()


async def test_the_demos_translator_denied_is_canceled_for_its_budget(tmp_path: Path) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        app = demo_app(manager)
        async with app.run_test(size=(160, 48)) as pilot:
            demo = asyncio.create_task(start_demo(manager, pace=0.05, forever=False))
            run = await answer_the_translator(pilot, app, "d")
            handle = manager.get(run.run_id)
            await settle(pilot, lambda: handle.status.value == "canceled", "canceled")
            reason = handle.info().cancel_reason or ""
            assert reason.startswith("budget: $0.80 of $1.00 spent; not approved"), reason
            line = "budget: $0.80 of $1.00 spent; not approved"
            await settle(pilot, lambda: any(line in said for said in screen_lines(app)), line)
            await demo
            manager.cancel_all()
