"""Helpers shared by the line-API widgets."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip


def highlighted(strip: Strip, highlight: Style) -> Strip:
    """``strip`` with ``highlight`` laid over every segment (a cursor row).

    ``Strip.apply_style`` puts a style under the segments' own, so their
    background would win; a cursor must win over it.
    """
    return Strip(
        [Segment(text, (style or Style()) + highlight, control) for text, style, control in strip],
        strip.cell_length,
    )
