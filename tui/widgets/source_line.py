"""The line over the runs table: each source and its state, the runs counted, the filter."""

from __future__ import annotations

from typing import ClassVar, Final

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from inspector import SourceState
from tui.text import inert

GAP: Final = "  "
"""Between the parts of the line."""


class SourceLine(Widget):
    """`` samples (live)  6 runs  ✔2 ✘1  2.9k tok $0.0100  filter: status:failed``.

    Too narrow for all of it, parts give way whole, never cut mid-word: the
    tokens and cost first, then the runs by status, then the tree (its
    column's title says it too), then the filter; the sources, their state
    and the runs counted stay. A source that fails is in $error.
    """

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
    by_status: reactive[str] = reactive("", layout=False)
    """The runs shown, counted by status (``●2 ✔7 ✘1``)."""
    spent: reactive[str] = reactive("", layout=False)
    """The tokens and cost of the runs shown (``14.5k tok $0.0560``)."""
    filter_text: reactive[str] = reactive("", layout=False)
    as_tree: reactive[bool] = reactive(False, layout=False)
    """The runs are shown as a tree (``T``): said here, as the key bar may have no room."""

    def render(self) -> Text:
        name_style = self.get_component_rich_style("source-line--name")
        error_style = self.get_component_rich_style("source-line--error")
        filter_style = self.get_component_rich_style("source-line--filter")
        # (text, style, priority): the highest priority gives way first.
        parts: list[tuple[str, Style | None, int]] = []
        for source in self.sources:
            name = inert(source.name, single_line=True)  # a directory's name: anything at all
            if source.error:
                parts.append((f" {name}: {inert(source.error, single_line=True)} ", error_style, 0))
            elif not source.available:
                parts.append((f" {name}: unavailable ", error_style, 0))
            else:
                said = "opening" if source.opening else source.status
                live = inert(said or ("live" if source.live else "replay"), single_line=True)
                parts.append((f" {name} ({live}) ", name_style, 0))
        total, shown = self.total, self.shown
        noun = "run" if total == 1 else "runs"
        counted = f"{shown:,} of {total:,} {noun}" if shown != total else f"{total:,} {noun}"
        parts.append((GAP + counted, None, 0))
        if self.by_status:
            parts.append((GAP + self.by_status, None, 3))
        if self.spent:
            parts.append((GAP + self.spent, None, 4))
        if self.filter_text:
            said = f"filter: {inert(self.filter_text, single_line=True)}"
            parts.append((GAP + said, filter_style, 1))
        if self.as_tree:
            parts.append((GAP + "as a tree", filter_style, 2))
        room = self.content_size.width or 10_000
        for gives_way in (4, 3, 2, 1):
            if sum(len(text) for text, _, _ in parts) <= room:
                break
            parts = [part for part in parts if part[2] != gives_way]
        line = Text(no_wrap=True, overflow="crop", end="")
        for text, style, _ in parts:
            line.append(text, style)
        if len(line) > room:  # the sources alone are too long: cut between words
            cut = line.plain.rstrip().rfind(" ", 1, room)
            line = line[: cut if cut > 0 else room - 1]  # one word longer than the line: cut
            line.rstrip()
            line.append("…")
        return line
