"""The last few lines of the selected run, under the runs table."""

from __future__ import annotations

from typing import ClassVar, Final

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from inspector import RunView
from inspector.events import LedgerItem
from inspector.ledger import CancelRequested
from inspector.status_words import ended_reason, status_word
from tui.text import inert
from tui.text.entries import EntryIndex, folded_steps
from tui.text.events import describe_entry

PREVIEW_LINES: Final = 7
PREVIEW_EVENTS: Final = 64
"""The last events read for the preview: its lines gather chunks into paragraphs."""


class RunPreview(Widget):
    """A run's id, status and error, then its last :data:`PREVIEW_LINES` lines (a line
    gathers a paragraph's chunks) of its last :data:`PREVIEW_EVENTS` events.

    Redrawn only when what it shows changed: the reactives compare equal
    otherwise, and the runs screen sets them on every store change.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"run-preview--title"}

    run: reactive[RunView | None] = reactive(None, layout=False)
    items: reactive[tuple[LedgerItem, ...]] = reactive((), layout=False)
    source_down: reactive[bool] = reactive(False, layout=False)
    """The run's source cannot be read now: a live run's status is not known (``unknown``,
    as the table says; it said ``running`` under the table's ``unknown``)."""

    def render(self) -> Text:
        run = self.run
        if run is None:
            return Text()
        lines = Text(no_wrap=True, overflow="ellipsis", end="")
        title = f"{run.run_id}  {status_word(run, source_down=self.source_down)}"
        if run.error:
            title += f"  {ended_reason(run)}"  # the status said once
        lines.append(
            inert(title[:400], single_line=True) + "\n",
            style=self.get_component_rich_style("run-preview--title"),
        )
        items = self.items

        def item_at(at: int) -> LedgerItem | None:
            return items[at] if 0 <= at < len(items) else None

        index = EntryIndex(item_at, fold_steps=True)  # as the run's event stream lists them
        entries = index.entries_from(0, len(items), len(items))
        said = [
            entry for entry in entries if folded_steps(entry, item_at) < entry.end - entry.start
        ]
        for entry in said[-PREVIEW_LINES:]:
            end = entry.end - folded_steps(entry, item_at)
            canceled = any(isinstance(item, CancelRequested) for item in items[: entry.start])
            mark, words = describe_entry(
                list(items[entry.start : end]), live=run.live, after_cancel=canceled
            )
            lines.append(f"{mark} {words}\n")
        return lines
