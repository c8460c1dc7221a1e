"""Decoding lines: typed events, unknown types kept, damage counted, glued events recovered."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger_reader import (
    DamagedLine,
    LineAssembler,
    RunStarted,
    ToolCall,
    UnknownEvent,
    decode_line,
    encode_event,
    iter_events,
)
from ledger_reader.events import parse_time
from tests.conftest import line


def test_known_type_decodes_to_its_struct() -> None:
    raw = line(3, "tool_call", {"call_id": "call_1", "name": "search", "arguments": {"q": 1}})
    event = decode_line(raw.rstrip(b"\n"))
    assert isinstance(event, ToolCall)
    assert (event.seq, event.type, event.payload.name) == (3, "tool_call", "search")
    assert event.payload.arguments == {"q": 1}


def test_unknown_type_is_kept_with_its_payload() -> None:
    event = decode_line(line(4, "checkpoint_saved", {"bytes": 12, "x": [1]}).rstrip())
    assert isinstance(event, UnknownEvent)
    assert (event.type, event.payload, event.seq) == (
        "checkpoint_saved",
        {"bytes": 12, "x": [1]},
        4,
    )


def test_known_type_with_misfit_payload_is_kept_generic() -> None:
    event = decode_line(line(2, "tool_call", {"name": {"not": "a string"}}).rstrip())
    assert isinstance(event, UnknownEvent)
    assert event.type == "tool_call"
    assert event.payload == {"name": {"not": "a string"}}


def test_null_payload_is_an_absent_payload() -> None:
    event = decode_line(b'{"run_id":"r","seq":1,"type":"run_started","payload":null}')
    assert isinstance(event, RunStarted)
    assert event.payload.skill is None


def test_blank_line_is_skipped() -> None:
    assert decode_line(b"") is None
    assert decode_line(b"   \r") is None


def test_damage_reasons() -> None:
    cases = {
        b"not json at all": "not valid JSON",
        b"[1, 2, 3]": "not a JSON object",
        b'{"run_id": "r", "seq": 1}': "no event type",
        b'{"type": 7}': "no event type",
        b'{"type": "tool_call"': "not valid JSON",
        b"\xff\xfe{}": "not valid JSON",
    }
    for raw, reason in cases.items():
        item = decode_line(raw, 120)
        assert isinstance(item, DamagedLine), raw
        assert (item.reason, item.offset, item.length) == (reason, 120, len(raw))
        assert item.recovered is None


def test_event_glued_after_a_torn_line_is_recovered() -> None:
    torn = line(3, "llm_chunk", {"delta": "abc"})[:40]
    whole = line(4, "tool_call", {"name": "search", "arguments": {"nested": {"a": 1}}})
    item = decode_line(torn + whole.rstrip(b"\n"), 10)
    assert isinstance(item, DamagedLine)
    assert isinstance(item.recovered, ToolCall)
    assert item.recovered.seq == 4
    assert list(iter_events([item])) == [item.recovered]


def test_times_with_any_number_of_fraction_digits() -> None:
    assert parse_time("2026-11-28T14:30:00Z") is not None
    assert parse_time("2026-11-28T14:30:00.4Z") is not None
    nine = parse_time("2026-11-28T14:30:00.123456789Z")
    assert nine is not None
    assert nine.microsecond == 123456
    assert parse_time("yesterday") is None
    assert parse_time("2026-11-28T14:30:00") is None  # no zone: not RFC 3339


def test_encode_round_trips_with_documented_key_order() -> None:
    raw = line(3, "tool_call", {"call_id": "c", "name": "n", "arguments": {"k": [1, 2]}})
    event = decode_line(raw.rstrip())
    assert isinstance(event, ToolCall)
    encoded = encode_event(event)
    assert list(json.loads(encoded)) == ["run_id", "seq", "time", "type", "payload"]
    assert json.loads(encoded) == json.loads(raw)


valid_lines = st.builds(
    lambda seq, kind, text: line(seq, kind, {"delta": text, "name": text}),
    st.integers(min_value=1, max_value=10**9),
    st.sampled_from(["llm_chunk", "tool_call", "error", "future_type", "run_started"]),
    st.text(max_size=40),
)


def _mutate(data: bytes, position: int, replacement: bytes) -> bytes:
    position %= max(1, len(data))
    return data[:position] + replacement + data[position + len(replacement) :]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_random_bytes_never_raise(data: bytes) -> None:
    for piece in data.split(b"\n"):
        item = decode_line(piece, 0)
        assert item is None or isinstance(item, DamagedLine) or item.type


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            valid_lines,
            st.sampled_from(["keep", "mutate", "garbage_before", "garbage_line", "torn_prefix"]),
            st.integers(min_value=0, max_value=500),
            st.binary(min_size=1, max_size=30).map(lambda b: b.replace(b"\n", b"")),
        ),
        max_size=25,
    ),
    st.integers(min_value=1, max_value=64),
)
def test_every_valid_line_comes_out(
    plan: list[tuple[bytes, str, int, bytes]], chunk_size: int
) -> None:
    """Random bytes and mutated lines around valid ones: every valid line's event survives."""
    stream = bytearray()
    expected: list[dict[str, object]] = []
    for valid, how, position, junk in plan:
        if how == "keep":
            stream += valid
            expected.append(json.loads(valid))
        elif how == "mutate":
            stream += _mutate(valid.rstrip(b"\n"), position, junk) + b"\n"
        elif how == "garbage_before":
            stream += junk + b"\n" + valid
            expected.append(json.loads(valid))
        elif how == "garbage_line":
            stream += junk + b"\n"
        else:  # a writer appended straight after a torn line
            torn = valid[: position % len(valid)].replace(b"\n", b"")
            stream += torn + valid
            expected.append(json.loads(valid))
    assembler = LineAssembler()
    items = []
    for start in range(0, len(stream), chunk_size):
        items.extend(
            found.item for found in assembler.feed(bytes(stream[start : start + chunk_size]))
        )
    got = [(event.seq, event.type) for event in iter_events(items)]
    # Each expected event appears, in order (mutated lines may add valid events of their own).
    position = 0
    for record in expected:
        key = (record["seq"], record["type"])
        assert key in got[position:], f"lost {key}"
        position = got.index(key, position) + 1


def test_line_encoder_writes_what_encode_event_writes() -> None:
    from ledger_reader import RunCompleted
    from ledger_reader.events import LineEncoder, RunCompletedPayload

    payload = RunCompletedPayload(status="ok", output={"a": ["é", 1]}, truncated=True)
    event = RunCompleted(
        run_id='run_"quoted"', seq=12, time="2026-11-29T00:00:00.5Z", payload=payload
    )
    fast = LineEncoder(event.run_id).encode(event.seq, event.time, RunCompleted, payload)
    assert fast == encode_event(event)
    assert decode_line(fast.rstrip(b"\n")) == event
