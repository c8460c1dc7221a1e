"""Text widgets said again as the runs they describe change."""

from __future__ import annotations

from collections.abc import Callable

from rich.cells import cell_len
from rich.text import Text
from textual.content import Content
from textual.widgets import Static

from tui.textual_compat import resize_to_content

StaticText = Text | Content


def update_static(widget: Static, text: StaticText) -> None:
    """Show ``text`` in ``widget``, working out the screen's layout again only if its
    height may change.

    A live run's header and timeline summary are said again at every change of the
    run, many times a second: the same text is not drawn again, and a layout pass
    of the whole screen for a line whose height stays the same cost more than
    drawing the screen.
    """
    shown = widget.content
    if not isinstance(shown, Text | Content):
        widget.update(text)
        return
    if _same(shown, text):
        return
    width = widget.content_region.width
    height = _height(text, width)
    if height is not None and height == _height(shown, width):
        widget.update(text, layout=False)
        return
    widget.update(text)
    resize_to_content(widget)


def _same(shown: StaticText, text: StaticText) -> bool:
    """The same words in the same styles (a Content equals another of the same words)."""
    if isinstance(shown, Content) and isinstance(text, Content):
        return shown.markup == text.markup
    return isinstance(shown, Text) and isinstance(text, Text) and shown == text


def _height(text: StaticText, width: int) -> int | None:
    """The lines ``text`` takes at ``width``; ``None`` if a line wraps (the wrapped
    height depends on where the words break)."""
    lines = text.plain.split("\n")
    if width <= 0 or any(cell_len(line) > width for line in lines):
        return None
    return len(lines)


class FittedStatic(Static):
    """Text made for the cells the widget's lines have, made again when they change: the
    keys help opened beside it narrows it while the screen keeps its width (a run's header
    laid out for the screen's 80 columns was cut mid-figure in the 48 it had)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._make: Callable[[int], StaticText] | None = None

    def show(self, make: Callable[[int], StaticText]) -> None:
        """Show what ``make`` says for the cells of a line (and again when they change)."""
        self._make = make
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        if self._make is None:
            return
        cells = self.content_region.width or self.app.size.width - self.styles.gutter.width
        update_static(self, self._make(max(1, cells)))
