"""Two runs' summaries side by side, each difference marked better, worse or unknown.

One line a measure: its name, the left run's value, the right run's, and
how the right one did against the left (``24s faster (-73%)``). A verdict
is said in words and a glyph (``✓`` better, ``✗`` worse, ``=`` same, ``≠``
different, ``?`` not known), coloured by the theme, so no colour is needed
to read it. Every string from a run (tool names, errors) is shown inert.
"""

from __future__ import annotations

from typing import ClassVar, Final

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from inspector.comparison import Comparison, Difference, RunFacts, ToolUse, Verdict
from inspector.events import RunStatus
from inspector.status_words import CALL_ERROR, STILL_GOING, open_call_word
from tui.text import cost, duration, inert, shorten, tokens
from tui.text.runs import STATUS, UNKNOWN_MARK

GLYPH: Final = {
    Verdict.BETTER: "✓",
    Verdict.WORSE: "✗",
    Verdict.SAME: "=",
    Verdict.DIFFERENT: "≠",
    Verdict.UNKNOWN: "?",
}

WORDS: Final = {
    "duration": ("faster", "slower"),
    "prompt_tokens": ("fewer", "more"),
    "output_tokens": ("fewer", "more"),
    "cost_usd": ("cheaper", "costlier"),
    "model_calls": ("fewer", "more"),
    "tool_calls": ("fewer", "more"),
    "errors": ("fewer", "more"),
    "seconds": ("faster", "slower"),
    "calls": ("fewer", "more"),
}
"""What a smaller and a larger value of each measure are called."""

LABELS: Final = {
    "duration": "duration",
    "prompt_tokens": "prompt tokens",
    "output_tokens": "output tokens",
    "cost_usd": "cost",
    "model_calls": "model calls",
    "tool_calls": "tool calls",
    "errors": "errors",
}

TOKEN_MEASURES: Final = frozenset({"prompt_tokens", "output_tokens", "cost_usd"})
"""What a model call says when it is recorded: not known while one is running."""

LABEL_WIDTH: Final = 14
"""The label column at its narrowest: every measure's name whole."""
VERDICT_WIDTH: Final = 28
TOOL_INDENT: Final = "  "
"""A tool's name is indented under ``tools``."""


def label_column(comparison: Comparison, width: int) -> int:
    """The label column's width: as wide as the longest tool name needs, within a third of
    what the verdict leaves (A and B keep two thirds), and never under :data:`LABEL_WIDTH`.

    So ``plan_migration`` reads whole at 160 columns, where a fixed 14 cut it with room
    to spare, and a long name at 80 columns still leaves A's and B's values room.
    """
    needed = max(
        (len(TOOL_INDENT + inert(tool.name, single_line=True)) for tool in comparison.tools),
        default=0,
    )
    room = max(LABEL_WIDTH, (width - 3 - VERDICT_WIDTH) // 3)
    return max(LABEL_WIDTH, min(needed, room))


def status_glyph(word: str) -> str:
    """The status glyph the runs table shows beside ``word``."""
    if word == "cancelling":
        return STATUS[RunStatus.CANCELED][0]
    try:
        return STATUS[RunStatus(word)][0]
    except ValueError:
        return UNKNOWN_MARK[0]


def amount(name: str, value: float | None) -> str:
    """A measure's value as a person reads it (``not recorded`` when a run never said)."""
    if value is None:
        return "not recorded"
    if name in {"duration", "seconds"}:
        return duration(value)
    if name == "cost_usd":
        return cost(value)
    if name.endswith("_tokens"):
        return tokens(int(value))  # as the table and the run's header write them
    return f"{int(value):,}"


def said(difference: Difference) -> str:
    """How the right run did on one measure, in words (glyph first)."""
    glyph = GLYPH[difference.verdict]
    if difference.left is None or difference.right is None:
        return f"{glyph} not known"
    delta = difference.delta or 0.0
    if difference.verdict is Verdict.SAME:
        return f"{glyph} same" if not delta else f"{glyph} about the same"
    smaller, larger = WORDS.get(difference.name, ("less", "more"))
    word = smaller if delta < 0 else larger
    size = amount(difference.name, abs(delta))
    share = ""
    if difference.left and difference.name not in {"errors", "model_calls", "tool_calls", "calls"}:
        share = f" ({delta / difference.left:+.0%})"
    if difference.verdict is Verdict.UNKNOWN:
        # A run still going can overtake the other: "3m07s faster so far" of a run 6 s in
        # read as a verdict. Its figures say "so far"; this says only that it is open.
        return f"{glyph} not decided yet"
    if not difference.settled:
        return f"{glyph} at least {size} {word}"
    return f"{glyph} {size} {word}{share}"


def open_word(facts: RunFacts) -> str:
    """What a call begun and not ended is in this run: ``running`` while the run goes on,
    ``unfinished`` once it stopped (a stale run's call is going nowhere)."""
    return open_call_word(live=not facts.ended)


def tool_cell(use: ToolUse | None, facts: RunFacts) -> str:
    """One tool in one run: ``2× 30.4s, 1 error``; ``—`` where the run never called it."""
    if use is None:
        return "—"
    if use.in_flight == use.calls:
        return f"{use.calls}× {open_word(facts)}"
    time = duration(use.seconds) if use.timed else "time not recorded"
    parts = [f"{use.calls}× {time}"]
    if use.errors:  # the tool-calls screen's word for a call that failed
        parts.append(f"{use.errors} {CALL_ERROR}{'' if use.errors == 1 else 's'}")
    if use.in_flight:
        parts.append(f"{use.in_flight} {open_word(facts)}")
    return ", ".join(parts)


class ComparisonTable(Widget):
    """The measures of two runs, one line each, with how the right one did against the left."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "comparison--title",
        "comparison--label",
        "comparison--better",
        "comparison--worse",
        "comparison--same",
        "comparison--different",
        "comparison--unknown",
        "comparison--error",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.comparison: Comparison | None = None
        self.reading: str = ""
        """What is still being read, said under the table (empty once all is read)."""

    def show(self, comparison: Comparison | None, reading: str = "") -> None:
        self.comparison = comparison
        self.reading = reading
        self.refresh(layout=True)

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return len(self.lines(max(width, 40)))

    def render(self) -> Text:
        return Text("\n").join(self.lines(max(self.size.width, 40)))

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"comparison--{name}")  # translucent colours blended

    def lines(self, width: int) -> list[Text]:
        comparison = self.comparison
        if comparison is None:
            return [Text(self.reading or "reading both runs…", no_wrap=True)]
        label_width = label_column(comparison, width)
        # The verdict keeps room for a whole sentence (28); A and B share the rest.
        cell = max(12, min(40, (width - label_width - 3 - VERDICT_WIDTH) // 2))
        verdict_width = max(12, width - label_width - 2 * cell - 3)

        def line(
            label: str, left: str, right: str, verdict: str = "", style: Style | None = None
        ) -> Text:
            text = Text(no_wrap=True, overflow="ellipsis")
            text.append(shorten(label, label_width).ljust(label_width) + " ", self._style("label"))
            text.append(shorten(left, cell).ljust(cell) + " ")
            text.append(shorten(right, cell).ljust(cell) + " ")
            text.append(shorten(verdict, verdict_width), style or Style())
            return text

        def verdict_style(verdict: Verdict) -> Style:
            return self._style(verdict.value)

        left, right = comparison.left, comparison.right
        title = line("", "A", "B", "B against A")
        title.stylize(self._style("title"))
        lines = [title]
        outcome = comparison.outcome
        lines.append(
            line(
                "outcome",
                f"{status_glyph(left.status)} {left.status}",
                f"{status_glyph(right.status)} {right.status}",
                _outcome_said(outcome, left, right),
                verdict_style(outcome),
            )
        )
        for measure in comparison.measures:
            lines.append(
                line(
                    LABELS[measure.name],
                    self._value_said(measure.name, measure.left, left),
                    self._value_said(measure.name, measure.right, right),
                    said(measure),
                    verdict_style(measure.verdict),
                )
            )
        if comparison.tools:
            lines.append(line("tools", "", "", _tools_said(comparison), self._style("label")))
        for tool in comparison.tools:
            name = TOOL_INDENT + inert(tool.name, single_line=True)
            if tool.left is None or tool.right is None:
                where, other = ("B", left) if tool.left is None else ("A", right)
                if other.ended:
                    verdict = f"{GLYPH[Verdict.DIFFERENT]} only in {where}"
                    style = verdict_style(Verdict.DIFFERENT)
                else:  # the other run may still call it
                    verdict = f"{GLYPH[Verdict.UNKNOWN]} only in {where} so far"
                    style = verdict_style(Verdict.UNKNOWN)
            else:
                verdict = said(tool.seconds)
                # The calls differ only once that is decided: a live run's "+0 calls" (or
                # "-1 call" so far) said nothing true.
                if tool.calls.verdict is Verdict.DIFFERENT and tool.calls.delta:
                    calls = int(tool.calls.delta)
                    verdict = f"{verdict}, {calls:+d} call{'s' if abs(calls) != 1 else ''}"
                style = verdict_style(tool.seconds.verdict)
            lines.append(
                line(name, tool_cell(tool.left, left), tool_cell(tool.right, right), verdict, style)
            )
        if left.error or right.error:
            error = line(
                "error",
                inert(left.error or "—", single_line=True),
                inert(right.error or "—", single_line=True),
            )
            error.stylize(self._style("error"), label_width + 1)
            lines.append(error)
        if self.reading:
            lines.append(Text(self.reading, self._style("unknown"), no_wrap=True))
        return lines

    @staticmethod
    def _value_said(name: str, value: float | None, facts: RunFacts) -> str:
        begun = facts.models_in_flight
        if begun and name == "model_calls":
            # A model call under way is one, not 0: "1 running", "2 + 1 running".
            ended = facts.model_calls - begun
            done = f"{ended:,} + " if ended > 0 else ""
            return f"{done}{begun} {open_word(facts)}"
        if begun and value is None and name in TOKEN_MEASURES and not facts.ended:
            return f"call {STILL_GOING}"  # not known yet: it may yet say them
        shown = amount(name, value)
        if value is not None and not (facts.ended if name == "duration" else facts.settled):
            shown += " so far"
        return shown


def _tools_said(comparison: Comparison) -> str:
    """Whether both runs called the same tools: a run still going may yet call another
    (or the one only the other called), so it is not decided until that cannot change."""
    left, right = comparison.left, comparison.right
    if (comparison.only_left and right.ended) or (comparison.only_right and left.ended):
        return "not the same tools"  # one that ended never called a tool the other did
    if left.ended and right.ended:
        return "same tools"
    return f"{GLYPH[Verdict.UNKNOWN]} not decided yet"


def _outcome_said(outcome: Verdict, left: RunFacts, right: RunFacts) -> str:
    glyph = GLYPH[outcome]
    match outcome:
        case Verdict.BETTER:
            return f"{glyph} {right.status} where A {left.status}"
        case Verdict.WORSE:
            return f"{glyph} {right.status} where A {left.status}"
        case Verdict.SAME:
            return f"{glyph} same"
        case Verdict.DIFFERENT:
            return f"{glyph} ended otherwise"
        case _:
            live = "A" if not left.ended else "B"
            return f"{glyph} {live} has not ended"
