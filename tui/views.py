"""Views of the runs table: a named filter, sort and set of columns, kept in
``$RUNTOP_HOME/views.toml``. The app chooses one (``v``, or the palette) and saves the
table as it is as one (``V``); ``runtop ls --view NAME`` lists the runs through one.

The file is TOML, a table a view::

    [views.expensive]
    filter = "cost:>0.01 duration:>30s"
    sort = "tokens"
    reverse = true
    columns = ["status", "run", "agent", "duration", "tokens"]

Every key may be left out: no filter, sorted by start (newest first), every column. A
view that cannot be used (a filter that does not parse, a sort or a column there is not)
is named with why, and the others are used. A file that is not TOML is named, whole, and
nothing is written over it: a view saved then says why it was not, and the file is left
for its owner to mend. Saving writes the file anew (its views, and any key runtop does
not know, kept; comments are not), by a rename, so a reader never sees half of it.

Imports neither Textual nor Rich: ``runtop ls --view`` reads views too.
"""

from __future__ import annotations

import json
import math
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import msgspec

from inspector.filters import FilterError, RunFilter
from inspector.ledger import make_private_dir
from tui.columns import COLUMN_KEYS, SORT_KEYS
from tui.settings import VIEWS_FILE

__all__ = ["VIEWS_FILE", "View", "ViewBook", "ViewNotSaved", "load_views", "save_view"]

HEADER: Final = (
    "# Views of runtop's runs table: a filter, a sort and the columns shown.\n"
    "# The app's v chooses one, V saves the table as one; runtop ls --view NAME lists\n"
    "# through one. runtop writes this file anew when it saves a view: comments go.\n"
)


class View(msgspec.Struct, frozen=True):
    """A named way to look at the runs."""

    name: str
    filter: str = ""
    """In the language of the filter box (docs/filters.md)."""
    sort: str = "started"
    """The column the runs are sorted by (``SORT_KEYS``)."""
    reverse: bool = True
    """Largest (newest) first."""
    columns: tuple[str, ...] = ()
    """The columns shown, by key (``COLUMN_KEYS``); none said: every column."""

    @property
    def hidden(self) -> frozenset[str]:
        """The columns it does not show (never the run's id: a row must say its run)."""
        if not self.columns:
            return frozenset()
        return frozenset(COLUMN_KEYS) - {*self.columns, "run", "mark"}


class ViewBook(msgspec.Struct, frozen=True):
    """The views in the file, and what could not be used of it."""

    views: tuple[View, ...] = ()
    problems: tuple[str, ...] = ()
    """One line for each view that cannot be used, saying why."""
    damaged: str | None = None
    """Why the file cannot be read at all (nothing is written over it); ``None``: it can."""

    def get(self, name: str) -> View | None:
        return next((view for view in self.views if view.name == name), None)

    @property
    def names(self) -> list[str]:
        return [view.name for view in self.views]


class ViewNotSaved(Exception):
    """A view could not be saved: the message says why, and that nothing was lost."""


def _read_toml(path: Path) -> dict[str, Any]:
    """The file's TOML; nothing when there is none. Raises ``ValueError`` saying why it
    cannot be read."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise ValueError(f"{path} cannot be read: {error.strerror or error}") from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path} is not TOML: {error}") from None


def view_of(name: str, table: Any) -> View:
    """The view a table of the file says; ``ValueError`` names what is wrong."""
    if not isinstance(table, Mapping):
        raise ValueError("not a table of filter, sort, reverse and columns")
    text = table.get("filter", "")
    if not isinstance(text, str):
        raise ValueError("its filter is not a string")
    try:
        RunFilter.parse(text)
    except FilterError as error:
        raise ValueError(f"its filter does not parse: {error}") from None
    sort = table.get("sort", "started")
    if sort not in SORT_KEYS:
        raise ValueError(f"sort = {sort!r}: one of {', '.join(SORT_KEYS)}")
    reverse = table.get("reverse", True)
    if not isinstance(reverse, bool):
        raise ValueError("reverse is not true or false")
    columns = table.get("columns", [])
    if not isinstance(columns, list) or not all(isinstance(key, str) for key in columns):
        raise ValueError("columns is not a list of column names")
    unknown = [key for key in columns if key not in COLUMN_KEYS]
    if unknown:
        raise ValueError(f"no column {unknown[0]!r}: one of {', '.join(COLUMN_KEYS)}")
    return View(name, text, sort, reverse, tuple(dict.fromkeys(columns)))


def load_views(path: Path | None) -> ViewBook:
    """The views in ``path`` (none without a file); what cannot be used is said, not
    raised: one view wrong leaves the others, a file damaged leaves the app."""
    if path is None:
        return ViewBook()
    try:
        document = _read_toml(path)
    except ValueError as error:
        return ViewBook(damaged=str(error))
    tables = document.get("views", {})
    if not isinstance(tables, Mapping):
        return ViewBook(damaged=f"{path}: views is not a table of views")
    views: list[View] = []
    problems: list[str] = []
    for name, table in tables.items():
        try:
            views.append(view_of(name, table))
        except ValueError as error:
            problems.append(f"view {name!r} in {path}: {error}")
    return ViewBook(tuple(views), tuple(problems))


def save_view(path: Path, view: View) -> None:
    """Keep ``view`` in ``path``, replacing one of its name, every other view and key kept.

    Raises:
        ViewNotSaved: the file cannot be read (it is left as it is) or written.
    """
    try:
        document = _read_toml(path)
    except ValueError as error:
        raise ViewNotSaved(
            f"view {view.name!r} not saved: {error}; it is left as it is (mend or move it)"
        ) from None
    tables = document.setdefault("views", {})
    if not isinstance(tables, dict):
        raise ViewNotSaved(f"view {view.name!r} not saved: {path}: views is not a table")
    kept = dict(tables.get(view.name) or {}) if isinstance(tables.get(view.name), dict) else {}
    kept.update(filter=view.filter, sort=view.sort, reverse=view.reverse)
    if view.columns:
        kept["columns"] = list(view.columns)
    else:
        kept.pop("columns", None)
    tables[view.name] = kept
    try:
        make_private_dir(path.parent)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(HEADER + toml_text(document), encoding="utf-8")
        os.replace(partial, path)
    except OSError as error:
        raise ViewNotSaved(
            f"view {view.name!r} not saved: {path} cannot be written: {error.strerror or error}"
        ) from None


def toml_text(document: Mapping[str, Any]) -> str:
    """``document`` as TOML: its plain keys first, then its tables (dotted, in order)."""
    lines: list[str] = []
    _toml_table(document, [], lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def _toml_table(table: Mapping[str, Any], names: list[str], lines: list[str]) -> None:
    plain = {key: value for key, value in table.items() if not isinstance(value, Mapping)}
    nested = {key: value for key, value in table.items() if isinstance(value, Mapping)}
    if names and (plain or not nested):
        lines.extend(["", f"[{'.'.join(map(_toml_key, names))}]"])
    lines.extend(f"{_toml_key(key)} = {_toml_value(value)}" for key, value in plain.items())
    for key, value in nested.items():
        _toml_table(value, [*names, key], lines)


def _toml_key(name: str) -> str:
    bare = name and all(c.isascii() and (c.isalnum() or c in "-_") for c in name)
    return name if bare else _toml_string(name)


def _toml_string(text: str) -> str:
    # JSON's escapes are TOML's (\" \\ \n \t \uXXXX), but for DEL, which TOML escapes too.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, Mapping):  # a table inside a list: written inline
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return _toml_string(str(value))  # a date or a time TOML read: kept as its text
