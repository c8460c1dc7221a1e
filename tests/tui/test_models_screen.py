"""``M``: model calls across every run, by model, with what ``runtop stats --by model``
says of the same ledgers (the one fold, :mod:`inspector.call_stats`), from the key and the
palette, and kept as runs land."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inspector import LedgerDirectorySource
from tests.conftest import REPO
from tests.family_runs import family
from tests.tui.test_interaction import screen_lines
from tests.tui_support import loaded, sample_app, settle
from tui.screens.models import ModelsScreen

pytestmark = pytest.mark.timeout(60)


def models_shown(app: Any) -> dict[str, list[str]]:
    """Each row of the models' table as drawn: the model, then its numbers' words."""
    shown = {}
    for line in screen_lines(app):
        words = line.split()
        if words and words[0].startswith(("m-", "claude")):
            shown[words[0]] = words[1:]
    return shown


def stats_said(*places: Path, home: Path) -> dict[str, dict[str, Any]]:
    answer = subprocess.run(
        [sys.executable, "-m", "tui.cli", "stats", *map(str, places), "--json"],
        capture_output=True,
        text=True,
        env={"RUNTOP_HOME": str(home), "PATH": "/usr/bin:/bin"},
        cwd=REPO,
        timeout=30,
        check=True,
    )
    return {row["model"]: row for row in json.loads(answer.stdout)}


async def test_m_shows_what_stats_says_and_grows_as_runs_land(
    fixtures: Path, tmp_path: Path
) -> None:
    family_dir = tmp_path / "family"
    family_dir.mkdir()
    app = sample_app(fixtures, LedgerDirectorySource(family_dir, name="family"))
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("M")
        await settle(pilot, lambda: isinstance(app.screen, ModelsScreen), "the models")
        await settle(pilot, lambda: "claude-sonnet" in models_shown(app), "claude-sonnet")
        assert set(models_shown(app)) == {"claude-sonnet"}  # the unanswered calls: not counted
        await asyncio.to_thread(lambda: asyncio.run(family(family_dir)))
        await settle(pilot, lambda: len(models_shown(app)) == 3, "the family's models, live")
        said = await asyncio.to_thread(stats_said, fixtures, family_dir, home=tmp_path)

        def every_call_folded() -> bool:  # a model's row comes with its first call
            shown = models_shown(app)
            return all(
                shown.get(model, [""])[0] == str(row["calls"]) for model, row in said.items()
            )

        await settle(pilot, every_call_folded, "every call of the family's runs")
        shown = models_shown(app)
        assert set(shown) == set(said)
        for model, row in said.items():
            calls, errors, _median, _p95, _tokens, cost, runs, running = shown[model]
            assert (int(calls), int(errors), int(runs), running) == (
                row["calls"], row["errors"], row["runs"], "0"
            ), model  # fmt: skip
            assert cost == f"${row['cost_usd']:.4f}", model
        assert shown["claude-sonnet"][2:4] == ["0.9s", "0.9s"]  # 0.86 s, request to answer
        await pilot.press("M")  # M again (or Escape): back
        await settle(pilot, lambda: not isinstance(app.screen, ModelsScreen), "the runs again")


async def test_the_palette_offers_the_model_calls(fixtures: Path) -> None:
    app = sample_app(fixtures)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"model calls")
        await settle(pilot, lambda: "Model calls" in "\n".join(screen_lines(app)), "the entry")
        await pilot.press("enter")
        await settle(pilot, lambda: isinstance(app.screen, ModelsScreen), "the models")
        assert "claude-sonnet" in models_shown(app)
