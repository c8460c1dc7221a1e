"""The fast block fold: a block of complete ledger lines into a summary, at C speed.

msgspec's ``decode_lines`` validates every line of a block into its
:class:`~ledger_reader.decode.TimedEnvelope` (type, seq, run_id, time; the payload
skipped); only the lines whose type a summary needs are decoded whole, by
the one line decoder. The fold must say exactly what decoding every line
says, so it takes the fast path only where it cannot be misled, and
otherwise folds the block line by line through the one line reader (damage
then counted with its offset, and recovered where it can be):

- msgspec's ``decode_lines`` reads a stream of JSON values, not lines: two
  objects on one line, or one spread over two, would shift every line
  after them. So the block is decoded as one JSON array, its newlines made
  ``,\n``: a blank line, a second value on a line or a value spread over
  lines is then a syntax error (a raw newline inside a string was one
  already), and the values are the lines, one for one.
- Skipping a string does not check its UTF-8, decoding it does: a block
  that is not valid UTF-8 is read line by line.
- A line whose type is empty, or whose ``seq`` or ``run_id`` has the wrong
  type, fails the envelope, and the block is read line by line.
- An ``llm_call`` counts its tokens and cost, but its conversation (up to
  64 KiB a call) is not the listing's to build: those lines are decoded as
  the event with ``messages`` and ``response`` kept as raw JSON, checked as
  any value, never made into objects.
"""

from __future__ import annotations

from typing import Final

import msgspec

from ledger_reader.decode import TimedEnvelope, decode_line
from ledger_reader.events import (
    DamagedLine,
    KnownEvent,
    LlmCallPayload,
    NodeEnter,
    RunEvent,
    TypedEvent,
)
from ledger_reader.lines import LineAssembler
from ledger_reader.summary import SummaryBuilder


class _UsagePayload(LlmCallPayload):
    """An ``llm_call``'s payload with its conversation left as JSON text."""

    messages: msgspec.Raw = msgspec.Raw(b"null")
    response: msgspec.Raw = msgspec.Raw(b"null")


class _LlmUsage(TypedEvent, tag="llm_call"):
    """An ``llm_call`` line, decoded as :class:`~ledger_reader.events.LlmCall` is but for
    its conversation."""

    payload: _UsagePayload = msgspec.field(default_factory=_UsagePayload)


_envelopes: Final = msgspec.json.Decoder(list[TimedEnvelope])
_known_events: Final = msgspec.json.Decoder(list[KnownEvent])
_usages: Final = msgspec.json.Decoder(list[_LlmUsage])

_SUMMARY_TYPES: Final = frozenset(
    (
        "run_started",
        "run_updated",
        "budget_updated",
        "run_completed",
        "error",
        "approval_request",
        "approval_response",
        "cancel_requested",
    )
)
"""Types whose payload a summary needs; node types too while the run is unfinished."""

_NODE_TYPES: Final = frozenset(("node_enter", "node_exit"))

_SLICED_FROM_END: Final = 8
"""Lines this close to the end are sliced out directly, without splitting the block."""

_DECODE_ERRORS: Final = (msgspec.DecodeError, RecursionError, ValueError, OverflowError)


def fold_block(data: bytes, start: int, builder: SummaryBuilder, *, final: bool = False) -> None:
    """Fold the complete lines of ``data`` (which starts at file offset ``start``).

    ``final`` says nothing will be folded into ``builder`` after this block (a
    listing reads a ledger once): only its summary counts, so of the nodes
    still open only the last one (its ``current_node``) need be known. Where the
    last node line is an entry that opens one, that line alone is decoded; a
    builder that goes on (a follower) is told every node still open.

    Every line is validated, counted and checked for ``seq`` order; only the
    lines whose type a summary needs are decoded whole. Where the block
    holds anything the fast path could misjudge (damage, blank lines, two
    values on a line, bytes that are not UTF-8, events out of order or of
    another run) it is folded line by line, the way every reader reads it.
    """
    if not _fold_fast(data, builder, final=final):
        for line in LineAssembler(start).feed(data):
            builder.add_item(line.item)


def _fold_fast(data: bytes, builder: SummaryBuilder, *, final: bool = False) -> bool:
    """Fold a clean block; ``False`` (having changed nothing) if it is not one."""
    if not data.endswith(b"\n") or not _is_utf8(data):
        return False
    try:  # one value a line, each line one value: see the module's docstring
        envelopes = _envelopes.decode(b"".join((b"[", data.replace(b"\n", b",\n")[:-2], b"]")))
    except _DECODE_ERRORS:
        return False
    count = len(envelopes)
    if not count:
        return False
    first = envelopes[0]
    run_id = first.run_id
    expected = first.seq
    needed: list[int] = []
    calls: list[int] = []
    for number, envelope in enumerate(envelopes):  # one pass: in order, of one run, what to decode
        if envelope.seq != expected or envelope.run_id != run_id:
            return False
        if envelope.type in _SUMMARY_TYPES:
            needed.append(number)
        elif envelope.type == "llm_call":
            calls.append(number)
        expected += 1
    nodes = _node_lines_after_the_end(envelopes, needed)
    last_node = -1
    if final and nodes and envelopes[nodes[-1]].type == "node_enter":
        last_node = nodes[-1]  # it alone, if it opens a node: that node is the current one
        nodes = [last_node]
    if nodes:
        needed = sorted(needed + nodes)
    if not needed or needed[-1] != count - 1:
        needed.append(count - 1)  # the last event's time is the run's last_event_at
    events = _decode_needed(_pick_lines(data, count, needed))
    if events is None:
        return False  # cannot happen for lines their envelopes passed; never guessed at
    if calls and calls[-1] == needed[-1]:
        calls.pop()  # the last line, decoded whole for its time: it counts as it is
    usages: list[_LlmUsage] = []
    if calls:
        try:
            usages = _usages.decode(
                b"".join((b"[", b",".join(_pick_lines(data, count, calls)), b"]"))
            )
        except _DECODE_ERRORS:
            return False  # a call the typed decode refuses: read as every reader reads it
    if last_node != -1:
        entered = events[needed.index(last_node)]
        if not (isinstance(entered, NodeEnter) and entered.payload.node_id):
            return _fold_fast(data, builder)  # it opens nothing: every node line is folded
    if not events[-1].time or not builder.note_block(count, first.seq, run_id):
        return False  # a last event without a time: an earlier one's counts
    for event in events:
        builder.apply(event)
    builder.clock_block([envelope.time for envelope in envelopes], first.seq)
    for call in usages:
        builder.add_call(call.payload)
    return True


def _decode_needed(lines: list[bytes]) -> list[RunEvent] | None:
    """The events ``lines`` hold, each as :func:`~ledger_reader.decode.decode_line` gives it.

    Lines of known types, each well-formed, are decoded in one call, as one
    JSON array: each value decodes exactly as the line alone would (the typed
    decode ``decode_line`` tries first). If any does not (an unknown type, a
    payload that does not fit), every line is decoded by itself.
    """
    if len(lines) > 1:
        try:
            return list(_known_events.decode(b"".join((b"[", b",".join(lines), b"]"))))
        except _DECODE_ERRORS:
            pass
    events: list[RunEvent] = []
    for raw in lines:
        event = decode_line(raw)
        if event is None or isinstance(event, DamagedLine):
            return None
        events.append(event)
    return events


def _is_utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def _node_lines_after_the_end(envelopes: list[TimedEnvelope], needed: list[int]) -> list[int]:
    """The node lines after the last ``run_completed`` (all of them in an unfinished run).

    A ``run_completed`` closes every node; the nodes still open after it are
    found by folding these lines whole, by their ``node_id`` as every reader
    does (parallel tool calls close out of order, so nesting cannot tell).
    """
    after = 0
    for number in reversed(needed):
        if envelopes[number].type == "run_completed":
            after = number + 1
            break
    return [
        number for number in range(after, len(envelopes)) if envelopes[number].type in _NODE_TYPES
    ]


def _pick_lines(data: bytes, count: int, needed: list[int]) -> list[bytes]:
    """The bytes of the ``needed`` lines (in order) of ``data``, one value on each line.

    The first line and the last few are sliced out directly; only a block
    whose summary needs a line in the middle is split whole.
    """
    lowest = needed[1] if needed[0] == 0 and len(needed) > 1 else needed[0]
    if lowest < count - _SLICED_FROM_END:
        lines = data.split(b"\n")
        return [lines[number] for number in needed]
    picked: list[bytes] = []
    end = len(data) - 1
    for number in range(count - 1, lowest - 1, -1):
        line_start = data.rfind(b"\n", 0, end) + 1
        if number in needed:
            picked.append(data[line_start:end])
        end = line_start - 1
    if needed[0] == 0 and lowest != 0:
        picked.append(data[: data.find(b"\n")])
    picked.reverse()
    return picked


__all__ = ["fold_block"]
