"""Amounts as people type them, read one way wherever they are taken."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ledger_reader import quantities, timespan
from ledger_reader.quantities import BadQuantity
from ledger_reader.run_filter import RunFilter


@pytest.mark.parametrize(
    ("text", "value"),
    [("500", 500), ("50k", 50_000), ("1.5M", 1_500_000), ("200K", 200_000), ("10_000", 10_000)],
)
def test_counts(text: str, value: int) -> None:
    assert quantities.count(text) == value


@pytest.mark.parametrize(
    ("text", "value"), [("0.5", 0.5), ("10k", 10_000.0), ("1.5M", 1_500_000.0), (".5k", 500.0)]
)
def test_numbers_keep_their_fraction(text: str, value: float) -> None:
    assert quantities.number(text) == value


@pytest.mark.parametrize(
    ("text", "value"), [("512M", 512 * 1024**2), ("20G", 20 * 1024**3), ("20GB", 20 * 1024**3)]
)
def test_sizes(text: str, value: int) -> None:
    assert quantities.size(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        *(("90", 90.0), ("90s", 90.0), ("5m", 300.0), ("1.5h", 5400.0), ("7d", 604800.0)),
        *(("500ms", 0.5), ("30 s", 30.0), ("2H", 7200.0)),
    ],
)
def test_time_spans(text: str, value: float) -> None:
    assert quantities.seconds(text) == value


def test_every_time_span_is_read_alike() -> None:
    """A filter's ``duration:`` and ``since:``, a budget's seconds, the attach API's
    ``since=`` read a span by the one rule."""
    now = 1_800_000_000.0
    for text in ("500ms", "90s", "5m", "1.5h", "7d"):
        seconds = quantities.seconds(text)
        assert timespan.since(text, now) == now - seconds
        assert RunFilter.parse(f"duration:>{text}").terms[0].test(seconds + 0.001) is True
        assert RunFilter.parse(f"duration:>{text}").terms[0].test(seconds) is False


def test_a_time_span_may_have_to_say_its_unit() -> None:
    with pytest.raises(BadQuantity, match="give its unit"):
        quantities.seconds("30", bare=False)


@pytest.mark.parametrize(("text", "value"), [("1.00", 1.0), ("$0.50", 0.5), (".25", 0.25)])
def test_dollars(text: str, value: float) -> None:
    assert quantities.usd(text) == value


@pytest.mark.parametrize(
    ("parse", "text"),
    [
        (quantities.count, "lots"),
        (quantities.count, "-5"),
        (quantities.count, "5x"),
        (quantities.number, "$5"),
        (quantities.number, ""),
        (quantities.size, "-1G"),
        (quantities.seconds, "5y"),
        (quantities.usd, "1.00$$"),
        (quantities.usd, ""),
    ],
)
def test_what_is_not_an_amount_is_said(parse: Callable[[str], object], text: str) -> None:
    with pytest.raises(BadQuantity, match="is not"):
        parse(text)
