"""What the manager runs: agents, streaming agents, and plain functions.

An :class:`Agent` has a ``name`` and ``async run(input) -> str``. A
:class:`StreamingAgent` also has ``run_stream(input)``, an async iterator
of :data:`AgentEvent`: text, reasoning, tool calls and results, errors,
and a closing ``complete`` with usage. A plain synchronous callable is
accepted too: it runs in a thread of its own and gets a
:class:`CancelToken` it can check. **A thread cannot be killed**: a
cancelled synchronous agent stops only when it next checks its token,
and until then its run shows as cancelling, not canceled.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from run_manager.adapters import adapt


@runtime_checkable
class Agent(Protocol):
    """Anything with a name that turns an input into an output, asynchronously.

    No base class is needed: the manager accepts any object of this shape (and
    a plain function, as :class:`FunctionAgent`).
    """

    name: str
    """What ledgers, listings and :meth:`Manager.register`
    call the agent."""

    async def run(self, input: str) -> str:
        """Do the work on ``input``; what it returns is the run's output.

        The manager cancels the task that awaits it to stop the run, so an
        agent needs nothing of its own to be cancelled.
        """
        ...


@runtime_checkable
class StreamingAgent(Agent, Protocol):
    """An agent that can also report what it does as it does it."""

    def run_stream(self, input: str) -> AsyncIterator[AgentEvent]:
        """Do the work on ``input``, yielding :data:`AgentEvent` as it goes.

        :meth:`Manager.stream` records each event in
        the run's ledger and hands it to ``handle.events()``; a :class:`Complete`
        ends a model call and an :class:`AgentError` fails the run.
        """
        ...


@dataclass(frozen=True, slots=True)
class Content:
    """A piece of the answer's text."""

    text: str
    """The text, as it arrived (the ledger's ``llm_chunk``)."""


@dataclass(frozen=True, slots=True)
class Thinking:
    """A piece of the model's reasoning."""

    text: str
    """The text, as it arrived (the ledger's ``reasoning_chunk``)."""


ToolStatus = Literal["starting", "executing", "completed", "error"]


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    """A tool call changing state; ``result`` is set once it is ``completed`` or ``error``."""

    id: str
    """The call's id, which pairs it with its result."""
    name: str
    """The tool's name."""
    arguments: Any = None
    """What the tool is called with (JSON-like)."""
    status: ToolStatus = "starting"
    """Where the call is: ``starting``, ``executing``, ``completed`` or ``error``."""
    result: Any = None
    """What the tool returned (or the error), once it is ``completed`` or ``error``."""


@dataclass(frozen=True, slots=True)
class ToolResultEvent:
    """A tool call's outcome, reported on its own."""

    id: str
    """The id of the :class:`ToolCallEvent` this result ends."""
    name: str = ""
    """The tool's name."""
    result: Any = None
    """What the tool returned, or the error."""
    status: ToolStatus = "completed"
    """``completed``, or ``error`` when the tool failed."""


@dataclass(frozen=True, slots=True)
class AgentError:
    """The agent failed: the run fails with this message."""

    message: str
    """Why: the run's error, as ``result()`` raises it."""


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """A model call begins: the request is sent now, and the call's time counts from here.

    Without it a model call's node opens at its first text, so the wait for
    the answer would count as idle.
    """

    model: str | None = None
    """The model's name, the one its ``Complete`` says (the node is named after it)."""
    messages: Any = None
    """What the model is sent, in the shape of :mod:`ledger_reader.messages`."""


@dataclass(frozen=True, slots=True)
class Complete:
    """The model call finished, with its usage (and, optionally, its answer)."""

    model: str | None = None
    """The model that answered."""
    provider: str | None = None
    """Who serves it (``anthropic``, ``openai``)."""
    prompt_tokens: int | None = None
    """Tokens sent, as the provider counted them."""
    output_tokens: int | None = None
    """Tokens answered."""
    cost_usd: float | None = None
    """What the call cost, where the agent knows it."""
    cost_estimated: bool = False
    """``cost_usd`` was worked out from the tokens with a price library, not billed."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Anything else to keep in the ``llm_call`` (JSON-like)."""
    response: Any = None
    """What the model answered, as messages (:mod:`ledger_reader.messages`); when not
    given, the text and thinking streamed since the call began."""
    messages: Any = None
    """What it was sent, when no :class:`ModelRequest` said so."""
    first_token_micros: int | None = None
    """A streamed call's wait from its request to the first piece of its answer (text or a
    tool call); when not given, the wait for its first text."""


AgentEvent = (
    Content | Thinking | ToolCallEvent | ToolResultEvent | AgentError | ModelRequest | Complete
)


class Canceled(Exception):
    """Raised by :meth:`CancelToken.raise_if_cancelled` inside a cancelled synchronous agent."""


_token_lock = threading.Lock()


class CancelToken:
    """Lets a synchronous agent in a thread notice that its run was cancelled.

    The :class:`threading.Event` behind :meth:`wait` is made only when
    someone waits: most runs never do, and an Event costs more to make than
    the rest of starting a run.
    """

    __slots__ = ("_cancelled", "_event", "reason")

    def __init__(self) -> None:
        self._cancelled = False
        self._event: threading.Event | None = None
        self.reason: str | None = None
        """Why the run was cancelled, once it is."""

    @property
    def cancelled(self) -> bool:
        """Whether the run was cancelled: a loop in the agent checks it between steps."""
        return self._cancelled

    def cancel(self, reason: str | None = None) -> None:
        """Mark the run cancelled and wake :meth:`wait` (a second call changes nothing).

        Args:
            reason: why, kept in :attr:`reason` for :meth:`raise_if_cancelled`.
        """
        with _token_lock:
            if self._cancelled:
                return
            self.reason = reason
            self._cancelled = True
            event = self._event
        if event is not None:
            event.set()

    def raise_if_cancelled(self) -> None:
        """Stop here if the run was cancelled."""
        if self._cancelled:
            raise Canceled(self.reason or "canceled")

    def wait(self, timeout: float | None = None) -> bool:
        """Sleep up to ``timeout`` seconds, waking early on cancel; return whether cancelled."""
        with _token_lock:
            if self._event is None:
                self._event = threading.Event()
                if self._cancelled:
                    self._event.set()
            event = self._event
        return event.wait(timeout)


SyncAgentFunction = Callable[..., str]
"""``fn(input)`` or ``fn(input, token)``: a blocking agent."""


class FunctionAgent:
    """A synchronous callable, run in its own thread, with a cancel token."""

    def __init__(self, function: SyncAgentFunction, name: str | None = None) -> None:
        self.function = function
        """``fn(input)`` or ``fn(input, token)``."""
        self.name = name or getattr(function, "__name__", "function")
        """``name``, else the function's own."""
        try:
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):
            parameters = {}  # type: ignore[assignment]
        self.takes_token = len(parameters) >= 2
        """Whether the function takes a :class:`CancelToken` (it has two parameters)."""

    def call(self, input: str, token: CancelToken) -> str:
        """Run the function in the calling thread."""
        if self.takes_token:
            return str(self.function(input, token))
        return str(self.function(input))

    async def run(self, input: str) -> str:  # pragma: no cover - the manager calls `call`
        """Refused: the manager runs a function agent in a thread, through :meth:`call`."""
        raise TypeError("FunctionAgent runs in a thread; start it through a Manager")


def agent_name(agent: object) -> str:
    """The name an agent goes by in ledgers and listings."""
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else type(agent).__name__


_ASYNC_RUN: dict[type, bool] = {}


def _runs_async(kind: type) -> bool:
    """Whether a class's ``run`` is a coroutine function (cached: asked once per run start)."""
    known = _ASYNC_RUN.get(kind)
    if known is None:
        known = _ASYNC_RUN[kind] = inspect.iscoroutinefunction(getattr(kind, "run", None))
    return known


def as_runnable(agent: object) -> Agent | FunctionAgent:
    """Accept an agent or a plain callable; refuse anything else with a clear error."""
    if isinstance(agent, FunctionAgent):
        return agent
    adapted = adapt(agent)  # a framework's agent (PydanticAI, OpenAI Agents SDK)
    if adapted is not None:
        return adapted  # type: ignore[no-any-return]
    if _runs_async(type(agent)) or inspect.iscoroutinefunction(getattr(agent, "run", None)):
        return agent  # type: ignore[return-value]
    if callable(agent) and not inspect.iscoroutinefunction(agent):
        return FunctionAgent(agent)
    raise TypeError(
        f"{agent!r} is not an agent: give an object with `name` and `async run(input)`, "
        "or a plain function fn(input) -> str"
    )
