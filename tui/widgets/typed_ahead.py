"""A character typed ahead of an input box's focus, put in the box as the box would have."""

from __future__ import annotations

from textual.widgets import Input


def type_into(box: Input, character: str) -> None:
    """``character`` typed into ``box``: over its selection if it has one, as a key
    pressed in the box replaces the text selected (a second search typed fast read
    ``errorcanceled``: the first one's words, selected, kept)."""
    selection = box.selection
    if selection.is_empty:
        box.insert_text_at_cursor(character)
    else:
        box.replace(character, *selection)
