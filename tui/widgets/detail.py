"""The detail of one event: a tool call's arguments and output, a model call's conversation,
timing, the raw line."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from typing import Any, ClassVar, Final

import msgspec
from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from inspector import ToolCallView
from inspector.events import DamagedLine, LedgerItem, LlmCall, LlmChunk, ReasoningChunk
from inspector.status_words import call_outcome
from tui.text import duration, inert
from tui.text.conversation import (
    ROLES,
    CallTiming,
    ConversationLine,
    ConversationStyles,
    conversation_text,
)

OUTPUT_PREVIEW: Final = 4000
"""Characters of a long output shown before "press o for all"."""
MATCH_LEAD: Final = 160
"""Characters shown before a search's match when the preview starts at it."""


def preview_window(text: str, limit: int | None, found: re.Pattern[str] | None) -> slice:
    """The part of ``text`` a preview of ``limit`` characters shows: all of it, its start,
    or, when the first match of the run's search lies past the start, the part around it
    (a search that counted a match must show it, not the 4,000 characters before it)."""
    if limit is None or len(text) <= limit:
        return slice(0, len(text))
    match = found.search(text) if found is not None else None
    if match is None or match.end() <= limit:
        return slice(0, limit)
    start = max(0, min(match.start() - MATCH_LEAD, len(text) - limit))
    space = text.find(" ", start, match.start())  # a whole word first, where one is near
    if 0 <= space < match.start():
        start = space + 1
    return slice(start, start + limit)


def pretty_json(value: Any) -> str:
    """Indented JSON of any value; strings that hold JSON are shown parsed."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return str(value)
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


class _JsonBlock:
    """Highlighted JSON, cut at ``limit`` characters; ``plain`` is what it shows, as text.
    What is searched for (``found``, a pattern) is marked in ``mark``'s style."""

    def __init__(
        self, value: Any, limit: int | None, found: re.Pattern[str] | None, mark: Style
    ) -> None:
        is_json = not isinstance(value, str) or _parses(value)
        whole = inert(pretty_json(value))
        shown = preview_window(whole, limit, found)
        text = whole[shown]
        before = (
            f"… {shown.start:,} earlier characters (press o to show all)" if shown.start else ""
        )
        after = len(whole) - shown.stop
        cut = f"… {after:,} more characters (press o to show all)" if after > 0 else ""
        self.cut = bool(before or cut)
        self.plain = "\n".join(part for part in (before, text, cut) if part)
        body: RenderableType = _marked(Text(text), found, mark)
        if is_json:
            # Rich's Syntax brings Pygments (a heavy import): imported here, on the main
            # thread, the first time JSON is shown, not at launch for every session.
            from rich.syntax import Syntax

            syntax = Syntax(
                text, "json", word_wrap=True, background_color="default", theme="ansi_dark"
            )
            if found is not None:
                starts = [0] + [at + 1 for at, char in enumerate(text) if char == "\n"]
                for match in found.finditer(text):
                    syntax.stylize_range(
                        mark, _line_column(starts, match.start()), _line_column(starts, match.end())
                    )
            body = syntax
        self.renderable = Group(
            *([Text(before, style="dim")] if before else []), body, Text(cut, style="dim")
        )


def _line_column(starts: list[int], at: int) -> tuple[int, int]:
    """Where character ``at`` is, as Rich's Syntax counts (lines from 1, columns from 0)."""
    line = bisect_right(starts, at)
    return line, at - starts[line - 1]


def _marked(text: Text, found: re.Pattern[str] | None, mark: Style) -> Text:
    if found is not None:
        text.highlight_regex(found, mark)
    return text


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class EventDetail(VerticalScroll):
    """Shows the selected event; for a tool call, the call and its result together; for a
    model call, its conversation."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "event-detail--error",
        "event-detail--match",
        *(f"event-detail--{role}" for role in ROLES),
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._body = Static(Text("Select an event to see its detail.", style="dim"))
        self.show_all = False
        self.cut = False
        """Something shown is cut short (``o`` shows it whole)."""
        self.text = ""
        """The detail as plain text, for the clipboard."""
        self.search = ""
        """What is searched for in the run: marked wherever the detail shows it."""

    def compose(self):  # type: ignore[no-untyped-def]
        yield self._body

    def _found(self) -> tuple[re.Pattern[str] | None, Style]:
        """What the run's search looks for, as a pattern (case-insensitive, as the search
        matches), and the style it is marked in."""
        mark = self.get_component_rich_style("event-detail--match", partial=True)
        if not self.search:
            return None, mark
        return re.compile(re.escape(self.search), re.IGNORECASE), mark

    def show_paragraph(
        self,
        items: list[LedgerItem],
        raw: bytes | None,
        *,
        total: int | None = None,
        newest: bool = False,
    ) -> None:
        """Streamed text or thinking, gathered: the whole paragraph, inert.

        ``total`` is the paragraph's length in events when only part of it was handed
        over: its start, or (``newest``: the paragraph followed as it streams) its end.
        Followed, the pane keeps the newest text in view, as the event list keeps the
        newest entry: what is cut is cut from the start, and the pane is scrolled to
        the end.
        """
        chunks = [item for item in items if isinstance(item, LlmChunk | ReasoningChunk)]
        label = "thinking" if isinstance(chunks[0], ReasoningChunk) else "text"
        node = chunks[0].payload.node_id
        first, last = chunks[0], chunks[-1]
        size = max(total or 0, len(chunks))
        noun = "chunk" if size == 1 else "chunks"
        unseen = size - len(chunks)
        if not unseen:
            upto = f"{first.seq}" if first is last else f"{first.seq}-{last.seq}"
        else:
            upto = f"…-{last.seq}" if newest else f"{first.seq}-…"
        # When it began (its first chunk), however it was selected; followed with its start
        # not handed over, the newest chunk's, said as such.
        when = f"newest {last.time}" if newest and unseen else first.time
        parts: list[Text] = [
            # The node, when the chunks name one (not "node -": they stream in a model call).
            Text(
                inert(f"{label}  ·  {size:,} {noun}" + (f"  ·  node {node}" if node else "")),
                style="bold",
            ),
            Text(inert(f"seq {upto}  ·  {when}"), style="dim"),
        ]
        text = "".join(chunk.payload.delta or "" for chunk in chunks)
        limit = None if self.show_all else OUTPUT_PREVIEW
        found, mark = self._found()
        cut = 0 if limit is None or len(text) <= limit else len(text) - limit
        self.cut = bool(cut)
        if newest:
            if unseen or cut:
                earlier = f"{unseen:,} earlier chunks" if unseen else f"{cut:,} earlier characters"
                parts.append(Text(f"… {earlier} (the newest text follows)", style="dim"))
            shown = text[cut:]
        else:
            window = preview_window(text, limit, found)
            if window.start:
                parts.append(
                    Text(f"… {window.start:,} earlier characters (o shows all)", style="dim")
                )
            shown = text[window]
            cut = len(text) - window.stop
        parts.append(Text(inert(shown), style="italic" if label == "thinking" else ""))
        if not newest and unseen:
            parts.append(Text(f"… {unseen:,} more chunks", style="dim"))
        elif not newest and cut:
            parts.append(Text(f"… {cut:,} more characters (o shows all)", style="dim"))
        if raw:
            which = "newest" if newest else "first"
            parts.append(Text(f"raw ledger line ({which} chunk)", style="underline"))
            parts.append(Text(inert(raw.decode("utf-8", "replace")), style="dim"))
        for part in parts:
            _marked(part, found, mark)
        self.text = "\n".join(part.plain for part in parts)
        paragraph = Group(*parts)
        self._body.update(paragraph)
        self._follow_end(newest)
        if found is not None and not newest:
            self._scroll_to_match(paragraph, mark)

    def _follow_end(self, newest: bool) -> None:
        """Kept at the end while a followed paragraph grows (Textual's anchor: the pane stays
        scrolled to the bottom as its content grows, until the user scrolls); back to the
        top once it shows anything else."""
        if newest:
            if not self.is_anchored:
                self.anchor()
            return
        if self.is_anchored:
            self.anchor(False)
            self.scroll_home(animate=False, immediate=True)

    def show(
        self,
        item: LedgerItem | None,
        call: ToolCallView | None,
        raw: bytes | None,
        *,
        heading: list[Text] | None = None,
        timing: CallTiming | None = None,
        live: bool,
    ) -> None:
        """Show an event (and the tool call it belongs to, if any), under ``heading``.

        ``live``: the run may still write, so a call with no result yet is ``running``
        (else ``unfinished``: :func:`~inspector.status_words.open_call_word`).

        A model call (``llm_call``) shows as its conversation, with ``timing`` (its model
        node's) for its duration and rate; under a ``heading`` (a timeline node's facts)
        its own facts are not said again.
        """
        self._follow_end(False)
        error = self.get_component_rich_style("event-detail--error", partial=True)
        parts: list[Text | _JsonBlock | ConversationLine] = list(heading or [])
        limit = None if self.show_all else OUTPUT_PREVIEW
        found, mark = self._found()
        chat_cut = False
        if isinstance(item, LlmCall) and call is None:
            styles = ConversationStyles(
                roles={
                    role: self.get_component_rich_style(f"event-detail--{role}", partial=True)
                    for role in ROLES
                },
                error=error,
                mark=mark,
            )
            chat = conversation_text(
                item,
                timing=timing,
                facts=heading is None,
                whole=self.show_all,
                found=found,
                styles=styles,
                live=live,
            )
            parts.extend(chat.lines)
            chat_cut = chat.cut
        elif call is not None:
            state = call_outcome(done=call.done, is_error=call.is_error, live=live)
            took = duration(call.duration) if call.duration is not None else "…"
            parts.append(Text(inert(f"tool {call.name}  ·  {state}  ·  {took}"), style="bold"))
            parts.append(
                Text(
                    inert(
                        f"call {call.call_id}" + (f"  node {call.node_id}" if call.node_id else "")
                    ),
                    style="dim",
                )
            )
            parts.append(
                Text(
                    "arguments" + (" (truncated)" if call.arguments_truncated else ""),
                    style="underline",
                )
            )
            parts.append(_JsonBlock(call.arguments, limit, found, mark))
            if call.done:
                label = "error" if call.is_error else "output"
                parts.append(
                    Text(
                        label + (" (truncated)" if call.output_truncated else ""),
                        style=error + Style(underline=True) if call.is_error else "underline",
                    )
                )
                parts.append(_JsonBlock(call.output, limit, found, mark))
        elif isinstance(item, DamagedLine):
            parts.append(
                Text(
                    f"damaged line at byte {item.offset} ({item.length} bytes)",
                    style=error + Style(bold=True),
                )
            )
            parts.append(Text(inert(item.reason)))
        elif item is not None:
            parts.append(
                Text(inert(f"{item.type}  ·  seq {item.seq}  ·  {item.time}"), style="bold")
            )
            parts.append(_JsonBlock(msgspec.to_builtins(item.payload), limit, found, mark))
        if raw:
            parts.append(Text("raw ledger line", style="underline"))
            parts.append(Text(inert(raw.decode("utf-8", "replace")), style="dim"))
        if not parts:
            parts.append(Text("Select an event to see its detail.", style="dim"))
        self.cut = chat_cut or any(isinstance(part, _JsonBlock) and part.cut for part in parts)
        self.text = "\n".join(part.plain for part in parts)
        renderables: list[RenderableType] = [
            _marked(part, found, mark) if isinstance(part, Text) else part.renderable
            for part in parts
        ]
        shown = Group(*renderables)
        self._body.update(shown)
        if found is not None:
            self._scroll_to_match(shown, mark)

    def _scroll_to_match(self, shown: RenderableType, mark: Style) -> None:
        """Once drawn, scroll so the first match of the run's search is in view: from the
        top where it shows there (or there is none), else with two lines of what leads to
        it above. A search that counted a match shows it, however far down a long
        paragraph or output it is."""

        def scroll() -> None:
            width = self._body.content_region.width
            if width <= 0:
                return
            console = self.app.console
            lines = console.render_lines(shown, console.options.update_width(width), pad=False)
            at = next(
                (
                    number
                    for number, segments in enumerate(lines)
                    if any(
                        s.style is not None and s.style.bgcolor == mark.bgcolor for s in segments
                    )
                ),
                None,
            )
            height = self.scrollable_content_region.height
            top = 0 if at is None or at < height - 1 else at - 2  # from the top if it shows
            self.scroll_to(y=top, animate=False)  # after the layout the new text asks for

        if mark.bgcolor is not None:
            self.call_after_refresh(scroll)
