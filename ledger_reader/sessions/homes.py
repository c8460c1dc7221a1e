"""Where coding agents keep their sessions in a user's home."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

HOME_FOLDERS: Final = (
    (".claude", "projects"),
    (".codex", "sessions"),
    (".gemini", "tmp"),
)
"""Claude Code's, Codex CLI's and Gemini CLI's session folders, under the home."""


def home_session_dirs(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The coding agents' session folders present in ``$HOME`` (those that exist)."""
    environ = os.environ if environ is None else environ
    home = environ.get("HOME")
    base = Path(home) if home else Path.home()
    return [base.joinpath(*parts) for parts in HOME_FOLDERS if base.joinpath(*parts).is_dir()]


__all__ = ["HOME_FOLDERS", "home_session_dirs"]
