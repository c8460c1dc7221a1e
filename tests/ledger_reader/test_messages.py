"""An llm_call's conversation read in each shape writers use, and capped newest-first."""

from __future__ import annotations

import json

from ledger_reader.events import PAYLOAD_CAP_BYTES
from ledger_reader.messages import TEXT, THINKING, TOOL_CALL, TOOL_RESULT, conversation
from run_manager.ledger import cap_messages


def test_runtops_own_shape_reads_role_text_tool_calls_and_results() -> None:
    messages = conversation(
        [
            {"role": "system", "content": "be brief"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "text": "look it up"},
                    {"type": "tool_call", "id": "c1", "name": "search", "arguments": {"q": "x"}},
                ],
            },
            {
                "role": "tool",
                "content": [
                    {
                        "type": "tool_result",
                        "id": "c1",
                        "name": "search",
                        "output": "found",
                        "is_error": True,
                    }
                ],
            },
        ]
    )
    assert [m.role for m in messages] == ["system", "assistant", "tool"]
    assert messages[0].parts[0].kind == TEXT
    assert messages[0].text == "be brief"
    thinking, call = messages[1].parts
    assert (thinking.kind, thinking.text) == (THINKING, "look it up")
    assert (call.kind, call.name, call.call_id, call.arguments) == (
        TOOL_CALL,
        "search",
        "c1",
        {"q": "x"},
    )
    result = messages[2].parts[0]
    assert (result.kind, result.text, result.is_error) == (TOOL_RESULT, "found", True)


def test_genai_and_openai_shapes_read_the_same() -> None:
    genai = conversation(
        [
            {"role": "user", "parts": [{"type": "text", "content": "hi"}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c", "response": "r"}]},
        ]
    )
    assert genai[0].text == "hi"
    assert (genai[1].parts[0].kind, genai[1].parts[0].text) == (TOOL_RESULT, "r")
    openai = conversation(
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "a", "content": "res"},
        ]
    )
    assert (openai[0].parts[0].kind, openai[0].parts[0].name) == (TOOL_CALL, "f")
    assert (openai[1].parts[0].kind, openai[1].parts[0].call_id) == (TOOL_RESULT, "a")


def test_what_cannot_be_placed_is_kept_as_text() -> None:
    assert conversation(None) == []
    assert conversation("plain")[0].text == "plain"
    odd = conversation([42, {"role": "user", "content": [{"type": "image", "url": "u"}]}])
    assert odd[0].text == "42"
    assert "image" in odd[1].text


def test_the_cap_keeps_the_newest_messages() -> None:
    old = {"role": "user", "content": "o" * (PAYLOAD_CAP_BYTES // 2)}
    new = {"role": "user", "content": "n" * (PAYLOAD_CAP_BYTES // 2)}
    kept, cut = cap_messages([old, new])
    assert cut
    assert kept == [new]
    small = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    assert cap_messages(small) == (small, False)


def test_one_message_over_the_cap_is_cut_to_it() -> None:
    huge = {"role": "user", "content": "h" * (2 * PAYLOAD_CAP_BYTES)}
    kept, cut = cap_messages([huge])
    assert cut
    assert len(kept) == 1
    assert len(json.dumps(kept[0]).encode()) <= PAYLOAD_CAP_BYTES + 16
