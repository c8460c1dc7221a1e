"""What a third fresh-eyes walk found in the palette, each kept fixed by a pilot test."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.filters import FIELDS
from tests.test_keys_leftovers import palette
from tests.tui_support import loaded, sample_app

pytestmark = pytest.mark.timeout(60)


async def test_the_palette_s_filter_names_every_field_the_filter_takes(fixtures: Path) -> None:
    """It said ``by status:, skill:, agent:, since:, text``: the filter also takes
    ``source:``, ``run:``, ``parent:`` and ``error:`` (the children of a run among them)."""
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        said = (await palette(pilot))["Filter"]
        assert all(f"{field}:" in said for field in FIELDS), said
