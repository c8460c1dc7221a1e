"""One word for each status: the table, the filter, the event stream and ``runtop ls`` agree."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import Input

from inspector import FilterError, RemoteSource, RunFilter
from inspector.status_words import WORDS, status_named
from ledger_reader import RunStatus
from tests.agents import Sleeper
from tests.conftest import line
from tests.inspector.test_remote_source import TOKEN, Server, free_port
from tests.tui_support import drawn_cells, loaded, sample_app, settle, write_waiting_run
from tui.app import make_app
from tui.settings import Settings
from tui.widgets.run_table import RunTable
from tui.widgets.source_line import SourceLine

pytestmark = pytest.mark.timeout(60)


def test_a_status_is_named_by_its_word_its_ledger_spelling_or_a_prefix() -> None:
    assert status_named("awaiting_approval") == "awaiting_approval"
    assert status_named("approval") == "awaiting_approval"  # what the table used to say
    assert status_named("await") == "awaiting_approval"
    assert status_named("cancelled") == "canceled"  # the ledger's spelling
    assert status_named("CANC") == "canceled"
    assert status_named("ok") == "succeeded"
    assert status_named("error") == "failed"
    assert status_named("unk") == "unknown"
    with pytest.raises(ValueError, match="unknown status 'bogus'"):
        status_named("bogus")
    with pytest.raises(ValueError, match="could be any of"):
        status_named("s")  # succeeded, suspended, stale
    assert set(WORDS) >= {status.value for status in RunStatus}


def test_an_unknown_field_or_status_is_named() -> None:
    with pytest.raises(FilterError, match="unknown status 'bogus'"):
        RunFilter.parse("status:bogus")
    with pytest.raises(FilterError, match="unknown field colour"):
        RunFilter.parse("colour:red")
    assert RunFilter.parse('"colour:red"').terms[0].field == "text"  # quoted: text
    assert RunFilter.parse("14:30").terms[0].field == "text"  # not a field's name


async def test_the_filter_takes_the_words_the_table_shows(fixtures: Path) -> None:
    write_waiting_run(fixtures)
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 7)
        for typed, wanted in [
            ("status:approval", {RunStatus.AWAITING_APPROVAL}),
            ("status:awaiting_approval", {RunStatus.AWAITING_APPROVAL}),
            ("status:cancelled", {RunStatus.CANCELED}),
            ("status:fail,canc", {RunStatus.FAILED, RunStatus.CANCELED}),
            ("-status:ok", set(RunStatus) - {RunStatus.SUCCEEDED}),
        ]:
            await pilot.press("slash", *typed, "enter")
            assert {run.status for run in rows.rows} & set(RunStatus) == (
                wanted & {run.status for run in rows.rows}
            )
            assert rows.rows, typed
            assert all(run.status in wanted for run in rows.rows), typed
            for run in rows.rows:
                assert run.status.value in rows.show_text()
        await pilot.press("slash", *"status:bogus")
        box = app.screen.query_one("#filter", Input)
        assert "unknown status 'bogus'" in str(box.border_subtitle)
        await pilot.press(*" ")  # still wrong: still said
        await pilot.press("ctrl+u", *"colour:red")
        assert "unknown field colour" in str(box.border_subtitle)


async def test_filters_apply_as_they_are_typed(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        await pilot.press("slash", *"status:fail")  # no Enter
        assert [run.status for run in rows.rows] == [RunStatus.FAILED]
        sources = app.screen.query_one(SourceLine)
        assert "1 of 6 runs" in str(sources.render())


async def test_one_run_is_one_run(fixtures: Path) -> None:
    for path in fixtures.glob("*.jsonl"):
        if "c5b4a39281706f5e" not in path.name:
            path.unlink()
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 1)
        said = str(app.screen.query_one(SourceLine).render())
        assert "1 run" in said
        assert "1 runs" not in said


async def test_a_canceled_run_says_canceled_once(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        rows.cursor = 3  # the canceled run
        await pilot.press("enter", "end")
        await settle(pilot, lambda: "wrong input file" in _event_lines(app), "the last event")
        shown = _event_lines(app)
        assert "■ run canceled: wrong input file" in shown
        assert "cancelled" not in shown
        assert "canceled: canceled" not in shown


def _event_lines(app: object) -> str:
    from tui.widgets.event_list import EventList

    events = app.screen.query_one(EventList)
    return "\n".join(
        "".join(segment.text for segment in events.render_line(y))
        for y in range(len(events.entries()))
    )


async def test_relative_start_times_agree_with_their_order(
    tmp_path: Path, write_ledger: object
) -> None:
    """Four runs started within 2 ms, drawn over a second's edge, read in the table's order."""
    directory = tmp_path / "runs"
    directory.mkdir()
    base = time.time() - 2.9995
    for number in range(4):
        moment = base + number * 0.0005
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment))
        stamp += f".{int(moment % 1 * 1e6):06d}Z"
        run_id = f"run_x{number}"
        (directory / f"{run_id}.jsonl").write_bytes(
            line(1, "run_started", {"skill": "s"}, run_id=run_id, time=stamp)
            + line(2, "run_completed", {"status": "ok"}, run_id=run_id, time=stamp)
        )
    from inspector import LedgerDirectorySource

    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(directory, name="d")])
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 4)
        for _ in range(3):
            texts = [line.split()[4] for line in rows.show_text().splitlines()]
            seconds = [float(text.rstrip("s")) for text in texts]
            assert seconds == sorted(seconds), texts  # newest first: fewest seconds first
            await pilot.pause(0.4)


async def test_a_run_of_a_disconnected_source_shows_unknown(tmp_path: Path) -> None:
    port = free_port()
    server = Server(tmp_path / "runs", port)
    manager = await server.start()
    source = RemoteSource(f"http://127.0.0.1:{port}", TOKEN, name="remote", backoff_first=0.05)
    app = make_app(Settings(flush_interval=0.01), [source])
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            handle = manager.start(Sleeper(), "30", detached=True)
            table = app.screen.query_one(RunTable)
            await settle(pilot, lambda: "● running" in table.show_text(), "the live run")
            await server.stop()
            await settle(pilot, lambda: "◌ unknown" in table.show_text(), "unknown")

            def cells() -> dict[str, str]:
                return drawn_cells(table, table.rows[0])

            frozen = cells()
            assert "running" not in table.show_text()
            await pilot.pause(1.2)
            table.tick()
            # The run's clock stopped (TIME); it started as long ago as ever.
            assert frozen["duration"].endswith("s")
            assert cells()["duration"] == frozen["duration"]
            await pilot.press("slash", *"status:unknown", "enter")
            assert [run.run_id for run in table.rows] == [handle.run_id]
            await pilot.press("escape")
            manager = await server.start()
            await settle(pilot, lambda: "◌ unknown" not in table.show_text(), "the return")
    finally:
        await server.stop()


async def test_the_header_totals_what_is_shown(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        sources = app.screen.query_one(SourceLine)
        tokens = sum(run.prompt_tokens + run.output_tokens for run in rows.rows)
        assert tokens > 1000
        assert f"✔2 ✘1 ⊘1 ?2  {tokens / 1000:.1f}k tok $" in str(sources.render())
        await pilot.press("slash", *"status:fail", "enter")
        assert "1 of 6 runs  ✘1  " in str(sources.render())  # totals of what is shown


async def test_the_header_claims_no_cost_that_no_run_recorded(tmp_path: Path) -> None:
    from inspector import LedgerDirectorySource

    directory = tmp_path / "runs"
    directory.mkdir()
    model_call = {"model": "local", "prompt_tokens": 400, "output_tokens": 92}  # no cost_usd
    (directory / "run_20261129T064500100_000000000000a000.jsonl").write_bytes(
        line(1, "run_started", {"skill": "s"}, run_id="run_20261129T064500100_000000000000a000")
        + line(2, "llm_call", model_call, run_id="run_20261129T064500100_000000000000a000")
        + line(
            3, "run_completed", {"status": "ok"}, run_id="run_20261129T064500100_000000000000a000"
        )
    )
    app = make_app(Settings(), [LedgerDirectorySource(directory, name="runs")])
    async with app.run_test(size=(160, 48)) as pilot:
        sources = app.screen.query_one(SourceLine)
        await settle(pilot, lambda: "492 tok" in str(sources.render()), "the tokens counted")
        assert "$" not in str(sources.render())


async def test_a_parents_children_show_under_it_in_the_tree(tmp_path: Path) -> None:
    from inspector import LedgerDirectorySource

    directory = tmp_path / "runs"
    directory.mkdir()
    parent = "run_20261129T064500100_000000000000a000"
    for number, (run_id, parent_id) in enumerate(
        [
            (parent, None),
            ("run_20261129T064500200_000000000000b001", parent),
            ("run_20261129T064500300_000000000000c000", None),
            ("run_20261129T064500400_000000000000b002", parent),
        ]
    ):
        payload = {"skill": f"s{number}", "parent_run_id": parent_id}
        stamp = f"2026-11-29T06:45:0{number}.000000Z"
        (directory / f"{run_id}.jsonl").write_bytes(
            line(1, "run_started", payload, run_id=run_id, time=stamp)
            + line(2, "run_completed", {"status": "ok"}, run_id=run_id, time=stamp)
        )
    source = LedgerDirectorySource(directory, name="d")
    app = make_app(Settings(clock=1795876500.0, flush_interval=0.01), [source])
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot, 4)
        assert [run.skill for run in rows.rows] == ["s3", "s2", "s1", "s0"]  # newest first
        await pilot.press("T")
        assert [run.skill for run in rows.rows] == ["s2", "s0", "s3", "s1"]
        shown = rows.show_text().splitlines()
        assert "  ├ s3" in shown[2]  # the first of two children: one more below
        assert "  └ s1" in shown[3]
        await pilot.press("T")
        assert [run.skill for run in rows.rows] == ["s3", "s2", "s1", "s0"]
