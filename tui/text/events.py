"""One readable line per event: the words ``runtop show`` prints for each type.

Kept apart from the command line so the TUI's event stream can say the
same things the same way. Every string that came from a ledger goes
through :func:`tui.text.inert`.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from inspector.ledger import (
    AGENT_NOTICE,
    CONTEXT_COMPACTED,
    NOTICES,
    SESSION_RESUMED,
    USER_MESSAGE,
    ApprovalRequest,
    ApprovalResponse,
    BudgetLimits,
    BudgetUpdated,
    CancelRequested,
    DamagedLine,
    ErrorEvent,
    LedgerItem,
    LlmCall,
    LlmChunk,
    NodeEnter,
    NodeExit,
    ReasoningChunk,
    RunCompleted,
    RunEvent,
    RunPlaced,
    RunStarted,
    RunUpdated,
    StructuredOutput,
    ToolCall,
    ToolResult,
    UnknownEvent,
    budget_words,
    call_seconds,
    conversation,
    limit_words,
    limits_of,
)
from inspector.status_words import (
    UnknownStatus,
    exit_word,
    open_call_word,
    status_named,
    unanswered,
    without_status_word,
)
from inspector.timeline_nodes import NodeKind, node_kind
from tui.text import (
    DETAIL_LIMIT,
    cell,
    compact_json,
    cost,
    duration,
    skill_and_agent,
    tokens_or_unsaid,
)

GLYPHS: Final = {
    "run_started": "▶",
    "run_completed": "■",
    "node_enter": "→",
    "node_exit": "←",
    "tool_call": "⚙",
    "tool_result": "↩",
    "llm_call": "◆",
    "llm_chunk": "¶",
    "reasoning_chunk": "…",
    "structured_output": "▤",
    "approval_request": "?",
    "approval_response": "✓",
    "error": "✘",
    "cancel_requested": "⊘",
    "run_placed": "⌂",
    "run_updated": "✎",
    "budget_updated": "¤",
    "damaged_line": "!",
    USER_MESSAGE: "»",
    SESSION_RESUMED: "⋯",
    AGENT_NOTICE: "·",
    CONTEXT_COMPACTED: "⋯",
}

_BUDGET_STATES: Final = {
    "ok": "",
    "asking": "asking to go on",
    "exceeded": "limit reached",
    "denied": "not approved",
}
"""What a ``budget_updated``'s state says beside its figures."""


def budget_given(budget: BudgetLimits) -> str:
    """A budget as given: ``$1.00, 200k tokens, asks at 80%`` (``, waits 10m00s for an
    answer`` when its question is denied unanswered)."""
    said = [limit_words(name, limit) for name, limit in limits_of(budget).items()]
    said.append(f"asks at {budget.ask_at:.0%}" if budget.ask_at is not None else "never asks")
    if budget.ask_at is not None and budget.ask_timeout is not None:
        said.append(f"waits {duration(budget.ask_timeout)} for an answer")
    return ", ".join(said)


DENIED: Final = "⊗"
"""The mark of an approval denied."""


def _text(value: str | None, limit: int = DETAIL_LIMIT) -> str:
    return cell(value, limit)


def input_said(value: Any, limit: int = DETAIL_LIMIT) -> str:
    """``input …`` as its JSON, or ``input not recorded`` (never ``input null``: a
    writer that could not say it, as an OpenTelemetry trace without content)."""
    return "input not recorded" if value is None else f"input {compact_json(value, limit)}"


class _Described(Protocol):
    """What ``run_started``, ``run_updated`` and a run's summary say of who it was for."""

    session_id: str | None
    user_id: str | None
    conversation_id: str | None
    tags: list[str] | None
    service: str | None


def who_said(said: _Described) -> str:
    """Who a run was for and which conversation, in a few words (``session s-7  user
    ada  tags nightly, eu  service api``); empty where nothing says it."""
    words = [
        f"{label} {_text(value, 60)}"
        for label, value in (
            ("session", said.session_id),
            ("conversation", said.conversation_id),
            ("user", said.user_id),
        )
        if value
    ]
    if said.tags:
        words.append("tags " + _text(", ".join(said.tags), 80))
    if said.service:
        words.append(f"service {_text(said.service, 60)}")
    return "  ".join(words)


def describe(item: RunEvent | DamagedLine, *, after_cancel: bool = False) -> str:
    """What happened, in a few words (no time, no glyph); ``after_cancel``: the run was
    asked to cancel before it (a node that failed then was canceled)."""
    match item:
        case DamagedLine():
            return f"damaged line at byte {item.offset} ({item.length} bytes): {item.reason}"
        case RunStarted(payload=p):
            who = _text(skill_and_agent(p.skill, p.agent), 80)  # as the runs table says it
            extra = f" resumed from {_text(p.resumed_from, 64)}" if p.resumed_from else ""
            parent = f" parent {_text(p.parent_run_id, 64)}" if p.parent_run_id else ""
            said = f"started {who or '(no skill)'}{parent}{extra} {input_said(p.input)}"
            if p.budget is not None:
                said += f"  budget {_text(budget_given(p.budget), 120)}"
            described = who_said(p)
            return f"{said}  {described}" if described else said
        case RunUpdated(payload=p):
            # What the writer learned after the run began (an OTLP run's own span, arriving
            # last, names it): only what it says.
            words = []
            if p.agent or p.skill:
                words.append(f"named {_text(skill_and_agent(p.skill, p.agent), 80)}")
            if p.input is not None:
                words.append(input_said(p.input))
            if p.output is not None:
                words.append(f"output {compact_json(p.output)}")
            described = who_said(p)
            if described:
                words.append(described)
            return "updated " + ("  ".join(words) or "(nothing)")
        case BudgetUpdated(payload=p):
            state = _BUDGET_STATES.get(p.state or "", _text(p.state, 20) if p.state else "")
            said = f"budget {_text(budget_words(p, p.spent), 160)} spent"
            return f"{said}, {state}" if state else said
        case RunCompleted(payload=p):
            # The run's outcome, said as the run's: after a denied approval, "run succeeded"
            # reads as what the agent did next, not as a tick on the denial.
            status = "run " + _text(_ended_as(p.status), 20)
            if p.error:
                return f"{status}: {_text(without_status_word(p.error))}"
            if p.output is not None:
                return f"{status}: {compact_json(p.output)}"
            return status
        case NodeEnter(payload=p):
            if p.model is not None or p.messages is not None:
                return _asked(item)
            return f"enter {_text(p.node_id, 80)}"
        case NodeExit(payload=p):
            took = (
                f" in {duration(p.duration_micros / 1e6)}" if p.duration_micros is not None else ""
            )
            approval = node_kind(p.node_id) is NodeKind.APPROVAL
            # as the timeline says it: canceled, denied, error
            outcome = exit_word(p.success, after_cancel=after_cancel, approval=approval)
            return f"exit {_text(p.node_id, 80)} {outcome}{took}"
        case ToolCall(payload=p):
            return f"call {_text(p.name or '?', 60)}({compact_json(p.arguments)})"
        case ToolResult(payload=p):
            kind = "error" if p.is_error else "result"
            cut = " (truncated)" if p.truncated else ""
            return f"{kind} {compact_json(p.output)}{cut}"
        case LlmCall(payload=p):
            model = _text(model_named(p.model, p.node_id), 40)
            ended = unanswered(p.status)
            if ended is not None:
                return f"model {model} {ended} before it answered"
            said_in, said_out = tokens_or_unsaid(p.prompt_tokens), tokens_or_unsaid(p.output_tokens)
            tokens = (
                "tokens not recorded"  # not 0: the comparison says the same of such a run
                if p.prompt_tokens is None and p.output_tokens is None
                else f"{said_in} in / {said_out} out"
            )
            spent = f" {cost(p.cost_usd)}" if p.cost_usd is not None else ""
            return f"model {model} {tokens}{spent}"
        case LlmChunk(payload=p):
            return f"text {_text(p.delta)!s}"
        case ReasoningChunk(payload=p):
            return f"thinking {_text(p.delta)}"
        case StructuredOutput(payload=p):
            return f"structured output {compact_json(p.output)}"
        case ApprovalRequest(payload=p):
            return f"approval {_text(p.approval_id, 40)} asked: {_text(p.prompt)}"
        case ApprovalResponse(payload=p):
            verdict = "approved" if p.approved else "denied"
            by = f" by {_text(p.source, 20)}" if p.source else ""
            who = f" ({_text(p.answered_by, 40)})" if p.answered_by else ""
            why = f": {_text(p.reason)}" if p.reason else ""
            return f"approval {_text(p.approval_id, 40)} {verdict}{by}{who}{why}"
        case ErrorEvent(payload=p):
            return f"error {_text(p.message)}"
        case CancelRequested(payload=p):
            # A budget's cancel says so in its reason (``budget: $0.80 of …``): once.
            said_in_reason = p.source is not None and (p.reason or "").startswith(f"{p.source}:")
            by = f" by {_text(p.source, 20)}" if p.source and not said_in_reason else ""
            who = f" ({_text(p.requested_by, 40)})" if p.requested_by else ""
            why = f": {_text(p.reason)}" if p.reason else ""
            return f"cancel requested{by}{who}{why}"
        case RunPlaced(payload=p):
            where = " ".join(
                f"{label} {_text(value, 16)}"
                for label, value in (("node", p.node_id), ("worker", p.worker_id), ("on", p.host))
                if value
            )
            pid = f" pid {p.pid}" if p.pid is not None else ""
            return f"placed on {_text(p.executor or '?', 20)} {where}{pid}"
        case UnknownEvent() if item.type == USER_MESSAGE and isinstance(item.payload, dict):
            # A prompt a person typed into a coding agent: their words, as the agent shows them.
            return f"user {_text(str(item.payload.get('text', '')))}"
        case UnknownEvent() if item.type == AGENT_NOTICE and isinstance(item.payload, dict):
            # Words the agent put in the person's turn: said as what they are, not as a prompt.
            kind = str(item.payload.get("kind", ""))
            text = str(item.payload.get("text", ""))
            said = NOTICES.get(kind, kind or "notice")
            if kind == "interrupted":
                return f"{said} at a tool use" if "tool use" in text else said
            return f"{said}: {_text(text)}"
        case UnknownEvent() if item.type == CONTEXT_COMPACTED and isinstance(item.payload, dict):
            trigger = item.payload.get("trigger")
            before = item.payload.get("tokens_before")
            how = " by the person" if trigger == "manual" else ""
            size = f" at {tokens_or_unsaid(before)} tokens" if isinstance(before, int) else ""
            return f"conversation compacted{how}{size}"
        case UnknownEvent() if item.type == SESSION_RESUMED and isinstance(item.payload, dict):
            after = item.payload.get("after_seconds")
            gap = duration(after) if isinstance(after, int | float) else "a while"
            return f"session resumed after {gap}"
        case UnknownEvent():
            return f"{_text(item.type, 40)} {compact_json(item.payload)}"
    return _text(str(item))


def model_named(model: str | None, node_id: str | None) -> str:
    """A model call's model: as its ``llm_call`` says it, else as its node is named
    (``llm:<model>#k``), ``?`` only where neither says one."""
    if model:
        return model
    kind, _, rest = (node_id or "").partition(":")
    name = rest.rpartition("#")[0] if "#" in rest else rest
    return name if kind == "llm" and name and name != "default" else "?"


def _asked(enter: NodeEnter) -> str:
    """A model call as its request went out: the model, and the newest words it was sent."""
    p = enter.payload
    model = _text(model_named(p.model, p.node_id), 40)
    if p.messages is None:
        return f"model {model} asked"
    sent = conversation(p.messages)
    said = next((m for m in reversed(sent) if m.role == "user"), sent[-1] if sent else None)
    words = f": {_text(said.text, 120)}" if said is not None else ""
    count = f"  [{len(sent):,} messages]" if len(sent) > 1 else ""
    return f"model {model} asked{words}{count}"


def _ended_as(status: str | None) -> str:
    """The status word of a ``run_completed`` status, as the table says it."""
    try:
        return status_named(status or "")
    except UnknownStatus:
        return f"ended {status or '?'}"


def describe_entry(
    items: list[LedgerItem], *, live: bool, after_cancel: bool = False
) -> tuple[str, str]:
    """The mark and words of an entry (:mod:`tui.text.entries`): a paragraph as its text, a tool
    call with its outcome (one with no result as :func:`~inspector.status_words.open_call_word`
    says it in a run ``live`` or not), anything else as its one event."""
    first = items[0]
    if isinstance(first, LlmChunk | ReasoningChunk):
        label = "thinking" if isinstance(first, ReasoningChunk) else "text"
        text = "".join(
            item.payload.delta or ""
            for item in items
            if isinstance(item, LlmChunk | ReasoningChunk)
        )
        count = f"  [{len(items):,} chunks]" if len(items) > 1 else ""  # as the run screen
        return glyph(first), f"{label} {_text(text)}{count}"
    call = next((item for item in items if isinstance(item, ToolCall)), None)
    if call is not None:
        result = next((item for item in items if isinstance(item, ToolResult)), None)
        name = _text(call.payload.name or "?", 60)
        arguments = compact_json(call.payload.arguments, 60)
        if result is None:
            return GLYPHS["tool_call"], f"{name} … {open_call_word(live=live)}  {arguments}"
        outcome = "✘ error" if result.payload.is_error else "✔"
        if call.timestamp is not None and result.timestamp is not None:  # as the timeline
            took = call_seconds(call.timestamp.timestamp(), result.timestamp.timestamp())
            outcome += f" {duration(took)}"
        return GLYPHS[
            "tool_call"
        ], f"{name} {outcome}  {arguments} → {compact_json(result.payload.output, 60)}"
    return glyph(first), describe(first, after_cancel=after_cancel)


def glyph(item: RunEvent | DamagedLine) -> str:
    """A one-character mark of the event's type (a denial is not drawn with a tick)."""
    if isinstance(item, ApprovalResponse) and not item.payload.approved:
        return DENIED
    return GLYPHS.get(item.type, "·")
