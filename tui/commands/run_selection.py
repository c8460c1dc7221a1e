"""Which runs a ``--filter`` passes, for the commands that take one (``ls``, ``stats``): read
as the app's table reads them, a view of each, in the language of the app's ``/``
(:mod:`inspector.filters`), ``has:`` included."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from inspector.ledger import RunSummary
from tui.commands.targets import UsageError

if TYPE_CHECKING:
    from inspector.filters import RunFilter
    from inspector.model import RunView


def parse_filter(text: str) -> RunFilter:
    """``--filter``'s text, read; one that does not parse is a mistake in the command line
    (exit status 2), named."""
    from inspector.filters import FilterError, RunFilter

    try:
        return RunFilter.parse(text)
    except FilterError as error:
        raise UsageError(f"--filter {text!r}: {error}") from None


def views_of(summaries: list[RunSummary], roots: list[Path]) -> list[RunView]:
    """Each run as the app's table reads it (what a filter and a sort read): a run with
    child runs among ``summaries`` with their totals added, as the table's Σ says."""
    import msgspec

    from inspector.ledger import family_totals
    from inspector.model import RunKey, make_view

    families = family_totals(summaries)
    views = []
    for summary in summaries:
        view = make_view(
            RunKey(source_of(summary, roots), summary.run_id),
            summary,
            None,
            detailed=not summary.partial,
        )
        family = families.get(summary.run_id)
        if family is not None:
            view = msgspec.structs.replace(view, with_children=family)
        views.append(view)
    return views


def select(run_filter: RunFilter, views: list[RunView]) -> list[RunView]:
    """The runs ``run_filter`` passes, read as the app's table reads them; their files
    are searched for ``has:`` only if every other term passes."""
    from inspector.content_search import ContentSearch

    chosen = run_filter.select_views(views)
    if not run_filter.phrases:
        return chosen
    search = ContentSearch(run_filter.phrases)
    return [view for view in chosen if search.passes(view.summary)]


def source_of(summary: RunSummary, roots: list[Path]) -> str:
    """The name the app gives the source of ``summary``'s run: the directory (or file) it
    was found under, else the attach server's URL."""
    if summary.path is None:
        return summary.host or ""
    for root in roots:
        if summary.path == str(root) or summary.path.startswith(str(root).rstrip("/") + "/"):
            return root.resolve().name or str(root)
    return Path(summary.path).parent.name


__all__ = ["parse_filter", "select", "source_of", "views_of"]
