"""The launch imports only what the first frame needs (the other screens come when first
asked for, on the main thread)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(60)


LAUNCH_PROBE = """
import json, sys
import tui.cli, tui.app, tui.commands.watch
print(json.dumps(sorted(sys.modules)))
"""


def test_the_launch_imports_only_what_the_first_frame_needs() -> None:
    """The tool-call and cancel screens (DataTable, Input: ~8 ms) and Rich's Syntax with
    Pygments (~12 ms) are imported when first used, on the main thread, not at launch."""
    found = subprocess.run(
        [sys.executable, "-c", LAUNCH_PROBE], capture_output=True, text=True, check=True
    )
    loaded = set(json.loads(found.stdout))
    assert {"tui.app", "tui.screens.runs", "textual.app"} <= loaded  # the probe loaded the app
    assert not loaded & {
        "tui.screens.tools",
        "tui.screens.tool_calls",
        "tui.screens.cancel",
        "tui.screens.approval",
        "rich.syntax",
        "pygments",
    }
