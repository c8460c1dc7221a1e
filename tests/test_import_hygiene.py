"""The core packages never import the UI (STYLE.md, point 1)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


@pytest.mark.parametrize("package", ["ledger_reader", "run_manager", "inspector"])
def test_core_package_imports_no_ui(package: str) -> None:
    probe = (
        f"import json, sys; import {package}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {'textual','rich'})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=30
    )
    assert json.loads(result.stdout) == []


def test_the_probe_sees_ui_imports() -> None:
    """The check above would catch an import: tui does import rich."""
    probe = (
        "import json, sys; import tui.cli; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'rich')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=30
    )
    assert "rich" in json.loads(result.stdout)


EXTRAS = ("pydantic_ai", "agents", "openai", "opentelemetry", "google", "ray")
"""Top-level packages of the extras (pydantic-ai, openai-agents, otlp, ray): the core loads none."""


def test_the_core_loads_no_extra_even_running_an_agent(tmp_path: Path) -> None:
    """A plain agent's run goes through the adapter check without loading any framework."""
    probe = textwrap.dedent(
        f"""
        import asyncio, json, sys
        import ledger_reader, inspector, run_manager, run_manager.server
        from run_manager import Manager

        class Plain:
            name = "plain"
            async def run(self, input):
                return input

        async def main():
            async with Manager(ledger_dir={str(tmp_path)!r}) as manager:
                assert await manager.start(Plain(), "hi").result() == "hi"

        asyncio.run(main())
        print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {EXTRAS!r})))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=30
    )
    assert json.loads(result.stdout) == []


def test_the_probe_sees_an_extra_once_its_agent_is_passed(tmp_path: Path) -> None:
    """The check above would catch a framework loaded: here one is, by the caller."""
    pytest.importorskip("pydantic_ai")
    probe = (
        "import json, sys; import run_manager; import pydantic_ai; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic_ai')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert "pydantic_ai" in json.loads(result.stdout)


def test_the_probe_sees_ray_once_the_ray_executor_is_imported() -> None:
    """Only ``run_manager.ray`` imports ray (extra ``ray``)."""
    probe = (
        "import json, sys; import run_manager.ray; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'ray')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert "ray" in json.loads(result.stdout)
