"""The TUI's settings: one object, built by the command line, passed to :func:`make_app`.

Every field can also come from a ``RUNTOP_*`` environment variable
(``RUNTOP_LEDGER_DIR``, ``RUNTOP_THEME``, ``RUNTOP_READ_ONLY``, ...).

A plain msgspec struct rather than pydantic-settings, which STYLE.md
suggests: importing pydantic would be most of what the first screen may
take (``bench/tui.py`` times the launch), for the parsing of five fields.
"""

from __future__ import annotations

import argparse
import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import msgspec

from inspector.actions import os_user
from inspector.ledger import default_ledger_dir, make_private_dir, runtop_home

_TRUE = {"1", "true", "yes", "on"}

VIEWS_FILE: Final = "views.toml"
"""The views' file in ``$RUNTOP_HOME`` (:mod:`tui.views`)."""


class Settings(msgspec.Struct, frozen=True):
    """What the app needs to know before it starts."""

    ledger_dir: Path = msgspec.field(default_factory=default_ledger_dir)
    """The ledger directory opened when no path is given."""
    theme: str = "textual-dark"
    """A Textual theme name."""
    read_only: bool = False
    """Turn every action off."""
    stale_after: float = 300.0
    """Seconds of quiet before another writer's unfinished run is stale."""
    flush_interval: float = 0.1
    """Longest a change waits before the screen hears of it: the screens' one throttle.
    Under a hundred live runs the store has news all the time; a table redrawn ten
    times a second looks as live and leaves the keys room."""
    clock: float | None = None
    """A fixed "now" (POSIX seconds) for relative times: snapshots and tests."""
    user: str | None = msgspec.field(default_factory=os_user)
    """Who the app's cancels and answers to approvals say asked: the OS user, or
    ``--user`` (``RUNTOP_USER``)."""
    state_file: Path | None = None
    """Where what the app remembers between sessions (the last filter) is kept; ``None``
    keeps nothing. ``from_env`` makes it ``$RUNTOP_HOME/state.json`` (``~/.runtop``)."""
    views_file: Path | None = None
    """Where the views of the runs table are kept (:mod:`tui.views`); ``None``: none.
    ``from_env`` makes it ``$RUNTOP_HOME/views.toml``."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Defaults, then ``RUNTOP_*`` variables, then ``overrides`` (the command line)."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name in cls.__struct_fields__:
            raw = environ.get(f"RUNTOP_{name.upper()}")
            if raw is None or raw == "":
                continue
            if name in {"ledger_dir", "state_file", "views_file"}:
                values[name] = Path(raw).expanduser()
            elif name == "read_only":
                values[name] = raw.strip().lower() in _TRUE
            elif name in {"stale_after", "flush_interval", "clock"}:
                try:
                    values[name] = float(raw)
                except ValueError as error:
                    raise ValueError(f"RUNTOP_{name.upper()}={raw!r} is not a number") from error
            else:
                values[name] = raw
        if "ledger_dir" not in values:
            values["ledger_dir"] = default_ledger_dir(environ)
        if "state_file" not in values:
            values["state_file"] = runtop_home(environ) / "state.json"
        if "views_file" not in values:
            values["views_file"] = runtop_home(environ) / VIEWS_FILE
        values.update(overrides)
        return cls(**values)


class SettingsError(ValueError):
    """A setting no app can run with (an unknown theme, a number that is none), from the
    command line or the environment: said in one line, exit status 2."""


def settings_from(args: argparse.Namespace) -> Settings:
    """:meth:`Settings.from_env`, with the app's options of the command line over it.

    Raises:
        SettingsError: a theme Textual does not have, or a variable that is not a number.
    """
    values: dict[str, Any] = {}
    if getattr(args, "theme", None):
        values["theme"] = args.theme
    if getattr(args, "read_only", False):
        values["read_only"] = True
    if getattr(args, "user", None):
        values["user"] = args.user
    try:
        settings = Settings.from_env(**values)
    except ValueError as error:
        raise SettingsError(str(error)) from None
    if "theme" not in values and not os.environ.get("RUNTOP_THEME"):
        return settings  # the default: no need to load Textual's themes to check it
    from textual.theme import BUILTIN_THEMES

    if settings.theme not in BUILTIN_THEMES:
        given = "--theme" if values.get("theme") else "RUNTOP_THEME"
        close = difflib.get_close_matches(settings.theme, sorted(BUILTIN_THEMES), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        names = ", ".join(sorted(BUILTIN_THEMES))
        raise SettingsError(f"{given} {settings.theme!r}: no such theme{hint} (themes: {names})")
    return settings


def load_state(path: Path | None) -> dict[str, Any]:
    """What was remembered; nothing when there is no file or it cannot be read."""
    if path is None:
        return {}
    try:
        state = msgspec.json.decode(path.read_bytes())  # not json: msgspec is loaded already
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def save_state(path: Path | None, **changes: Any) -> None:
    """Remember ``changes`` (best effort: a read-only home loses them, not the session)."""
    if path is None:
        return
    state = load_state(path)
    state.update(changes)
    try:
        make_private_dir(path.parent)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_bytes(msgspec.json.encode(state))
        os.replace(partial, path)
    except OSError:
        pass
