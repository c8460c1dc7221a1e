"""The line over the runs table: each source and its state, the runs counted, the filter."""

from __future__ import annotations

import time
from typing import ClassVar, Final

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from inspector import SourceState
from tui.text import inert

GAP: Final = "  "
"""Between the parts of the line."""


class SourceLine(Widget):
    """`` samples (live)  6 runs  ✔2 ✘1  2.9k tok $0.0100  $0.01/min 2.9k tok/min  filter: …``.

    Too narrow for all of it, the rate of the last minute gives way first, whole
    (``$0.24/min 12k tok/min``), then the tokens and cost;
    then the sources' words: a failing source says how it stands
    (``reconnecting in 8 s``) before anything else of it, and a path or a
    URL is cut in its middle, its end kept. Only then do the runs by status
    and the tree (its column's title says it too) give way, whole: the runs
    by status tell what is going on (at 80 columns,
    ``127.0.0.1:8792: reconnecting in 2 s  4 runs`` without its ``⊘3 ◌1`` would
    hide what the runs are doing). Then the sources are cut between words, then
    the filter. The runs counted stay whole: a count is read with the filter
    it is of. A source that fails is in $error.
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
    burn: reactive[str] = reactive("", layout=False)
    """What the runs shown spent over the last minute, and how soon a budget of theirs is
    reached at that rate (``$0.24/min 12.0k tok/min, a budget in 50s``)."""
    filter_text: reactive[str] = reactive("", layout=False)
    """The filter applied (the runs counted are those it lets through)."""
    view_name: reactive[str] = reactive("", layout=False)
    """The view chosen (``v``), said before the filter applied: ``view: costly (cost:>0.01)``
    (the filter alone said it as if typed, the view's name nowhere)."""
    filter_invalid: reactive[str] = reactive("", layout=False)
    """What the filter box holds when it does not parse (and is not applied)."""
    replayed_at: reactive[dict[str, float]] = reactive(dict, layout=False)
    """The moment each replay has played up to: said beside it (its runs' STARTED is from
    there)."""
    as_tree: reactive[bool] = reactive(False, layout=False)
    """The runs are shown as a tree (``T``): said here, as the key bar may have no room."""
    searching: reactive[str] = reactive("", layout=False)
    """How far the search of the runs' files for the filter's ``has:`` has got, while it
    runs (``searched 120 of 2,000 runs``)."""

    def render(self) -> Text:
        name_style = self.get_component_rich_style("source-line--name")
        error_style = self.get_component_rich_style("source-line--error")
        filter_style = self.get_component_rich_style("source-line--filter")

        def sources_said(brief: int = 0, words: int = 0) -> Text:
            """The sources, the briefer the higher ``brief``: a source that fails says how
            it stands (``reconnecting in 8 s``) and not why (1), its name cut at the start
            (2); a source that is well, without its state (3); the failing names cut more
            (4); the sources that are well left out (5); the failing names too (6). With
            ``words``, a path or URL of a source that is well longer than that is cut in
            its middle (``/tmp/ru…msg2krr``)."""
            said = Text(no_wrap=True, overflow="crop", end="")
            for source in self.sources:
                name = inert(source.name, single_line=True)  # a directory's: anything at all
                if source.error:
                    error = inert(source.error, single_line=True)
                    if brief >= 1:
                        error = error.split(": ", 1)[0]
                    if brief >= 6:
                        said.append(f" {error} ", error_style)
                        continue
                    if brief >= 2:
                        name = _cut_start(name, NAME_MIN if brief < 4 else NAME_LEAST)
                    said.append(f" {name}: {error} ", error_style)
                elif not source.available:
                    said.append(f" {name}: unavailable ", error_style)
                elif brief < 3:
                    state = "opening" if source.opening else source.status
                    live = inert(state or ("live" if source.live else "replay"), single_line=True)
                    at = self.replayed_at.get(source.name)
                    clock = ""
                    if at is not None:  # the moment replayed, as its runs' STARTED counts
                        clock = time.strftime(" at %H:%M:%S UTC", time.gmtime(at))
                    if words:
                        name, live = _cut_words(name, words), _cut_words(live, words)
                    said.append(f" {name} ({live}){clock} ", name_style)
                elif brief < 5:
                    said.append(f" {_cut_words(name, words) if words else name} ", name_style)
            if brief:
                said.rstrip()  # a cell more for what is said
            return said

        sources = sources_said()
        failing = any(source.error for source in self.sources)
        total, shown = self.total, self.shown
        noun = "run" if total == 1 else "runs"
        counted = GAP + (
            f"{shown:,} of {total:,} {noun}" if shown != total else f"{total:,} {noun}"
        )
        # (text, style, priority): the highest priority gives way first, whole.
        parts: list[tuple[str, Style | None, int]] = []
        if self.by_status:
            parts.append((GAP + self.by_status, None, 3))
        if self.spent:
            parts.append((GAP + self.spent, None, 4))
        if self.burn:
            parts.append((GAP + self.burn, None, 5))
        if self.as_tree:
            parts.append((GAP + "as a tree", filter_style, 2))
        applied = inert(self.filter_text, single_line=True)
        said = f"filter: {applied}" if applied else ""
        if self.view_name:  # its name first: cut short, the filter goes before it
            view = f"view: {inert(self.view_name, single_line=True)}"
            said = f"{view} ({applied})" if applied else view
        if self.filter_invalid:
            # The box holds a filter that does not parse: the runs counted are the applied one's.
            invalid = inert(self.filter_invalid, single_line=True)
            said = f"{said or 'no filter'} ({invalid} not applied)"
        if self.searching and said:
            said = f"{said} ({self.searching})"
        wanted = Text(GAP + said if said else "", filter_style, no_wrap=True, end="")
        room = self.content_size.width or 10_000

        def over() -> int:
            rest = sum(cell_len(text) for text, _, _ in parts)
            return sources.cell_len + cell_len(counted) + wanted.cell_len + rest - room

        for gives_way in (5, 4):  # the rate first, then the totals
            if over() > 0:
                parts = [part for part in parts if part[2] != gives_way]
        # Still too long: the sources' words give way before the runs by status. A source
        # that fails says how it stands (reconnecting in 8 s) before anything else of the
        # sources (so it stays in view with the keys help open beside the line); the
        # long words of the sources (a path, a URL) are cut in their middle, their ends kept.
        steps = [(1, 0), (2, 0)] if failing else []
        steps += [(2 if failing else 0, words) for words in WORDS_CUT]
        steps += [(3, WORDS_CUT[-1]), (4, WORDS_CUT[-1])] if failing else []
        for brief, words in steps:
            if over() <= 0:
                break
            sources = sources_said(brief, words)
        # Then the runs by status go, then the tree; then the sources that are well are cut
        # between words (to the first name's start: a name is read whole or not at all),
        # then the filter; the runs counted stay whole, as a count without its filter would
        # claim what is not so.
        for gives_way in (3, 2):
            if over() > 0:
                parts = [part for part in parts if part[2] != gives_way]
        if over() > 0 and not failing:
            sources = _cut(sources, max(MIN_SOURCES, sources.cell_len - over()))
        if over() > 0 and wanted:
            kept = max(wanted.cell_len - over(), len(GAP) + MIN_FILTER)
            wanted.truncate(kept, overflow="ellipsis")
        for brief in (5, 6) if failing else ():
            if over() > 0:
                sources = sources_said(brief)
        if over() > 0 and wanted:
            wanted = Text()  # a few letters of it say nothing
        if over() > 0:
            sources = _cut(sources, max(1, sources.cell_len - over()))
        line = sources
        line.append(counted)
        for text, style, _ in parts:
            line.append(text, style)
        line.append_text(wanted)
        return line


MIN_SOURCES: Final = 16
"""The cells the sources keep before the filter is cut: the first source's name, at least."""

NAME_MIN: Final = 12
"""The cells a failing source's name keeps when its state needs the room (``…0.1:8765``),
then (``…:8765``) before it goes."""
NAME_LEAST: Final = 7

WORDS_CUT: Final = (24, 18, 12)
"""The most cells a path or URL in what a source that is well says keeps, in turn, while
the line is too long: cut in its middle (``/tmp/ru…msg2krr``), before the runs by status
give way."""

MIN_FILTER: Final = 12
"""The fewest cells of the filter worth showing (``filter: sta…``); fewer, it gives way."""


def _cut(line: Text, room: int) -> Text:
    """``line`` in ``room`` cells, cut between words where it can be, then ``…``."""
    if line.cell_len <= room:
        return line
    cut = line.plain.rstrip().rfind(" ", 1, room)
    line = line[: cut if cut > 0 else room - 1]  # one word longer than the line: cut
    line.rstrip()
    line.append("…")
    return line


def _cut_start(name: str, room: int) -> str:
    """``name`` in ``room`` cells, its start cut: a URL's port, a path's last part, stay."""
    if cell_len(name) <= room:
        return name
    return "…" + name[len(name) - room + 1 :]


def _cut_words(text: str, most: int) -> str:
    """``text`` with each path or URL in it longer than ``most`` cells cut in its middle,
    more of its end kept than of its start (a path's last part, a URL's port):
    ``/tmp/ru…msg2krr``. Other words, a name, are read whole or not at all."""
    return " ".join(_cut_middle(word, most) for word in text.split(" "))


def _cut_middle(word: str, most: int) -> str:
    if "/" not in word or cell_len(word) <= most:
        return word
    end = (most - 1) * 3 // 5
    start = most - 1 - end
    return word[:start] + "…" + word[len(word) - end :]
