"""A ledger directory someone else can write into is refused, by the manager and by
``runtop serve``: whoever can write there can cancel and resume runs through ``.control``
files and remove ledgers. Meant to be shared, it is taken with a warning."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from run_manager import LedgerDirShared, Manager
from tests.conftest import REPO

pytestmark = pytest.mark.timeout(30)

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder away takes root")


def folder(tmp_path: Path, mode: int) -> Path:
    path = tmp_path / "runs"
    path.mkdir()
    path.chmod(mode)
    return path


@pytest.mark.parametrize(
    ("mode", "said"),
    [(0o777, "everyone may write into"), (0o1777, "everyone may write into"), (0o770, "group")],
)
def test_a_folder_others_may_write_into_is_refused(tmp_path: Path, mode: int, said: str) -> None:
    runs = folder(tmp_path, mode)
    with pytest.raises(LedgerDirShared) as refused:
        Manager(ledger_dir=runs)
    assert said in str(refused.value)
    assert "cancel and resume runs" in str(refused.value)
    assert list(runs.iterdir()) == []  # nothing written into it


@as_root
def test_a_folder_another_user_owns_is_refused(tmp_path: Path) -> None:
    runs = folder(tmp_path, 0o700)
    os.chown(runs, NOBODY, NOBODY)
    with pytest.raises(LedgerDirShared, match="belongs to user"):
        Manager(ledger_dir=runs)


@as_root
def test_a_control_folder_another_user_owns_is_refused(tmp_path: Path) -> None:
    runs = folder(tmp_path, 0o700)
    (runs / ".control").mkdir(mode=0o700)
    os.chown(runs / ".control", NOBODY, NOBODY)
    with pytest.raises(LedgerDirShared, match=r"\.control belongs to user"):
        Manager(ledger_dir=runs)


@as_root
def test_a_link_another_user_made_to_a_private_folder_is_refused(tmp_path: Path) -> None:
    runs = folder(tmp_path, 0o700)
    link = tmp_path / "link"
    link.symlink_to(runs)
    os.lchown(link, NOBODY, NOBODY)
    with pytest.raises(LedgerDirShared, match="belongs to user"):
        Manager(ledger_dir=link)


def test_a_folder_meant_to_be_shared_is_taken_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runs = folder(tmp_path, 0o777)
    with caplog.at_level(logging.WARNING, logger="run_manager.manager"):
        manager = Manager(ledger_dir=runs, shared_ledger_dir=True)
    assert manager.ledger_dir == runs
    assert any("everyone may write into" in record.getMessage() for record in caplog.records)


def test_a_private_folder_is_taken(tmp_path: Path) -> None:
    runs = folder(tmp_path, 0o755)
    assert Manager(ledger_dir=runs).ledger_dir == runs


def test_serve_refuses_a_shared_folder_in_one_line_and_takes_it_when_told(
    tmp_path: Path,
) -> None:
    runs = folder(tmp_path, 0o777)
    env = {**os.environ, "RUNTOP_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "tui.cli", "serve", "--port", "0", "--ledger-dir", str(runs)]
    refused = subprocess.run(command, capture_output=True, text=True, env=env, timeout=20)
    assert refused.returncode in (1, 2)  # refused, in words: not a crash (70)
    [line] = refused.stderr.strip().splitlines()
    assert "everyone may write into" in line
    assert "--shared-ledger-dir" in line
    taken = subprocess.Popen(
        [*command, "--shared-ledger-dir"], stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert taken.stderr is not None
        said = ""
        while "runtop serve: http://" not in said:
            line = taken.stderr.readline()
            assert line, said
            said += line
        assert "everyone may write into" in said
    finally:
        taken.terminate()
        taken.communicate(timeout=20)
