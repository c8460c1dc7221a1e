"""The core packages never import the UI (STYLE.md, point 1)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

WALK = """
import importlib, json, pkgutil, sys
loaded = []
for package in sys.argv[1:]:
    root = importlib.import_module(package)
    for found in pkgutil.walk_packages(root.__path__, package + "."):
        importlib.import_module(found.name)
        loaded.append(found.name)
top = {name.split(".")[0] for name in sys.modules}
print(json.dumps({"loaded": loaded, "top": sorted(top)}))
"""
"""Imports every submodule of the packages named (pkgutil.walk_packages), not only each
package's ``__init__``; prints what it imported and every top-level package loaded."""


def walk(*packages: str) -> tuple[list[str], set[str]]:
    result = subprocess.run(
        [sys.executable, "-c", WALK, *packages],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    found = json.loads(result.stdout)
    return found["loaded"], set(found["top"])


FRAMEWORKS = ["pydantic_ai", "agents", "ray", "grpc", "opentelemetry.proto"]
"""What the adapters, executors and OTLP ingest bridge to: their own dependencies may load what
they like (httpx loads rich for its command line), which is not the core importing the UI."""


def frameworks_top() -> set[str]:
    probe = (
        "import importlib, json, sys\n"
        "for name in sys.argv[1:]: importlib.import_module(name)\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, *FRAMEWORKS],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return set(json.loads(result.stdout))


@pytest.mark.parametrize("package", ["ledger_reader", "run_manager", "inspector"])
def test_no_module_of_the_core_imports_the_ui(package: str) -> None:
    loaded, top = walk(package)
    assert len(loaded) >= 5, loaded  # the walk reached the submodules
    ui = top & {"textual", "rich"}
    if package == "run_manager":
        ui -= frameworks_top()
    assert not ui


def test_the_walk_sees_ui_imports() -> None:
    """The check above would catch an import: tui's widgets do import textual."""
    loaded, top = walk("tui")
    assert "tui.widgets.event_list" in loaded
    assert {"textual", "rich"} <= top


def test_the_commands_that_print_load_neither_textual_nor_the_run_manager() -> None:
    """``ls`` and ``show`` answer in a fraction of a second: no Textual, no run manager."""
    probe = (
        "import json, sys; import tui.cli, tui.commands.ls, tui.commands.show; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=30
    )
    top = set(json.loads(result.stdout))
    assert "rich" in top
    assert "textual" not in top
    assert "run_manager" not in top


def test_ls_json_loads_neither_rich_nor_asyncio() -> None:
    """``runtop ls --json`` pays for every import on each call: it needs no console."""
    probe = (
        "import contextlib, io, json, sys; from tui.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    code = main(['ls', sys.argv[1], '--json'])\n"
        "runs = [json.loads(line) for line in out.getvalue().splitlines()]\n"
        "print(json.dumps([code, len(runs),"
        " sorted({m.split('.')[0] for m in sys.modules})]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(FIXTURES)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    code, listed, loaded = json.loads(result.stdout)
    assert (code, listed) == (0, len(list(FIXTURES.glob("*.jsonl"))))
    assert not {"rich", "textual", "asyncio", "run_manager"} & set(loaded)


EXTRAS = ("pydantic_ai", "agents", "openai", "opentelemetry", "google", "grpc", "ray")
"""Top-level packages of the extras (pydantic-ai, openai-agents, otlp, ray): the core loads none."""


def test_the_core_loads_no_extra_even_running_an_agent(tmp_path: Path) -> None:
    """A plain agent's run goes through the adapter check without loading any framework."""
    probe = textwrap.dedent(
        f"""
        import asyncio, json, sys
        import ledger_reader, inspector, run_manager, run_manager.server.attach
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
    """Only ``run_manager.executors.ray`` imports ray (extra ``ray``)."""
    probe = (
        "import json, sys; import run_manager.executors.ray; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'ray')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert "ray" in json.loads(result.stdout)
