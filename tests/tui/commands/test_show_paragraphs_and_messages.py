"""``runtop show`` reads as the app does: paragraphs, not a line per chunk; ``--raw`` has
every event; ``--messages`` prints what each model call was sent and answered, inert."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from run_manager import Manager, model_call
from tui.cli import main
from tui.demo import Researcher, Summarizer

ESCAPE = "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07 \x1b[2J"
"""Escape sequences a hostile tool or user may put in a conversation."""


def shown(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    assert main(["show", *args]) == 0
    return capsys.readouterr().out.splitlines()


def only_ledger(directory: Path) -> str:
    (ledger,) = directory.glob("*.jsonl")
    return str(ledger)


async def test_the_demo_summarizer_is_a_paragraph_and_raw_is_every_chunk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        await manager.start(Summarizer(0.0), "api.log").result()
    ledger = only_ledger(tmp_path)
    lines = shown(capsys, ledger)
    assert len(lines) < 40
    (text,) = [line for line in lines if "¶ text" in line]
    assert "Part 1: " in text
    assert f"Part {Summarizer.CHUNKS}: " in text
    assert text.endswith(f"[{Summarizer.CHUNKS + 1:,} chunks]")
    raw = shown(capsys, ledger, "--raw")
    assert sum("¶ text" in line for line in raw) == Summarizer.CHUNKS + 1


async def test_a_tool_call_and_its_result_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with Manager(ledger_dir=tmp_path) as manager:
        await manager.stream(Researcher(0.0), "inotify limits").result()
    lines = shown(capsys, only_ledger(tmp_path))
    (search,) = [line for line in lines if "web_search" in line]
    assert '{"query":"inotify limits"} → {"results":' in search
    thinking = [line for line in lines if "thinking" in line]
    assert len(thinking) == 1
    assert "A search first" in thinking[0]


async def test_messages_print_each_model_call_s_conversation_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class Asker:
        name = "asker"

        async def run(self, input: str) -> str:
            asked = [
                {"role": "system", "content": "Answer briefly."},
                {"role": "user", "content": f"{input}\nsecond line"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_call", "id": "c1", "name": "fetch", "arguments": {"u": 1}}
                    ],
                },
                {
                    "role": "tool",
                    "content": [
                        {"type": "tool_result", "id": "c1", "name": "fetch", "output": ESCAPE}
                    ],
                },
            ]
            async with model_call("m-1", messages=asked) as model:
                await asyncio.sleep(0)
                model.chunk("Done.")
            return "Done."

    async with Manager(ledger_dir=tmp_path) as manager:
        await manager.start(Asker(), "Fetch page one").result()
    ledger = only_ledger(tmp_path)
    lines = shown(capsys, ledger, "--messages")
    text = "\n".join(lines)
    model = next(number for number, line in enumerate(lines) if "◆ model m-1" in line)
    conversation = [line.strip() for line in lines[model + 1 : model + 9]]
    assert conversation[:4] == [
        "system     Answer briefly.",
        "user       Fetch page one",
        "second line",
        'assistant  ⚙ fetch {"u":1}',  # as the app's conversation marks them
    ]
    assert conversation[4].startswith("tool       ↩ fetch: ")
    assert conversation[5:7] == ["answered:", "assistant  Done."]
    assert "\x1b" not in text
    assert "\x07" not in text
    assert "Answer briefly" not in "\n".join(shown(capsys, ledger))


async def test_messages_of_a_run_that_recorded_none_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with Manager(ledger_dir=tmp_path, record_content=False) as manager:
        await manager.stream(Researcher(0.0), "inotify limits").result()
    lines = shown(capsys, only_ledger(tmp_path), "--messages")
    assert sum("messages not recorded" in line for line in lines) == 2
