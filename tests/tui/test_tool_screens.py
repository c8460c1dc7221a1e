"""The tool screens (``t``, and a tool's calls after Enter).

1. A replay played again counts each call once (the ledgers hold one call of each), after
   space at the end and after ``R``, on the tools list and the drill-down alike.
2. Home, End, ``g`` and ``G`` move on either list; Home then Enter typed at once opens the
   call Home went to.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.events import Key

from inspector import ReplaySource, RunSource, RunUpdate, SourceUpdate
from ledger_reader import LedgerItem
from tests.tui.test_interaction import screen_lines
from tests.tui_support import FROZEN, loaded, sample_app, settle
from tui.app import make_app
from tui.settings import Settings
from tui.widgets.keys_help import KeyList


def calls_in(ledgers: list[Path]) -> Counter[str]:
    """How many calls of each tool the ledgers hold (read from them, not assumed)."""
    counted: Counter[str] = Counter()
    for ledger in ledgers:
        for line in ledger.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a torn or damaged line: no call
            if isinstance(record, dict) and record.get("type") == "tool_call":
                counted[record["payload"]["name"]] += 1
    return counted


def said(app: Any) -> str:
    return "\n".join(screen_lines(app))


def tools_listed(app: Any, names: set[str]) -> dict[str, str]:
    """The CALLS column of each tool the tools list shows, as drawn."""
    shown: dict[str, str] = {}
    for line in screen_lines(app):
        words = line.split()
        if len(words) > 1 and words[0] in names:
            shown[words[0]] = words[1]
    return shown


async def played_again(pilot: Any, key: str) -> None:
    """Press ``key`` (space at the end, or ``R``) and let the replay play to its end again."""
    app = pilot.app
    before = app.store.applied
    await pilot.press(key)
    if key == "R":  # played at once, R waits at the start, paused: space plays it
        await settle(pilot, lambda: "paused" in said(app), "the replay paused at its start")
        await pilot.press("space")
    await settle(
        pilot,
        lambda: app.store.applied > before and "played to the end" in said(app),
        "the replay played to the end again",
    )
    await pilot.pause(0.1)


@pytest.mark.parametrize("again", [["space"], ["R", "R"], ["space", "R", "space"]])
async def test_a_replay_played_again_counts_each_call_once(
    fixtures: Path, again: list[str]
) -> None:
    ledgers = sorted(fixtures.glob("*.jsonl"))
    expected = calls_in(ledgers)
    assert expected  # the samples call tools
    replay = ReplaySource([*ledgers], speed=0, name="replay")
    app = make_app(Settings(clock=FROZEN, flush_interval=0.01), [replay])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, lambda: "played to the end" in said(app), "the replay's end")
        for key in again:
            await played_again(pilot, key)
        await pilot.press("t")
        await settle(pilot, lambda: type(app.screen).__name__ == "ToolsScreen", "the tools")
        names = set(expected)
        await settle(pilot, lambda: set(tools_listed(app, names)) == names, "every tool")
        shown = tools_listed(app, names)
        assert shown == {name: str(count) for name, count in expected.items()}, said(app)
        # The drill-down of the busiest (the first row) says the same.
        await pilot.press("enter")
        await settle(pilot, lambda: type(app.screen).__name__ == "ToolCallsScreen", "calls")
        await pilot.pause()
        title = screen_lines(app)[0]
        tool = title.split(":")[0].strip()
        assert f"{tool}: {expected[tool]} call" in title, title


async def test_a_ledger_read_again_from_its_start_counts_its_calls_once(fixtures: Path) -> None:
    """A ledger truncated and written again (its run reset): its calls counted once."""
    app = sample_app(fixtures)
    ledgers = sorted(fixtures.glob("*.jsonl"))
    expected = calls_in(ledgers)
    names = set(expected)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        research = next(path for path in ledgers if calls_in([path]))
        whole = research.read_bytes()
        research.write_bytes(b"")
        await settle(
            pilot,
            lambda: all(
                app.store.tool_calls(view.key) == []
                for view in app.store.snapshot().runs
                if view.run_id in research.name
            ),
            "the run read again from nothing",
        )
        research.write_bytes(whole)
        await loaded(pilot)
        await settle(
            pilot,
            lambda: any(
                app.store.tool_calls(view.key)
                for view in app.store.snapshot().runs
                if view.run_id in research.name
            ),
            "its calls read again",
        )
        await pilot.press("t")
        await settle(pilot, lambda: set(tools_listed(app, names)) == names, "every tool")
        assert tools_listed(app, names) == {n: str(c) for n, c in expected.items()}, said(app)


# -- 2: Home, End, g and G -------------------------------------------------------------------

LOOKUPS = [f"run_20261128T1431000{n}0_aaaabbbbcccc{n}{n}{n}{n}" for n in range(1, 5)]
"""Four runs that each call ``lookup`` once, a minute apart: the newest last."""


def write_lookups(directory: Path) -> None:
    for at, run_id in enumerate(LOOKUPS):
        stamp = f"2026-11-28T14:3{1 + at}:00"

        def line(
            seq: int, kind: str, payload: dict[str, Any], rid: str = run_id, at: str = stamp
        ) -> str:
            record = {"run_id": rid, "seq": seq, "time": f"{at}.{seq:06d}Z", "type": kind}
            return json.dumps({**record, "payload": payload}) + "\n"

        call = {"call_id": f"look{at}", "name": "lookup", "arguments": {"n": at}}
        (directory / f"{run_id}.jsonl").write_text(
            line(1, "run_started", {"skill": "look"})
            + line(2, "tool_call", call)
            + line(3, "tool_result", {"call_id": f"look{at}", "output": "found"})
            + line(4, "run_completed", {"status": "ok"})
        )


async def from_the_terminal(app: Any, keys: list[str]) -> None:
    """``keys`` in one burst, as a terminal's driver hands them to the app (tmux's
    send-keys): all posted before the app takes the first."""
    for key in keys:
        event = Key(key, "\r" if key == "enter" else key if len(key) == 1 else None)
        event.set_sender(app)
        app.post_message(event)
    await asyncio.sleep(0)


def key_list(app: Any) -> dict[str, str]:
    return {line.description: line.keys for line in app.screen.query_one(KeyList).lines()}


async def test_home_end_g_and_g_pick_the_first_and_last_tool(fixtures: Path) -> None:
    write_lookups(fixtures)
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 10)
        await pilot.press("t")
        await settle(pilot, lambda: type(app.screen).__name__ == "ToolsScreen", "the tools")
        await settle(pilot, lambda: "web_search" in said(app), "every tool")
        tools = app.screen
        rows = [line.split()[0] for line in screen_lines(app)[2:] if line.split()]
        first, last = "lookup", sorted(calls_in(sorted(fixtures.glob("*.jsonl"))))[-1]
        assert rows[0] == first, rows  # busiest first, then by name
        assert last in rows, rows
        for keys, tool in [
            (["end"], last),
            (["home"], first),
            (["G"], last),
            (["g"], first),
            (["down", "down", "home"], first),
            (["G", "up", "end"], last),
        ]:
            await from_the_terminal(app, [*keys, "enter"])
            await settle(pilot, lambda: app.screen is not tools, f"a tool's calls after {keys}")
            await pilot.pause()
            title = screen_lines(app)[0]
            assert title.strip().startswith(f"{tool}:"), (keys, title)
            await pilot.press("escape")
            await settle(pilot, lambda: app.screen is tools, "the tools again")
        await pilot.press("question_mark")
        await settle(pilot, lambda: app.screen.query(KeyList), "the keys")
        listed = key_list(app)
        assert (listed.get("First"), listed.get("Last")) == ("home g", "end G"), listed


async def test_home_end_g_and_g_open_the_first_and_last_call(fixtures: Path) -> None:
    write_lookups(fixtures)
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 10)
        await pilot.press("t")
        await settle(pilot, lambda: "lookup" in said(app), "the lookups")
        await pilot.press("home", "enter")
        await settle(pilot, lambda: type(app.screen).__name__ == "ToolCallsScreen", "calls")
        calls = app.screen
        await settle(pilot, lambda: "lookup: 4 calls" in said(app), "the four calls")
        listed = [line.split()[0].lstrip("…") for line in screen_lines(app)[2:6]]
        newest, oldest = listed[0], listed[-1]  # the ends of their run ids, as the list has them
        assert LOOKUPS[-1].endswith(newest), listed
        assert LOOKUPS[0].endswith(oldest), listed
        for keys, run in [
            (["end"], oldest),
            (["home"], newest),
            (["G"], oldest),
            (["g"], newest),
            (["down", "down", "home"], newest),
            (["up", "G"], oldest),
        ]:
            await from_the_terminal(app, [*keys, "enter"])
            await settle(pilot, lambda: type(app.screen).__name__ == "RunScreen", f"a run {keys}")
            await pilot.pause(0.1)
            opened = said(app)
            other = newest if run == oldest else oldest
            assert run in opened, (keys, run, screen_lines(app)[:3])
            assert other not in opened, (keys, run, screen_lines(app)[:3])
            await pilot.press("escape")
            await settle(pilot, lambda: app.screen is calls, "the calls again")
        await pilot.press("question_mark")
        await settle(pilot, lambda: app.screen.query(KeyList), "the keys")
        listed_keys = key_list(app)
        assert (listed_keys.get("First"), listed_keys.get("Last")) == ("home g", "end G")


# -- 1, from other sources: a run's events handed over again ---------------------------------


class StartsOver(RunSource):
    """A server whose stream starts over (``stream_restarted``, a reconnect listing again):
    a recorded run's events are handed over a second time when the test says, with
    ``reset`` set (its earlier events void) or not (the same events sent again)."""

    def __init__(self, ledger: Path, *, reset: bool) -> None:
        super().__init__("server")
        self.ledger = ledger
        self.reset = reset
        self.again = asyncio.Event()
        self.sent = 0

    async def updates(self) -> AsyncIterator[SourceUpdate]:
        from ledger_reader import summarize_ledger
        from ledger_reader.lines import read_ledger_lines

        items = [line.item for line in read_ledger_lines(self.ledger) if line.item is not None]
        summary = summarize_ledger(self.ledger)
        run = summary.run_id
        yield SourceUpdate(runs=[RunUpdate(run, summary, items)], initial=True)
        self.sent += 1
        await self.again.wait()
        yield SourceUpdate(runs=[RunUpdate(run, summary, items, reset=self.reset)])
        self.sent += 1
        await asyncio.Event().wait()

    async def events(self, run_id: str, start: int, stop: int) -> list[LedgerItem]:
        return []

    async def close(self) -> None:
        pass


@pytest.mark.parametrize("reset", [True, False], ids=["reset", "sent-again"])
async def test_a_run_s_events_handed_over_again_count_once(fixtures: Path, reset: bool) -> None:
    research = next(path for path in sorted(fixtures.glob("*.jsonl")) if calls_in([path]))
    expected = calls_in([research])
    names = set(expected)
    source = StartsOver(research, reset=reset)
    app = make_app(Settings(clock=FROZEN, flush_interval=0.01), [source])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, lambda: source.sent == 1 and app.store.tool_stats(), "the run")
        source.again.set()
        await settle(pilot, lambda: source.sent == 2, "the run again")
        await pilot.pause(0.1)
        await pilot.press("t")
        await settle(pilot, lambda: set(tools_listed(app, names)) == names, "every tool")
        assert tools_listed(app, names) == {n: str(c) for n, c in expected.items()}, said(app)
