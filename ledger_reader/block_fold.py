"""The fast block fold: a block of complete ledger lines into a summary, at C speed.

msgspec's ``decode_lines`` validates every line of a block into a tiny probe
struct; only the lines whose type a summary needs are decoded whole. Where
any line is damaged the block is folded line by line through the one line
reader, so damage is counted with its offset and recovered where it can be.
"""

from __future__ import annotations

import operator
from typing import Final

import msgspec

from ledger_reader.decode import decode_line
from ledger_reader.events import DamagedLine
from ledger_reader.lines import LineAssembler
from ledger_reader.summary import SummaryBuilder


class _Probe(msgspec.Struct, gc=False):
    """Just enough of a line to count it and decide whether to decode it whole.

    Decoding into this validates the whole line (it is damaged exactly when
    this fails) while building almost nothing, so msgspec's ``decode_lines``
    checks a whole small ledger at C speed.
    """

    type: str
    seq: int = 0
    run_id: str = ""


_probe = msgspec.json.Decoder(_Probe)
_TYPE_OF: Final = operator.attrgetter("type")
_SEQ_OF: Final = operator.attrgetter("seq")
_RUN_ID_OF: Final = operator.attrgetter("run_id")

_SUMMARY_TYPES: Final = (
    "run_started",
    "run_completed",
    "error",
    "approval_request",
    "approval_response",
    "cancel_requested",
)
"""Types whose payload a summary needs; node types too while the run is unfinished."""
_SUMMARY_TYPE_SET: Final = frozenset(_SUMMARY_TYPES)

_SLICED_FROM_END: Final = 8
"""Lines this close to the end are sliced out directly, without splitting the block."""


def fold_block(data: bytes, start: int, builder: SummaryBuilder) -> None:
    """Fold the complete lines of ``data`` (which starts at file offset ``start``).

    Every line is validated, counted and checked for ``seq`` order; only the
    lines whose type a summary needs are decoded whole. Where any line is
    damaged the block is folded line by line, so the damage is counted with
    its offset and an event glued to a torn line is recovered.
    """
    try:
        probes = _probe.decode_lines(data)
    except (msgspec.DecodeError, RecursionError, ValueError, OverflowError):
        _fold_line_by_line(data, start, builder)
        return
    count = len(probes)
    if not count:
        return
    types = list(map(_TYPE_OF, probes))
    present = _SUMMARY_TYPE_SET.intersection(types)
    needed = [number for kind in present for number in _positions(types, kind)]
    if "run_completed" not in present:
        node = _innermost_open_node(types)
        if node is not None:
            needed.append(node)
    needed.sort()
    if not needed or needed[-1] != count - 1:
        needed.append(count - 1)
    lines = _pick_lines(data, count, needed)
    if lines is None:
        _fold_line_by_line(data, start, builder)
        return
    seqs = list(map(_SEQ_OF, probes))
    run_ids = set(map(_RUN_ID_OF, probes))
    first = seqs[0]
    if (
        len(run_ids) == 1
        and seqs == list(range(first, first + count))
        and builder.note_block(count, first, run_ids.pop())
    ):
        # The usual case: one run, in order. Count it at once; decode only what matters.
        for number in needed:
            event = decode_line(lines[number])
            if event is not None and not isinstance(event, DamagedLine):
                builder.apply(event)
        return
    for number, probe in enumerate(probes):
        if number in lines:
            builder.add_item(decode_line(lines[number]))
        else:
            builder.note(probe.seq, probe.run_id)


def _positions(items: list[str], wanted: str) -> list[int]:
    """Where ``wanted`` occurs in ``items`` (``list.index`` scans in C: most kinds are absent)."""
    found: list[int] = []
    at = -1
    try:
        while True:
            at = items.index(wanted, at + 1)
            found.append(at)
    except ValueError:
        return found


def _innermost_open_node(types: list[str]) -> int | None:
    """The line of the node still open at the end (nodes nest: enter A, enter B, exit B, exit A)."""
    depth = 0
    for number in range(len(types) - 1, -1, -1):
        kind = types[number]
        if kind == "node_exit":
            depth += 1
        elif kind == "node_enter":
            if depth == 0:
                return number
            depth -= 1
    return None


def _pick_lines(data: bytes, count: int, needed: list[int]) -> dict[int, bytes] | None:
    """The bytes of the ``needed`` non-blank lines of ``data`` (which holds ``count`` of them).

    The first and the last line are sliced out directly; only a block whose
    summary needs a line in the middle is split whole. ``None`` if the lines
    do not match the count (the caller then goes line by line).
    """
    lowest = needed[1] if needed[0] == 0 and len(needed) > 1 else needed[0]
    if lowest >= count - _SLICED_FROM_END and data[:1] == b"{" and data[-2:] == b"}\n":
        picked: dict[int, bytes] = {}
        end = len(data) - 1
        for number in range(count - 1, lowest - 1, -1):
            start = data.rfind(b"\n", 0, end) + 1
            if data[start : start + 1] != b"{":
                break  # a blank line: the slow way below
            picked[number] = data[start:end]
            end = start - 1
        else:
            if needed[0] == 0:
                picked[0] = data[: data.find(b"\n")]
            return picked
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    if len(lines) != count:  # blank lines: decode_lines skipped them
        lines = [raw for raw in lines if raw.strip()]
    if len(lines) != count:
        return None
    return {number: lines[number] for number in needed}


def _fold_line_by_line(data: bytes, start: int, builder: SummaryBuilder) -> None:
    for line in LineAssembler(start).feed(data):
        builder.add_item(line.item)


__all__ = ["fold_block"]
