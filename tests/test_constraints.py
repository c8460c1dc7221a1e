"""constraints.txt pins what is tested: every distribution runtop and its test extra need.

``make`` installs with ``-c constraints.txt``, so a pin that is not what got
installed (a wheel resolved msgspec 0.23 against a pin of 0.22), a package an
extra brought in without a pin, or a pin nothing needs any more means the pins
no longer say what was tested. What is needed is read from the installed
metadata, so a venv older than pyproject.toml fails here until ``make setup``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, distribution

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import REPO
from tui.cli import DISTRIBUTION

EXTRAS = ("test",)
"""The extras ``make test`` installs (the test extra names the others)."""


def pins() -> dict[str, str]:
    pinned: dict[str, str] = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        name, _, version = line.partition("==")
        pinned[canonicalize_name(name)] = version.strip()
    return pinned


def needed() -> dict[str, str]:
    """Every distribution runtop with its test extra requires, at its installed version."""
    found: dict[str, str] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    stack: list[tuple[str, frozenset[str]]] = [(DISTRIBUTION, frozenset(EXTRAS))]
    while stack:
        name, extras = stack.pop()
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            continue  # an optional dependency for another platform
        if canonicalize_name(name) != DISTRIBUTION:
            found[canonicalize_name(name)] = dist.version
        for text in dist.requires or []:
            requirement = Requirement(text)
            marker = requirement.marker
            if marker is not None and not any(
                marker.evaluate({"extra": extra}) for extra in extras or {""}
            ):
                continue
            key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
            if key not in seen:
                seen.add(key)
                stack.append((requirement.name, key[1]))
    return found


def test_every_distribution_tested_is_pinned_at_its_version() -> None:
    installed = needed()
    pinned = pins()
    assert len(installed) > 50, installed  # the extras' dependencies were followed too
    wrong = {
        name: (pinned.get(name), version)
        for name, version in installed.items()
        if pinned.get(name) != version
    }
    assert wrong == {}, "constraints.txt against what is installed"
    # A pin for a package nothing needs any more is a pin of nothing tested.
    assert sorted(set(pinned) - set(installed)) == []
