"""``/`` in a run: the run's file searched by its bytes finds the entries that reading
every event finds (quotes, case, chunks, damage and all), and a phrase across two chunks."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import LedgerDirectorySource, RunKey, RunStore
from tests.conftest import RUN_ID, line
from tui.run_search import _read, _scanned, matches


def run_lines() -> list[bytes]:
    """A run with every kind of entry the search groups: paragraphs, tool calls, model
    calls with messages, a damaged line, words escaped in the JSON."""
    node = "llm:m#1"
    lines = [
        line(1, "run_started", {"skill": "s", "input": 'find "the blue one" in C:\\temp'}),
        line(2, "node_enter", {"node_id": node}),
    ]
    seq = 3
    for delta in ["Let me ", "sea", "rch for", " that.\n\n", "Then the ", "blue one."]:
        lines.append(line(seq, "llm_chunk", {"delta": delta, "node_id": node}))
        seq += 1
    messages = [{"role": "user", "content": "Où est the BLUE one?"}]
    lines.append(line(seq, "llm_call", {"model": "m", "messages": messages}))
    lines.append(line(seq + 1, "node_exit", {"node_id": node, "success": True}))
    seq += 2
    for number in range(3):
        tool = f"tool:fetch#{number}"
        lines += [
            line(seq, "node_enter", {"node_id": tool}),
            line(
                seq + 1,
                "tool_call",
                {
                    "call_id": f"c{number}",
                    "node_id": tool,
                    "name": "fetch",
                    "arguments": {"q": f"search {number}"},
                },
            ),
            line(
                seq + 2,
                "tool_result",
                {
                    "call_id": f"c{number}",
                    "node_id": tool,
                    "output": f"result {number}: the blue one",
                },
            ),
            line(seq + 3, "node_exit", {"node_id": tool, "success": True}),
        ]
        seq += 4
    lines.append(b'{"run_id": "' + RUN_ID.encode() + b'", "seq": 99, "payload": {"x": "se\n')
    lines.append(line(seq, "run_completed", {"status": "ok", "output": "Voilà: 日本語"}))
    return lines


@pytest.fixture
def ledgers(tmp_path: Path) -> Path:
    (tmp_path / f"{RUN_ID}.jsonl").write_bytes(b"".join(run_lines()))
    return tmp_path


async def found(store: RunStore, key: RunKey, phrase: str, *, scanned: bool) -> list[int]:
    from inspector.ledger import Phrase

    path = store.run_file(key)
    assert path is not None
    steps = (
        _scanned(store, key, path, Phrase(phrase)) if scanned else _read(store, key, Phrase(phrase))
    )
    return sorted([entry async for step in steps for entry in step.entries])


@pytest.mark.parametrize(
    "phrase",
    [
        "blue one",
        "BLUE",
        "Blue",
        'find "the blue',
        "C:\\temp",
        "search for",
        "rch for that",
        "Où",
        "日本",
        "fetch",
        "result 2",
        "that.\n\nThen",
        "not anywhere",
        "se",
        "ok",
    ],
)
async def test_the_bytes_find_what_reading_every_event_finds(ledgers: Path, phrase: str) -> None:
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(ledgers, name="runs"))
        changes = store.changes()
        while not store.snapshot().runs:
            await anext(changes)
        key = RunKey("runs", RUN_ID)
        assert await found(store, key, phrase, scanned=True) == await found(
            store, key, phrase, scanned=False
        ), phrase


async def test_a_phrase_across_chunks_is_found_in_its_paragraph(ledgers: Path) -> None:
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(ledgers, name="runs"))
        changes = store.changes()
        while not store.snapshot().runs:
            await anext(changes)
        key = RunKey("runs", RUN_ID)
        steps = [step async for step in matches(store, key, "search for that")]
        assert [entry for step in steps for entry in step.entries] == [2]  # the paragraph
        both = sorted(
            [entry async for step in matches(store, key, "the blue") for entry in step.entries]
        )
        assert both[:2] == [0, 6]  # the input; the second paragraph, "Then the " + "blue one."
