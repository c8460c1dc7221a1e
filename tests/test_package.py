"""The package a user installs: a wheel built from this checkout, installed into a new
virtual environment outside it, runs as ``runtop`` and ``python -m runtop``, and holds the
samples, the licence and the metadata the package index shows.

The new environment takes runtop's dependencies from this one's site-packages (by a
``.pth`` line, which does not bring this checkout's editable install along): the test is
of what the wheel holds, without downloading its dependencies again.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO, runs_listed
from tui.cli import DISTRIBUTION

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        check=True,
        capture_output=True,
        timeout=150,
    )
    [built] = out.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with the wheel installed; its ``bin``."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    subprocess.run(
        [*pip, "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    purelib = subprocess.run(
        [venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "runtop-test-dependencies.pth").write_text(
        sysconfig.get_path("purelib") + "\n"
    )
    return venv / "bin"


def run(command: list[str | Path], home: Path) -> str:
    """``command`` from outside the checkout, in a new home; its stdout."""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    ran = subprocess.run(
        command, capture_output=True, text=True, cwd=home, env=env, timeout=60, check=False
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def test_the_command_and_the_module_say_the_version(installed: Path, tmp_path: Path) -> None:
    assert run([installed / "runtop", "--version"], tmp_path) == "runtop 0.1.0\n"
    assert run([installed / "python", "-m", "runtop", "--version"], tmp_path) == "runtop 0.1.0\n"
    where = run([installed / "python", "-c", "import tui; print(tui.__file__)"], tmp_path)
    assert not Path(where.strip()).is_relative_to(REPO)  # the wheel's, not this checkout's


def test_the_installed_samples_list(installed: Path, tmp_path: Path) -> None:
    folder = run([installed / "runtop", "samples", "--path"], tmp_path).strip()
    assert folder == str(tmp_path / ".runtop" / "samples")
    listed = runs_listed(run([installed / "runtop", "ls", folder, "--json"], tmp_path))
    assert sorted(summary["run_id"] for summary in listed) == sorted(
        path.stem for path in FIXTURES.glob("*.jsonl")
    )
    assert not any(summary["status"] == "running" for summary in listed)


def test_the_wheel_holds_the_licence_and_says_what_it_is(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [metadata_name] = [name for name in names if name.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
    assert wheel.name.startswith(DISTRIBUTION.replace("-", "_") + "-")
    assert metadata["Name"] == DISTRIBUTION
    assert metadata["License-Expression"] == "MIT"
    assert any(name.endswith("licenses/LICENSE") for name in names)
    assert "Programming Language :: Python :: 3.11" in metadata.get_all("Classifier")
    assert "runtop/__main__.py" in names
    assert sum(name.startswith("tui/samples/") for name in names) == 6
