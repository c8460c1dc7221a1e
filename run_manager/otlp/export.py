"""Taking one export request without stalling the server: large ones decoded off the event
loop and ingested a slice of traces at a time.

The attach API, its streams, OTLP and the manager's own runs share one event loop. A
request of 120,000 spans (62 MB) took 2 to 8 s of it to decode and place, during which no
other client was answered. A request of :data:`LARGE` bytes or more is decoded in a worker
thread (the loop has the interpreter back every few milliseconds) and placed in slices of
whole traces of about :data:`SLICE_SPANS` spans, other clients answered between slices. A
small request, most of them (an exporter sending each span as it ends sends one a
request), is taken at once: a thread's hand-off would cost more than its decoding.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Final

from ledger_reader.collector import collector_held
from run_manager.otlp.ingest import IngestResult, OtlpIngest
from run_manager.otlp.spans import Decoded, Span

LARGE: Final = 256 * 1024
"""Bytes from which a request is decoded off the loop and placed in slices."""
SLICE_SPANS: Final = 50
"""Spans placed at a time: a slice may make as many ledgers as it holds traces."""
TURN: Final = 0.02
"""Seconds of placing after which the loop's other clients get a turn."""
PAUSE: Final = 0.003
"""Seconds of that turn: a request takes several steps of the loop (accept, read, answer),
and one step each turn would keep it waiting a turn a step."""


def _decode_held(
    decode: Callable[[bytes], Decoded], body: bytes
) -> tuple[Decoded, list[list[Span]]]:
    """The request decoded, and its spans cut into slices: both in the worker thread
    (grouping 180,000 spans by trace on the loop held it 100 ms)."""
    with collector_held():
        decoded = decode(body)
        return decoded, list(_slices(decoded.spans))


async def take_export(
    ingest: OtlpIngest, decode: Callable[[bytes], Decoded], body: bytes
) -> IngestResult:
    """Decode ``body`` and place its spans; what the request did.

    Raises:
        UndecodableRequest, RequestTooLarge: from ``decode``.
        LedgerWriteFailed: a slice could not be written (the slices before it were; an
            exporter's retry finds their spans recorded and counts them as duplicates).
    """
    if len(body) < LARGE:
        with collector_held():
            return ingest.ingest(decode(body))
    decoded, slices = await asyncio.to_thread(_decode_held, decode, body)
    taken = IngestResult(rejected=decoded.rejected, reason=decoded.reason)
    turn_ends = time.monotonic() + TURN
    for spans in slices:
        result = ingest.ingest(Decoded(spans))
        taken.accepted += result.accepted
        taken.duplicates += result.duplicates
        taken.rejected += result.rejected
        taken.reason = result.reason or taken.reason
        taken.runs |= result.runs
        if time.monotonic() >= turn_ends:
            # Other clients' turn: long enough for a request's few steps, not just one.
            await asyncio.sleep(PAUSE)
            turn_ends = time.monotonic() + TURN
    return taken


def _slices(spans: list[Span]) -> Iterator[list[Span]]:
    """``spans`` in slices of whole traces, each of about :data:`SLICE_SPANS` spans."""
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    piece: list[Span] = []
    for trace_spans in by_trace.values():
        piece += trace_spans
        if len(piece) >= SLICE_SPANS:
            yield piece
            piece = []
    if piece:
        yield piece


__all__ = ["LARGE", "SLICE_SPANS", "take_export"]
