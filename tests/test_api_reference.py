"""The API reference (``make docs``) builds from the docstrings without a warning or a gap.

``make test`` runs this, so a public class, function or method added without a
docstring, or an annotation pdoc cannot read, fails the suite rather than
leaving a hole in the reference.
"""

from __future__ import annotations

import html
import importlib.util
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "docs" / "api_reference.py"


def reference_builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("api_reference", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_builds_clean_and_answers_what_users_asked(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "api")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert built.returncode == 0, built.stderr
    assert built.stderr == ""
    for page in ("index", "run_manager", "inspector/source", "inspector/remote_source"):
        assert (tmp_path / "api" / f"{page}.html").is_file(), page
    manager = (tmp_path / "api" / "run_manager.html").read_text()
    # What the library's users had to read the source for.
    for name in ("Manager", "Handle", "Info", "tool_call", "model_call", "approval", "Hub"):
        assert f'id="{name}"' in manager, name
    assert 'id="Info.pending_approvals"' in manager
    text = html.unescape(re.sub(r"<[^>]+>", "", manager))
    assert "None means the run's only pending approval" in " ".join(text.split())
    assert "retained_runs: int = 100" in text  # Manager()'s defaults, as values
    events = (tmp_path / "api" / "ledger_reader" / "events.html").read_text()
    for name in ("RunStarted", "ToolCall", "LlmCall", "ApprovalRequest", "RunCompleted"):
        assert f'id="{name}"' in events, name
    assert (tmp_path / "api" / "run_manager" / "server" / "standalone.html").is_file()


def test_a_gap_or_a_warning_fails_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "gappy.py").write_text(
        textwrap.dedent(
            '''
            """A module with a hole in its reference."""

            from __future__ import annotations


            class Shelf:
                """Documented."""

                def list(self) -> None:
                    """Documented, and it shadows the builtin in the class."""

                def items(self) -> list[int]:
                    return []


            def undocumented() -> None:
                pass
            '''
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    problems = reference_builder().build(tmp_path / "api", ("gappy",))
    assert "no docstring: gappy.undocumented" in problems
    assert "no docstring: gappy.Shelf.items" in problems
    assert any(p.startswith("pdoc: ") and "gappy.Shelf.items" in p for p in problems), problems
