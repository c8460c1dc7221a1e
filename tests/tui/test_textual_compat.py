"""Textual's private names are touched in one module, ``tui/textual_compat.py``, which checks
the Textual version it was written for; nothing else in ``tui/`` or its tests reads,
calls or overrides one."""

from __future__ import annotations

import ast
import inspect
import textwrap
from functools import cache
from importlib.metadata import version
from pathlib import Path

import pytest
from textual.app import App
from textual.command import Provider
from textual.events import Key
from textual.message import Message
from textual.notifications import Notification
from textual.screen import ModalScreen, Screen
from textual.scroll_view import ScrollView
from textual.widget import Widget
from textual.widgets import Button, DataTable, Input, Label, Static

from tests.conftest import REPO
from tui import textual_compat

pytestmark = pytest.mark.timeout(60)

USED_BY_RUNTOP = (
    App,
    Screen,
    ModalScreen,
    Widget,
    ScrollView,
    Input,
    Static,
    Button,
    Label,
    DataTable,
    Key,
    Message,
    Notification,
    Provider,
)
"""The Textual classes runtop subclasses or handles."""

FENCE = REPO / "tui" / "textual_compat.py"

TEXTUAL_IDS = "--" + "textual-"
"""How the ids Textual makes for its own widgets begin (a toast's holder)."""


@cache
def textual_private_names() -> frozenset[str]:
    """Every underscore name (not a dunder) the classes above and their Textual bases have:
    defined in their bodies, or set on ``self`` in their methods."""
    names: set[str] = set()
    for root in USED_BY_RUNTOP:
        for cls in root.__mro__:
            if not cls.__module__.startswith("textual"):
                continue
            names.update(n for n in vars(cls) if n.startswith("_") and not n.startswith("__"))
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "self"
                    and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                ):
                    names.add(node.attr)
    return frozenset(names)


def private_uses(path: Path) -> list[str]:
    """Where ``path`` reads, calls or defines one of Textual's private names."""
    private = textual_private_names()
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr in private:
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in private:
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: def {node.name}")
        elif isinstance(node, ast.Constant) and TEXTUAL_IDS in str(node.value):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}")
    return found


def test_no_module_but_the_fence_touches_textual_s_private_names() -> None:
    files = [*(REPO / "tui").rglob("*.py"), *(REPO / "tests").rglob("*.py")]

    found = [use for path in sorted(files) if path != FENCE for use in private_uses(path)]
    assert not found, "\n".join(found)


def test_the_fence_names_each_private_name_it_uses() -> None:
    """What it touches is what it declares (``USED``), so a new Textual is checked for all of
    them when the module is imported."""
    declared = {name for names in textual_compat.USED.values() for name in names}
    uses = [use.split(": ", 1)[1] for use in private_uses(FENCE)]
    used = {use.removeprefix(".").removeprefix("def ") for use in uses if use[0] != "'"}
    assert used <= declared, sorted(used - declared)


def test_the_fence_is_written_for_the_textual_installed() -> None:
    assert version("textual") == textual_compat.WRITTEN_FOR
    pinned = (REPO / "constraints.txt").read_text().split()
    assert f"textual=={textual_compat.WRITTEN_FOR}" in pinned


def test_the_check_finds_a_private_name_textual_no_longer_has(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Names set in ``__init__`` (``App._batch_count``) count as there; one Textual has
    neither as an attribute nor in its ``__init__`` fails the import, saying which."""

    def parse(owner: object) -> str:
        raise AssertionError(f"{owner}'s source read: it parses a module at every launch")

    monkeypatch.setattr(inspect, "getsource", parse)
    textual_compat._check()  # every declared name is there, instance ones included
    monkeypatch.setitem(textual_compat.USED, App, ("_batch_count", "_gone_in_a_new_textual"))
    with pytest.raises(textual_compat.TextualChanged, match=r"has no App\._gone_in_a_new_textual"):
        textual_compat._check()
