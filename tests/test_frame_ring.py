"""The attach server's feed: frames made once, on first read, the same as made at once."""

from __future__ import annotations

import pytest

from ledger_reader import LlmChunk
from ledger_reader.events import ChunkPayload
from run_manager.frame_ring import FrameRing

pytestmark = pytest.mark.timeout(30)


def chunk(run_id: str, seq: int) -> LlmChunk:
    return LlmChunk(run_id=run_id, seq=seq, payload=ChunkPayload(delta="x"))


def frame(run_id: str, seq: int, line: bytes) -> bytes:
    return b"id: %s:%d\ndata: %s\n\n" % (run_id.encode(), seq, line)


def test_frames_read_after_a_wrap_are_the_events_frames_in_order() -> None:
    ring = FrameRing(max_events=8)
    ring.add_many([chunk("run_a", seq) for seq in range(1, 6)], [b"a%d" % s for s in range(1, 6)])
    assert ring.frames_after(0) == (5, [frame("run_a", s, b"a%d" % s) for s in range(1, 6)])
    for seq in range(1, 8):  # wraps: the ring's slots are reused
        ring.add(chunk("run_b", seq), b"b%d" % seq)
    assert ring.frames_after(0) is None  # the first events left the ring
    head, frames = ring.frames_after(4) or (0, [])
    expected = [frame("run_a", 5, b"a5")] + [frame("run_b", s, b"b%d" % s) for s in range(1, 8)]
    assert (head, frames) == (12, expected)
    assert ring.frames_after(4) == (12, expected)  # read again: the same frames
    entries = ring.after(10) or []
    assert [(e.number, e.run_id, e.seq, e.line) for e in entries] == [
        (11, "run_b", 6, b"b6"),
        (12, "run_b", 7, b"b7"),
    ]


def test_a_batch_sheds_by_bytes_as_single_adds_do() -> None:
    one, many = FrameRing(max_events=100, max_bytes=25), FrameRing(max_events=100, max_bytes=25)
    events = [chunk("run_a", seq) for seq in range(1, 11)]
    lines = [b"x" * 10] * 10
    for event, line in zip(events, lines, strict=True):
        one.add(event, line)
    many.add_many(events, lines)
    assert (one.oldest, one.head) == (many.oldest, many.head) == (9, 10)
    assert (
        one.frames_after(8)
        == many.frames_after(8)
        == (10, [frame("run_a", 9, b"x" * 10), frame("run_a", 10, b"x" * 10)])
    )
