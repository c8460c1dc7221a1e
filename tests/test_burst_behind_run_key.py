"""Keys typed in one burst behind a run key that is refused as it comes round.

A walk sent ``c``, a reason and Enter in one ``tmux send-keys`` on a run that had
ended: ``c`` refused, the reason's letters ran as keys (``t`` opened the tool calls,
``r`` and Enter can resume a run nobody asked to resume). The burst behind a run key
that waits its turn is tested in ``test_confirm_open_burst``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import ManagerSource
from run_manager import Manager
from tests.agents import Echo
from tests.test_confirm_open_burst import only_the_runs, typed_at_once
from tests.tui_support import loaded, noticed, notices, sample_app, settle

pytestmark = pytest.mark.timeout(60)


async def test_c_refused_sets_the_keys_typed_behind_it_aside_and_says_so(
    tmp_path: Path,
) -> None:
    async with Manager(ledger_dir=tmp_path / "runs", agents=[Echo()]) as manager:
        (tmp_path / "none").mkdir()
        app = sample_app(tmp_path / "none", ManagerSource(manager, name="local"))
        async with app.run_test(size=(160, 48), notifications=True) as pilot:
            ended = manager.start(Echo(), "hello")
            await ended.result()
            rows = await loaded(pilot, 1)
            await settle(pilot, lambda: not rows.rows[0].live, "the run ended")
            typed_at_once(app, *"cafter the end, resume it", "enter")
            said = await noticed(pilot, "cannot cancel")
            assert "the run already ended" in said
            assert "keys typed after it were not used" in said
            await pilot.pause(0.3)
            only_the_runs(app)  # no tool calls (t), no confirmation (r), no run opened
            assert [run.run_id for run in manager.list()] == [ended.run_id]  # none resumed
            assert not [words for words in notices(app) if "cannot resume" in words]
