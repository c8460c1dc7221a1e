"""``runtop show --follow`` gathers streamed text into paragraphs as ``runtop show`` does:
a paragraph whose chunks come a batch at a time is still one line, printed once it ends."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

from rich.console import Console

from ledger_reader import Line, decode_line
from tui.commands.show import EventPrinter, _follow

RUN = "run_20261204T010000000_abcdefabcdefabcd"


def event(seq: int, kind: str, payload: dict[str, object]) -> bytes:
    record = {
        "run_id": RUN,
        "seq": seq,
        "time": f"2026-12-04T01:00:00.{seq:06d}Z",
        "type": kind,
        "payload": payload,
    }
    return json.dumps(record).encode() + b"\n"


WORDS = "A torn write is a write that the disk finished only in part , so a reader sees"
CHUNKS = [f"{word} " for word in WORDS.split()]


def printed(console: Console) -> list[str]:
    file = console.file
    assert isinstance(file, io.StringIO)
    return [line.rstrip() for line in file.getvalue().splitlines()]


def test_a_paragraph_streamed_a_chunk_a_batch_is_one_line() -> None:
    console = Console(file=io.StringIO(), width=400, highlight=False, markup=False)
    printer = EventPrinter(console, as_json=False, live=True)
    seq = 1
    batches = [event(1, "run_started", {"skill": "research"})]
    for chunk in CHUNKS:
        seq += 1
        batches.append(event(seq, "llm_chunk", {"index": 0, "delta": chunk}))
    batches.append(event(seq + 1, "run_completed", {"status": "ok", "output": "done"}))
    for number, raw in enumerate(batches):
        item = decode_line(raw)
        assert item is not None
        printer.lines([Line(number, number, item, raw)])
        printer.settle()  # as a follower does after each batch
    lines = printed(console)
    assert len(lines) == 3, lines
    assert lines[1].endswith(f"¶ text {''.join(CHUNKS)}  [{len(CHUNKS)} chunks]")


async def test_following_a_ledger_that_grows_a_chunk_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / f"{RUN}.jsonl"
    path.write_bytes(event(1, "run_started", {"skill": "research"}))
    console = Console(file=io.StringIO(), width=400, highlight=False, markup=False)
    printer = EventPrinter(console, as_json=False, live=True)
    follower = asyncio.create_task(_follow(path, printer, Console(file=io.StringIO())))
    for seq, chunk in enumerate(CHUNKS, start=2):
        with path.open("ab") as ledger:
            ledger.write(event(seq, "llm_chunk", {"index": 0, "delta": chunk}))
        await asyncio.sleep(0.01)  # a writer's pace: the follower takes them in several reads
    with path.open("ab") as ledger:
        ledger.write(event(len(CHUNKS) + 2, "run_completed", {"status": "ok", "output": "x"}))
    await asyncio.wait_for(follower, 10)
    lines = printed(console)
    assert len(lines) == 3, lines
    assert f"[{len(CHUNKS)} chunks]" in lines[1]
