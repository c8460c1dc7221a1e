"""A text said again lays the screen out again only when its height may change."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.content import Content
from textual.visual import VisualType
from textual.widgets import Static

from tui.widgets.static_text import update_static

pytestmark = pytest.mark.timeout(30)


class Recording(Static):
    def __init__(self) -> None:
        super().__init__(Text("run_1 running 3 events"))
        self.layouts: list[bool] = []

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        self.layouts.append(layout)
        super().update(content, layout=layout)


class Header(App[None]):
    def compose(self) -> ComposeResult:
        yield Recording()


async def test_a_header_said_again_is_laid_out_only_when_its_height_changes() -> None:
    app = Header()
    async with app.run_test(size=(40, 10)) as pilot:
        header = app.query_one(Recording)
        update_static(header, Text("run_1 running 4 events"))
        update_static(header, Text("run_1 running 4 events"))  # the same: not drawn again
        update_static(header, Text("run_1 running 5 events\ninput: hello"))
        update_static(header, Text("run_1 running 6 events\ninput: hello"))
        update_static(
            header, Text("run_1 running 7 events " + "x" * 40 + "\ninput: hello")
        )  # wraps
        await pilot.pause()
        assert header.layouts == [False, True, False, True]
        assert str(header.content).startswith("run_1 running 7 events")


async def test_content_said_again_in_another_style_is_drawn() -> None:
    app = Header()
    async with app.run_test(size=(40, 10)) as pilot:
        header = app.query_one(Recording)
        update_static(header, Content.from_markup("[b]run_1[/b] running"))
        update_static(header, Content.from_markup("[b]run_1[/b] running"))
        update_static(header, Content.from_markup("[i]run_1[/i] running"))
        await pilot.pause()
        assert header.layouts == [False, False]  # the same markup again: not drawn
