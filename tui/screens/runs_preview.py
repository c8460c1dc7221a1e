"""The runs screen's preview of the selected run: its last events, read from its source
when the store has only its summary."""

from __future__ import annotations

from textual import work

from inspector import RunKey, RunView, SourceError
from inspector.events import LedgerItem
from tui.runtop_screen import RuntopScreen
from tui.widgets.run_preview import PREVIEW_EVENTS, RunPreview
from tui.widgets.run_table import RunTable


class PreviewingScreen(RuntopScreen):
    """A screen of runs (:class:`RunTable`) with a :class:`RunPreview` of the selected one."""

    _reading_preview: tuple[RunKey, int] | None = None
    """The run and event count whose last lines are being read."""
    _read_preview: tuple[RunKey | None, int, list[LedgerItem]] = (None, 0, [])
    """The last lines read for the preview of a run the store has no events of."""

    def _preview(self, run: RunView | None) -> None:
        preview = self.query_one(RunPreview)
        preview.run = run
        preview.source_down = (
            run is not None and run.key.source in self.query_one(RunTable).sources_down
        )
        if run is None:
            return
        recent = self.store.recent(run.key)[-PREVIEW_EVENTS:]
        if len(recent) < min(PREVIEW_EVENTS, (run.event_count or 0)):
            # Came as a summary: its last lines are read from the source, once per count.
            key, count, items = self._read_preview
            if key == run.key:
                recent = items
            wanted = (run.key, (run.event_count or 0))
            if (key, count) != wanted and self._reading_preview != wanted:
                self._reading_preview = wanted  # not again while it is read: redraws are frequent
                self._load_preview(run)
        preview.items = tuple(recent)

    @work(exclusive=True, group="preview", exit_on_error=False)
    async def _load_preview(self, run: RunView) -> None:
        try:
            count = await self.store.event_count(run.key)
            items = await self.store.events(run.key, max(0, count - PREVIEW_EVENTS), count)
        except SourceError:
            return
        finally:
            if self._reading_preview == (run.key, (run.event_count or 0)):
                self._reading_preview = None
        tables = self.query(RunTable)
        if not self.is_mounted or not tables:
            return  # the screen went away while the lines were read
        self._read_preview = (run.key, (run.event_count or 0), items)
        selected = tables.first().selected
        if selected is not None and selected.key == run.key:
            self.query_one(RunPreview).items = tuple(items)
