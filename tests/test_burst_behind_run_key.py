"""Keys typed in one burst behind a run key that is refused as it comes round.

A walk sent ``c``, a reason and Enter in one ``tmux send-keys`` on a run that had
ended: ``c`` refused, the reason's letters ran as keys (``t`` opened the tool calls,
``r`` and Enter can resume a run nobody asked to resume). The burst behind a run key
that waits its turn is tested in ``test_confirm_open_burst``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from inspector import ManagerSource
from run_manager import Manager
from tests.agents import Echo, stubborn_worker
from tests.test_confirm_open_burst import only_the_runs, typed_at_once
from tests.tui_support import loaded, noticed, notices, sample_app, settle

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_c_refused_sets_the_keys_typed_behind_it_aside_and_says_so(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    async with Manager(ledger_dir=tmp_path / "runs", agents=[Echo()]) as manager:
        (tmp_path / "none").mkdir()
        app = sample_app(tmp_path / "none", ManagerSource(manager, name="local"))
        async with app.run_test(size=size, notifications=True) as pilot:
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


async def test_a_move_onto_an_ended_run_then_c_and_a_reason_sets_them_aside(
    tmp_path: Path,
) -> None:
    """``End`` onto an ended run, then ``c``, a reason and Enter in one burst: ``c`` taken
    while the live run was selected waits for the ``End``, then is refused there."""
    async with Manager(ledger_dir=tmp_path / "runs", agents=[Echo()]) as manager:
        (tmp_path / "none").mkdir()
        app = sample_app(tmp_path / "none", ManagerSource(manager, name="local"))
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            ended = manager.start(Echo(), "hello")
            await ended.result()
            live = manager.start(stubborn_worker, "0.05")
            rows = await loaded(pilot, 2)
            assert rows.rows[0].run_id == live.run_id
            rows.select_key(rows.rows[0].key)
            await pilot.pause(0.1)
            typed_at_once(app, "end", *"cafter the end, resume it", "enter")
            said = await noticed(pilot, "cannot cancel")
            assert "keys typed after it were not used" in said
            await pilot.pause(1.5)  # past the hold's limit: nothing let go late
            only_the_runs(app)
            assert live.info().cancel_reason is None
            assert len(manager.list()) == 2  # none resumed


async def test_a_refused_c_slow_to_come_round_still_sets_its_burst_aside(
    tmp_path: Path,
) -> None:
    """On a loaded machine (three demos and a test run) ``c`` took over a second to come
    round the table; the keys held behind it went on at one second and ran as keys (the
    tool calls, then a tool's calls, opened). Held until it has come round, they do not."""
    async with Manager(ledger_dir=tmp_path / "runs", agents=[Echo()]) as manager:
        (tmp_path / "none").mkdir()
        app = sample_app(tmp_path / "none", ManagerSource(manager, name="local"))
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            ended = manager.start(Echo(), "hello")
            await ended.result()
            rows = await loaded(pilot, 1)
            await settle(pilot, lambda: not rows.rows[0].live, "the run ended")

            async def busy() -> None:  # the table's queue held up, as a loaded machine does
                await asyncio.sleep(1.5)

            rows.call_later(busy)
            typed_at_once(app, *"cafter the end", "enter")
            said = await noticed(pilot, "cannot cancel")
            assert "keys typed after it were not used" in said
            await pilot.pause(0.3)
            only_the_runs(app)
