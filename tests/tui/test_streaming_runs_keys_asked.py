"""While the selected run streams, the runs screen asks its keys again only when what they
depend on changed: not at every store change (the key bar asked every binding ten times a
second under a hundred live runs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.screen import Screen

from inspector import LedgerDirectorySource
from tests.conftest import RUN_ID, completed, line, started
from tests.tui_support import settle, table
from tui.app import make_app
from tui.settings import Settings

pytestmark = pytest.mark.timeout(60)


async def test_a_streaming_run_does_not_ask_the_keys_again(tmp_path: Path) -> None:
    ledger = tmp_path / f"{RUN_ID}.jsonl"
    ledger.write_bytes(started(1))
    source = LedgerDirectorySource(tmp_path, name="live")
    app = make_app(Settings(flush_interval=0.01), [source])
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot, lambda: len(table(app).rows) == 1, "the run")
        await settle(pilot, lambda: table(app).selected is not None, "it selected")
        asked: list[Screen[object]] = []
        app.screen.bindings_updated_signal.subscribe(app, asked.append)
        seq = 1
        for _ in range(20):  # twenty bursts, each shown before the next
            chunk = {"index": 0, "delta": "streamed text", "node_id": "llm:m#1"}
            with ledger.open("ab") as handle:
                for _ in range(500):
                    seq += 1
                    handle.write(line(seq, "llm_chunk", chunk))
            await settle(pilot, lambda n=seq: table(app).rows[0].event_count == n, f"{seq} events")
        before = len(asked)
        assert before <= 2  # the run's events changed, not what its keys can do
        with ledger.open("ab") as handle:
            handle.write(completed(seq + 1))
        # It ended: why c cannot cancel it, and why r cannot resume it, changed with it.
        await settle(pilot, lambda: not table(app).rows[0].live, "the run ended")
        await settle(pilot, lambda: len(asked) > before, "the keys asked again")
