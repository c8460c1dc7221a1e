"""Filling a :class:`~inspector.timeline.Timeline` from the store, a page at a time, and
adding the run's child runs the store knows."""

from __future__ import annotations

from typing import Final

from inspector.model import RunKey
from inspector.store import RunStore
from inspector.timeline import Timeline
from inspector.timeline_nodes import outcome_of_status

TIMELINE_PAGE: Final = 5_000
"""Items asked of the store at a time when filling a timeline."""


async def fill_timeline(
    store: RunStore, key: RunKey, timeline: Timeline, *, page: int = TIMELINE_PAGE
) -> int:
    """Fold a run's items after those already folded, then its child runs; the items folded.

    Reads the store a page at a time, so a view awaiting this draws between
    pages; call it again when the run has grown (it goes on from
    :attr:`Timeline.items_read`). A source that no longer holds a run's
    early items (a bounded window) gives fewer: the timeline then starts
    where the window does.

    Raises:
        SourceError: the run's source could not be read.
    """
    folded = 0
    while True:
        start = timeline.items_read
        items = await store.events(key, start, start + page)
        timeline.extend(items)
        folded += len(items)
        if len(items) < page:
            break
    add_child_runs(store, key, timeline)
    return folded


def add_child_runs(store: RunStore, key: RunKey, timeline: Timeline) -> None:
    """Add (or bring up to date) the run's child runs the store knows, each as one node."""
    for child in store.children(key):
        if child.started_at is None:
            continue
        end = child.ended_at
        if end is None and not child.live:
            end = child.last_event_at  # stale or abandoned: it stopped writing there
        timeline.set_child_run(
            child.run_id,
            child.agent or child.skill,
            child.started_at,
            end,
            outcome_of_status(child.status),
        )
