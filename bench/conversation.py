"""A model call's conversation: laid out, shown on selection, searched.

    .venv/bin/python bench/conversation.py [--runs 5] [--calls 10000]

1. Laying out one model call whose messages fill the 64 KiB cap (system,
   then turns of user, assistant with a tool call, tool result): folded, as
   selected, and whole (``o``).
2. Finding a model call's parts from the event selected (its model node's exit
   and the ``llm_call`` before it) and laying its conversation out, in a run of
   ``--calls`` model calls each with its conversation, and in a run of 10: the
   work is the call selected, not the run. Then the same in a headless app at
   160x48, from ``EventList.select`` (what a key does) to the conversation in
   the detail pane: the event list's own work (reading the pages around the
   event, drawing) is in it.
3. Searching that run for a word only in its last call's messages (``/``: the
   run's file scanned by its bytes, the candidate lines decoded): to the first
   match, and to the end; ``grep -F -l`` on the same file in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec

from inspector import LedgerDirectorySource, RunKey, RunStore
from ledger_reader import LlmCall
from run_manager.ledger import cap_messages
from tui.app import make_app
from tui.model_call import model_call_near
from tui.run_search import SEARCH_PAGE, matches
from tui.settings import Settings
from tui.text.conversation import conversation_text
from tui.widgets.detail import EventDetail
from tui.widgets.event_list import EventList
from tui.widgets.run_table import RunTable

WORD = "quetzalcoatl"
"""Only in the last model call's messages."""


def turns(count: int, tag: int) -> list[dict[str, Any]]:
    """A system prompt, then ``count`` turns of an agent calling a tool."""
    said = "Check each source before you answer; say which one you used. " * 8
    messages: list[dict[str, Any]] = [{"role": "system", "content": said}]
    for turn in range(count):
        call_id = f"call_{tag}_{turn}"
        arguments = {"query": f"question {turn} of call {tag}", "limit": 5}
        messages += [
            {"role": "user", "content": [{"type": "text", "text": f"Look up item {turn}."}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "I will search for it."},
                    {"type": "tool_call", "id": call_id, "name": "search", "arguments": arguments},
                ],
            },
            {
                "role": "tool",
                "content": [
                    {
                        "type": "tool_result",
                        "id": call_id,
                        "name": "search",
                        "output": f"Result {turn}: " + "a line of what was found. " * 10,
                    }
                ],
            },
        ]
    return messages


def capped_call() -> LlmCall:
    """A model call whose messages fill the cap, as a writer keeps them."""
    messages, truncated = cap_messages(turns(400, 0))
    record = {
        "run_id": "run_x",
        "seq": 3,
        "time": "2026-12-03T10:00:00Z",
        "type": "llm_call",
        "payload": {
            "model": "gpt-4o-mini",
            "prompt_tokens": 16000,
            "output_tokens": 200,
            "messages": messages,
            "response": [{"role": "assistant", "content": "Done."}],
            "truncated": truncated,
        },
    }
    return msgspec.json.decode(msgspec.json.encode(record), type=LlmCall)


def write_run(directory: Path, calls: int) -> str:  # the run's id
    """A run of ``calls`` model calls, each with a few turns of conversation."""
    run_id = f"run_20261203T100000000_{calls:016x}"
    directory.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    seq = 0
    base = 1796292000.0

    def add(kind: str, payload: dict[str, Any]) -> None:
        nonlocal seq
        seq += 1
        when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(base + seq / 1000))
        when += f".{int(seq % 1000) * 1000:06d}Z"
        record = {"run_id": run_id, "seq": seq, "time": when, "type": kind, "payload": payload}
        lines.append(json.dumps(record, separators=(",", ":")))

    add("run_started", {"skill": "bench", "input": "go"})
    for number in range(calls):
        node = f"llm:gpt-4o-mini#{number + 1}"
        messages = turns(3, number)
        if number == calls - 1:
            messages.append({"role": "user", "content": f"And the {WORD}?"})
        add("node_enter", {"node_id": node})
        add(
            "llm_call",
            {
                "model": "gpt-4o-mini",
                "prompt_tokens": 900,
                "output_tokens": 40,
                "node_id": node,
                "messages": messages,
                "response": [{"role": "assistant", "content": f"Answer {number}."}],
            },
        )
        add("node_exit", {"node_id": node, "duration_micros": 800_000})
    add("run_completed", {"status": "ok"})
    (directory / f"{run_id}.jsonl").write_text("\n".join(lines) + "\n")
    return run_id


def median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.2f} ms"


def layout(runs: int) -> None:
    call = capped_call()
    size = len(msgspec.json.encode(call.payload.messages))
    for whole in (False, True):
        samples = []
        for _ in range(max(runs, 20)):
            began = time.perf_counter()
            shown = conversation_text(call, whole=whole)
            samples.append(time.perf_counter() - began)
        what = "whole (o)" if whole else "folded"
        print(
            f"1. a call of {size:,} bytes of messages, laid out {what}: {median_ms(samples)}"
            f" ({len(shown.lines):,} lines)"
        )


async def select_time(directory: Path, calls: int, runs: int) -> list[float]:
    """Seconds from selecting the run's last model call (``EventList.select``, as a key
    does) to its conversation in the detail pane, ``runs`` times, a tool-less event
    selected in between."""
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(directory)])
    last_call = 3 * calls - 1  # run_started, then each call's enter, llm_call and exit
    samples: list[float] = []
    async with app.run_test(size=(160, 48)) as pilot:
        for _ in range(3000):
            table = app.screen.query(RunTable)
            if table and table.first().rows:
                break
            await pilot.pause(0.01)
        await pilot.press("enter")
        for _ in range(3000):
            lists = app.screen.query(EventList)
            if lists and lists.first().count and lists.first().item(lists.first().count - 1):
                break
            await pilot.pause(0.01)
        await pilot.pause(1.5)  # the hidden timeline is built a second after the run opens
        events = app.screen.query_one(EventList)
        detail = app.screen.query_one(EventDetail)
        for _ in range(runs):
            events.select(0)
            while "started" not in detail.text:
                await pilot.pause(0.001)
            began = time.perf_counter()
            events.select(last_call)
            while WORD not in detail.text:
                await pilot.pause(0.001)
            samples.append(time.perf_counter() - began)
    return samples


async def find_time(directory: Path, calls: int, runs: int) -> list[float]:
    """Seconds to find the last call from its node's exit and lay its conversation out."""
    key = RunKey("runs", f"run_20261203T100000000_{calls:016x}")
    exit = 3 * calls  # run_started, then each call's enter, llm_call and exit
    samples: list[float] = []
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(directory, name="runs"))
        for _ in range(6000):
            if store.get(key) is not None:
                break
            await asyncio.sleep(0.01)
        await store.event_count(key)  # the ledger indexed, as the open run's list has it
        item = (await store.events(key, exit, exit + 1))[0]
        for _ in range(runs):
            began = time.perf_counter()
            found = await model_call_near(store, key, item, exit)
            assert found is not None
            conversation_text(found.call, timing=found.timing)
            samples.append(time.perf_counter() - began)
    return samples


async def search_time(directory: Path, run_id: str) -> tuple[float, float, float]:
    """Seconds to the first match of the run's search, to its end, and to read the run's
    events alone (the floor of a search that reads every event)."""
    key = RunKey("runs", run_id)
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(directory, name="runs"))
        for _ in range(6000):
            if store.get(key) is not None:
                break
            await asyncio.sleep(0.01)
        count = await store.event_count(key)
        began = time.perf_counter()
        first = 0.0
        found: list[int] = []
        async for page in matches(store, key, WORD):
            if page.entries and not first:
                first = time.perf_counter() - began
            found += page.entries
        took = time.perf_counter() - began
        assert len(found) == 1, found
        began = time.perf_counter()
        for start in range(0, count, SEARCH_PAGE):
            await store.events(key, start, min(count, start + SEARCH_PAGE))
        return first, took, time.perf_counter() - began


def grep_time(path: Path) -> float:
    """Seconds ``grep -F -l`` takes to find the word in the run's file (one process)."""
    began = time.perf_counter()
    subprocess.run(["grep", "-F", "-l", WORD, str(path)], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10_000)
    options = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.1f}")
    layout(options.runs)
    with tempfile.TemporaryDirectory() as scratch:
        big, small = Path(scratch) / "big", Path(scratch) / "small"
        big_id = write_run(big, options.calls)
        write_run(small, 10)
        size = (big / f"{big_id}.jsonl").stat().st_size
        found = {
            "big": asyncio.run(find_time(big, options.calls, 20)),
            "small": asyncio.run(find_time(small, 10, 20)),
        }
        print(
            f"2. a model call found from its node's exit and laid out, in a run of "
            f"{options.calls:,} calls / of 10: {median_ms(found['big'])} / "
            f"{median_ms(found['small'])}, median of 20"
        )
        times: dict[str, list[float]] = {"big": [], "small": []}
        for _ in range(options.runs):  # in turns, each a fresh app
            times["big"] += asyncio.run(select_time(big, options.calls, 5))
            times["small"] += asyncio.run(select_time(small, 10, 5))
        print(
            f"2. in the app, the call selected to its conversation shown, in a run of "
            f"{options.calls:,} calls ({size / 1e6:.0f} MB) / of 10: "
            f"{median_ms(times['big'])} / {median_ms(times['small'])}, median of "
            f"{len(times['big'])} ({options.runs} apps)"
        )
        searched, grepped = [], []
        for _ in range(options.runs):  # in turns: the search, then grep on the same file
            searched.append(asyncio.run(search_time(big, big_id)))
            grepped.append(grep_time(big / f"{big_id}.jsonl"))
        events = 3 * options.calls + 2
        first = statistics.median(each[0] for each in searched)
        took = statistics.median(each[1] for each in searched)
        floor = statistics.median(each[2] for each in searched)
        print(
            f"3. / for a word in the last call's messages, {options.calls:,} calls "
            f"({size / 1e6:.0f} MB): first match {first * 1000:.0f} ms, all {took * 1000:.0f} ms "
            f"({events / took:,.0f} events/s); grep -F -l {statistics.median(grepped) * 1000:.0f} "
            f"ms; reading the events alone {floor:.2f} s; median of {options.runs}"
        )


if __name__ == "__main__":
    main()
