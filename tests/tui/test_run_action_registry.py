"""The run actions are one list (``inspector.actions.RUN_ACTIONS``): a new run key is one
entry there and the method that does it, and every key, bar, palette entry, ``?`` line,
typed-ahead key and ``check_action`` follows."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.actions import RUN_ACTIONS

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]

NEW_KEY = """
import asyncio, json, sys
from pathlib import Path

import inspector.actions as actions

# The action: one entry in the registry (asking what an approval asks of the run).
actions.RUN_ACTIONS = (
    *actions.RUN_ACTIONS,
    actions.RunAction(
        "nudge", "z", "approve", "Nudge", "Nudge the selected run's approval", command=False
    ),
)

# The key's screen: what the key does, a method of that name.
from tui.run_actions import RunKeys

nudged: list[str] = []
RunKeys.nudge = lambda self, run: nudged.append(run.run_id)

from run_manager import Manager
from inspector import ManagerSource
from tests.tui_support import awaiting_approval, noticed, sample_app, settle
from tui.palette import palette_commands
from tui.widgets.key_bar import KeyBar
from tui.widgets.keys_help import KeyList, key_lines

ENDED = "run_20261128T143000012_4f1a9c2e7b3d8a60"


async def main(fixtures: Path) -> dict[str, object]:
    seen: dict[str, object] = {}
    async with Manager() as manager:
        app = sample_app(fixtures, ManagerSource(manager, name="local"))
        async with app.run_test(size=(200, 48), notifications=True) as pilot:
            rows, waiting = await awaiting_approval(pilot, manager)
            rows.select_key(next(r.key for r in rows.rows if r.run_id == waiting.run_id))
            await pilot.pause()
            seen["bar"] = app.screen.query_one(KeyBar).render().plain
            seen["palette"] = {e.title: e.help for e in palette_commands(app, app.screen)}
            seen["enabled"] = app.screen.check_action("run_key", ("nudge",))
            await pilot.press("question_mark")
            await settle(pilot, lambda: app.screen.query(KeyList), "the keys")
            seen["help"] = [[line.keys, line.description] for line in key_lines(app.screen)]
            await pilot.press("escape")
            await pilot.press("z")
            await settle(pilot, lambda: nudged, "the nudge")
            seen["nudged"] = list(nudged)
            rows.select_key(next(r.key for r in rows.rows if r.run_id == ENDED))
            await pilot.pause()
            seen["greyed"] = app.screen.check_action("run_key", ("nudge",))
            seen["palette_ended"] = [e.title for e in palette_commands(app, app.screen)]
            await pilot.press("z", "x", "y")  # refused: the keys typed after it set aside
            seen["refused"] = await noticed(pilot, "cannot nudge")  # its own verb
            seen["nudged_after"] = list(nudged)
            seen["waiting"] = waiting.run_id
            manager.cancel_all()
    return seen


print(json.dumps(asyncio.run(main(Path(sys.argv[1])))))
"""


def test_a_new_run_key_is_one_entry_and_its_method(fixtures: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", NEW_KEY, str(fixtures)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert " z Nudge " in seen["bar"]
    assert seen["palette"]["Nudge"] == "Nudge the selected run's approval (z)"
    assert ["z", "Nudge"] in seen["help"]
    assert seen["enabled"] is True
    assert seen["nudged"] == [seen["waiting"]]
    assert seen["greyed"] is None  # greyed: the ended run awaits no approval
    assert "Nudge" not in seen["palette_ended"]
    assert "not waiting on an approval" in seen["refused"]
    assert seen["nudged_after"] == [seen["waiting"]]  # refused: not done


RUN_ACTION_NAMES = {action.name for action in RUN_ACTIONS} | {"cancel", "resume", "approve"}


def literal_lists_of_run_actions(path: Path) -> list[int]:
    """The lines of ``path`` where a literal tuple, list, set or dict names two or more run
    actions by their names: a second list of them."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        items: list[ast.expr | None] = []
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = list(node.elts)
        elif isinstance(node, ast.Dict):
            items = [*node.keys, *node.values]
        named = {
            item.value
            for item in items
            if isinstance(item, ast.Constant) and item.value in RUN_ACTION_NAMES
        }
        if len(named) >= 2:
            lines.append(getattr(node, "lineno", 0))
    return lines


def test_the_registry_is_the_only_list_of_run_actions() -> None:
    """The keys, bars, palette, typed-ahead keys and screens list no run actions of their
    own (a source's capability flags and the ledger format's are not run keys)."""
    found = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "tui").rglob("*.py"))
        if (lines := literal_lists_of_run_actions(path))
    }
    assert found == {}
