"""Keys typed in one burst behind a run key that is refused as it comes round.

A walk sent ``c``, a reason and Enter in one ``tmux send-keys`` on a run that had
ended: ``c`` refused, the reason's letters ran as keys (``t`` opened the tool calls,
``r`` and Enter can resume a run nobody asked to resume). The burst behind a run key
that waits its turn is tested in ``test_confirm_open_burst``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.agents import stubborn_worker
from tests.tui.test_confirm_open_burst import only_the_runs, typed_at_once
from tests.tui_support import loaded, noticed, notices, one_ended_run

pytestmark = pytest.mark.timeout(60)

BURST = [*"cafter the end, resume it", "enter"]
"""``c``, a reason and Enter: its ``t`` opens the tool calls, ``r`` and Enter a resume."""


async def set_aside(pilot: Any) -> None:
    """The refusal said, with the keys behind it set aside; nothing opened by them."""
    said = await noticed(pilot, "cannot cancel")
    assert "the run already ended" in said
    assert "keys typed after it were not used" in said
    await pilot.pause(0.3)
    only_the_runs(pilot.app)  # no tool calls (t), no confirmation (r), no run opened
    assert not [words for words in notices(pilot.app) if "cannot resume" in words]


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_c_refused_sets_the_keys_typed_behind_it_aside_and_says_so(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    async with one_ended_run(tmp_path, size) as (manager, app, pilot, _, _):
        typed_at_once(app, *BURST)
        await set_aside(pilot)
        assert len(manager.list()) == 1  # none resumed


async def test_a_move_onto_an_ended_run_then_c_and_a_reason_sets_them_aside(
    tmp_path: Path,
) -> None:
    """``End`` onto an ended run, then ``c``, a reason and Enter in one burst: ``c`` taken
    while the live run was selected waits for the ``End``, then is refused there."""
    async with one_ended_run(tmp_path, (80, 24)) as (manager, app, pilot, _, _):
        live = manager.start(stubborn_worker, "0.05")
        rows = await loaded(pilot, 2)
        assert rows.rows[0].run_id == live.run_id
        rows.select_key(rows.rows[0].key)
        await pilot.pause(0.1)
        typed_at_once(app, "end", *BURST)
        await set_aside(pilot)
        await pilot.pause(1.2)  # past the old hold's one second: nothing let go late
        only_the_runs(app)
        assert live.info().cancel_reason is None
        assert len(manager.list()) == 2  # none resumed


async def test_a_refused_c_slow_to_come_round_still_sets_its_burst_aside(
    tmp_path: Path,
) -> None:
    """On a loaded machine (three demos and a test run) ``c`` took over a second to come
    round the table; the keys held behind it went on at one second and ran as keys (the
    tool calls, then a tool's calls, opened). Held until it has come round, they do not."""
    async with one_ended_run(tmp_path, (80, 24)) as (manager, app, pilot, rows, _):

        async def busy() -> None:  # the table's queue held up, as a loaded machine does
            await asyncio.sleep(1.5)

        rows.call_later(busy)
        typed_at_once(app, *BURST)
        await set_aside(pilot)
        assert len(manager.list()) == 1
