"""The detail of one event: a tool call's arguments and output, timing, the raw line."""

from __future__ import annotations

import json
from typing import Any, ClassVar, Final

import msgspec
from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from inspector import ToolCallView
from ledger_reader import DamagedLine, LedgerItem, LlmChunk, ReasoningChunk
from tui.text import duration, inert

OUTPUT_PREVIEW: Final = 4000
"""Characters of a long output shown before "press o for all"."""


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
    """Highlighted JSON, cut at ``limit`` characters; ``plain`` is what it shows, as text."""

    def __init__(self, value: Any, limit: int | None) -> None:
        is_json = not isinstance(value, str) or _parses(value)
        text = inert(pretty_json(value))
        cut = ""
        if limit is not None and len(text) > limit:
            cut = f"… {len(text) - limit:,} more characters (press o to show all)"
            text = text[:limit]
        self.cut = bool(cut)
        self.plain = text + ("\n" + cut if cut else "")
        body: RenderableType = Text(text)
        if is_json:
            # Rich's Syntax brings Pygments (12 ms of CPU): imported here, on the main
            # thread, the first time JSON is shown, not at launch for every session.
            from rich.syntax import Syntax

            body = Syntax(
                text, "json", word_wrap=True, background_color="default", theme="ansi_dark"
            )
        self.renderable = Group(body, Text(cut, style="dim"))


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class EventDetail(VerticalScroll):
    """Shows the selected event; for a tool call, the call and its result together."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"event-detail--error"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._body = Static(Text("Select an event to see its detail.", style="dim"))
        self.show_all = False
        self.cut = False
        """Something shown is cut short (``o`` shows it whole)."""
        self.text = ""
        """The detail as plain text, for the clipboard."""

    def compose(self):  # type: ignore[no-untyped-def]
        yield self._body

    def show_paragraph(
        self, items: list[LedgerItem], raw: bytes | None, *, total: int | None = None
    ) -> None:
        """Streamed text or thinking, gathered: the whole paragraph, inert.

        ``total`` is the paragraph's length in events when only its start was handed over.
        """
        chunks = [item for item in items if isinstance(item, LlmChunk | ReasoningChunk)]
        label = "thinking" if isinstance(chunks[0], ReasoningChunk) else "text"
        node = chunks[0].payload.node_id or "-"
        first, last = chunks[0], chunks[-1]
        size = max(total or 0, len(chunks))
        noun = "chunk" if size == 1 else "chunks"
        upto = f"{first.seq}-{last.seq}" if size == len(chunks) else f"{first.seq}-…"
        parts: list[Text] = [
            Text(inert(f"{label}  ·  {size:,} {noun}  ·  node {node}"), style="bold"),
            Text(inert(f"seq {upto}  ·  {first.time}"), style="dim"),
        ]
        text = "".join(chunk.payload.delta or "" for chunk in chunks)
        limit = None if self.show_all else OUTPUT_PREVIEW
        shown = text if limit is None or len(text) <= limit else text[:limit]
        body = Text(inert(shown), style="italic" if label == "thinking" else "")
        parts.append(body)
        self.cut = shown is not text
        if size > len(chunks):
            parts.append(Text(f"… {size - len(chunks):,} more chunks", style="dim"))
        elif shown is not text:
            parts.append(
                Text(f"… {len(text) - len(shown):,} more characters (o shows all)", style="dim")
            )
        if raw:
            parts.append(Text("raw ledger line (first chunk)", style="underline"))
            parts.append(Text(inert(raw.decode("utf-8", "replace")), style="dim"))
        self.text = "\n".join(part.plain for part in parts)
        self._body.update(Group(*parts))

    def show(
        self,
        item: LedgerItem | None,
        call: ToolCallView | None,
        raw: bytes | None,
        *,
        heading: list[Text] | None = None,
    ) -> None:
        """Show an event (and the tool call it belongs to, if any), under ``heading``."""
        error = self.get_component_rich_style("event-detail--error", partial=True)
        parts: list[Text | _JsonBlock] = list(heading or [])
        limit = None if self.show_all else OUTPUT_PREVIEW
        if call is not None:
            state = "error" if call.is_error else ("done" if call.done else "in flight")
            took = duration(call.duration) if call.duration is not None else "…"
            parts.append(Text(inert(f"tool {call.name}  ·  {state}  ·  {took}"), style="bold"))
            parts.append(
                Text(inert(f"call {call.call_id}  node {call.node_id or '-'}"), style="dim")
            )
            parts.append(
                Text(
                    "arguments" + (" (truncated)" if call.arguments_truncated else ""),
                    style="underline",
                )
            )
            parts.append(_JsonBlock(call.arguments, limit))
            if call.done:
                label = "error" if call.is_error else "output"
                parts.append(
                    Text(
                        label + (" (truncated)" if call.output_truncated else ""),
                        style=error + Style(underline=True) if call.is_error else "underline",
                    )
                )
                parts.append(_JsonBlock(call.output, limit))
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
            parts.append(_JsonBlock(msgspec.to_builtins(item.payload), limit))
        if raw:
            parts.append(Text("raw ledger line", style="underline"))
            parts.append(Text(inert(raw.decode("utf-8", "replace")), style="dim"))
        if not parts:
            parts.append(Text("Select an event to see its detail.", style="dim"))
        self.cut = any(isinstance(part, _JsonBlock) and part.cut for part in parts)
        self.text = "\n".join(part.plain for part in parts)
        renderables: list[RenderableType] = [
            part if isinstance(part, Text) else part.renderable for part in parts
        ]
        self._body.update(Group(*renderables))
