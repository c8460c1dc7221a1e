"""Gemini CLI's sessions (``~/.gemini/tmp/<hash>/chats/session-*.json``) as runs.

The file is one JSON document rewritten in place as the session goes on: a
reader takes it whole each time it changes, and folds only the messages it
has not folded yet. The last message may still change (its tool calls'
results are written into it), so it is held open until another follows or
the file has gone quiet. A document that does not parse (caught mid-rewrite)
is read again at the next change, and what was read before stays.

A message's ``tokens`` say ``input`` (the cached part, ``cached``, included),
``output`` and ``thoughts``; thoughts are output the model was paid for, so
``output_tokens`` is their sum. The file names no working directory nor
branch. Newer versions write ``session-*.jsonl``: a header, then messages
and ``$set`` changes, folded the same way.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ledger_reader.sessions.fold import (
    SessionFold,
    Usage,
    as_int,
    as_str,
    exit_code_of,
    text_of,
)


class GeminiFold(SessionFold):
    """The events of one Gemini CLI session document."""

    agent: ClassVar[str] = "gemini-cli"

    def __init__(self, run_id: str = "", path: str | None = None) -> None:
        super().__init__(run_id, path)
        self.folded: list[str] = []
        """The ids of the messages folded, in order: a rewrite that changes them starts over."""
        self._message: dict[str, Any] | None = None
        self._start_time = ""

    def header(self, document: dict[str, Any]) -> None:
        """The document's own fields: the session's id and start."""
        if not self.run_id:
            self.run_id = as_str(document.get("sessionId"))
        self._start_time = self._start_time or as_str(document.get("startTime"))

    def follows_on(self, messages: list[Any]) -> bool:
        """Whether ``messages`` begins with the messages folded so far."""
        folded = self.folded
        if len(messages) < len(folded):
            return False
        return all(
            isinstance(message, dict) and message.get("id") == wanted
            for message, wanted in zip(messages, folded, strict=False)
        )

    def feed(self, record: Any, offset: int, length: int) -> None:
        """One line of a ``.jsonl`` session: its header, a message, or a ``$set``."""
        if not isinstance(record, dict):
            self.damaged(offset, length, "not a JSON object")
            return
        if "sessionId" in record and "messages" not in record and "type" not in record:
            self.header(record)
            return
        changes = record.get("$set")
        if isinstance(changes, dict):
            messages = changes.get("messages")
            if isinstance(messages, list):
                for message in messages[len(self.folded) :]:
                    self.message(message)
            return
        if "$rewindTo" in record:
            self.unknown("rewind", as_str(record.get("timestamp")), record)
            return
        self.message(record)

    def message(self, message: Any) -> None:
        """Take one message; the one before it, if held, is whole now."""
        if not isinstance(message, dict):
            return
        held = self._message
        if held is not None and held.get("id") == message.get("id"):
            self._message = message  # the same message, rewritten with more in it
            return
        self.close_open(final=True)
        self._message = message

    def close_open(self, *, final: bool) -> None:
        message = self._message
        if message is None or not final:
            return
        self._message = None
        self.folded.append(as_str(message.get("id")))
        self._fold(message)

    def settled(self) -> bool:
        return self._message is None and super().settled()

    def _fold(self, message: dict[str, Any]) -> None:
        kind = as_str(message.get("type"))
        time = as_str(message.get("timestamp"))
        if kind == "user":
            words = text_of(message.get("content"))
            if not self.started:
                self.start(self._start_time or time, words)
            else:
                self.user_message(time, words)
        elif kind == "gemini":
            self.start(self._start_time or time)
            self._answer(message, time)
        else:
            self.start(self._start_time or time)
            self.unknown(kind or "message", time, message)
        if time and time > self.last_time:
            self.last_time = time
        self.seen = max(self.seen, time)

    def _answer(self, message: dict[str, Any], time: str) -> None:
        thoughts = message.get("thoughts")
        thinking = [
            (as_str(t.get("timestamp")) or time, _thought(t))
            for t in (thoughts if isinstance(thoughts, list) else [])
            if isinstance(t, dict)
        ]
        words = text_of(message.get("content"))
        calls = [c for c in message.get("toolCalls") or [] if isinstance(c, dict)]
        tokens = message.get("tokens")
        usage = None
        if isinstance(tokens, dict):
            usage = Usage()
            cached = as_int(tokens.get("cached"))
            usage.input = max(0, as_int(tokens.get("input")) - cached)
            usage.cache_read = cached
            usage.output = as_int(tokens.get("output")) + as_int(tokens.get("thoughts"))
        model = as_str(message.get("model")) or None
        self.model_call(
            requested=self.last_time or time,
            answered=time,
            model=model,
            usage=usage,
            thinking=thinking,
            text=[(time, words)] if words else [],
            calls=[
                {
                    "type": "tool_call",
                    "id": as_str(call.get("id")),
                    "name": as_str(call.get("name")),
                    "arguments": call.get("args"),
                }
                for call in calls
            ],
            provider="google",
        )
        # A call is made with the answer that asked for it; its own time is when its
        # result was written.
        for call in calls:
            call_id = as_str(call.get("id"))
            status = as_str(call.get("status"))
            asks = f"{as_str(call.get('name'))}" if status == "awaiting_approval" else None
            self.tool_call(
                time,
                call_id,
                as_str(call.get("name")) or "?",
                call.get("args"),
                asks=asks,
            )
        for call in calls:
            status = as_str(call.get("status"))
            if status in ("success", "error", "cancelled"):
                output = _result(call)
                code = exit_code_of(output)
                failed = status != "success" or (code is not None and code != 0)
                at = as_str(call.get("timestamp")) or time
                self.tool_result(at, as_str(call.get("id")), output, is_error=failed)
        if calls:
            ended = max((as_str(call.get("timestamp")) for call in calls), default="")
            self.last_time = max(self.last_time, ended, time)
            self.seen = max(self.seen, ended)


def _thought(thought: dict[str, Any]) -> str:
    subject = as_str(thought.get("subject"))
    description = as_str(thought.get("description"))
    return f"{subject}\n{description}" if subject and description else subject or description


def _result(call: dict[str, Any]) -> Any:
    """A tool call's output: what its function response said, else what was displayed."""
    result = call.get("result")
    if isinstance(result, list):
        outputs: list[Any] = []
        for part in result:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            said = response.get("response") if isinstance(response, dict) else None
            if isinstance(said, dict):
                outputs.append(said.get("output", said.get("error", said)))
        if len(outputs) == 1:
            return outputs[0]
        if outputs:
            return outputs
    display = call.get("resultDisplay")
    return display if display is not None else result


__all__ = ["GeminiFold"]
