"""A key moving the runs table's cursor draws again the two lines it left and came to: with
10,000 runs shown and a hundred streaming, a key waited behind a frame of every line."""

from __future__ import annotations

from ledger_reader import RunStatus
from tests.tui.test_run_table_clock import _CountingTable, _OneTable, _run


async def test_a_cursor_move_draws_two_lines() -> None:
    runs = [
        _run(n, RunStatus.SUCCEEDED, "2027-01-15T05:00:00Z", "2027-01-15T05:00:03Z")
        for n in range(30)
    ]
    app = _OneTable()
    async with app.run_test(size=(160, 20)) as pilot:
        table = app.query_one(_CountingTable)
        table.set_rows(runs)
        table.focus()
        await pilot.pause()
        await pilot.pause()
        table.drawn.clear()
        await pilot.press("down")
        await pilot.pause()
        assert table.cursor == 1
        assert sorted(table.drawn) == [0, 1]
        # A run inserted above moves every line down under the selection: all drawn again.
        table.drawn.clear()
        newer = _run(99, RunStatus.SUCCEEDED, "2027-01-15T06:00:00Z", "2027-01-15T06:00:01Z")
        table.set_rows([newer, *runs])
        await pilot.pause()
        assert table.cursor == 2
        assert len(table.drawn) > 10
        assert "run_0099" in table.render_line(0).text
