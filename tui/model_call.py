"""A model call's events found from any one of them: its ``llm_call`` and its model node.

A model call is written as a model node's ``node_enter`` (when the request is
sent), any streamed chunks, its ``llm_call`` (what it was sent and answered)
and the node's ``node_exit``. Selecting any of the three in the event stream
shows the call's conversation, with how long it took from its request (its
node entered) to its answer; this finds the others near the one selected,
reading the run a page at a time from its source and no further than
:data:`LOOK_LIMIT` events each way, so a selection costs the same in a run
of any length.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final, NamedTuple

from inspector import RunKey, RunStore
from inspector.ledger import (
    LedgerItem,
    LlmCall,
    NodeEnter,
    NodeExit,
    call_as_sent,
    call_seconds,
    model_answered,
)
from tui.text.conversation import CallTiming

MODEL_PREFIX: Final = "llm:"
"""How a model node's id begins (as the timeline reads it)."""
FIRST_PAGE: Final = 4
"""Events read first, each way."""
LOOK_PAGE: Final = 256
"""Events read from the source at a time, at most."""
LOOK_LIMIT: Final = 4096
"""Events looked through each way at most (a streamed call's chunks lie between)."""


class FoundCall(NamedTuple):
    """The ``llm_call`` of a model call and how long its model node took."""

    call: LlmCall
    timing: CallTiming


def is_model_node(item: LedgerItem | None) -> bool:
    """Whether ``item`` enters or exits a model node."""
    return isinstance(item, NodeEnter | NodeExit) and (item.payload.node_id or "").startswith(
        MODEL_PREFIX
    )


def shows_model_call(item: LedgerItem | None) -> bool:
    """Whether selecting ``item`` shows a model call: an ``llm_call`` or its model node."""
    return isinstance(item, LlmCall) or is_model_node(item)


def _same_node(node_id: str | None, other: str | None) -> bool:
    """An ``llm_call`` that names no node belongs to the model node around it."""
    return node_id is None or other is None or node_id == other


async def _walk(
    store: RunStore, key: RunKey, position: int, *, forward: bool
) -> AsyncIterator[LedgerItem]:
    """The run's events from ``position`` on (or back), :data:`LOOK_LIMIT` at most, read
    in pages that grow from :data:`FIRST_PAGE`: the event looked for is most often the
    next one, and decoding a big page of calls' messages is slow enough to feel."""
    count = await store.event_count(key) if forward else position
    size = FIRST_PAGE
    if forward:
        start, stop = position + 1, min(count, position + 1 + LOOK_LIMIT)
        while start < stop:
            end = min(stop, start + size)
            for item in await store.events(key, start, end):
                yield item
            start, size = end, min(LOOK_PAGE, size * 2)
        return
    low, end = max(0, position - LOOK_LIMIT), position
    while end > low:
        start = max(low, end - size)
        for item in reversed(await store.events(key, start, end)):
            yield item
        end, size = start, min(LOOK_PAGE, size * 2)


def _took(enter: NodeEnter | None, call: LlmCall, exit: NodeExit | None = None) -> CallTiming:
    """How long the call took, from its request (its node entered) to its answer (its
    ``llm_call``), as every view of a call says it (:func:`call_seconds`); with no enter
    found, as its node's exit says it."""
    began, answered = enter.timestamp if enter is not None else None, model_answered(call)
    if began is not None and answered is not None:
        return CallTiming(call_seconds(began.timestamp(), answered))
    if exit is not None and exit.payload.duration_micros is not None:
        return CallTiming(exit.payload.duration_micros / 1e6)
    return CallTiming()


async def _enter_before(
    store: RunStore, key: RunKey, position: int, node_id: str | None
) -> NodeEnter | None:
    async for item in _walk(store, key, position, forward=False):
        if (
            isinstance(item, NodeEnter)
            and is_model_node(item)
            and _same_node(node_id, item.payload.node_id)
        ):
            return item
    return None


async def model_call_near(
    store: RunStore, key: RunKey, item: LedgerItem, position: int
) -> FoundCall | None:
    """The model call ``item`` (at ``position`` in the run) is part of, or ``None`` when
    its ``llm_call`` is not within :data:`LOOK_LIMIT` events (a node with no call: the
    writer recorded none, or the call failed). A model node entered and not exited, with
    no ``llm_call`` yet, is the call waiting for its answer, as its request went out."""
    if isinstance(item, LlmCall):
        node = item.payload.node_id
        entered = await _enter_before(store, key, position, node)
        if entered is not None:
            return FoundCall(item, _took(entered, item))
        async for later in _walk(store, key, position, forward=True):
            if isinstance(later, NodeExit) and is_model_node(later):
                if _same_node(node, later.payload.node_id):
                    return FoundCall(item, _took(None, item, later))
            elif isinstance(later, LlmCall):
                break  # the next call: this one's node never exited
        return FoundCall(item, CallTiming())
    if isinstance(item, NodeEnter) and is_model_node(item):
        call: LlmCall | None = None
        async for later in _walk(store, key, position, forward=True):
            if isinstance(later, LlmCall) and call is None:
                if _same_node(later.payload.node_id, item.payload.node_id):
                    call = later
            elif isinstance(later, NodeExit) and later.payload.node_id == item.payload.node_id:
                return FoundCall(call, _took(item, call)) if call is not None else None
        if call is not None:
            return FoundCall(call, _took(item, call))
        # No answer yet: the call as its request went out, when its node says what it sent.
        sent = call_as_sent(item)
        return FoundCall(sent, CallTiming(waiting=True)) if sent is not None else None
    if isinstance(item, NodeExit) and is_model_node(item):
        node = item.payload.node_id
        found: LlmCall | None = None
        enter: NodeEnter | None = None
        async for earlier in _walk(store, key, position, forward=False):
            if isinstance(earlier, LlmCall) and found is None:
                if _same_node(earlier.payload.node_id, node):
                    found = earlier
            elif isinstance(earlier, NodeEnter) and earlier.payload.node_id == node:
                enter = earlier
                break
            elif isinstance(earlier, NodeExit) and earlier.payload.node_id == node:
                break  # the node's previous call: this one recorded no llm_call
        return FoundCall(found, _took(enter, found, item)) if found is not None else None
    return None
