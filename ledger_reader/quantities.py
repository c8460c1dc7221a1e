"""Amounts as people type them: ``200k`` tokens, ``20G`` bytes, ``30s``, ``$1.00``.

One reading of such numbers for every place that takes them (``serve --retain``,
``serve --budget``, a filter's bounds: ``tokens:>=10k``, ``cost:>$0.01``): a count's
``k``, ``M``, ``G``, ``T`` are thousands, a size's powers of 1024, a time span's ``s``,
``m``, ``h``, ``d`` its unit. Each raises :class:`BadQuantity` saying what it expected.
"""

from __future__ import annotations

import re
from typing import Final

_COUNT_UNITS: Final = {"": 1, "k": 1000, "m": 1000**2, "g": 1000**3, "t": 1000**4}
_BYTE_UNITS: Final = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_SPAN_UNITS: Final = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
_NUMBER: Final = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*([a-z]{0,2})")


class BadQuantity(ValueError):
    """A value that is not the amount expected, said for the user."""


def _split(text: str, units: dict[str, int] | dict[str, float], expected: str) -> float:
    said = text.strip().lower().replace("_", "")
    match = _NUMBER.fullmatch(said)
    if match is None or match[2] not in units:
        raise BadQuantity(f"{text.strip()!r} is not {expected}")
    return float(match[1]) * units[match[2]]


def count(text: str) -> int:
    """A count, ``50000``, ``50k``, ``1.5M`` (thousands, millions, ...)."""
    return int(_split(text, _COUNT_UNITS, "a count like 500, 50k or 2M"))


def number(text: str) -> float:
    """A count that keeps its fraction, ``0.5``, ``10k``, ``1.5M``: a bound to compare
    counts with (``tokens:<0.5`` is below one token, not below none)."""
    return _split(text, _COUNT_UNITS, "a number like 5, 10k or 1.5M")


def size(text: str) -> int:
    """A size in bytes, ``512M``, ``20G``, ``20GB`` (powers of 1024)."""
    said = text.strip()
    if said[-1:] in ("b", "B") and len(said) > 1 and not said[-2:-1].isdigit():
        said = said[:-1]
    return int(_split(said, _BYTE_UNITS, "a size like 500M or 20G"))


def seconds(text: str, *, bare: bool = True) -> float:
    """A time span in seconds, ``500ms``, ``90s``, ``5m``, ``1.5h``, ``7d``; a bare number
    is seconds unless ``bare`` is false (where a forgotten unit would mean something else)."""
    said = text.strip().lower()
    expected = "a time span like 500ms, 90s, 5m, 2h or 7d"
    if said[-1:].isdigit() or said.endswith("."):
        if not bare:
            raise BadQuantity(f"{text.strip()!r} is not {expected} (give its unit)")
        said += "s"
    return _split(said, _SPAN_UNITS, expected)


def usd(text: str) -> float:
    """An amount of US dollars, ``1.00``, ``$0.50``."""
    return _split(text.strip().removeprefix("$"), {"": 1}, "an amount of dollars like 1.00")


__all__ = ["BadQuantity", "count", "number", "seconds", "size", "usd"]
