"""The core packages never import the UI (STYLE.md, point 1)."""

from __future__ import annotations

import json
import subprocess
import sys

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
