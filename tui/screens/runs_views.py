"""Views on the runs screen: the palette's entries that choose one (``v`` opens a palette
of them alone), and what a view chosen says."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Final, NamedTuple, Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.views import View, ViewBook

EVERY_RUN: Final = View("every run")
"""The table as it opens: no filter, newest first, every column (the palette offers it
beside the views, to go back)."""


@runtime_checkable
class ViewsShown(Protocol):
    """A screen that shows views (the runs screen)."""

    def view_book(self) -> ViewBook: ...

    def choose_view(self, view: View) -> None: ...


class ViewEntry(NamedTuple):
    title: str
    help: str
    choose: Callable[[], None]


def view_words(view: View) -> str:
    """What a view does, in a line: its filter, its sort, its columns."""
    arrow = "▼" if view.reverse else "▲"
    columns = f"{len(view.columns)} columns" if view.columns else "every column"
    return f"{view.filter or 'every run'} · sorted by {view.sort} {arrow} · {columns}"


def view_entries(screen: ViewsShown) -> Iterable[ViewEntry]:
    book = screen.view_book()
    for view in (*book.views, EVERY_RUN):
        said = f"{view_words(view)} (v)"  # the key that lists them
        yield ViewEntry(f"View: {view.name}", said, partial(screen.choose_view, view))


class ViewChoices(Provider):
    """The views kept in ``views.toml``, each an entry that shows the runs through it."""

    async def discover(self) -> Hits:
        if isinstance(self.screen, ViewsShown):
            for entry in view_entries(self.screen):
                yield DiscoveryHit(entry.title, entry.choose, help=entry.help)

    async def search(self, query: str) -> Hits:
        if not isinstance(self.screen, ViewsShown):
            return
        matcher = self.matcher(query)
        for entry in view_entries(self.screen):
            if (score := matcher.match(entry.title)) > 0:
                yield Hit(score, matcher.highlight(entry.title), entry.choose, help=entry.help)
