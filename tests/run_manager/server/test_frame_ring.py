"""The attach server's feed: frames made once, on first read, the same as made at once."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ledger_reader import LlmChunk, RunEvent, UnknownEvent
from ledger_reader.events import ChunkPayload
from run_manager.hub import LedgerLines
from run_manager.server.frame_ring import FrameRing

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


def ring_state(ring: FrameRing) -> tuple[Any, ...]:
    entries = ring.after(ring.oldest - 1, limit=10**6)
    frames = ring.frames_after(ring.oldest - 1, limit=10**6)
    return ring.head, ring.oldest, ring._bytes, entries, frames


@pytest.mark.parametrize("seed", range(12))
def test_batches_leave_the_ring_as_their_events_one_by_one_do(seed: int) -> None:
    # Batches are written as slices where they fit before the ring's end and event by event
    # where they wrap past it; either way the ring must hold what single adds leave: the
    # same entries, frames, bytes, and the same events shed for the byte bound.
    chooser = random.Random(seed)
    size = chooser.choice([5, 8, 13])
    one = FrameRing(max_events=size, max_bytes=chooser.choice([40, 90, 10**6]))
    many = FrameRing(max_events=size, max_bytes=one.max_bytes)
    seqs: dict[str, int] = {}
    for _ in range(40):
        run_id = chooser.choice(["run_a", "run_b"])
        batch: list[RunEvent] = []
        lines: list[bytes] = []
        for _ in range(chooser.randrange(1, size + 3)):
            seqs[run_id] = seq = seqs.get(run_id, 0) + 1
            if chooser.random() < 0.3:
                batch.append(UnknownEvent(run_id=run_id, seq=seq, type="otel_span"))
            else:
                batch.append(chunk(run_id, seq))
            lines.append(b"y" * chooser.randrange(0, 30))
        for event, line in zip(batch, lines, strict=True):
            one.add(event, line)
        many.add_many(batch, lines)
        assert ring_state(many) == ring_state(one)
    assert many.head == one.head > size  # it wrapped, more than once


def test_a_batch_with_a_line_missing_is_refused() -> None:
    ring = FrameRing(max_events=8)
    with pytest.raises(ValueError, match="one line per event"):
        ring.add_many([chunk("run_a", 1), chunk("run_a", 2)], [b"a"])
    assert (ring.head, ring.after(0)) == (0, [])


def test_an_unknown_event_keeps_its_own_type_in_a_batch() -> None:
    ring = FrameRing(max_events=8)
    ring.add_many(
        [chunk("run_a", 1), UnknownEvent(run_id="run_a", seq=2, type="otel_span")], [b"a", b"b"]
    )
    assert [entry.type for entry in ring.after(0) or []] == ["llm_chunk", "otel_span"]


def as_block(lines: list[bytes]) -> LedgerLines:
    return LedgerLines(b"".join(line + b"\n" for line in lines), len(lines))


@pytest.mark.parametrize("seed", range(16))
def test_batches_kept_as_one_buffer_read_as_their_events_one_by_one(seed: int) -> None:
    # A batch given as LedgerLines is kept uncut until a stream reads one of its lines or the
    # byte bound needs their sizes. Streams read from random places (a stream attaching, or
    # reconnecting with Last-Event-ID in the middle of a batch), blocks are written over in
    # part by wraps and shed in part for bytes: whatever is read must be what single adds
    # leave, every event once and in order, and the bytes counted exact once read.
    chooser = random.Random(seed)
    size = chooser.choice([5, 8, 13, 64])
    one = FrameRing(max_events=size, max_bytes=chooser.choice([40, 90, 300, 10**6]))
    many = FrameRing(max_events=size, max_bytes=one.max_bytes)
    seqs: dict[str, int] = {}
    for _ in range(60):
        run_id = chooser.choice(["run_a", "run_b"])
        batch: list[RunEvent] = []
        lines: list[bytes] = []
        for _ in range(chooser.randrange(1, size + 3)):
            seqs[run_id] = seq = seqs.get(run_id, 0) + 1
            batch.append(chunk(run_id, seq))
            lines.append(b"%s:%d:" % (run_id.encode(), seq) + b"y" * chooser.randrange(0, 30))
        for event, line in zip(batch, lines, strict=True):
            one.add(event, line)
        many.add_many(batch, as_block(lines))
        assert (many.head, many.oldest) == (one.head, one.oldest)
        assert many._bytes >= one._bytes  # a block written over in part is held until it goes
        if chooser.random() < 0.5:
            cursor = chooser.randrange(max(one.oldest - 1, 0), one.head + 1)
            limit = chooser.randrange(1, size + 2)
            assert many.after(cursor, limit) == one.after(cursor, limit)
            assert many.frames_after(cursor, limit) == one.frames_after(cursor, limit)
    assert ring_state(many) == ring_state(one)  # read whole: every block cut, bytes exact
    entries = many.after(many.oldest - 1, limit=10**6) or []
    assert [entry.number for entry in entries] == list(range(many.oldest, many.head + 1))
    for entry in entries:
        assert entry.line.startswith(b"%s:%d:" % (entry.run_id.encode(), entry.seq))
    assert many._bytes == sum(len(entry.line) for entry in entries)
    assert many.head > size  # it wrapped


def test_a_block_is_not_cut_until_a_stream_reads_it() -> None:
    ring = FrameRing(max_events=16)
    lines = as_block([b"a1", b"a2", b"a3"])
    ring.add_many([chunk("run_a", seq) for seq in (1, 2, 3)], lines)
    assert not lines.is_split
    assert ring._bytes == 6
    assert ring.number_of("run_a", 2) == 2  # Last-Event-ID is found without the lines
    assert not lines.is_split
    assert ring.frames_after(1) == (3, [frame("run_a", 2, b"a2"), frame("run_a", 3, b"a3")])
    assert lines.is_split
    assert ring._bytes == 6


def test_a_buffer_that_does_not_hold_its_lines_is_refused_when_read() -> None:
    for data, count in [(b"a\nb\n", 3), (b"a\nb", 2), (b"a\nb\nc\n", 2)]:
        lines = LedgerLines(data, count)
        assert len(lines) == count
        with pytest.raises(ValueError, match="whole lines"):
            lines.lines()
    assert list(LedgerLines(b"", 0)) == []
    assert LedgerLines(b"ab\n\ncd\n", 3)[1:] == [b"", b"cd"]


@pytest.mark.parametrize("seed", range(8))
def test_a_runs_frames_and_where_the_ring_reaches_back_to_say_what_its_entries_say(
    seed: int,
) -> None:
    # A follower (or one reconnecting) reads its run's frames straight from the ring: the
    # same frames, past the same seq, as the ring's entries of that run say, however runs
    # interleave, batches come and the ring wraps; and the ring reaches back to seq `after`
    # exactly when it still holds every one of the run's events after it.
    chooser = random.Random(seed)
    ring = FrameRing(max_events=chooser.choice([5, 16, 64]))
    seqs = {"run_a": 0, "run_b": 0}
    for _ in range(chooser.randint(1, 25)):
        run_id = chooser.choice(["run_a", "run_b"])
        count = chooser.randint(1, 6)
        events = [chunk(run_id, seqs[run_id] + n) for n in range(1, count + 1)]
        seqs[run_id] += count
        lines = [b"%s-%d" % (run_id.encode(), e.seq) for e in events]
        if chooser.random() < 0.5:
            ring.add_many(events, lines)
        else:
            for event, line in zip(events, lines, strict=True):
                ring.add(event, line)
    held = ring.after(ring.oldest - 1, limit=10**6) or []
    for run_id, last in seqs.items():
        mine = [e for e in held if e.run_id == run_id]
        for after in range(last + 1):
            for cursor in range(ring.oldest - 1, ring.head + 1):
                want = [e for e in mine if e.number > cursor and e.seq > after]
                found = ring.run_frames_after(run_id, cursor, after, limit=10**6)
                assert found == (
                    ring.head,
                    b"".join(b"id: %d\ndata: %s\n\n" % (e.seq, e.line) for e in want),
                    want[-1].seq if want else after,
                    False,
                )
            reach = ring.reaches_back(run_id, after)
            whole = bool(mine) and mine[0].seq <= after + 1 and seqs[run_id] == mine[-1].seq
            if reach is not None:
                assert whole
                got = ring.run_frames_after(run_id, reach, after, limit=10**6)
                assert got is not None
                assert got[1].count(b"id: ") == last - after
