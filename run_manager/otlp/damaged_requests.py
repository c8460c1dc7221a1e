"""Export requests with a damaged span: the span set aside, its neighbours kept.

A whole request fails to decode when one span in it is damaged: a string that is
not UTF-8 in protobuf, a lone surrogate (``\\ud800``, what a JavaScript exporter
writes when it cuts an emoji in half) or a value nested thousands deep in JSON.
Exporters do not send a request again after a 400, so answering one would lose
every other span in it. Only when a request fails whole is it taken apart here:

- protobuf: the request is walked in its wire format down to each span, each span
  is decoded alone, and a request of the spans that decode is made again (a
  resource or scope that does not decode takes its spans with it);
- JSON: bytes that are not UTF-8 and lone surrogates become U+FFFD (the span is
  kept; the text around the cut is whole), and a value nested deeper than
  :data:`MAX_DEPTH` becomes :data:`TOO_DEEP`, whose span the decoder rejects.

The decoders' fast path is untouched: a request that decodes costs nothing here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

MAX_DEPTH: Final = 64
"""JSON nesting kept when a request is mended: OTLP's own structure is 8 deep."""
TOO_DEEP: Final = "\x00runtop: nested too deep"
"""What a value nested deeper than :data:`MAX_DEPTH` is replaced by, for its span to be
rejected (no exporter sends a NUL at the start of a value)."""

_LEN: Final = 2
"""The wire type of a length-delimited field (messages, strings, bytes)."""


# -- protobuf ---------------------------------------------------------------------------


Wire = bytes | memoryview
"""A message's bytes, or a view of them (a large request is walked without copying it)."""


def _varint(data: Wire, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("a varint runs past the end")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def _fields(data: Wire) -> Iterator[tuple[int, int, Wire]]:
    """Each field of a message: its number, wire type and, for a length-delimited one,
    its bytes (the whole field as written, tag included, for the others)."""
    at = 0
    while at < len(data):
        start = at
        tag, at = _varint(data, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            _, at = _varint(data, at)
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4
        elif wire == _LEN:
            size, at = _varint(data, at)
            if at + size > len(data):
                raise ValueError("a field runs past the end")
            yield number, wire, data[at : at + size]
            at += size
            continue
        else:
            raise ValueError(f"wire type {wire} is not taken")
        if at > len(data):
            raise ValueError("a field runs past the end")
        yield number, wire, data[start:at]


def length_delimited_fields(data: Wire) -> Iterator[tuple[int, Wire]]:
    """The length-delimited fields of a message (its sub-messages, strings and bytes), each
    as its number and bytes; the others are skipped.

    Raises:
        ValueError: the message's wire format is broken.
    """
    for number, wire, payload in _fields(data):
        if wire == _LEN:
            yield number, payload


def length_delimited(data: Wire, number: int) -> Iterator[Wire]:
    """The bytes of each length-delimited field ``number`` of a message (a repeated
    sub-message's elements), in order.

    Raises:
        ValueError: the message's wire format is broken.
    """
    for field, payload in length_delimited_fields(data):
        if field == number:
            yield payload


def _field(number: int, payload: Wire) -> bytes:
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(payload)) + payload


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def salvage_protobuf(body: bytes) -> tuple[bytes, int, str]:
    """An export request of the spans of ``body`` that decode alone; how many did not, and
    why (the first reason).

    Raises:
        ValueError: the request's own structure is broken (not a request at all).
    """
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    rejected = 0
    reason = ""

    def readable(message: Any, data: Wire) -> str:
        try:
            message.FromString(data)
        except (DecodeError, RecursionError) as error:
            return str(error) or type(error).__name__
        return ""

    kept = bytearray()
    for number, wire, resource_spans in _fields(body):
        if number != 1 or wire != _LEN:
            continue
        resource_ok = True
        resource_part = bytearray()
        scopes: list[tuple[bool, bytearray, list[Wire]]] = []
        for field, kind, data in _fields(resource_spans):
            if field == 1 and kind == _LEN:
                resource_ok = not readable(Resource, data)
                resource_part += _field(1, data)
            elif field == 2 and kind == _LEN:
                scope_ok = True
                scope_part = bytearray()
                spans: list[Wire] = []
                for inner, inner_kind, piece in _fields(data):
                    if inner == 2 and inner_kind == _LEN:
                        spans.append(piece)
                    elif inner == 1 and inner_kind == _LEN:
                        scope_ok = not readable(InstrumentationScope, piece)
                        scope_part += _field(1, piece)
                scopes.append((scope_ok, scope_part, spans))
        kept_scopes = bytearray()
        for scope_ok, scope_part, spans in scopes:
            good = bytearray(scope_part)
            for piece in spans:
                why = "" if resource_ok and scope_ok else "its resource or scope cannot be read"
                why = why or readable(Span, piece)
                if why:
                    rejected += 1
                    reason = reason or f"a span cannot be read: {why[:200]}"
                else:
                    good += _field(2, piece)
            if scope_ok and resource_ok:
                kept_scopes += _field(2, bytes(good))
        if resource_ok:
            kept += _field(1, bytes(resource_part + kept_scopes))
    return bytes(kept), rejected, reason


# -- JSON -------------------------------------------------------------------------------

_LONE_SURROGATE: Final = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_TOKENS: Final = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def mend_json(body: bytes) -> bytes:
    """``body`` with text that is not Unicode made U+FFFD and values nested deeper than
    :data:`MAX_DEPTH` made :data:`TOO_DEEP`."""
    text = body.decode("utf-8", "replace").encode("utf-8")
    text = _LONE_SURROGATE.sub(rb"\\ufffd", text)
    return _flatten_deep(text)


def _flatten_deep(body: bytes) -> bytes:
    out = bytearray()
    written = 0
    depth = 0
    cut_from = -1
    for token in _TOKENS.finditer(body):
        mark = token.group()
        if mark in (b"[", b"{"):
            depth += 1
            if depth == MAX_DEPTH + 1 and cut_from < 0:
                cut_from = token.start()
        elif mark in (b"]", b"}"):
            depth -= 1
            if depth == MAX_DEPTH and cut_from >= 0:
                out += body[written:cut_from]
                out += b'"\\u0000runtop: nested too deep"'
                written = token.end()
                cut_from = -1
    out += body[written:]
    return bytes(out)


def holds_too_deep(value: Any) -> bool:
    """Whether a decoded value holds :data:`TOO_DEEP` (at most :data:`MAX_DEPTH` down)."""
    if isinstance(value, str):
        return value == TOO_DEEP
    if isinstance(value, dict):
        return any(holds_too_deep(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(holds_too_deep(item) for item in value)
    return False


__all__ = [
    "MAX_DEPTH",
    "TOO_DEEP",
    "Wire",
    "holds_too_deep",
    "length_delimited",
    "length_delimited_fields",
    "mend_json",
    "salvage_protobuf",
]
