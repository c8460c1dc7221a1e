"""The launch freezes what start-up made (``gc.freeze``) once a process, and nothing after.

Its failure mode would be a leak: an app's runs frozen with the start-up, never
freed. Each probe runs in a fresh interpreter, where nothing was frozen before.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.timeout(60)

PROBE = textwrap.dedent(
    """
    import asyncio, gc, json, weakref
    from inspector import RunSource, RunUpdate, SourceUpdate
    from ledger_reader import RunStatus, RunSummary
    from tui.app import make_app
    from tui.settings import Settings
    from tui.widgets.run_table import RunTable

    class Runs(RunSource):
        async def updates(self):
            yield SourceUpdate(
                runs=[
                    RunUpdate(f"run_{n}", RunSummary(run_id=f"run_{n}", status=RunStatus.SUCCEEDED))
                    for n in range(100)
                ],
                initial=True,
            )
        async def events(self, run_id, start, stop):
            return []
        async def close(self):
            pass

    async def shown(app):
        async with app.run_test(size=(120, 30)) as pilot:
            for _ in range(500):
                tables = app.screen.query(RunTable)
                if tables and len(tables.first().rows) == 100:
                    break
                await pilot.pause(0.01)
            return tables.first()

    said = {"frozen_before": gc.get_freeze_count()}
    first = make_app(Settings(flush_interval=0.01), [Runs("first")])
    said["frozen_at_launch"] = gc.get_freeze_count()
    table = weakref.ref(asyncio.run(shown(first)))
    store = weakref.ref(first.store)
    second = make_app(Settings(flush_interval=0.01), [Runs("second")])
    said["frozen_after_second"] = gc.get_freeze_count()
    asyncio.run(shown(second))
    del first
    gc.collect()
    said["first_table_freed"] = table() is None
    said["first_store_freed"] = store() is None
    print(json.dumps(said))
    """
)


def test_start_up_is_frozen_once_and_an_apps_runs_are_collected() -> None:
    found = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=50
    )
    said = json.loads(found.stdout.splitlines()[-1])
    assert said["frozen_before"] == 0
    assert said["frozen_at_launch"] > 10_000  # the imports: Textual, Rich, msgspec, ours
    assert said["frozen_after_second"] <= said["frozen_at_launch"]  # none more (some freed)
    # What an app made (its store and runs, its screens) is collected as before: an app is
    # a web of cycles (screens and widgets point back to it), freed by the collector alone.
    assert said["first_store_freed"]
    assert said["first_table_freed"]
