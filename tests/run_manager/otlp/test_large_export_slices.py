"""A large export is decoded off the event loop and placed a slice of traces at a time:
other clients get their turns while it is taken, and it is written whole all the same."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from run_manager.otlp.export import LARGE, TURN, take_export
from run_manager.otlp.ingest import OtlpIngest
from run_manager.otlp.spans import decode_json
from tests.run_manager.otlp.test_ingest import agent_run, ledgers, request, types

pytestmark = pytest.mark.timeout(60)

TRACES = 2000


def many_runs() -> bytes:
    """:data:`TRACES` agent runs of three spans each, in one request."""
    spans = []
    for number in range(TRACES):
        for each in agent_run():
            spans.append({**each, "traceId": f"{number + 1:032x}"})
    body = json.loads(request())
    body["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans
    return json.dumps(body).encode()


async def test_a_large_export_gives_the_loop_turns_and_is_written_whole(tmp_path: Path) -> None:
    body = many_runs()
    assert len(body) > LARGE
    ingest = OtlpIngest(tmp_path)
    turns = 0
    taking = True

    async def other_client() -> None:
        nonlocal turns
        while taking:
            turns += 1
            await asyncio.sleep(0)

    other = asyncio.create_task(other_client())
    await asyncio.sleep(0)
    started = time.monotonic()
    try:
        result = await take_export(ingest, decode_json, body)
    finally:
        taking = False
        await other
    took = time.monotonic() - started
    assert (result.accepted, result.rejected) == (3 * TRACES, 0)
    # Other clients had turns all along: at least one for every few TURNs of placing
    # (however slow the machine, the turns come by the clock), where they had none.
    assert turns >= max(2, int(took / (5 * TURN)))
    written = ledgers(tmp_path)
    assert len(written) == TRACES
    assert all(types(events)[-1] == "run_completed" for events in written.values())


async def test_a_small_export_is_taken_at_once(tmp_path: Path) -> None:
    result = await take_export(OtlpIngest(tmp_path), decode_json, request(*agent_run()))
    assert result.accepted == 3
    [events] = ledgers(tmp_path).values()
    assert types(events)[-1] == "run_completed"
