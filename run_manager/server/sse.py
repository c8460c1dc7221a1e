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


def damaged_frame(offset: int, reason: str, raw: bytes, length: int | None = None) -> bytes:
    """A ledger line that is not an event: said so, with any event it ended in (LEDGER.md)."""
    length = len(raw) if length is None else length
    data: dict[str, Any] = {"offset": offset, "length": length, "reason": reason}
    if len(raw) <= MAX_LINE_BYTES:
        item = decode_line(raw, max(offset, 0))
        if isinstance(item, DamagedLine):
            data["reason"] = item.reason
            if item.recovered is not None:
                data["recovered"] = msgspec.Raw(encode_event(item.recovered)[:-1])
    return sse_frame(None, _encoder.encode(data), "damaged")


def head_of(line: bytes) -> LineHead | None:
    """The seq and type of a ledger line, or ``None`` for a damaged (or blank) one.

    Decoded as every reader decodes a line (``decode_line``), so the server
    calls a line damaged exactly where ``runtop show`` and the store do.
    """
    if len(line) > MAX_LINE_BYTES:
        return None
    item = decode_line(line)
    if item is None or isinstance(item, DamagedLine):
        return None
    return LineHead(item.seq, item.type)


__all__ = ["SSE_HEADERS", "LineHead", "damaged_frame", "head_of", "sse_frame"]
