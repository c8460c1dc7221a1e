"""A run's events read from the store a page at a time, the latest pages kept.

The event list draws from here and asks for a page when it meets one not
read yet; nothing here draws or knows Textual.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from inspector import RunKey, RunStore
from ledger_reader import LedgerItem

PAGE: Final = 256
"""Events read at a time."""
PAGES_KEPT: Final = 128
"""Pages kept (the least recently read go first): ~32,000 events."""


class EventPages:
    """Pages of one run's events, by position."""

    def __init__(self, store: RunStore, key: RunKey) -> None:
        self.store = store
        self.key = key
        self._pages: OrderedDict[int, list[LedgerItem]] = OrderedDict()
        self._reading: set[int] = set()
        self.version = 0
        """Changes whenever a page is read or forgotten: entries found before may move."""

    def item(self, position: int) -> LedgerItem | None:
        """The event at ``position``, if its page was read (and it exists)."""
        page = self._pages.get(position // PAGE)
        if page is None:
            return None
        offset = position % PAGE
        return page[offset] if offset < len(page) else None

    def is_read(self, page: int) -> bool:
        return page in self._pages

    def wanted(self, position: int) -> int | None:
        """The page to read for ``position``: ``None`` when it is read or being read."""
        page = position // PAGE
        return None if page in self._pages or page in self._reading else page

    async def read(self, page: int) -> list[LedgerItem]:
        """Read ``page`` from the store and keep it.

        Raises:
            SourceError: the store's source could not be read.
        """
        self._reading.add(page)
        try:
            items = await self.store.events(self.key, page * PAGE, (page + 1) * PAGE)
        finally:
            self._reading.discard(page)
        self._pages[page] = items
        self.version += 1
        while len(self._pages) > PAGES_KEPT:
            self._pages.popitem(last=False)
        return items

    def forget(self, page: int) -> None:
        """Read ``page`` again when next needed (the run wrote more into it)."""
        if self._pages.pop(page, None) is not None:
            self.version += 1

    def clear(self) -> None:
        """Forget every page (the run's events were replaced)."""
        self._pages.clear()
        self.version += 1


__all__ = ["PAGE", "PAGES_KEPT", "EventPages"]
