"""The fast block fold says what folding every line says, on every line it could misjudge.

The fast path validates each line against its envelope only and decodes
whole just the lines a summary needs; each case here is a way that could go
wrong (a value spread over lines, two on one, a payload that does not
decode, parallel nodes closing out of order), checked against the line
reader every other reader uses. Each is also checked to take the path it
should, so a check that falls back on everything cannot pass for one that works.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger_reader import LineAssembler, RunSummary, SummaryBuilder
from ledger_reader.block_fold import _fold_fast, fold_block
from ledger_reader.decode import decode_line
from ledger_reader.events import DamagedLine, UnknownEvent
from tests.conftest import RUN_ID, completed, line, started


def _every_line(data: bytes) -> RunSummary:
    builder = SummaryBuilder(RUN_ID)
    for found in LineAssembler().feed(data):
        builder.add_item(found.item)
    return builder.summary()


def _fast(data: bytes, *, final: bool = False) -> RunSummary:
    builder = SummaryBuilder(RUN_ID)
    fold_block(data, 0, builder, final=final)
    return builder.summary()


def _took_fast_path(data: bytes, *, final: bool = False) -> bool:
    return _fold_fast(data, SummaryBuilder(RUN_ID), final=final)


def _raw(seq: int, body: str) -> bytes:
    """A line written by hand: ``body`` goes after the envelope's run_id and seq."""
    return f'{{"run_id":"{RUN_ID}","seq":{seq},{body}}}'.encode()


ODD_LINES = {
    "empty type": _raw(2, '"type":""'),
    "type null": _raw(2, '"type":null'),
    "type a number": _raw(2, '"type":5'),
    "seq a string": _raw(2, '"seq":"2","type":"llm_chunk"').replace(b'"seq":2,', b""),
    "seq true": _raw(2, '"type":"llm_chunk"').replace(b'"seq":2', b'"seq":true'),
    "run_id a number": _raw(2, '"type":"llm_chunk","run_id":5'),
    "not UTF-8 in a decoded field": _raw(
        2, '"type":"tool_result","payload":{"output":"\xff"}'
    ).replace(b"\xc3\xbf", b"\xff"),
    "not UTF-8 in an unknown field": _raw(2, '"type":"llm_chunk","zz":"\xff"').replace(
        b"\xc3\xbf", b"\xff"
    ),
    "number out of range": _raw(2, '"type":"tool_result","payload":{"output":1e400}'),
    "integer of 5000 digits": _raw(2, '"type":"tool_result","payload":{"output":' + "9" * 5000)
    + b"}}",
    "nested 3000 deep": _raw(2, '"type":"tool_result","payload":{"output":' + "[" * 3000)
    + b"]" * 3000
    + b"}}",
    "two objects on a line": line(2, "llm_chunk").rstrip(b"\n") + line(3, "llm_chunk").rstrip(),
    "two objects a space apart": line(2, "llm_chunk").rstrip(b"\n") + b" " + line(3, "llm_chunk"),
    "an object over two lines": _raw(2, '\n"type":"llm_chunk"'),
    "a blank line": b"",
    "a line of spaces": b"   ",
    "a form feed": b"\x0c",
    "type inside a string": _raw(2, '"note":"\\"type\\":\\"run_completed\\"","type":"llm_chunk"'),
    "escaped type key": _raw(2, '"t\\u0079pe":"run_completed","payload":{"status":"ok"}'),
    "a duplicated type": _raw(2, '"type":"llm_chunk","type":"run_completed"'),
    "a BOM mid-file": b"\xef\xbb\xbf" + line(2, "llm_chunk").rstrip(),
    "a torn line": line(2, "llm_chunk")[:30],
    "a torn line glued to an event": line(2, "llm_chunk")[:30] + line(2, "llm_chunk").rstrip(),
    "a carriage return": line(2, "llm_chunk").rstrip() + b"\r",
    "leading spaces": b"  " + line(2, "llm_chunk").rstrip(),
    "an array": b"[1,2]",
    "a string": b'"type"',
    "another run": line(2, "llm_chunk", run_id="run_other").rstrip(),
    "no run_id": b'{"seq":2,"type":"llm_chunk"}',
    "an unknown type": line(2, "future_thing", {"a": 1}).rstrip(),
    "a payload that does not fit": line(2, "run_completed", {"status": 5}).rstrip(),
}


@pytest.mark.parametrize("odd", ODD_LINES.values(), ids=ODD_LINES.keys())
@pytest.mark.parametrize("followed", [False, True], ids=["last", "followed"])
def test_an_odd_line_is_read_as_every_reader_reads_it(odd: bytes, followed: bool) -> None:
    data = started() + odd + b"\n" + (line(3, "llm_chunk") if followed else b"")
    assert _fast(data) == _every_line(data)


FAST = {
    "plain": started() + line(2, "llm_chunk") + completed(3),
    "a carriage return": started().replace(b"\n", b"\r\n") + completed(2),
    "type inside a string": started()
    + _raw(2, '"time":"2026-11-29T06:45:02Z","note":"\\"type\\":\\"x\\"","type":"a"')
    + b"\n",
    "not ASCII": started(q="naïve ✓") + completed(2, output="déjà"),
    "number out of range": started()
    + line(2, "tool_result", {"output": 1}).replace(b'"output":1', b'"output":1e400'),
}
SLOW = {
    "two objects on a line": started().rstrip() + line(2, "llm_chunk"),
    "an object over two lines": started() + _raw(2, '\n"type":"llm_chunk"') + b"\n",
    "a blank line": started() + b"\n" + line(2, "llm_chunk"),
    "not UTF-8": started()
    + _raw(2, '"type":"a","zz":"\xff"').replace(b"\xc3\xbf", b"\xff")
    + b"\n",
    "empty type": started() + _raw(2, '"type":""') + b"\n",
    "a last event without a time": started() + _raw(2, '"type":"llm_chunk"') + b"\n",
    "out of order": started() + line(3, "llm_chunk"),
    "a torn end": started() + line(2, "llm_chunk")[:20],
    "only a blank line": b"\n",
}


@pytest.mark.parametrize("data", FAST.values(), ids=FAST.keys())
def test_clean_blocks_take_the_fast_path(data: bytes) -> None:
    assert _took_fast_path(data)
    assert _fast(data) == _every_line(data)


@pytest.mark.parametrize("data", SLOW.values(), ids=SLOW.keys())
def test_blocks_it_could_misjudge_are_read_line_by_line(data: bytes) -> None:
    assert not _took_fast_path(data)
    assert _fast(data) == _every_line(data)


def test_a_payload_out_of_range_is_an_unknown_event_not_damage() -> None:
    """The envelope decides: a well-formed line with a number no float holds is kept."""
    raw = line(7, "tool_result", {"output": 1}).rstrip().replace(b'"output":1', b'"output":1e400')
    item = decode_line(raw)
    assert isinstance(item, UnknownEvent)
    assert (item.seq, item.run_id, item.type) == (7, RUN_ID, "tool_result")
    assert item.time
    assert isinstance(decode_line(_raw(7, '"type":""')), DamagedLine)


def _node(seq: int, kind: str, node: str) -> bytes:
    return line(seq, kind, {"node_id": node})


NODES = {
    "parallel calls close out of order": [
        ("node_enter", "A"),
        ("node_enter", "B"),
        ("node_exit", "A"),
    ],
    "the outer closes first, the inner stays": [
        ("node_enter", "A"),
        ("node_enter", "B"),
        ("node_exit", "A"),
        ("node_enter", "C"),
        ("node_exit", "C"),
    ],
    "an exit of a node never entered": [("node_enter", "A"), ("node_exit", "Z")],
    "an enter without a node_id": [("node_enter", "A"), ("node_enter", "")],
    "the same node entered twice": [("node_enter", "A"), ("node_enter", "A"), ("node_exit", "A")],
    "the last enter has no node_id": [("node_enter", "A"), ("node_enter", "B"), ("node_enter", "")],
    "the last enter does not decode": [("node_enter", "A"), ("node_enter", "bad")],
    "the last node line an exit": [("node_enter", "A"), ("node_enter", "B"), ("node_exit", "B")],
}


def _node_or_odd(seq: int, kind: str, node: str) -> bytes:
    if node == "bad":  # a node_enter whose payload does not fit: an unknown event, no node
        return line(seq, kind, {"node_id": "bad", "span_id": 5})
    return _node(seq, kind, node)


@pytest.mark.parametrize("final", [False, True], ids=["followed", "final"])
@pytest.mark.parametrize("steps", NODES.values(), ids=NODES.keys())
@pytest.mark.parametrize("ending", [None, "ok", "suspended"])
def test_the_open_node_is_found_by_its_id(
    steps: list[tuple[str, str]], ending: str | None, final: bool
) -> None:
    data = started() + b"".join(
        _node_or_odd(seq, kind, node) for seq, (kind, node) in enumerate(steps, 2)
    )
    if ending is not None:
        data += completed(len(steps) + 2, ending) + _node(len(steps) + 3, "node_enter", "after")
    assert _took_fast_path(data, final=final)
    assert _fast(data, final=final) == _every_line(data)


_PIECES = st.sampled_from(
    [
        ("event", "llm_chunk"),
        ("event", "approval_request"),
        ("event", "approval_response"),
        ("event", "error"),
        ("event", "cancel_requested"),
        ("call", "tokens and cost"),
        ("call", "no usage"),
        ("call", "tokens a string"),
        ("call", "model a number"),
        ("call", "messages"),
        ("enter", "A"),
        ("enter", ""),
        ("enter", "bad"),
        ("enter", "B"),
        ("exit", "A"),
        ("exit", "B"),
        ("odd", "two on a line"),
        ("odd", "spread over two lines"),
        ("odd", "blank"),
        ("odd", "not UTF-8"),
        ("odd", "empty type"),
        ("odd", "out of range"),
        ("odd", "no time"),
    ]
)


_CALLS: dict[str, dict[str, object]] = {
    "tokens and cost": {"model": "m", "prompt_tokens": 10, "output_tokens": 2, "cost_usd": 0.5},
    "no usage": {"model": "m"},
    "tokens a string": {"prompt_tokens": "many", "output_tokens": 2},
    "model a number": {"model": 5, "prompt_tokens": 3},
    "messages": {
        "prompt_tokens": 7,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "response": "x",
    },
}
"""Model calls' payloads: each counts its tokens as every reader does, or does not."""


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_PIECES, max_size=25),
    st.sampled_from([None, "ok", "error", "suspended"]),
    st.booleans(),
)
def test_any_mix_of_lines_reads_as_every_line_says(
    pieces: list[tuple[str, str]], ending: str | None, final: bool
) -> None:
    out = [started()]
    seq = 1
    for shape, what in pieces:
        seq += 1
        if shape == "event":
            out.append(line(seq, what, {"approval_id": "ap"} if "approval" in what else {}))
        elif shape == "call":
            out.append(line(seq, "llm_call", _CALLS[what]))
        elif shape in ("enter", "exit"):
            out.append(_node_or_odd(seq, f"node_{shape}", what))
        elif what == "two on a line":
            out.append(line(seq, "llm_chunk").rstrip() + line(seq + 1, "llm_chunk"))
            seq += 1
        elif what == "spread over two lines":
            out.append(_raw(seq, '\n"type":"llm_chunk"') + b"\n")
        elif what == "blank":
            out.append(b"\n")
        elif what == "not UTF-8":
            out.append(_raw(seq, '"type":"x","zz":"\xff"').replace(b"\xc3\xbf", b"\xff") + b"\n")
        elif what == "empty type":
            out.append(_raw(seq, '"type":""') + b"\n")
        elif what == "out of range":
            out.append(_raw(seq, '"type":"tool_result","payload":{"output":-1e999}') + b"\n")
        else:
            out.append(_raw(seq, '"type":"llm_chunk"') + b"\n")
    if ending is not None:
        out.append(completed(seq + 1, ending))
    data = b"".join(out)
    assert _fast(data, final=final) == _every_line(data)


def test_model_calls_are_summed_on_the_fast_path_without_reading_their_messages() -> None:
    data = (
        started()
        + line(2, "llm_call", _CALLS["tokens and cost"])
        + line(3, "llm_chunk", {"delta": "a"})
        + line(4, "llm_call", _CALLS["messages"])
        + line(5, "llm_call", _CALLS["no usage"])
        + completed(6, "ok")
    )
    assert _took_fast_path(data, final=True)
    summary = _fast(data, final=True)
    assert (summary.prompt_tokens, summary.output_tokens, summary.cost_usd) == (17, 2, 0.5)
    assert summary == _every_line(data)
