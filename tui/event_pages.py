"""A run's events read from the store a page at a time, the latest pages kept.

The event list draws from here and asks for a page when it meets one not
read yet; nothing here draws or knows Textual.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from inspector import RunKey, RunStore
from inspector.ledger import LedgerItem

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
        self._stale: set[int] = set()
        """Pages the run may have written more into since they were read: kept (what they
        hold stays true, a ledger only grows) and read again when next asked for."""
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
        """The page to read for ``position``, taken as being read from now (:meth:`read` it
        at once); ``None`` when it is read or being read.

        Taken at the asking, not when the read begins: the lines of one frame ask for the
        same page, each before a read of it has begun, and each read it.
        """
        page = position // PAGE
        if page in self._reading or (page in self._pages and page not in self._stale):
            return None
        self._reading.add(page)
        return page

    async def read(self, page: int) -> list[LedgerItem]:
        """Read ``page`` from the store and keep it.

        Raises:
            SourceError: the store's source could not be read.
        """
        self._reading.add(page)
        self._stale.discard(page)  # a forget from now on is newer than this read
        try:
            items = await self.store.events(self.key, page * PAGE, (page + 1) * PAGE)
        except BaseException:
            if page in self._pages:
                self._stale.add(page)  # kept as it was, still to be read again
            raise
        finally:
            self._reading.discard(page)
        self._pages[page] = items
        self._pages.move_to_end(page)
        self.version += 1
        while len(self._pages) > PAGES_KEPT:
            dropped, _ = self._pages.popitem(last=False)
            self._stale.discard(dropped)
        return items

    def forget(self, page: int) -> None:
        """Read ``page`` again when next needed (the run wrote more into it).

        What it holds is kept meanwhile (the screen keeps what it shows, no "reading…"
        flicker); a forget while the page is being read marks it to be read once more,
        as that read may have missed what was written.
        """
        self._stale.add(page)

    def clear(self) -> None:
        """Forget every page (the run's events were replaced)."""
        self._pages.clear()
        self._stale.clear()
        self.version += 1


__all__ = ["PAGE", "PAGES_KEPT", "EventPages"]
