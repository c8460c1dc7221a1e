"""Server-sent event framing for the attach API: ledger lines in, ``text/event-stream`` out.

A per-run frame is the ledger line as written, with ``id: <seq>``; a line
that is not an event becomes a ``damaged`` frame saying where it was and
carrying any whole event it ended in (LEDGER.md).
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from ledger_reader import MAX_LINE_BYTES, DamagedLine, decode_line, encode_event

SSE_HEADERS: Final = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}


class LineHead(msgspec.Struct):
    """The part of a ledger line a stream needs to label it."""

    seq: int = 0
    type: str = ""


_head_decoder: Final = msgspec.json.Decoder(LineHead)
_encoder: Final = msgspec.json.Encoder()


def sse_frame(frame_id: str | int | None, data: bytes, event: str | None = None) -> bytes:
    """One SSE frame; ``data`` must hold no newline (a ledger line never does)."""
    parts = []
    if event is not None:
        parts.append(b"event: %s\n" % event.encode())
    if frame_id is not None:
        parts.append(b"id: %s\n" % str(frame_id).encode())
    parts.append(b"data: %s\n\n" % data)
    return b"".join(parts)


def damaged_frame(offset: int, reason: str, raw: bytes) -> bytes:
    """A ledger line that is not an event: said so, with any event it ended in (LEDGER.md)."""
    data: dict[str, Any] = {"offset": offset, "length": len(raw), "reason": reason}
    if len(raw) <= MAX_LINE_BYTES:
        item = decode_line(raw, max(offset, 0))
        if isinstance(item, DamagedLine):
            data["reason"] = item.reason
            if item.recovered is not None:
                data["recovered"] = msgspec.Raw(encode_event(item.recovered)[:-1])
    return sse_frame(None, _encoder.encode(data), "damaged")


def head_of(line: bytes) -> LineHead | None:
    """The seq and type of a ledger line, or ``None`` for a damaged one."""
    if len(line) > MAX_LINE_BYTES:
        return None
    try:
        return _head_decoder.decode(line)
    except msgspec.DecodeError:
        return None


def line_frame(line: bytes, offset: int) -> tuple[bytes, LineHead | None]:
    """One ledger line as a per-run frame (``id: <seq>``), or a damaged-line frame."""
    head = head_of(line)
    if head is None:
        too_long = len(line) > MAX_LINE_BYTES
        reason = f"line of {len(line)} bytes is over the limit" if too_long else "not an event"
        return damaged_frame(offset, reason, line), None
    return sse_frame(head.seq, line), head


__all__ = ["SSE_HEADERS", "LineHead", "damaged_frame", "head_of", "line_frame", "sse_frame"]
