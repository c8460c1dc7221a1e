"""A run with two model calls that recorded their conversations, as LEDGER.md shapes them.

The first call is sent a system prompt (long: it folds) and the user's question and
answers with a tool call; the tool runs; the second call is sent all of that with the
tool's result and answers in words, streamed (it says its time to the first token).
One message holds markup and an escape sequence, which must show as the text they are.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

RUN_ID: Final = "run_20261203T100000000_c0ffee00c0ffee00"
STARTED: Final = 1796292000.0
"""When the run began (Unix seconds)."""
MODEL: Final = "gpt-4o-mini"

SYSTEM: Final = (
    "You are a careful travel assistant. "
    + " ".join(f"Rule {n}: check the forecast before packing advice." for n in range(1, 40))
    + " Never mention the word lighthouse."
)
"""Long enough to fold (the last words are past the fold)."""
QUESTION: Final = 'Should I pack an umbrella for Lisbon? My aunt said "bring the blue one".'
HOSTILE: Final = "[bold red]not markup[/] and \x1b[31mnot red\x1b[0m"
ARGUMENTS: Final = {"city": "Lisbon", "days": 3}
FORECAST: Final = "Rain on Tuesday, 14°C; sunny Wednesday."
ANSWER: Final = "Yes: pack the umbrella, it rains on Tuesday."


def _line(seq: int, kind: str, payload: dict[str, Any], at: float) -> str:
    when = datetime.fromtimestamp(STARTED + at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    record = {"run_id": RUN_ID, "seq": seq, "time": when, "type": kind, "payload": payload}
    return json.dumps(record) + "\n"


def conversation_events(chunks: int = 0) -> list[tuple[str, dict[str, Any], float]]:
    """The run's events: type, payload and seconds after its start; the second call
    streams ``chunks`` chunks of thinking before its text."""
    asked = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
    ]
    tool_call = {"type": "tool_call", "id": "call_1", "name": "forecast", "arguments": ARGUMENTS}
    first_answer = [
        {"role": "assistant", "content": [{"type": "text", "text": HOSTILE}, tool_call]},
    ]
    result = {
        "role": "tool",
        "content": [
            {"type": "tool_result", "id": "call_1", "name": "forecast", "output": FORECAST}
        ],
    }
    return [
        ("run_started", {"skill": "travel", "agent": "packer", "input": QUESTION}, 0.0),
        ("node_enter", {"node_id": "llm:gpt-4o-mini#1"}, 0.1),
        (
            "llm_call",
            {
                "model": MODEL,
                "provider": "openai",
                "prompt_tokens": 1200,
                "output_tokens": 30,
                "cost_usd": 0.0004,
                "node_id": "llm:gpt-4o-mini#1",
                "messages": asked,
                "response": first_answer,
            },
            1.6,
        ),
        ("node_exit", {"node_id": "llm:gpt-4o-mini#1", "duration_micros": 1_500_000}, 1.6),
        ("node_enter", {"node_id": "tool:forecast#1"}, 1.7),
        (
            "tool_call",
            {
                "call_id": "call_1",
                "name": "forecast",
                "arguments": ARGUMENTS,
                "node_id": "tool:forecast#1",
            },
            1.7,
        ),
        ("tool_result", {"call_id": "call_1", "output": FORECAST, "is_error": False}, 1.9),
        ("node_exit", {"node_id": "tool:forecast#1", "duration_micros": 200_000}, 1.9),
        ("node_enter", {"node_id": "llm:gpt-4o-mini#2"}, 2.0),
        *(
            ("reasoning_chunk", {"index": n, "delta": "hm ", "node_id": "llm:gpt-4o-mini#2"}, 2.1)
            for n in range(chunks)
        ),
        ("llm_chunk", {"index": 0, "delta": "Yes: pack ", "node_id": "llm:gpt-4o-mini#2"}, 2.5),
        (
            "llm_chunk",
            {
                "index": 1,
                "delta": "the umbrella, it rains on Tuesday.",
                "node_id": "llm:gpt-4o-mini#2",
            },
            3.0,
        ),
        (
            "llm_call",
            {
                "model": MODEL,
                "provider": "openai",
                "prompt_tokens": 1300,
                "output_tokens": 40,
                "node_id": "llm:gpt-4o-mini#2",
                "first_token_micros": 500_000,
                "messages": [*asked, *first_answer, result],
                "response": [{"role": "assistant", "content": ANSWER}],
            },
            3.0,
        ),
        ("node_exit", {"node_id": "llm:gpt-4o-mini#2", "duration_micros": 1_000_000}, 3.0),
        ("run_completed", {"status": "ok", "output": ANSWER}, 3.1),
    ]


def write_conversation_run(directory: Path, *, chunks: int = 0) -> Path:
    """Write the run's ledger into ``directory`` (made if need be); its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{RUN_ID}.jsonl"
    path.write_text(
        "".join(
            _line(seq, kind, payload, at)
            for seq, (kind, payload, at) in enumerate(conversation_events(chunks), start=1)
        )
    )
    return path
