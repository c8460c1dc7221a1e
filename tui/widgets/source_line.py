"""The line over the runs table: each source and its state, the runs counted, the filter."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from inspector import SourceState
from tui.text import inert


class SourceLine(Widget):
    """`` samples (live)  6 runs  filter: status:failed``; a source that fails, in $error."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "source-line--name",
        "source-line--error",
        "source-line--filter",
    }

    sources: reactive[tuple[SourceState, ...]] = reactive((), layout=False)
    total: reactive[int] = reactive(0, layout=False)
    """Runs in the store."""
    shown: reactive[int] = reactive(0, layout=False)
    """Runs the filter lets through."""
    totals: reactive[str] = reactive("", layout=False)
    """The runs shown by status, and their tokens and cost."""
    filter_text: reactive[str] = reactive("", layout=False)

    def render(self) -> Text:
        name_style = self.get_component_rich_style("source-line--name")
        error_style = self.get_component_rich_style("source-line--error")
        parts = Text(no_wrap=True, overflow="ellipsis", end="")
        for source in self.sources:
            name = inert(source.name, single_line=True)  # a directory's name: anything at all
            if source.error:
                parts.append(f" {name}: {inert(source.error, single_line=True)} ", error_style)
            elif not source.available:
                parts.append(f" {name}: unavailable ", error_style)
            else:
                said = "opening" if source.opening else source.status
                live = inert(said or ("live" if source.live else "replay"))
                parts.append(f" {name} ({live}) ", name_style)
        total, shown = self.total, self.shown
        noun = "run" if total == 1 else "runs"
        parts.append(
            f"  {shown:,} of {total:,} {noun}" if shown != total else f"  {total:,} {noun}"
        )
        if self.totals:
            parts.append(f"  {self.totals}")
        if self.filter_text:
            parts.append(
                f"  filter: {inert(self.filter_text, single_line=True)}",
                self.get_component_rich_style("source-line--filter"),
            )
        return parts
