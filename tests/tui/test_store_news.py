"""Store changes reach the screen on top as StoreChanged messages, one in flight."""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.screen import Screen

from inspector import RunKey, StoreChange
from tui.store_news import StoreChanged, StoreNews


def change(*run_ids: str) -> StoreChange:
    return StoreChange(runs=frozenset(RunKey("s", run_id) for run_id in run_ids))


class Listening(Screen[None]):
    """Records each StoreChanged; holds the first until ``release`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.heard: list[frozenset[RunKey]] = []
        self.release = asyncio.Event()
        self.busy = asyncio.Event()

    async def on_store_changed(self, message: StoreChanged) -> None:
        self.heard.append(message.change.runs)
        if len(self.heard) == 1:
            self.busy.set()
            await self.release.wait()


class Host(App[None]):
    async def on_mount(self) -> None:
        await self.push_screen(Listening())


async def test_a_busy_screen_gets_one_message_then_the_rest_merged() -> None:
    app = Host()
    async with app.run_test() as pilot:
        screen = app.screen
        assert isinstance(screen, Listening)
        news = StoreNews(app)
        news.offer(change("a"))
        await asyncio.wait_for(screen.busy.wait(), 5)
        news.offer(change("b"))
        news.offer(change("c"))
        assert news.unread == change("b", "c")  # held back while one is in flight
        screen.release.set()
        while len(screen.heard) < 2:
            await pilot.pause()
        await pilot.pause()
        assert screen.heard == [change("a").runs, change("b", "c").runs]
        assert news.in_flight is None
        assert news.unread is None


async def test_a_message_to_a_screen_that_went_away_does_not_stall_the_news() -> None:
    app = Host()
    async with app.run_test() as pilot:
        first = app.screen
        assert isinstance(first, Listening)
        news = StoreNews(app)
        news.offer(change("a"))
        await asyncio.wait_for(first.busy.wait(), 5)
        news.offer(change("b"))  # waits on the first screen, which never answers
        second = Listening()
        second.release.set()
        await app.push_screen(second)
        news.offer(change("c"))
        while not second.heard:
            await pilot.pause()
        assert second.heard == [change("b", "c").runs]
        first.release.set()
