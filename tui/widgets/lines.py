"""Helpers shared by the line-API widgets."""

from __future__ import annotations

from typing import Final

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.scroll_view import ScrollView
from textual.strip import Strip

CURSOR_BINDINGS: Final[list[BindingType]] = [
    Binding("up,k", "cursor(-1)", "Up", show=False),
    Binding("down,j", "cursor(1)", "Down", show=False),
    Binding("pageup", "page(-1)", "Page up", show=False),
    Binding("pagedown", "page(1)", "Page down", show=False),
    Binding("home,g", "jump(0)", "First", show=False),
    Binding("end,G", "jump(-1)", "Last", show=False),
]
"""The keys that move a line cursor (each widget implements cursor, page and jump)."""


def scroll_row_into_view(view: ScrollView, row: int, *, immediate: bool = False) -> None:
    """Scroll ``view`` just enough that line ``row`` is on screen."""
    height = max(1, view.scrollable_content_region.height)
    top = view.scroll_offset.y
    if row < top:
        view.scroll_to(y=row, animate=False, immediate=immediate)
    elif row >= top + height:
        view.scroll_to(y=row - height + 1, animate=False, immediate=immediate)


def highlighted(strip: Strip, highlight: Style) -> Strip:
    """``strip`` with ``highlight`` laid over every segment (a cursor row).

    ``Strip.apply_style`` puts a style under the segments' own, so their
    background would win; a cursor must win over it.
    """
    return Strip(
        [Segment(text, (style or Style()) + highlight, control) for text, style, control in strip],
        strip.cell_length,
    )
