"""Every style of the app lives in a ``.tcss`` file, in theme colours (STYLE.md, point 6)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

from textual.css.constants import VALID_BORDER
from textual.dom import DOMNode

import tui

TUI = Path(tui.__file__).parent
COLOUR_PROPERTY = re.compile(r"^\s*[a-z-]*(?:color|background|border|tint)[a-z-]*\s*:\s*(.*?);")
"""A property that takes a colour, and its value."""
PERCENT = re.compile(r"\d+(?:\.\d+)?%")


def tui_classes() -> list[type[DOMNode]]:
    """Every widget, screen and app class defined in a module of ``tui``."""
    found = []
    for module_info in pkgutil.walk_packages(tui.__path__, "tui."):
        module = importlib.import_module(module_info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, DOMNode) and value.__module__ == module.__name__:
                found.append(value)
    return found


def test_no_class_keeps_css_in_python() -> None:
    classes = tui_classes()
    names = {cls.__name__ for cls in classes}
    assert {"RunsScreen", "ApprovalScreen", "ToolCallsScreen", "RunTable"} <= names, names
    in_python = [
        f"{cls.__module__}.{cls.__name__}.{attribute}"
        for cls in classes
        for attribute in ("DEFAULT_CSS", "CSS")
        if vars(cls).get(attribute, "").strip()
    ]
    assert in_python == []


def test_every_css_path_names_a_tcss_file_beside_it() -> None:
    named = 0
    for cls in tui_classes():
        paths = vars(cls).get("CSS_PATH")
        if paths is None:
            continue
        beside = Path(inspect.getfile(cls)).parent
        for path in [paths] if isinstance(paths, str | Path) else paths:
            assert str(path).endswith(".tcss"), (cls, path)
            assert (beside / path).is_file(), (cls, path)
            named += 1
    assert named >= 6 + 6  # the screens' files and the widgets' (listed by the app)


def test_every_tcss_file_is_used_and_colours_come_from_the_theme() -> None:
    used = set()
    for cls in tui_classes():
        paths = vars(cls).get("CSS_PATH") or []
        for path in [paths] if isinstance(paths, str | Path) else paths:
            used.add((Path(inspect.getfile(cls)).parent / path).resolve())
    files = sorted(TUI.rglob("*.tcss"))
    assert len(files) >= 12
    assert {file.resolve() for file in files} <= used
    by_hand = []
    for file in files:
        for number, line in enumerate(file.read_text().splitlines(), 1):
            found = COLOUR_PROPERTY.match(line)
            if found is None:
                continue
            for word in found.group(1).split():
                if not (word.startswith("$") or word in VALID_BORDER or PERCENT.fullmatch(word)):
                    by_hand.append(f"{file.name}:{number}: {line.strip()}")
    assert by_hand == []


def test_the_colour_check_sees_a_colour_written_by_hand() -> None:
    """The check above would catch ``red`` or ``#ff0000``, not only pass."""
    for line in ("    color: red;", "    background: #ff0000 30%;", "    border: thick red;"):
        found = COLOUR_PROPERTY.match(line)
        assert found is not None
        words = found.group(1).split()
        assert any(
            not (word.startswith("$") or word in VALID_BORDER or PERCENT.fullmatch(word))
            for word in words
        )
