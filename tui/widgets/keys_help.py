"""The ``?`` panel: every key of the screen on top, ours first, one line per action.

Textual's help panel lists the focused widget's keys first (its scrolling
keys: ``Scroll Left``, ``Page Right``), then Textual's own (``tab``,
``^c`` copy), and an action once per key that does it (``^q q Quit``,
``space`` and ``m`` both for Mark). This one lists the keys the bar shows,
in its order, then the other keys of the screen and the app, then the
keys that move the cursor; each action once, with the keys that do it on
this screen; Textual's generic keys not at all.
"""

from __future__ import annotations

import functools
import re
from typing import Any, ClassVar, NamedTuple

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import HelpPanel

from tui.runtop_screen import RuntopScreen, key_description
from tui.text import inert
from tui.widgets.key_bar import ESSENTIAL


class KeyLine(NamedTuple):
    """One line of the panel: the keys that do an action here, and what it does."""

    keys: str
    description: str
    enabled: bool


@functools.cache
def _own_keys(node_type: type[DOMNode]) -> frozenset[tuple[str, str]]:
    """(key, action) of the bindings runtop itself gives ``node_type`` (not Textual)."""
    own: set[tuple[str, str]] = set()
    for cls in node_type.__mro__:
        if not cls.__module__.startswith("tui."):
            continue
        bindings: list[BindingType] = list(cls.__dict__.get("BINDINGS", []))
        for binding in Binding.make_bindings(bindings):
            own.add((binding.key, binding.action))
    return frozenset(own)


def key_lines(screen: Screen[Any]) -> list[KeyLine]:
    """The panel's lines for ``screen``: shown keys in the bar's order (``?`` and ``q``
    last of them), then the other keys of the screen and the app, then the cursor's."""
    app = screen.app
    keys: dict[str, list[str]] = {}
    first: dict[str, tuple[int, str, bool]] = {}
    for at, (namespace, binding, enabled, _) in enumerate(screen.active_bindings.values()):
        if (binding.key, binding.action) not in _own_keys(type(namespace)):
            continue  # Textual's own: focus, copy text, scrolling sideways, ^q
        label = app.get_key_display(binding)
        keys.setdefault(binding.action, [])
        if label not in keys[binding.action]:
            keys[binding.action].append(label)
        if binding.action in first:
            continue
        description = key_description(screen, binding.action, binding.description)
        if binding.action in ESSENTIAL:
            group, at = 1, ESSENTIAL.index(binding.action)  # ? then q, as in the bar
        elif binding.show:
            group = 0
        elif namespace is screen or namespace is app:
            group = 2
        else:
            group = 3  # the focused widget's: moving the cursor
        first[binding.action] = (group * 1000 + at, description, enabled)
    ordered = sorted(first.items(), key=lambda item: item[1][0])
    return [
        KeyLine(" ".join(keys[action]), description, enabled)
        for action, (_, description, enabled) in ordered
    ]


class KeyList(Widget):
    """The lines of :func:`key_lines`, redrawn as the screen's keys change."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"key-list--key", "key-list--disabled"}

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen[object]) -> None:
        self.refresh(layout=True)

    def lines(self) -> list[KeyLine]:
        return key_lines(self.screen)

    def render(self) -> Group:
        key_style = self.get_component_rich_style("key-list--key")
        disabled = self.get_component_rich_style("key-list--disabled", partial=True)
        # What is watched, whole and first: the source line may cut it.
        sources = [FoldedPaths(inert(source, single_line=True)) for source in self._sources()]
        table = Table.grid(padding=(0, 1))
        table.add_column(justify="right", no_wrap=True)
        table.add_column()
        for line in self.lines():
            style = key_style + disabled if not line.enabled else key_style
            table.add_row(
                Text(line.keys, style=style),
                Text(line.description, style=disabled if not line.enabled else ""),
            )
        if self.app.ENABLE_COMMAND_PALETTE:
            table.add_row(Text("^p", style=key_style), Text("Every action, and themes"))
        return Group(*sources, *([Text()] if sources else []), table)

    def _sources(self) -> list[str]:
        """Each source the app watches, in words: its name and how it stands (``demo: live,
        ledgers in /tmp/runtop-demo-…``), else what it is (``the ledger directory …``)."""
        screen = self.screen
        if not isinstance(screen, RuntopScreen):
            return []
        said = []
        for state in screen.store.snapshot().sources:
            said.append(f"{state.name}: {state.error or state.status or state.description}")
        return said


class FoldedPaths:
    """What is said of a source watched, after ``from``, across the panel (not in the keys'
    narrower column: the demo's ``runtop-demo-3msg2krr`` fits on a line there), wrapped
    between words and, in a path, after a ``/`` (``/tmp/`` then ``runtop-demo-3msg2krr``):
    folded anywhere, ``/tmp/runtop-demo-3m`` would sit over ``sg2krr``. A name wider than
    the panel is folded where it must be, whole on the lines it takes."""

    LEAD = "from "
    INDENT = "  "
    """Before each line after the first: the lines of one source read as one."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, cell_len(self.LEAD + self.text))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1 + len(self.LEAD), options.max_width)
        lines = folded(self.text, width - len(self.LEAD), width - len(self.INDENT))
        yield Text.assemble((self.LEAD, "dim"), lines[0])
        for line in lines[1:]:
            yield Text(self.INDENT + line)


def _path_parts(word: str) -> list[str]:
    """``/tmp/runtop-demo`` as ``/tmp/`` and ``runtop-demo``: each part ends at a slash (a
    leading one stays with the name after it, a URL's ``http://`` whole)."""
    return re.findall(r"[A-Za-z][\w+.-]*://|/?[^/]+/?|/", word) or [word]


def folded(text: str, first: int, width: int | None = None) -> list[str]:
    """``text`` in lines of ``first`` cells at most, then ``width``: broken between words,
    and in a word after a ``/``; a part wider than a line folded, whole."""
    lines: list[str] = []
    line = ""

    def room() -> int:
        return max(1, first if not lines else (width or first))

    for word in text.split(" "):
        for at, part in enumerate(_path_parts(word)):
            joined = f"{line} {part}" if line and at == 0 else line + part
            if cell_len(joined) <= room():
                line = joined
                continue
            if line:
                lines.append(line)
            line = part
            while cell_len(line) > room():  # one name wider than the panel: folded
                lines.append(line[: room()])
                line = line[len(lines[-1]) :]
    if line or not lines:
        lines.append(line)
    return lines


class KeysHelp(HelpPanel):
    """Textual's help panel, with :class:`KeyList` in place of its own list of keys."""

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield KeyList()
