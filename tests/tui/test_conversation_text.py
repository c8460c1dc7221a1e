"""A model call laid out as a conversation, without a screen: its facts, parts and folds."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from inspector import LedgerDirectorySource, RunKey, RunStore
from ledger_reader import LlmCall
from tests.conversation_run import ANSWER, RUN_ID, write_conversation_run
from tui.model_call import LOOK_LIMIT, model_call_near
from tui.text.conversation import (
    PART_PREVIEW,
    CallTiming,
    call_facts,
    conversation_text,
    fitted,
    tokens_per_second,
)

pytestmark = pytest.mark.timeout(60)


def call(**payload: Any) -> LlmCall:
    record = {"run_id": RUN_ID, "seq": 5, "time": "2026-12-03T10:00:01Z", "type": "llm_call"}
    return msgspec.json.decode(msgspec.json.encode({**record, "payload": payload}), type=LlmCall)


def test_a_call_that_recorded_nothing_says_nothing_of_it() -> None:
    shown = conversation_text(call(model="m"))
    assert shown.plain.splitlines() == [
        "◆ m",
        "seq 5  ·  2026-12-03T10:00:01Z",
        "messages not recorded",
    ]


def test_figures_say_only_what_was_recorded() -> None:
    assert call_facts(call(model="m", output_tokens=50), CallTiming(2.0)) == [
        "◆ m",
        "50 output tokens",
        "2.0s  ·  25 tok/s",
    ]
    cached = call(model="m", prompt_tokens=1500, cache_read_tokens=1000, cost_usd=0.01)
    assert call_facts(cached)[1] == "1.5k prompt (1.0k cached) tokens  ·  $0.0100"
    assert tokens_per_second(None, 2.0) is None
    assert tokens_per_second(50, None) is None
    assert tokens_per_second(0, 2.0) is None  # no tokens came: no rate, not 0 tok/s
    assert tokens_per_second(3, 2.0) == "1.5 tok/s"


def test_tokens_per_second_count_from_the_first_token() -> None:
    """A call that waited 9 s for its first token and then wrote 100 tokens in 1 s wrote at
    100 tok/s, not 10; the wait has its own figure."""
    streamed = call(model="m", output_tokens=100, first_token_micros=9_000_000)
    assert call_facts(streamed, CallTiming(10.0))[-1] == "10s  ·  first token 9.0s  ·  100 tok/s"
    assert tokens_per_second(100, 10.0, 9.0) == "100 tok/s"
    assert tokens_per_second(3, 2.0, 1.999) is None  # three tokens in a millisecond: no rate
    assert tokens_per_second(100, 10.0) == "10 tok/s"  # not streamed: the whole call


def test_the_openai_shape_reads_as_runtops() -> None:
    messages = [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "function": {"name": "forecast", "arguments": '{"city":"Oslo"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "forecast", "content": "snow"},
    ]
    shown = conversation_text(call(model="m", messages=messages, response="Snow."))
    text = shown.plain
    assert '  ⚙ forecast {"city":"Oslo"}' in text
    assert "  ↩ forecast: snow" in text
    assert text.endswith("\nanswer\n  Snow.")  # a bare string answers as the assistant


def test_a_long_part_folds_to_its_start() -> None:
    words = " ".join(f"word{n}" for n in range(400))
    folded = conversation_text(call(messages=[{"role": "user", "content": words}]))
    assert folded.cut
    assert "word399" not in folded.plain
    lines = folded.plain.splitlines()
    shown = next(line for line in lines if line.startswith("  word0"))
    assert len(shown) - 2 == PART_PREVIEW
    assert lines[-1].startswith("  … ")
    assert lines[-1].endswith("more characters (o shows all)")
    whole = conversation_text(call(messages=[{"role": "user", "content": words}]), whole=True)
    assert not whole.cut
    assert "word399" in whole.plain


def test_a_fold_shows_the_searchs_match() -> None:
    words = " ".join(f"word{n}" for n in range(400))
    found = re.compile("word350", re.IGNORECASE)
    shown = conversation_text(call(messages=[{"role": "user", "content": words}]), found=found)
    assert "word350" in shown.plain
    assert "earlier characters (o shows all)" in shown.plain


async def test_a_model_call_is_found_from_its_node_past_many_chunks(tmp_path: Path) -> None:
    """A streamed call's node_enter lies thousands of chunks before its llm_call."""
    write_conversation_run(tmp_path / "runs", chunks=LOOK_LIMIT - 10)
    key = RunKey("runs", RUN_ID)
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(tmp_path / "runs", name="runs"))
        for _ in range(500):
            if store.get(key) is not None:
                break
            await asyncio.sleep(0.01)
        items = await store.events(key, 0, await store.event_count(key))
        enter = max(n for n, item in enumerate(items) if item.type == "node_enter")
        found = await model_call_near(store, key, items[enter], enter)
        assert found is not None
        assert ANSWER in str(found.call.payload.response)
        assert found.timing.seconds == 1.0
        exit = len(items) - 2
        back = await model_call_near(store, key, items[exit], exit)
        assert back is not None
        assert back.call.seq == found.call.seq


def test_facts_break_between_them_in_a_narrow_pane() -> None:
    line = "0.3s  ·  first token 0.3s  ·  9.7 tok/s"
    assert fitted(line, 80) == line
    assert fitted(line, 28) == "0.3s  ·  first token 0.3s  · \n9.7 tok/s"
    assert fitted("one fact that is longer than the pane", 10) == (
        "one fact that is longer than the pane"  # the pane's own wrap breaks it
    )
    # The dot that ends a line fits in it too.
    assert fitted(line, 27) == "0.3s  · \nfirst token 0.3s  · \n9.7 tok/s"


def long_conversation() -> list[dict[str, Any]]:
    said: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for turn in range(10):
        said.append({"role": "user", "content": f"question {turn}"})
        said.append({"role": "assistant", "content": f"answer {turn}"})
    return said


def test_a_long_conversation_shows_its_newest_messages_and_the_systems() -> None:
    folded = conversation_text(call(messages=long_conversation(), response="done"))
    text = folded.plain
    assert folded.cut
    assert "Be brief." in text
    assert "… 14 earlier messages (o shows all)" in text
    assert "question 6" not in text
    for turn in (7, 8, 9):
        assert f"question {turn}" in text
        assert f"answer {turn}" in text
    whole = conversation_text(call(messages=long_conversation(), response="done"), whole=True)
    assert "question 0" in whole.plain
    assert "earlier messages" not in whole.plain


def test_a_folded_conversation_keeps_a_message_the_search_matched() -> None:
    found = re.compile(re.escape("QUESTION 2"), re.IGNORECASE)
    text = conversation_text(call(messages=long_conversation()), found=found).plain
    assert "question 2" in text
    assert "… 4 earlier messages (o shows all)" in text  # 0 to 1, between system and it
    assert "… 9 earlier messages (o shows all)" in text  # its answer to 6
