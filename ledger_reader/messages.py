"""What a model was sent and what it answered: an ``llm_call``'s ``messages`` and ``response``.

runtop's writers record each message as ``{"role": ..., "content": ...}``, the
content either plain text or a list of parts::

    {"type": "text", "text": "..."}
    {"type": "thinking", "text": "..."}
    {"type": "tool_call", "id": "call_1", "name": "search", "arguments": {...}}
    {"type": "tool_result", "id": "call_1", "name": "search", "output": "...", "is_error": false}

Other writers say the same things other ways, so :func:`conversation` also
reads the OpenTelemetry GenAI shape (``parts`` with ``content``,
``tool_call_response`` with ``response``) and the OpenAI chat shape
(``tool_calls`` with ``function``, a ``tool`` message with ``tool_call_id``).
Whatever it cannot place is kept as text, never dropped.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

TEXT: Final = "text"
THINKING: Final = "thinking"
TOOL_CALL: Final = "tool_call"
TOOL_RESULT: Final = "tool_result"

_encoder: Final = msgspec.json.Encoder()


class MessagePart(msgspec.Struct, frozen=True):
    """One part of a message: text, thinking, a tool call or a tool's result."""

    kind: str
    """:data:`TEXT`, :data:`THINKING`, :data:`TOOL_CALL` or :data:`TOOL_RESULT`."""
    text: str = ""
    """The words of text and thinking; a tool result's output as text."""
    name: str | None = None
    """The tool's name, for a tool call or result."""
    call_id: str | None = None
    arguments: Any = None
    """A tool call's arguments, as the writer recorded them (JSON)."""
    is_error: bool = False
    """A tool result that reports a failure."""


class Message(msgspec.Struct, frozen=True):
    """One turn of a conversation with a model."""

    role: str
    """``system``, ``user``, ``assistant``, ``tool`` or what the writer said."""
    parts: tuple[MessagePart, ...] = ()

    @property
    def text(self) -> str:
        """Every text part, joined: what a search looks in, with the tool parts' words."""
        return "\n".join(_part_words(part) for part in self.parts if _part_words(part))


def conversation(value: Any) -> list[Message]:
    """The messages recorded in ``value`` (a ``messages`` or ``response`` field), in order.

    ``None`` or anything that is not a list of messages gives what can be
    read of it: a string is one message of unknown role, a lone message
    object is a list of one.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [Message(role="?", parts=(MessagePart(kind=TEXT, text=value),))]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return [Message(role="?", parts=(MessagePart(kind=TEXT, text=_as_text(value)),))]
    return [_message(item) for item in value]


def _message(item: Any) -> Message:
    if not isinstance(item, dict):
        return Message(role="?", parts=(MessagePart(kind=TEXT, text=_as_text(item)),))
    role = item.get("role")
    role = role if isinstance(role, str) and role else "?"
    parts: list[MessagePart] = []
    content = item.get("content", item.get("parts"))
    if isinstance(content, list):
        parts.extend(_part(part) for part in content)
    elif content is not None:
        parts.append(_content_part(role, item, content))
    for call in item.get("tool_calls") or ():
        parts.append(_openai_tool_call(call))
    return Message(role=role, parts=tuple(parts))


def _content_part(role: str, item: dict[str, Any], content: Any) -> MessagePart:
    """A message whose content is one value: text, or a tool's answer (``role: tool``)."""
    call_id = item.get("tool_call_id")
    if role == "tool" and isinstance(call_id, str):
        name = item.get("name")
        return MessagePart(
            kind=TOOL_RESULT,
            text=_as_text(content),
            name=name if isinstance(name, str) else None,
            call_id=call_id,
        )
    return MessagePart(kind=TEXT, text=_as_text(content))


def _part(part: Any) -> MessagePart:
    if not isinstance(part, dict):
        return MessagePart(kind=TEXT, text=_as_text(part))
    kind = part.get("type")
    name = part.get("name")
    name = name if isinstance(name, str) else None
    call_id = part.get("id", part.get("call_id", part.get("tool_call_id")))
    call_id = call_id if isinstance(call_id, str) else None
    if kind == TOOL_CALL:
        return MessagePart(
            kind=TOOL_CALL, name=name, call_id=call_id, arguments=part.get("arguments")
        )
    if kind in (TOOL_RESULT, "tool_call_response"):
        output = part.get("output", part.get("response", part.get("result")))
        return MessagePart(
            kind=TOOL_RESULT,
            text=_as_text(output),
            name=name,
            call_id=call_id,
            is_error=part.get("is_error") is True,
        )
    words = part.get("text", part.get("content"))
    if kind in (THINKING, "reasoning"):
        return MessagePart(kind=THINKING, text=_as_text(words))
    if kind in (TEXT, None) and words is not None:
        return MessagePart(kind=TEXT, text=_as_text(words))
    return MessagePart(kind=TEXT, text=_as_text(part))


def _openai_tool_call(call: Any) -> MessagePart:
    if not isinstance(call, dict):
        return MessagePart(kind=TOOL_CALL, arguments=call)
    function = call.get("function")
    function = function if isinstance(function, dict) else call
    name = function.get("name")
    call_id = call.get("id")
    return MessagePart(
        kind=TOOL_CALL,
        name=name if isinstance(name, str) else None,
        call_id=call_id if isinstance(call_id, str) else None,
        arguments=function.get("arguments"),
    )


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return _encoder.encode(value).decode()
    except (TypeError, ValueError, msgspec.EncodeError):
        return repr(value)


def _part_words(part: MessagePart) -> str:
    if part.kind == TOOL_CALL:
        return f"{part.name or 'tool'} {_as_text(part.arguments)}"
    return part.text
