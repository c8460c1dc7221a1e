"""constraints.txt pins what is tested: every distribution installed here, at its version.

``make`` installs with ``-c constraints.txt``, so a pin that is not what got
installed (a wheel resolved msgspec 0.23 against a pin of 0.22) or a package
an extra brought in without a pin means the pins no longer say what was tested.
"""

from __future__ import annotations

from importlib.metadata import distributions

from packaging.utils import canonicalize_name

from tests.conftest import REPO

NOT_PINNED = {"pip", "setuptools", "wheel", "runtop"}
"""The installer's own tools, and runtop itself."""


def pins() -> dict[str, str]:
    pinned: dict[str, str] = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        name, _, version = line.partition("==")
        pinned[canonicalize_name(name)] = version.strip()
    return pinned


def test_every_installed_distribution_is_pinned_at_its_version() -> None:
    installed = {canonicalize_name(dist.metadata["Name"]): dist.version for dist in distributions()}
    for name in NOT_PINNED:
        installed.pop(canonicalize_name(name), None)
    pinned = pins()
    assert {name: (pinned.get(name), version) for name, version in installed.items()
            if pinned.get(name) != version} == {}  # fmt: skip
    # A pin for a package nothing installs any more is a pin of nothing tested.
    assert sorted(set(pinned) - set(installed)) == []
