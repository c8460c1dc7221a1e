"""Adapters for agents written with a framework: PydanticAI and the OpenAI Agents SDK.

:func:`adapt` is asked by the manager about every agent it is given. It
recognises a framework's agent by its type's module, without importing
the framework: a program that never passes such an agent never loads
it (nor the adapter). The adapter turns the framework's own hook points
into the manager's agent events, so the run's ledger holds the model
calls, tokens, tool calls and handoffs, and cancel, resume and
approvals work as for a plain agent.

- PydanticAI (``pydantic_ai.Agent``, extra ``runtop-agents[pydantic-ai]``): ``Agent.iter``,
  each model request node's event stream and each tool node's event stream.
- The OpenAI Agents SDK (``agents.Agent``, extra ``runtop-agents[openai-agents]``): its
  ``RunHooks`` (model calls, tools, handoffs) and ``Runner.run_streamed`` for text.
"""

from __future__ import annotations

import sys
from typing import Any, Final

_FRAMEWORKS: Final = {
    "pydantic_ai": ("run_manager.adapters.pydantic_ai_agent", "Agent"),
    "agents": ("run_manager.adapters.openai_agents", "Runner"),
}
"""The top-level package a framework's agent classes live in, the adapter for it, and a
name the framework's package has (a program's own package may be called ``agents`` too)."""

_KNOWN: dict[type, str | None] = {}
"""Per agent type: the adapter module, or ``None`` for a type no adapter takes (cached)."""


def _adapter_module(kind: type) -> str | None:
    known = _KNOWN.get(kind, "")
    if known != "":
        return known
    found: str | None = None
    for cls in kind.__mro__:
        package = cls.__module__.partition(".")[0]
        if package in _FRAMEWORKS:
            adapter, marker = _FRAMEWORKS[package]
            # An instance of the framework's class means the framework is loaded already.
            if hasattr(sys.modules.get(package), marker):
                found = adapter
            break
    _KNOWN[kind] = found
    return found


def adapt(agent: object) -> Any | None:
    """The runnable adapter for a framework's agent, or ``None`` if ``agent`` is not one."""
    module_name = _adapter_module(type(agent))
    if module_name is None:
        return None
    import importlib

    module = importlib.import_module(module_name)
    return module.adapt(agent)  # None if the type only looked like the framework's agent
