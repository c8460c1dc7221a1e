"""The runs screen's filter box (imported when ``/`` is first pressed, not at launch)."""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class FilterBox(Input):
    """Where a filter is typed. A ``/`` typed before anything else is the key that opened
    the box pressed again (``//`` in a hurry, or a second press when the first seemed not
    to take), not the filter's first character: it is left out."""

    fresh = True
    """Nothing was typed since the box opened (``/`` is then the opening key again)."""

    def open(self) -> None:
        """The box is opened (``/``): a ``/`` typed first is the opening key again."""
        self.fresh = True

    def takes(self, key: str) -> bool:
        """Whether ``key``, typed now, goes into the box (and the box is no longer fresh)."""
        if self.fresh and key == "slash":
            return False
        self.fresh = False
        return True

    def on_key(self, event: events.Key) -> None:
        if not self.takes(event.key):
            event.stop()
            event.prevent_default()  # not typed: Input's own handler is not called
