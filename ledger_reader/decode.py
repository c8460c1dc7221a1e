"""Turning ledger lines into events, whatever the lines hold.

The fast path is one msgspec decode into the tagged union of known events.
Anything that does not fit takes the slow path, which decides between an
:class:`~ledger_reader.events.UnknownEvent` (a JSON object with a ``type``:
kept) and a :class:`~ledger_reader.events.DamagedLine` (anything else:
counted, with its offset). Nothing here raises on bad input.

What makes a line an event is its :class:`LineEnvelope`: a JSON object with
a non-empty string ``type`` (and ``seq`` and ``run_id``, where present, an
integer and a string). A well-formed line whose payload holds a number no
float can hold (``1e400``) is still an event, kept as an unknown one: the
fast block fold (:mod:`ledger_reader.block_fold`) judges lines by their
envelope alone, and the two must never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Final

import msgspec

from ledger_reader.events import (
    EVENT_TYPES,
    MAX_LINE_BYTES,
    DamagedLine,
    KnownEvent,
    LedgerItem,
    RunEvent,
    UnknownEvent,
)


class LineEnvelope(msgspec.Struct, gc=False):
    """Just enough of a line to count it as an event, and to check its order.

    Decoding into this validates the whole line as JSON while building
    almost nothing; the payload is skipped, not decoded.
    """

    type: Annotated[str, msgspec.Meta(min_length=1)]
    seq: int = 0
    run_id: str = ""


class TimedEnvelope(LineEnvelope, gc=False):
    """An envelope with the event's time: for a reader that checks the clock too."""

    time: str = ""


_typed: Final = msgspec.json.Decoder(KnownEvent)
_untyped: Final = msgspec.json.Decoder()
_envelope: Final = msgspec.json.Decoder(LineEnvelope)
_timed_envelope: Final = msgspec.json.Decoder(TimedEnvelope)

_RECOVERY_ATTEMPTS: Final = 64
"""How many ``{"`` positions inside a damaged line are tried as a new start."""

_DECODE_ERRORS: Final = (msgspec.DecodeError, RecursionError, ValueError, OverflowError)


def decode_line(line: bytes, offset: int = 0) -> LedgerItem | None:
    """Decode one line (without its ``\\n``); ``None`` for a blank line.

    Args:
        line: the bytes of the line.
        offset: where the line starts in its file, for the damage report.
    """
    try:
        event: RunEvent = _typed.decode(line)
    except msgspec.ValidationError:
        pass
    except _DECODE_ERRORS:
        if not line.strip():
            return None
        return _damaged(line, offset, "not valid JSON")
    else:
        return event
    return _decode_loose(line, offset)


def _decode_loose(line: bytes, offset: int) -> LedgerItem | None:
    """The slow path: valid JSON that is not a well-formed known event."""
    try:
        raw = _untyped.decode(line)
    except msgspec.ValidationError:  # well-formed, but a number out of any float's range
        return _envelope_event(line, offset)
    except _DECODE_ERRORS:
        return _damaged(line, offset, "not valid JSON")
    item = _event_from_object(raw)
    if isinstance(item, str):
        return _damaged(line, offset, item)
    return item


def _event_from_object(raw: Any) -> RunEvent | str:
    """Build the best event a decoded JSON value allows, or say why none."""
    if not isinstance(raw, dict):
        return "not a JSON object"
    kind = raw.get("type")
    if not isinstance(kind, str) or not kind:
        return "no event type"
    cls = EVENT_TYPES.get(kind)
    if cls is not None:
        fields = dict(raw)
        if fields.get("payload") is None:
            fields.pop("payload", None)
        try:
            return msgspec.convert(fields, cls, strict=False)  # type: ignore[return-value]
        except (msgspec.ValidationError, *_DECODE_ERRORS):
            pass
    run_id = raw.get("run_id")
    seq = raw.get("seq")
    time = raw.get("time")
    return UnknownEvent(
        run_id=run_id if isinstance(run_id, str) else "",
        seq=seq if isinstance(seq, int) and not isinstance(seq, bool) else 0,
        time=time if isinstance(time, str) else "",
        type=kind,
        payload=raw.get("payload"),
    )


def _envelope_event(line: bytes, offset: int) -> LedgerItem:
    """A line whose payload cannot be decoded, as an event of its envelope (else damage)."""
    envelope: LineEnvelope
    try:
        envelope = _timed_envelope.decode(line)
    except _DECODE_ERRORS:
        try:
            envelope = _envelope.decode(line)
        except _DECODE_ERRORS:
            return _damaged(line, offset, "not valid JSON")
    return UnknownEvent(
        run_id=envelope.run_id,
        seq=envelope.seq,
        time=envelope.time if isinstance(envelope, TimedEnvelope) else "",
        type=envelope.type,
    )


def _damaged(line: bytes, offset: int, reason: str) -> DamagedLine:
    """Report a damaged line, keeping a whole event it may end in."""
    return DamagedLine(
        offset=offset, length=len(line), reason=reason, recovered=_recover(line, offset)
    )


def _recover(line: bytes, offset: int) -> RunEvent | None:
    """Find a whole event at the end of a damaged line.

    A writer that reopens a ledger after a crash may append straight after a
    torn line, so ``{"run_id":"r","se{"run_id":"r","seq":4,...}`` holds one
    good event. Candidates are tried from the left, so the longest suffix
    that is one complete event wins.
    """
    start = 1
    for _ in range(_RECOVERY_ATTEMPTS):
        at = line.find(b'{"', start)
        if at == -1:
            return None
        suffix = line[at:]
        try:
            event: RunEvent = _typed.decode(suffix)
        except msgspec.ValidationError:
            try:
                candidate = _event_from_object(_untyped.decode(suffix))
            except _DECODE_ERRORS:
                candidate = "not valid JSON"
            if not isinstance(candidate, str):
                return candidate
        except _DECODE_ERRORS:
            pass
        else:
            return event
        start = at + 1
    return None


def over_long_line(offset: int, length: int, limit: int = MAX_LINE_BYTES) -> DamagedLine:
    """The report for a line too long to read."""
    return DamagedLine(
        offset=offset,
        length=length,
        reason=f"line of {length} bytes is over the {limit // (1024 * 1024)} MiB limit",
    )


def iter_events(items: Iterable[LedgerItem | None]) -> Iterator[RunEvent]:
    """The events among ``items``, recovered ones included, in file order."""
    for item in items:
        if item is None:
            continue
        if isinstance(item, DamagedLine):
            if item.recovered is not None:
                yield item.recovered
        else:
            yield item
