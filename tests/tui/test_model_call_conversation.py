"""A model call selected in a run shows its conversation, as a chat reads.

The run (``tests/conversation_run.py``) has two model calls that recorded what
they were sent and what they answered: a system prompt long enough to fold,
the user's question, an answer with a tool call, the tool's result. Selected
in the event stream or on the timeline, the detail pane shows each message by
role, tool calls and results, the answer last, above the call's figures; ``o``
unfolds what is folded; a search finds words that are only in the messages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from inspector import LedgerDirectorySource
from tests.conversation_run import (
    ANSWER,
    FORECAST,
    HOSTILE,
    QUESTION,
    RUN_ID,
    write_conversation_run,
)
from tests.tui.test_interaction import open_run, screen_lines
from tests.tui_support import loaded, settle
from tui.app import RuntopApp, make_app
from tui.screens.run import RunScreen
from tui.settings import Settings
from tui.widgets.detail import EventDetail
from tui.widgets.event_list import EventList

pytestmark = pytest.mark.timeout(60)

SIZES = [(160, 48), (80, 24)]


def conversation_app(tmp_path: Path) -> RuntopApp:
    write_conversation_run(tmp_path / "runs")
    source = LedgerDirectorySource(tmp_path / "runs", name="runs")
    return make_app(Settings(flush_interval=0.01), [source])


async def open_conversation_run(pilot: Pilot[Any]) -> RunScreen:
    await loaded(pilot, 1)
    await open_run(pilot, RUN_ID)
    screen = pilot.app.screen
    assert isinstance(screen, RunScreen)
    events = screen.query_one(EventList)
    await settle(pilot, lambda: events.count == 14 and events.item(13), "the run's events")
    return screen


async def select_second_call(pilot: Pilot[Any], screen: RunScreen) -> EventDetail:
    """From the run's end, up past its completion and the model node's exit."""
    await pilot.press("end", "up", "up")
    detail = screen.query_one(EventDetail)
    # Shown at once, then again with its model node's time once that is found.
    await settle(
        pilot, lambda: ANSWER in detail.text and "tok/s" in detail.text, "the call and its time"
    )
    return detail


def in_order(text: str, *said: str) -> None:
    at = 0
    for words in said:
        found = text.find(words, at)
        assert found >= 0, f"{words!r} not after position {at} in:\n{text}"
        at = found + len(words)


@pytest.mark.parametrize("size", SIZES)
async def test_a_model_call_shows_its_messages_by_role_with_the_answer_last(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = conversation_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        screen = await open_conversation_run(pilot)
        detail = await select_second_call(pilot, screen)
        in_order(
            detail.text,
            "◆ gpt-4o-mini  ·  openai",
            "1.3k prompt + 40 output tokens",
            # Its model node's time, and its 40 tokens over it.
            "1.0s  ·  first token 0.5s  ·  80 tok/s",
            "\nsystem\n",
            "You are a careful travel assistant.",
            "\nuser\n",
            QUESTION,
            "\nassistant\n",
            "⚙ forecast " + json.dumps({"city": "Lisbon", "days": 3}, separators=(",", ":")),
            "\ntool\n",
            f"↩ forecast: {FORECAST}",
            "\nanswer\n",
            ANSWER,
        )
        assert "$" not in detail.text  # no cost was recorded: none is said, not $0
        await pilot.pause()
        shown = "\n".join(screen_lines(app))
        assert "gpt-4o-mini  ·  openai" in shown
        assert "system" in shown


async def test_markup_and_escapes_in_a_message_show_as_the_text_they_are(tmp_path: Path) -> None:
    app = conversation_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_conversation_run(pilot)
        await pilot.press("home", "down", "down")  # the first model call
        detail = screen.query_one(EventDetail)
        await settle(pilot, lambda: "\nanswer\n" in detail.text, "the first call's answer")
        shown = "\n".join(screen_lines(app))
        assert "[bold red]not markup[/] and ␛[31mnot red␛[0m" in shown
        assert "\x1b" not in detail.text
        assert HOSTILE.replace("\x1b", "␛") in detail.text


async def test_o_unfolds_a_long_message_and_folds_it_again(tmp_path: Path) -> None:
    app = conversation_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_conversation_run(pilot)
        detail = await select_second_call(pilot, screen)
        assert "lighthouse" not in detail.text  # the system prompt's end, folded
        assert "more characters (o shows all)" in detail.text
        await pilot.press("o")
        await settle(pilot, lambda: "lighthouse" in detail.text, "the whole system prompt")
        assert "o shows all" not in detail.text
        await pilot.press("o")
        await settle(pilot, lambda: "lighthouse" not in detail.text, "the prompt folded again")


async def test_a_model_bar_on_the_timeline_shows_its_conversation(tmp_path: Path) -> None:
    app = conversation_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_conversation_run(pilot)
        await pilot.press("T")
        detail = screen.query_one(EventDetail)
        await settle(pilot, lambda: "model gpt-4o-mini" in detail.text, "the first model bar")
        await pilot.press("down", "down")  # past the tool to the second model call
        await settle(pilot, lambda: ANSWER in detail.text, "the second bar's conversation")
        in_order(
            detail.text,
            "model gpt-4o-mini  ·  ok  ·  1.0s",
            "1.3k prompt + 40 output tokens",
            # Its 40 tokens over the second its bar lasted.
            "first token 0.5s  ·  80 tok/s",
            "\nuser\n",
            QUESTION,
            "\nanswer\n",
            ANSWER,
        )
        assert detail.text.count("1.3k prompt") == 1  # the bar's heading says it, once


@pytest.mark.parametrize("size", SIZES)
async def test_search_finds_words_that_are_only_in_a_model_calls_messages(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = conversation_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        screen = await open_conversation_run(pilot)
        # As the message says it, quotes and all (the ledger's JSON writes them \"): in the
        # run's input (selected) and the two calls' messages; the first call's is next.
        searched = 'said "bring the blue one"'
        await pilot.press("home", "slash", *searched, "enter")
        box = screen.query_one("#search")
        await settle(pilot, lambda: "entry 2 of 3" in str(box.border_title), "the matches")
        detail = screen.query_one(EventDetail)
        await settle(pilot, lambda: "\nanswer\n" in detail.text, "the first call's conversation")
        await pilot.pause()
        assert searched in detail.text
        shown = "\n".join(screen_lines(app))
        assert "blue one" in shown  # scrolled to, and on screen


async def test_a_match_past_a_fold_is_shown(tmp_path: Path) -> None:
    app = conversation_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_conversation_run(pilot)
        await pilot.press("home", "slash", *"lighthouse", "enter")
        detail = screen.query_one(EventDetail)
        await settle(pilot, lambda: "lighthouse" in detail.text, "the match")
        assert "earlier characters (o shows all)" in detail.text
        await pilot.pause()
        assert any("lighthouse" in line for line in screen_lines(app))


@pytest.mark.parametrize(
    ("keys", "facts", "said"),
    [
        (("home", "down"), "1.5s  ·  20 tok/s", HOSTILE.replace("\x1b", "␛")),  # node_enter
        (("end", "up"), "1.0s  ·  first token 0.5s  ·  80 tok/s", ANSWER),  # node_exit
        (("home", "down", "down"), "1.5s  ·  20 tok/s", HOSTILE.replace("\x1b", "␛")),
    ],
    ids=["model node's enter", "model node's exit", "llm_call"],
)
async def test_a_model_node_selected_in_the_stream_shows_its_call(
    tmp_path: Path, keys: tuple[str, ...], facts: str, said: str
) -> None:
    app = conversation_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_conversation_run(pilot)
        await pilot.press(*keys)
        detail = screen.query_one(EventDetail)
        await settle(pilot, lambda: facts in detail.text, "the call with its node's time")
        in_order(detail.text, "◆ gpt-4o-mini  ·  openai", facts, "\nuser\n", QUESTION, said)


async def test_o_on_the_timeline_keeps_the_bars_facts(tmp_path: Path) -> None:
    app = conversation_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_conversation_run(pilot)
        await pilot.press("T")
        detail = screen.query_one(EventDetail)
        await settle(pilot, lambda: "model gpt-4o-mini" in detail.text, "the first model bar")
        await pilot.press("o")
        await settle(pilot, lambda: "lighthouse" in detail.text, "the whole system prompt")
        in_order(detail.text, "model gpt-4o-mini  ·  ok  ·  1.5s", "node llm:gpt-4o-mini#1")
