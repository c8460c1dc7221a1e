"""A live run's timeline, drawn many times a second, does not set off full collections
of the garbage collector: the lines Textual draws end in reference cycles, and they are
collected young (:data:`tui.start_up.YOUNG_COLLECTIONS_PER_MIDDLE`), not in the full
collections a key would wait behind."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.timeout(120)

WRITER = textwrap.dedent(
    """
    import json, os, sys, time
    path = sys.argv[1]
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    seq = 0
    def write(kind, payload):
        global seq
        seq += 1
        now = time.time()
        moment = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
        moment += f".{int(now % 1 * 1e6):06d}Z"
        line = {"run_id": "run_live", "seq": seq, "time": moment, "type": kind, "payload": payload}
        os.write(fd, (json.dumps(line) + "\\n").encode())
    write("run_started", {"skill": "s", "agent": "a", "input": {}})
    number = 0
    while True:  # a model call and a tool call every 10 ms: ~1,000 events/s
        llm, tool = f"llm:m#{number}", f"tool:t#{number}"
        write("node_enter", {"node_id": llm, "node_name": "m"})
        for index in range(4):
            write("llm_chunk", {"index": index, "delta": "text", "node_id": llm})
        write("node_exit", {"node_id": llm, "success": True})
        write("node_enter", {"node_id": tool, "node_name": "t"})
        write("node_exit", {"node_id": tool, "success": True})
        number += 1
        time.sleep(0.01)
    """
)

WATCHER = textwrap.dedent(
    """
    import asyncio, gc, json, sys, time
    from inspector import LedgerDirectorySource
    from tui.app import make_app
    from tui.settings import Settings
    from tui.widgets.timeline_view import TimelineView

    async def main():
        app = make_app(Settings(), [LedgerDirectorySource(sys.argv[1], name="live")])
        full = []
        async with app.run_test(size=(160, 48)) as pilot:
            while not app.store.snapshot().runs:
                await pilot.pause(0.05)
            await pilot.press("enter")
            await pilot.pause(0.5)
            await pilot.press("T")
            while len(app.screen.query_one(TimelineView).timeline) < 10:
                await pilot.pause(0.05)
            await pilot.pause(1.0)
            def count(phase, info):
                if phase == "stop" and info["generation"] == 2:
                    full.append(1)
            gc.callbacks.append(count)
            for _ in range(10):  # ten cursor moves while it streams, drawn as they come
                await pilot.press("down")
                await pilot.pause(0.4)
            events = app.store.snapshot().runs[0].event_count
        print(json.dumps({"full": len(full), "events": events}))

    asyncio.run(main())
    """
)


def test_a_streaming_timeline_sets_off_no_full_collection(tmp_path: Path) -> None:
    ledger = tmp_path / "run_live.jsonl"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(ledger)])
    try:
        done = subprocess.run(
            [sys.executable, "-c", WATCHER, str(tmp_path)],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=100,
        )
    finally:
        writer.kill()
        writer.wait()
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["events"] > 2_000  # it streamed all along
    assert seen["full"] <= 1
