"""OTLP/HTTP export requests, decoded into plain spans (protobuf or JSON, either may be gzipped).

The protobuf encoding is read with ``opentelemetry-proto`` (the ``otlp``
extra), imported on the first protobuf request. The JSON encoding is
OTLP's own mapping (hex trace and span ids, 64-bit integers as strings,
lowerCamelCase names, snake_case accepted too) and needs nothing more
than msgspec. Either way a request becomes a list of :class:`Span`, and
a span that cannot be used (no valid ids) is counted as rejected, never
a crash.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from run_manager.otlp.damaged_requests import (
    Wire,
    holds_too_deep,
    length_delimited,
    length_delimited_fields,
    mend_json,
    salvage_protobuf,
)

MAX_INFLATED: Final = 64 * 1024 * 1024
"""Bytes a gzipped body may grow to once inflated (a small bomb must not eat the server)."""

MAX_NAME: Final = 1024
"""Characters of a span's name kept (the name is repeated in events and node ids)."""
MAX_MESSAGE: Final = 16 * 1024
"""Characters of a status or exception message kept."""

STATUS_ERROR: Final = 2
"""``Status.code`` of a failed span (``STATUS_CODE_ERROR``)."""
STATUS_OK: Final = 1
"""``Status.code`` of a span its instrumentation says succeeded (``STATUS_CODE_OK``)."""

_json_decoder: Final = msgspec.json.Decoder()


class UndecodableRequest(ValueError):
    """The body is not an export request in the encoding it claims (a 400)."""


class RequestTooLarge(ValueError):
    """The body, once inflated, is over :data:`MAX_INFLATED` (a 413)."""


class SpanEvent(msgspec.Struct, gc=False):
    """An event inside a span (``exception`` ones become errors)."""

    time_ns: int
    name: str
    attributes: dict[str, Any]


class Span(msgspec.Struct, gc=False):
    """One span, with what runtop reads of it.

    A struct made in C, not a dataclass, and out of the cyclic collector's sight (a span
    holds only strings, numbers and containers of them, never itself): a request makes
    hundreds.
    """

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status_code: int = 0
    status_message: str = ""
    events: tuple[SpanEvent, ...] = ()
    """A tuple: most spans have none, and an empty one is shared, not made per span."""
    service: str | None = None
    kind: str | None = None
    """What it is to a run (:mod:`run_manager.otlp.families`: agent, model, tool, step or
    other), once the ingest has read it (it is asked for several times)."""
    family: Any = None
    """The :class:`run_manager.otlp.families.Family` whose attributes it carries, read with
    :attr:`kind`."""


@dataclass(slots=True)
class Decoded:
    """The spans of one export request, and how many could not be used (and why)."""

    spans: list[Span]
    rejected: int = 0
    reason: str = ""


def inflate(body: bytes) -> bytes:
    """A gzipped body, inflated up to :data:`MAX_INFLATED`."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, MAX_INFLATED + 1)
    except zlib.error as error:
        raise UndecodableRequest(f"the body is not valid gzip: {error}") from error
    if len(data) > MAX_INFLATED or inflater.unconsumed_tail:
        raise RequestTooLarge(f"the body inflates to more than {MAX_INFLATED} bytes")
    if not inflater.eof:
        raise UndecodableRequest("the gzipped body is cut short")
    return data


# -- protobuf ---------------------------------------------------------------------------


PIECEWISE: Final = 256 * 1024
"""Bytes from which a protobuf request is decoded span by span: decoding it whole holds the
interpreter in one call (about 100 ms for 40 MB here), while a large request is decoded
in a thread beside the event loop (:mod:`run_manager.otlp.export`), whose clients would
wait that long."""


def decode_protobuf(body: bytes) -> Decoded:
    """An ``ExportTraceServiceRequest`` in protobuf."""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    if len(body) >= PIECEWISE:
        try:
            return _decode_span_by_span(body)
        except ValueError as error:
            raise UndecodableRequest(
                f"the body is not an OTLP protobuf export request: {error}"
            ) from error
    request = ExportTraceServiceRequest()
    decoded = Decoded([])
    try:
        request.ParseFromString(body)
    except DecodeError as error:
        # A damaged span fails the whole request: take it apart to keep its neighbours.
        try:
            body, decoded.rejected, decoded.reason = salvage_protobuf(body)
            request.ParseFromString(body)
        except (ValueError, DecodeError):
            message = f"the body is not an OTLP protobuf export request: {error}"
            raise UndecodableRequest(message) from error
    for resource_spans in request.resource_spans:
        service = _service_pb(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                _add_span_pb(decoded, span, service)
    return decoded


def _decode_span_by_span(body: bytes) -> Decoded:
    """:func:`decode_protobuf` of a large request: walked in its wire format, each resource
    and span decoded alone (no call holds the interpreter for long; a damaged span is
    rejected alone, as :func:`salvage_protobuf` would).

    Raises:
        ValueError: the request's own structure is broken.
    """
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource
    from opentelemetry.proto.trace.v1.trace_pb2 import Span as SpanMessage

    decoded = Decoded([])
    # Views, not copies: slicing 60 MB out of the body twice held the interpreter ~70 ms.
    for resource_spans in length_delimited(memoryview(body), 1):
        scopes: list[Wire] = []
        service: str | None = None
        resource_ok = True
        for number, data in length_delimited_fields(resource_spans):
            if number == 1:
                try:
                    service = _service_pb(Resource.FromString(data).attributes)
                except (DecodeError, RecursionError):
                    resource_ok = False
            elif number == 2:
                scopes.append(data)
        for scope_spans in scopes:
            for piece in length_delimited(scope_spans, 2):
                if not resource_ok:
                    decoded.rejected += 1
                    decoded.reason = "a span cannot be read: its resource cannot be read"
                    continue
                try:
                    span = SpanMessage.FromString(piece)
                except (DecodeError, RecursionError) as error:
                    decoded.rejected += 1
                    decoded.reason = (
                        f"a span cannot be read: {(str(error) or type(error).__name__)[:200]}"
                    )
                    continue
                _add_span_pb(decoded, span, service)
    return decoded


def _add_span_pb(decoded: Decoded, span: Any, service: str | None) -> None:
    """``span`` (a protobuf ``Span``) read into ``decoded``, or counted as rejected."""
    trace_raw, span_raw = span.trace_id, span.span_id
    if len(trace_raw) != 16 or len(span_raw) != 8 or trace_raw == _NO_TRACE or span_raw == _NO_SPAN:
        decoded.rejected += 1
        decoded.reason = "a span has no valid trace_id or span_id"
        return
    try:
        attributes = _attributes_pb(span.attributes)
        events = span.events
        read_events = (
            tuple(
                [
                    SpanEvent(event.time_unix_nano, event.name, _attributes_pb(event.attributes))
                    for event in events
                ]
            )
            if events
            else ()
        )
    except (TypeError, ValueError, RecursionError) as error:
        decoded.rejected += 1
        decoded.reason = f"a span cannot be read: {_why(error)}"
        return
    status = span.status
    code = status.code
    decoded.spans.append(
        Span(
            trace_raw.hex(),
            span_raw.hex(),
            span.parent_span_id.hex(),
            span.name[:MAX_NAME],
            span.start_time_unix_nano,
            span.end_time_unix_nano,
            attributes,
            code,
            # Read only where a status says something (OTLP sets it on errors).
            status.message[:MAX_MESSAGE] if code else "",
            read_events,
            service,
        )
    )


_SCALARS: Final = frozenset({"string_value", "int_value", "double_value", "bool_value"})
_NO_TRACE: Final = bytes(16)
_NO_SPAN: Final = bytes(8)


def _attributes_pb(attributes: Any) -> dict[str, Any]:
    """Attributes as a dict, as ``{kv.key: _any_pb(kv.value) ...}`` makes them: the scalar
    values read here, without a call each (most attributes are strings and numbers)."""
    found: dict[str, Any] = {}
    for kv in attributes:
        value = kv.value
        # Most are strings, then integers: one read each ("" and 0 unless that is what the
        # value holds), not asking first which one it holds.
        text = value.string_value
        if text:
            found[kv.key] = text
            continue
        number = value.int_value
        if number:
            found[kv.key] = number
            continue
        kind = value.WhichOneof("value")
        found[kv.key] = getattr(value, kind) if kind in _SCALARS else _any_pb(value)
    return found


def _any_pb(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_any_pb(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _any_pb(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)


def _service_pb(attributes: Any) -> str | None:
    for kv in attributes:
        if kv.key == "service.name":
            name = _any_pb(kv.value)
            return name if isinstance(name, str) else None
    return None


def _zero(trace_id: str, span_id: str) -> bool:
    return trace_id.count("0") == 32 or span_id.count("0") == 16


# -- JSON -------------------------------------------------------------------------------


def decode_json(body: bytes) -> Decoded:
    """An ``ExportTraceServiceRequest`` in OTLP's JSON mapping."""
    mended = False
    try:
        request = _json_decoder.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as error:
        # A damaged span fails the whole request: mend it to keep its neighbours.
        try:
            request = _json_decoder.decode(mend_json(body))
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            if isinstance(error, RecursionError):
                raise UndecodableRequest("the body is not JSON: it is nested too deep") from error
            raise UndecodableRequest(f"the body is not JSON: {error}") from error
        mended = True
    if not isinstance(request, dict):
        raise UndecodableRequest("the body is not an OTLP export request (not a JSON object)")
    decoded = Decoded([])
    try:
        for resource_spans in _list(request, "resourceSpans", "resource_spans"):
            resource = _get(resource_spans, "resource") or {}
            attributes = _attributes(_get(resource, "attributes"))
            service = attributes.get("service.name")
            service = service if isinstance(service, str) else None
            for scope_spans in _list(resource_spans, "scopeSpans", "scope_spans"):
                for span in _list(scope_spans, "spans"):
                    if mended and holds_too_deep(span):
                        decoded.rejected += 1
                        decoded.reason = "a span cannot be read: it is nested too deep"
                        continue
                    try:
                        parsed = _span_json(span, service)
                    except (TypeError, ValueError, AttributeError, RecursionError) as error:
                        # One span that cannot be read costs only itself: its neighbours
                        # are written (an exporter does not send the request again).
                        decoded.rejected += 1
                        decoded.reason = f"a span cannot be read: {_why(error)}"
                        continue
                    if parsed is None:
                        decoded.rejected += 1
                        decoded.reason = "a span has no valid traceId or spanId"
                    else:
                        decoded.spans.append(parsed)
    except (TypeError, ValueError, AttributeError, RecursionError) as error:
        raise UndecodableRequest(f"the body is not an OTLP export request: {error}") from error
    return decoded


def _why(error: BaseException) -> str:
    if isinstance(error, RecursionError):
        return "it is nested too deep"
    return str(error)[:200] or type(error).__name__


def _span_json(span: Any, service: str | None) -> Span | None:
    if not isinstance(span, dict):
        raise TypeError("a span is not an object")
    trace_id = _id(_get(span, "traceId", "trace_id"), 16)
    span_id = _id(_get(span, "spanId", "span_id"), 8)
    if trace_id is None or span_id is None or _zero(trace_id, span_id):
        return None
    parent = _id(_get(span, "parentSpanId", "parent_span_id"), 8) or ""
    status = _get(span, "status") or {}
    code = _get(status, "code") or 0
    if isinstance(code, str):
        code = STATUS_ERROR if code.endswith("ERROR") else STATUS_OK if code.endswith("OK") else 0
    return Span(
        trace_id,
        span_id,
        parent,
        str(_get(span, "name") or "")[:MAX_NAME],
        int(_get(span, "startTimeUnixNano", "start_time_unix_nano") or 0),
        int(_get(span, "endTimeUnixNano", "end_time_unix_nano") or 0),
        _attributes(_get(span, "attributes")),
        int(code),
        str(_get(status, "message") or "")[:MAX_MESSAGE],
        tuple(
            [
                SpanEvent(
                    int(_get(event, "timeUnixNano", "time_unix_nano") or 0),
                    str(_get(event, "name") or ""),
                    _attributes(_get(event, "attributes")),
                )
                for event in _list(span, "events")
            ]
        ),
        service,
    )


def _get(mapping: Any, name: str, other: str | None = None) -> Any:
    if not isinstance(mapping, dict):
        raise TypeError(f"expected an object holding {name!r}")
    value = mapping.get(name)
    if value is None and other is not None:
        value = mapping.get(other)
    return value


def _list(mapping: Any, name: str, other: str | None = None) -> list[Any]:
    value = _get(mapping, name, other)
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"{name!r} is not a list")
    return value


def _attributes(items: Any) -> dict[str, Any]:
    if not items:
        return {}
    if not isinstance(items, list):
        raise TypeError("attributes are not a list")
    return {str(_get(item, "key")): _any_json(_get(item, "value")) for item in items}


def _any_json(value: Any) -> Any:
    if not isinstance(value, dict) or not value:
        return None
    kind, inner = next(iter(value.items()))
    if kind in ("stringValue", "string_value", "boolValue", "bool_value"):
        return inner
    if kind in ("intValue", "int_value"):
        return int(inner)
    if kind in ("doubleValue", "double_value"):
        return float(inner)
    if kind in ("arrayValue", "array_value"):
        return [_any_json(item) for item in _list(inner, "values")]
    if kind in ("kvlistValue", "kvlist_value"):
        return _attributes(_list(inner, "values"))
    if kind in ("bytesValue", "bytes_value"):
        return base64.b64decode(inner).hex()
    return None


def _id(value: Any, size: int) -> str | None:
    """A trace or span id as lowercase hex: OTLP/JSON sends hex; base64 is taken too."""
    if not isinstance(value, str) or not value:
        return None
    if len(value) == size * 2:
        try:
            return bytes.fromhex(value).hex()
        except ValueError:
            pass
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) == size else None


# -- answers ----------------------------------------------------------------------------


def response_body(protobuf: bool, rejected: int, reason: str) -> bytes:
    """An ``ExportTraceServiceResponse`` in the request's encoding."""
    if protobuf:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceResponse,
        )

        response = ExportTraceServiceResponse()
        if rejected:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = reason
        return bytes(response.SerializeToString())
    if not rejected:
        return b"{}"
    return msgspec.json.encode(
        {"partialSuccess": {"rejectedSpans": str(rejected), "errorMessage": reason}}
    )
