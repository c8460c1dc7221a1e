"""Two runs side by side: what each did, and what differs between them.

Someone compares two runs after a resume or a prompt change: did it get
faster, cheaper, did it call the same tools, did it end better. A
:class:`RunTally` folds one run's events (read from its source page by
page, or as they arrive) into counts; :func:`facts_of` freezes a tally and
the run's view into :class:`RunFacts`; :func:`compare` sets two of them
side by side as :class:`Difference` rows with a :class:`Verdict` each.

The comparison is honest about what it does not know. A run still going
(or one whose events are still being read) has lasted, spent and called
*at least* what it shows: its numbers are lower bounds, and a verdict
against it is given only when the bound already decides it (a live run
already slower than the finished one is slower, whatever it does next).
A value the ledger never recorded (a cost no model call reported, a tool
call without times) is unknown, never zero.

Left is the baseline (the earlier run, the one resumed); the verdicts say
how the right one did against it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Final

import msgspec

from inspector.model import RunKey, RunView
from inspector.status_words import status_word
from inspector.store import RunStore
from ledger_reader import (
    ErrorEvent,
    LedgerItem,
    LlmCall,
    NodeEnter,
    NodeExit,
    RunCompleted,
    ToolCall,
    ToolResult,
    event_of,
    parse_time,
)

READ_PAGE: Final = 5_000
"""Events asked of a source at a time while a run is tallied."""


class Verdict(enum.StrEnum):
    """How the right run did against the left on one measure."""

    BETTER = "better"
    WORSE = "worse"
    SAME = "same"
    DIFFERENT = "different"
    """They differ, and neither way is better (a tool called more often, say)."""
    UNKNOWN = "unknown"
    """Not known: a side never recorded it, or a run still going may yet change it."""


class ToolUse(msgspec.Struct, frozen=True):
    """One tool in one run: how often it was called, how it went, how long it took."""

    name: str
    calls: int = 0
    errors: int = 0
    in_flight: int = 0
    seconds: float = 0.0
    """Time from call to result, added up over the calls that have both times."""
    untimed: int = 0
    """Finished calls without a time on their call or result: their time is unknown."""

    @property
    def timed(self) -> bool:
        """Whether ``seconds`` is the whole of the time its finished calls took."""
        return self.untimed == 0


class _OpenCall(msgspec.Struct):
    name: str
    started: float | None


class _ToolCount(msgspec.Struct):
    calls: int = 0
    errors: int = 0
    seconds: float = 0.0
    untimed: int = 0


class RunTally:
    """One run's events folded into what a comparison needs.

    Events are folded in the order of the run (read from the first, then
    as they arrive); ``read`` says how many have been, so a reader goes on
    from there.
    """

    def __init__(self) -> None:
        self.read = 0
        """Events (ledger items, damaged lines included) folded so far."""
        self.model_calls = 0
        self.prompt_tokens = 0
        self.output_tokens = 0
        self.tokens_reported = False
        """Some model call reported its tokens (else the run's tokens are unknown)."""
        self.cost_usd = 0.0
        self.cost_reported = False
        """Some model call reported its cost (else the run's cost is unknown, not $0)."""
        self.errors = 0
        self.last_error: str | None = None
        self._tools: dict[str, _ToolCount] = {}
        self._open: dict[str, _OpenCall] = {}
        self._open_models: dict[str, int] = {}
        """Model nodes entered and not exited (``llm:`` ids), each with how many times
        it was entered (a node entered again before it exited is two calls, as the
        timeline draws it)."""
        self._ended_open: set[str] = set()
        """Model nodes the run's end closed unexited: their late exit is no new call."""

    @property
    def models_in_flight(self) -> int:
        """Model calls begun (their node entered) and not ended yet (not exited)."""
        return sum(self._open_models.values())

    def add_items(self, items: Iterable[LedgerItem]) -> None:
        for item in items:
            self.read += 1
            event = event_of(item)
            if event is None:
                continue
            match event:
                case ToolCall(payload=payload):
                    name = payload.name or "tool"
                    self._tools.setdefault(name, _ToolCount()).calls += 1
                    call_id = payload.call_id or f"seq-{event.seq}"
                    self._open[call_id] = _OpenCall(name, _epoch(event.time))
                case ToolResult(payload=payload):
                    call = self._open.pop(payload.call_id or "", None)
                    if call is None:
                        continue  # a result without its call: nothing to time it by
                    count = self._tools[call.name]
                    if payload.is_error:
                        count.errors += 1
                    ended = _epoch(event.time)
                    if call.started is None or ended is None:
                        count.untimed += 1
                    else:
                        count.seconds += max(0.0, ended - call.started)
                case NodeEnter(payload=payload):
                    # A model node entered is a model call, whether or not it reports
                    # tokens (the demo's researcher thinks in one that never does).
                    if _is_model_node(payload.node_id):
                        node_id = payload.node_id or ""
                        self.model_calls += 1
                        self._open_models[node_id] = self._open_models.get(node_id, 0) + 1
                case NodeExit(payload=payload):
                    node_id = payload.node_id or ""
                    entered = self._open_models.pop(node_id, 0)
                    if entered > 1:
                        self._open_models[node_id] = entered - 1
                    elif (
                        not entered and _is_model_node(node_id) and node_id not in self._ended_open
                    ):
                        self.model_calls += 1  # exited, never entered: a call all the same
                case LlmCall(payload=payload):
                    if not self._open_models:
                        self.model_calls += 1  # no model node open: a call of its own
                    if payload.prompt_tokens is not None or payload.output_tokens is not None:
                        self.tokens_reported = True
                    self.prompt_tokens += payload.prompt_tokens or 0
                    self.output_tokens += payload.output_tokens or 0
                    if payload.cost_usd is not None:
                        self.cost_reported = True
                        self.cost_usd += payload.cost_usd
                case ErrorEvent(payload=payload):
                    self.errors += 1
                    self.last_error = payload.message or self.last_error
                case RunCompleted(payload=payload):
                    if payload.error:
                        self.last_error = payload.error
                    self._open.clear()  # the run ended: nothing of it is in flight
                    self._ended_open.update(self._open_models)
                    self._open_models.clear()
                case _:
                    pass

    def tools(self) -> tuple[ToolUse, ...]:
        """Each tool called, most called first."""
        in_flight: dict[str, int] = {}
        for call in self._open.values():
            in_flight[call.name] = in_flight.get(call.name, 0) + 1
        uses = [
            ToolUse(
                name,
                count.calls,
                count.errors,
                in_flight.get(name, 0),
                count.seconds,
                count.untimed,
            )
            for name, count in self._tools.items()
        ]
        uses.sort(key=lambda use: (-use.calls, use.name))
        return tuple(uses)


async def tally_run(store: RunStore, key: RunKey, tally: RunTally) -> int:
    """Fold the run's events the tally has not seen yet, page by page, from its source.

    Returns how many events the run has now.

    Raises:
        SourceError: the source could not give them (the tally keeps what it folded).
    """
    count = await store.event_count(key)
    while tally.read < count:
        stop = min(count, tally.read + READ_PAGE)
        items = await store.events(key, tally.read, stop)
        if not items:
            break  # fewer than counted (a ledger cut short meanwhile): read again next time
        tally.add_items(items)
    return count


class RunFacts(msgspec.Struct, frozen=True):
    """What one run did, as a comparison sets it beside another."""

    key: RunKey
    status: str
    """The run's status word, as the table says it (``cancelling``, ``unknown`` included)."""
    succeeded: bool
    settled: bool
    """Ended and read whole: no number here can change any more."""
    ended: bool
    duration: float | None
    prompt_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    model_calls: int
    """Model calls made, as the run's timeline counts them: each model node entered (or
    exited without an entry), and each ``llm_call`` written with no model node open. One
    whose node has not exited yet is counted too (see ``models_in_flight``)."""
    tool_calls: int
    tools: tuple[ToolUse, ...]
    errors: int
    error: str | None
    """The run's error (the last error event, or the one it ended with)."""
    events_read: int
    events_total: int | None
    models_in_flight: int = 0
    """Those of ``model_calls`` begun and not ended (their node not exited): running while
    the run is live; in a run that stopped (stale, abandoned) they never ended."""


def facts_of(
    run: RunView,
    tally: RunTally,
    *,
    now: float,
    events_total: int | None,
    source_down: bool = False,
) -> RunFacts:
    """Freeze ``run`` and its tally into facts.

    Args:
        run: the run's view, for its status and times.
        tally: its events folded so far.
        now: the time a live run's duration runs to.
        events_total: how many events the run has (``None`` when not known yet).
        source_down: its source cannot be read now (a live run's clock stops).
    """
    word = status_word(run, source_down=source_down)
    if run.cancel_requested and run.live:
        word = "cancelling"
    ended = not run.live
    complete = events_total is not None and tally.read >= events_total
    until = (run.last_event_at or now) if source_down and run.live else now
    return RunFacts(
        key=run.key,
        status=word,
        succeeded=word == "succeeded",
        settled=ended and complete,
        ended=ended,
        duration=run.duration(until),
        # Tokens and cost are known when a model call said them: a run whose ledger says
        # none is "not recorded", as its run screen says, never 0 (its agent may call
        # models it does not record).
        prompt_tokens=tally.prompt_tokens if tally.tokens_reported else None,
        output_tokens=tally.output_tokens if tally.tokens_reported else None,
        cost_usd=tally.cost_usd if tally.cost_reported else None,
        model_calls=tally.model_calls,
        models_in_flight=tally.models_in_flight,
        tool_calls=sum(use.calls for use in tally.tools()),
        tools=tally.tools(),
        errors=tally.errors,
        error=tally.last_error or run.error,
        events_read=tally.read,
        events_total=events_total,
    )


class Difference(msgspec.Struct, frozen=True):
    """One measure of both runs, and how the right one did against the left."""

    name: str
    left: float | None
    right: float | None
    verdict: Verdict
    delta: float | None = None
    """Right minus left, when both are known."""
    settled: bool = True
    """Both values are final; if not, ``delta`` is what it is so far."""


RESOLUTION: Final = {"duration": 0.05, "seconds": 0.05, "cost_usd": 0.00005}
"""Differences smaller than this are the same (a run's clock, a cost's last digit): 0.802 s
against 0.8 s is not slower."""


def difference(
    name: str,
    left: float | None,
    right: float | None,
    *,
    left_final: bool,
    right_final: bool,
    lower_is_better: bool | None = True,
) -> Difference:
    """Set two values of a measure that only grows while a run goes on side by side.

    A value not final is a lower bound: the verdict is given only when the
    bound decides it, else it is unknown. Values closer than the measure's
    :data:`RESOLUTION` are the same.
    """
    if left is None or right is None:
        return Difference(name, left, right, Verdict.UNKNOWN, settled=left_final and right_final)
    delta = right - left
    settled = left_final and right_final
    resolution = RESOLUTION.get(name, 0.0)
    if not settled:
        # Only a side still growing can change; it can only grow.
        decided = (not right_final and left_final and right - left > resolution) or (
            not left_final and right_final and left - right > resolution
        )
        if not decided:
            return Difference(name, left, right, Verdict.UNKNOWN, delta, settled=False)
    if abs(delta) <= resolution:
        verdict = Verdict.SAME
    elif lower_is_better is None:
        verdict = Verdict.DIFFERENT
    elif (delta < 0) == lower_is_better:
        verdict = Verdict.BETTER
    else:
        verdict = Verdict.WORSE
    return Difference(name, left, right, verdict, delta, settled=settled)


class ToolDifference(msgspec.Struct, frozen=True):
    """One tool in both runs: its calls and their time side by side."""

    name: str
    left: ToolUse | None
    right: ToolUse | None
    calls: Difference
    seconds: Difference


class Comparison(msgspec.Struct, frozen=True):
    """Two runs side by side: every measure, each tool, and what only one of them did."""

    left: RunFacts
    right: RunFacts
    outcome: Verdict
    measures: tuple[Difference, ...]
    """Duration, tokens, cost, model calls, tool calls, errors: in that order."""
    tools: tuple[ToolDifference, ...]
    only_left: tuple[str, ...]
    """Tools only the left run called."""
    only_right: tuple[str, ...]

    @property
    def same_tools(self) -> bool:
        return not self.only_left and not self.only_right

    def measure(self, name: str) -> Difference:
        return next(measure for measure in self.measures if measure.name == name)


def compare(left: RunFacts, right: RunFacts) -> Comparison:
    """``right`` against ``left`` (the baseline), measure by measure and tool by tool."""
    lf, rf = left.settled, right.settled

    def measure(
        name: str, a: float | None, b: float | None, lower: bool | None = True
    ) -> Difference:
        return difference(name, a, b, left_final=lf, right_final=rf, lower_is_better=lower)

    measures = (
        difference(
            "duration",
            left.duration,
            right.duration,
            left_final=left.ended,
            right_final=right.ended,
        ),
        measure("prompt_tokens", left.prompt_tokens, right.prompt_tokens),
        measure("output_tokens", left.output_tokens, right.output_tokens),
        measure("cost_usd", left.cost_usd, right.cost_usd),
        # A model call begun is one made, ended or not yet: never 0 while it runs.
        measure("model_calls", left.model_calls, right.model_calls, None),
        measure("tool_calls", left.tool_calls, right.tool_calls, None),
        measure("errors", left.errors, right.errors),
    )
    lefts = {use.name: use for use in left.tools}
    rights = {use.name: use for use in right.tools}
    names = sorted(
        lefts.keys() | rights.keys(),
        key=lambda name: (-_calls(lefts.get(name)) - _calls(rights.get(name)), name),
    )
    tools = tuple(
        _tool_difference(name, lefts.get(name), rights.get(name), lf, rf) for name in names
    )
    return Comparison(
        left=left,
        right=right,
        outcome=_outcome(left, right),
        measures=measures,
        tools=tools,
        only_left=tuple(name for name in names if name not in rights),
        only_right=tuple(name for name in names if name not in lefts),
    )


def _calls(use: ToolUse | None) -> int:
    return use.calls if use is not None else 0


def _tool_difference(
    name: str, left: ToolUse | None, right: ToolUse | None, left_final: bool, right_final: bool
) -> ToolDifference:
    def seconds(use: ToolUse | None) -> float | None:
        if use is None:
            return 0.0
        return use.seconds if use.timed else None

    def final(use: ToolUse | None, run_final: bool) -> bool:
        return run_final and (use is None or use.in_flight == 0)

    calls = difference(
        "calls",
        _calls(left),
        _calls(right),
        left_final=left_final,
        right_final=right_final,
        lower_is_better=None,
    )
    time = difference(
        "seconds",
        seconds(left),
        seconds(right),
        left_final=final(left, left_final),
        right_final=final(right, right_final),
    )
    return ToolDifference(name, left, right, calls, time)


def _outcome(left: RunFacts, right: RunFacts) -> Verdict:
    """Succeeded beats anything else; two other endings differ; a live one is not known."""
    if not left.ended or not right.ended:
        return Verdict.UNKNOWN
    if left.status == right.status:
        return Verdict.SAME
    if right.succeeded:
        return Verdict.BETTER
    if left.succeeded:
        return Verdict.WORSE
    return Verdict.DIFFERENT


def baseline_first(a: RunView, b: RunView) -> tuple[RunView, RunView]:
    """The two runs in comparison order: the one resumed (or started first) on the left."""
    if a.resumed_from == b.run_id and a.source == b.source:
        return b, a
    if b.resumed_from == a.run_id and a.source == b.source:
        return a, b
    if (b.started_at or 0.0, b.run_id) < (a.started_at or 0.0, a.run_id):
        return b, a
    return a, b


def resume_partner(store: RunStore, key: RunKey) -> RunView | None:
    """The run this one resumed, else the newest run that resumed it: what to compare it with.

    The run resumed is looked for in the same source first (a resume is
    written beside the run it re-issues), then in any.
    """
    run = store.get(key)
    if run is None:
        return None
    if run.resumed_from:
        return store.get(RunKey(key.source, run.resumed_from)) or store.find(run.resumed_from)
    resumers = [
        view
        for view in store.snapshot().runs
        if view.resumed_from == key.run_id and view.key != key
    ]
    if not resumers:
        return None
    resumers.sort(key=lambda view: (view.source == key.source, view.started_at or 0.0))
    return resumers[-1]


def _is_model_node(node_id: str | None) -> bool:
    """Whether a node is a model call: its id says ``llm:`` and a name (as the timeline
    reads it)."""
    prefix, _, rest = (node_id or "").partition(":")
    return prefix == "llm" and bool(rest)


def _epoch(value: str) -> float | None:
    moment = parse_time(value) if value else None
    return moment.timestamp() if moment is not None else None


__all__ = [
    "READ_PAGE",
    "RESOLUTION",
    "Comparison",
    "Difference",
    "RunFacts",
    "RunTally",
    "ToolDifference",
    "ToolUse",
    "Verdict",
    "baseline_first",
    "compare",
    "difference",
    "facts_of",
    "resume_partner",
    "tally_run",
]
