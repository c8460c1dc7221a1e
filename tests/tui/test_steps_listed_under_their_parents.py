"""With its steps listed (``s``), a traced run lists no node before the node it is in.

Exporters send a span when it ends, so a graph's root chain is written after
everything inside it. The runs are the conformance corpus's real recordings,
written by the real ingest one request at a time while the app follows the run, as
ended (the root last) and shuffled across requests: after each request the list
holds every event once, each node after the node it is inside.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector import LedgerDirectorySource
from tests.tui.test_interaction import screen_lines
from tests.tui_support import loaded, open_run, settle
from tui.app import make_app
from tui.settings import Settings
from tui.widgets.event_list import EventList

pytest.importorskip("opentelemetry.proto")

from tests.inspector.test_span_order import parents_first
from tests.run_manager.otlp.test_corpus import requests_in


def listed(events: EventList) -> list[Any] | None:
    """The run's events as the list lists them, or ``None`` until all are read."""
    items = [events.item(index) for index in range(events.count)]
    return None if any(item is None for item in items) else items


@pytest.mark.parametrize("order", ["ended", "shuffled"])
@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_a_live_run_lists_each_node_after_the_node_it_is_in(
    order: str, size: tuple[int, int], tmp_path: Path
) -> None:
    from run_manager.otlp.ingest import OtlpIngest
    from run_manager.otlp.spans import decode_protobuf

    ingest = OtlpIngest(tmp_path)
    bodies = requests_in(order, "langgraph", bytes(range(16)))
    while not list(tmp_path.glob("*.jsonl")):  # a trace is a run from its first call on
        ingest.ingest(decode_protobuf(bodies.pop(0)))
    [ledger] = tmp_path.glob("*.jsonl")
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(tmp_path)])
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, 1)
        screen = await open_run(pilot, ledger.stem)
        events = screen.query_one(EventList)
        await pilot.press("s")
        await settle(pilot, lambda: events.steps_shown, "the steps listed")
        for body in bodies:
            ingest.ingest(decode_protobuf(body))
            written = len(ledger.read_bytes().splitlines())

            def all_listed(written: int = written) -> bool:
                return events.count == written and listed(events) is not None

            await settle(pilot, all_listed, f"{written} events")
            items = listed(events)
            assert items is not None
            assert sorted(item.seq for item in items) == list(range(1, written + 1))
            parents_first(items)
        shown = "\n".join(screen_lines(app))
        if size[1] >= 48:  # the whole run on screen: the graph's chain above what it holds
            assert shown.index("agent:agent#1") < shown.index("chain:Prompt#1")
