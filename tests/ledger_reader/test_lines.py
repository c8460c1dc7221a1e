"""The one forward line reader, its backward search, and the home and time-span resolvers."""

from __future__ import annotations

import ast
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from ledger_reader import DamagedLine, RunStarted, event_of, timespan
from ledger_reader.lines import (
    BOM,
    complete_end,
    last_line_start,
    read_ledger_lines,
    read_lines,
)
from ledger_reader.locations import default_ledger_dir, make_home, runtop_home
from tests.conftest import REPO, completed, line, started


def test_reads_every_complete_line_with_offsets(write_ledger: Callable[..., Path]) -> None:
    first, second = started(), line(2, "llm_chunk", {"delta": "a"})
    path = write_ledger(first, b"\n", second, b"torn")
    lines = list(read_ledger_lines(path, keep_raw=True))
    assert [(each.start, each.end) for each in lines] == [
        (0, len(first) - 1),
        (len(first), len(first)),
        (len(first) + 1, len(first) + len(second)),
    ]
    assert lines[1].item is None  # a blank line
    assert lines[2].raw == second[:-1]
    assert [event_of(each.item).seq for each in (lines[0], lines[2])] == [1, 2]  # type: ignore[union-attr]


def test_small_chunks_read_the_same(write_ledger: Callable[..., Path]) -> None:
    path = write_ledger(started(), line(2, "llm_chunk", {"delta": "é" * 50}), completed(3))
    fd = os.open(path, os.O_RDONLY)
    try:
        whole = list(read_lines(fd, keep_raw=True))
        bitwise = list(read_lines(fd, keep_raw=True, chunk=7))
    finally:
        os.close(fd)
    assert whole == bitwise
    assert len(whole) == 3


def test_a_torn_tail_is_damage_only_when_asked(write_ledger: Callable[..., Path]) -> None:
    whole = started()
    path = write_ledger(whole, completed(2)[:20])
    assert len(list(read_ledger_lines(path))) == 1
    lines = list(read_ledger_lines(path, torn_tail=True))
    torn = lines[-1].item
    assert isinstance(torn, DamagedLine)
    assert (torn.offset, torn.length) == (len(whole), 20)
    assert "torn" in torn.reason


def test_a_byte_order_mark_is_not_part_of_the_first_line(
    write_ledger: Callable[..., Path],
) -> None:
    path = write_ledger(BOM + started(), completed(2))
    lines = list(read_ledger_lines(path, keep_raw=True))
    assert isinstance(lines[0].item, RunStarted)
    assert lines[0].start == 3
    assert not lines[0].raw.startswith(BOM)


def test_a_byte_order_mark_fed_byte_by_byte(write_ledger: Callable[..., Path]) -> None:
    path = write_ledger(BOM + started())
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = list(read_lines(fd, chunk=1))
    finally:
        os.close(fd)
    assert isinstance(lines[0].item, RunStarted)


def test_an_over_long_line_is_damage_never_held(write_ledger: Callable[..., Path]) -> None:
    path = write_ledger(started(), b"x" * 5000 + b"\n", completed(3))
    lines = list(read_ledger_lines(path, max_line_bytes=1000))
    assert isinstance(lines[1].item, DamagedLine)
    assert lines[1].item.length == 5000
    assert event_of(lines[2].item).seq == 3  # type: ignore[union-attr]


def test_backward_search_grows_until_it_holds_the_last_line(
    write_ledger: Callable[..., Path],
) -> None:
    long_last = completed(3, output="y" * 300_000)
    head = started() + line(2, "llm_chunk", {"delta": "a"})
    path = write_ledger(head, long_last, b"torn tail")
    fd = os.open(path, os.O_RDONLY)
    try:
        end = complete_end(fd, os.fstat(fd).st_size)
        assert end == len(head) + len(long_last)
        assert last_line_start(fd, end) == len(head)
        assert last_line_start(fd, end, limit=100_000) is None  # longer than allowed
        assert last_line_start(fd, 0) is None
    finally:
        os.close(fd)


def test_backward_search_skips_a_byte_order_mark(write_ledger: Callable[..., Path]) -> None:
    path = write_ledger(BOM + started())
    fd = os.open(path, os.O_RDONLY)
    try:
        assert last_line_start(fd, complete_end(fd, os.fstat(fd).st_size)) == 3
    finally:
        os.close(fd)


# -- where runtop keeps things ---------------------------------------------------------


def test_runtop_home_moves_the_default_ledger_directory(tmp_path: Path) -> None:
    environ = {"RUNTOP_HOME": str(tmp_path / "home")}
    assert runtop_home(environ) == tmp_path / "home"
    assert default_ledger_dir(environ) == tmp_path / "home" / "runs"
    environ["RUNTOP_LEDGER_DIR"] = str(tmp_path / "elsewhere")
    assert default_ledger_dir(environ) == tmp_path / "elsewhere"


def test_plain_runtop_honours_runtop_home(tmp_path: Path) -> None:
    from tui.settings import Settings

    settings = Settings.from_env({"RUNTOP_HOME": str(tmp_path / "home")})
    assert settings.ledger_dir == tmp_path / "home" / "runs"
    assert settings.state_file == tmp_path / "home" / "state.json"


def test_home_is_created_private_with_its_parents(tmp_path: Path) -> None:
    home = make_home({"RUNTOP_HOME": str(tmp_path / "a" / "home")})
    for made in (home, home.parent):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700
    os.chmod(home, 0o750)
    make_home({"RUNTOP_HOME": str(home)})
    assert stat.S_IMODE(home.stat().st_mode) == 0o750  # an existing one is the user's


def test_a_token_written_to_a_fresh_home_keeps_it_private(tmp_path: Path) -> None:
    from run_manager.server.tokens import write_token

    home = tmp_path / "fresh"
    written = write_token("127.0.0.1", 8765, "secret", home)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE(written.parent.stat().st_mode) == 0o700


# -- since ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "back"),
    [("30s", 30), ("5m", 300), ("1h", 3600), ("7d", 7 * 86400), ("1.5H", 5400), (" 2m ", 120)],
)
def test_spans_count_back_from_now(value: str, back: float) -> None:
    assert timespan.since(value, 1_000_000.0) == 1_000_000.0 - back


def test_a_time_is_taken_as_is() -> None:
    assert timespan.since("1970-01-02T00:00:00Z", 5.0) == 86400.0


@pytest.mark.parametrize("value", ["", "5", "m5", "5y", "yesterday", "2026-11-29T06:45:00"])
def test_anything_else_is_refused(value: str) -> None:
    with pytest.raises(timespan.BadTimeSpan):
        timespan.since(value, 0.0)


def test_server_and_filter_read_since_alike() -> None:
    from inspector.filters import FilterError, since_seconds

    assert since_seconds("1.5h", 10_000.0) == timespan.since("1.5h", 10_000.0)
    with pytest.raises(FilterError):
        since_seconds("soon", 0.0)


# -- one forward reader -----------------------------------------------------------------

_READING_NAMES = {"pread", "preadv", "LineAssembler", "decode_lines", "readline", "readlines"}


def _forward_reads(tree: ast.AST) -> list[int]:
    """Lines where a module reads a file forward by itself: a loop that reads or splits
    bytes, or any use of the low-level pieces the line reader is made of."""
    found: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute | ast.Name):
            name = node.attr if isinstance(node, ast.Attribute) else node.id
            if name in _READING_NAMES:
                found.append(node.lineno)
        if isinstance(node, ast.For | ast.While | ast.AsyncFor):
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.Call)
                    and isinstance(inner.func, ast.Attribute)
                    and inner.func.attr in {"read", "read_bytes"}
                ):
                    found.append(inner.lineno)
    return found


def test_no_forward_reading_loop_outside_ledger_reader() -> None:
    offenders = {}
    for package in ("inspector", "run_manager", "tui"):
        for module in sorted((REPO / package).rglob("*.py")):
            found = _forward_reads(ast.parse(module.read_text(), str(module)))
            if found:
                offenders[str(module.relative_to(REPO))] = found
    assert offenders == {}
