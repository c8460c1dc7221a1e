"""The head and tail summary never contradicts a full forward read (hypothesis).

Ledgers are built from valid lines, torn lines (a line cut short, alone or
with the next one glued on, as a writer reopening after a crash leaves
it), garbage and a byte-order mark. Read with windows small enough that
most of them are summarised from head and tail, the summary must agree
with folding every line on the status, the pending approval and the event
count, or say it is ``partial`` and leave the count ``None``.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger_reader import SummaryBuilder
from ledger_reader.head_tail import read_ledger_state
from ledger_reader.lines import BOM, read_ledger_lines

RUN_ID = "run_20261130T020000000_abcdefabcdefabcd"

_KINDS = st.sampled_from(
    [
        ("llm_chunk", {"index": 0, "delta": "some text"}),
        ("tool_call", {"call_id": "call_1", "name": "search", "arguments": {"q": "x"}}),
        ("approval_request", {"approval_id": "a1", "prompt": "ok?"}),
        ("approval_request", {"approval_id": "a2", "prompt": "sure?"}),
        ("approval_response", {"approval_id": "a1", "approved": True}),
        ("approval_response", {"approval_id": "a2", "approved": False}),
        ("cancel_requested", {"reason": "user"}),
        ("node_enter", {"node_id": "tool:search#1"}),
        ("node_exit", {"node_id": "tool:search#1"}),
        ("error", {"message": "retrying"}),
        ("run_completed", {"status": "ok"}),
        ("run_completed", {"status": "error", "error": "boom"}),
        ("run_completed", {"status": "cancelled"}),
        ("run_completed", {"status": "suspended"}),
    ]
)

# Each piece: ("event", kind, padding) | ("torn", kind, cut) | ("glued", kind, cut) | garbage
_PIECES = st.one_of(
    st.tuples(st.just("event"), _KINDS, st.integers(0, 300)),
    st.tuples(st.just("torn"), _KINDS, st.integers(1, 60)),
    st.tuples(st.just("glued"), _KINDS, st.integers(1, 60)),
    st.tuples(st.just("garbage"), st.binary(min_size=1, max_size=40), st.just(0)),
)


def _event(seq: int, kind: tuple[str, dict[str, Any]], padding: int) -> bytes:
    name, payload = kind
    record = {
        "run_id": RUN_ID,
        "seq": seq,
        "time": f"2026-11-30T02:00:00.{seq:06d}Z",
        "type": name,
        "payload": {**payload, "pad": "p" * padding},
    }
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def build(bom: bool, pieces: list[tuple[str, Any, int]], torn_end: int) -> bytes:
    seq = 1
    parts = [BOM] if bom else []
    parts.append(_event(seq, ("run_started", {"skill": "prop"}), 0))
    glue = b""
    for shape, value, number in pieces:
        if shape == "garbage":
            parts.append(glue + value.replace(b"\n", b" ") + b"\n")
            glue = b""
            continue
        seq += 1
        line = _event(seq, value, number if shape == "event" else 0)
        if shape == "event":
            parts.append(glue + line)
            glue = b""
        elif shape == "torn":
            parts.append(glue + line[: min(number, len(line) - 2)] + b"\n")
            glue = b""
        else:  # the next line is glued straight after the cut one
            glue = line[: min(number, len(line) - 2)]
    parts.append(glue)
    if torn_end:
        parts.append(_event(seq + 1, ("llm_chunk", {"delta": "x"}), 0)[:torn_end])
    return b"".join(parts)


def full_read(path: str) -> Any:
    builder = SummaryBuilder(RUN_ID, path)
    for line in read_ledger_lines(path):
        builder.add_item(line.item)
    return builder.summary()


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    bom=st.booleans(),
    pieces=st.lists(_PIECES, max_size=40),
    torn_end=st.integers(0, 30),
    window=st.sampled_from([64, 200, 500, 1500, 100_000]),
)
def test_head_and_tail_agree_with_a_full_read(
    bom: bool, pieces: list[tuple[str, Any, int]], torn_end: int, window: int
) -> None:
    data = build(bom, pieces, torn_end)
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, f"{RUN_ID}.jsonl")
        with open(path, "wb") as handle:
            handle.write(data)
        state = read_ledger_state(
            path, whole_file_bytes=window, head_bytes=window // 2, tail_bytes=window // 2
        )
        quick = state.builder.summary()
        whole = full_read(path)
    assert quick.status == whole.status
    assert quick.pending_approval == whole.pending_approval
    if quick.partial:
        assert quick.event_count in (None, whole.event_count)
        assert quick.damaged_lines is None
    else:
        assert quick.event_count == whole.event_count
        assert quick.damaged_lines == whole.damaged_lines
