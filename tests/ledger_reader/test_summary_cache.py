"""The summary cache of ``runtop ls``: the same listing as without it, whatever befalls it.

Every test lists real files twice or more and compares with a listing that
reads every ledger (no cache) at the same ``now``. Entries are stored only
for ledgers quiet for a few seconds (``RACY_SECONDS``); the tests that need
entries for files they just wrote pass ``racy_seconds=0``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger_reader import MAX_LINE_BYTES, RunStatus, RunSummary, SummaryCache, scan_summaries
from ledger_reader.summary_cache import (
    MAX_CACHE_FILES,
    RACY_SECONDS,
    cache_file,
    reader_fingerprint,
)
from tests.conftest import REPO, completed, line, runs_listed, started
from tests.ledger_fixtures import write_fixture_ledgers

NOW = time.time()
"""The listings' now: liveness is judged at one time in every listing of a test."""


def listing(
    paths: list[Path], cache_path: Path, *, now: float = NOW, fingerprint: str = "reader-1"
) -> tuple[list[dict[str, Any]], SummaryCache]:
    cache = SummaryCache(cache_path, fingerprint, racy_seconds=0)
    summaries, errors = scan_summaries(paths, now=now, cache=cache)
    assert errors == []
    return _plain(summaries), cache


def read_all(paths: list[Path], *, now: float = NOW) -> list[dict[str, Any]]:
    summaries, errors = scan_summaries(paths, now=now)
    assert errors == []
    return _plain(summaries)


def _plain(summaries: list[RunSummary]) -> list[dict[str, Any]]:
    return json.loads(msgspec.json.encode(summaries))  # type: ignore[no-any-return]


@pytest.fixture
def ledgers(tmp_path: Path) -> Path:
    """The samples and one ledger per reading bug (a BOM, 3 MB last line, torn tail...)."""
    directory = tmp_path / "runs"
    write_fixture_ledgers(directory)
    return directory


def test_a_warm_listing_says_what_reading_every_ledger_says(ledgers: Path, tmp_path: Path) -> None:
    cache_path = tmp_path / "cache" / "ls.cache"
    expected = read_all([ledgers])
    cold, cache = listing([ledgers], cache_path)
    count = len(expected)
    assert (cold, cache.hits, cache.misses) == (expected, 0, count)
    warm, cache = listing([ledgers], cache_path)
    assert (warm, cache.hits, cache.misses) == (expected, count, 0)
    assert len(cache.loaded_paths) == count
    assert cache_path.stat().st_mode & 0o777 == 0o600


def _valid_cache(ledgers: Path, tmp_path: Path) -> bytes:
    source = tmp_path / "valid.cache"
    listing([ledgers], source)
    return source.read_bytes()


def _break_missing(path: Path, valid: bytes) -> None:
    pass


def _break_garbage(path: Path, valid: bytes) -> None:
    path.write_bytes(b"\x00\xff not a cache \x93" * 100)


def _break_empty(path: Path, valid: bytes) -> None:
    path.write_bytes(b"")


def _break_truncated(path: Path, valid: bytes) -> None:
    path.write_bytes(valid[: len(valid) // 2])


def _break_one_byte(path: Path, valid: bytes) -> None:
    at = len(valid) - 40  # inside the last entry's summary, past every header
    path.write_bytes(valid[:at] + bytes([valid[at] ^ 0x01]) + valid[at + 1 :])


def _break_foreign(path: Path, valid: bytes) -> None:
    path.write_bytes(valid.replace(b"reader-1", b"reader-0", 1))


@pytest.mark.parametrize(
    "damage",
    [
        _break_missing,
        _break_garbage,
        _break_empty,
        _break_truncated,
        _break_one_byte,
        _break_foreign,
    ],
    ids=lambda damage: damage.__name__.removeprefix("_break_"),
)
def test_a_missing_or_broken_cache_is_ignored_then_written_again(
    ledgers: Path, tmp_path: Path, damage: Any
) -> None:
    valid = _valid_cache(ledgers, tmp_path)
    cache_path = tmp_path / "cache" / "ls.cache"
    cache_path.parent.mkdir()
    damage(cache_path, valid)
    expected = read_all([ledgers])
    listed, cache = listing([ledgers], cache_path)
    assert (listed, cache.hits, cache.loaded_paths) == (expected, 0, frozenset())
    again, cache = listing([ledgers], cache_path)
    assert (again, cache.hits, cache.misses) == (expected, len(expected), 0)


def test_another_readers_cache_is_not_used(ledgers: Path, tmp_path: Path) -> None:
    cache_path = tmp_path / "ls.cache"
    listing([ledgers], cache_path, fingerprint="reader-1")
    listed, cache = listing([ledgers], cache_path, fingerprint="reader-2")
    assert (listed, cache.hits) == (read_all([ledgers]), 0)


def test_a_symlink_or_a_directory_where_the_cache_should_be_is_left_alone(
    ledgers: Path, tmp_path: Path
) -> None:
    valid = _valid_cache(ledgers, tmp_path)
    elsewhere = tmp_path / "elsewhere.cache"
    elsewhere.write_bytes(valid)
    linked = tmp_path / "linked.cache"
    linked.symlink_to(elsewhere)
    directory = tmp_path / "directory.cache"
    (directory / "inside").mkdir(parents=True)
    expected = read_all([ledgers])
    for cache_path in (linked, directory):
        for _ in range(2):
            listed, cache = listing([ledgers], cache_path)
            assert (listed, cache.hits) == (expected, 0)
    assert linked.is_symlink()
    assert elsewhere.read_bytes() == valid
    assert [path.name for path in directory.iterdir()] == ["inside"]
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        ["runs", "valid.cache", "elsewhere.cache", "linked.cache", "directory.cache"]
    ), "no temporary file left behind"


def test_an_appended_or_replaced_ledger_is_read_again(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    grown = runs / "run_grown.jsonl"
    grown.write_bytes(started() + line(2, "tool_call"))
    replaced = runs / "run_replaced.jsonl"
    replaced.write_bytes(started() + completed(2, "cancelled"))
    kept = runs / "run_kept.jsonl"
    kept.write_bytes(started() + completed(2, "ok"))
    cache_path = tmp_path / "ls.cache"
    listing([runs], cache_path)
    first, cache = listing([runs], cache_path)
    assert cache.hits == 3
    with grown.open("ab") as file:
        file.write(completed(3, "ok"))
    # A new file of the same size, renamed over the old one, with the old one's times.
    times = replaced.stat()
    swapped = runs / "swap.tmp"
    swapped.write_bytes(started() + completed(2, "suspended"))
    assert swapped.stat().st_size == times.st_size
    os.utime(swapped, ns=(times.st_atime_ns, times.st_mtime_ns))
    os.replace(swapped, replaced)
    listed, cache = listing([runs], cache_path)
    assert listed == read_all([runs])
    assert (cache.hits, cache.misses) == (1, 2)
    status = {summary["run_id"]: (summary["status"], summary["event_count"]) for summary in listed}
    assert status == {
        "run_grown": ("succeeded", 3),
        "run_replaced": ("suspended", 2),
        "run_kept": ("succeeded", 2),
    }
    assert {summary["run_id"]: summary["status"] for summary in first}["run_replaced"] == (
        "canceled"
    )


def test_a_ledger_changed_just_before_the_listing_is_not_stored(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "run_new.jsonl").write_bytes(started() + completed(2))
    cache_path = tmp_path / "ls.cache"
    for _ in range(2):
        cache = SummaryCache(cache_path, "reader-1")  # the real margin: written just now
        summaries, _ = scan_summaries([runs], now=NOW, cache=cache)
        assert (cache.hits, cache.misses, len(summaries)) == (0, 1, 1)
        assert cache.loaded_paths == frozenset()


def test_entries_of_deleted_ledgers_are_dropped(ledgers: Path, tmp_path: Path) -> None:
    cache_path = tmp_path / "ls.cache"
    listing([ledgers], cache_path)
    gone = sorted(ledgers.iterdir())[:3]
    for path in gone:
        path.unlink()
    listing([ledgers], cache_path)
    _, cache = listing([ledgers], cache_path)
    assert cache.loaded_paths == {str(path) for path in ledgers.iterdir()}
    assert not cache.loaded_paths & {str(path) for path in gone}


def test_cached_runs_are_judged_alive_or_not_at_each_listing(
    tmp_path: Path, held_ledger: tuple[Path, subprocess.Popen[str]]
) -> None:
    held, writer = held_ledger
    with held.open("ab") as file:
        file.write(b'{"run_id":"r","seq":2,"ti')  # a line being written
    finished = held.parent / "run_finished.jsonl"
    finished.write_bytes(started() + completed(2))
    elsewhere = held.parent / "run_other.jsonl"  # another writer's: only time tells
    written = NOW - 60
    said = f"{datetime.fromtimestamp(written, UTC):%Y-%m-%dT%H:%M:%S.%fZ}"
    elsewhere.write_bytes(line(1, "run_started", {"skill": "s", "writer": "gridctl"}, time=said))
    os.utime(elsewhere, (written, written))
    cache_path = tmp_path / "ls.cache"
    listing([held.parent], cache_path)

    def statuses(now: float) -> dict[str, tuple[str, int | None]]:
        listed, cache = listing([held.parent], cache_path, now=now)
        assert listed == read_all([held.parent], now=now)
        assert (cache.hits, cache.misses) == (3, 0)
        return {
            summary["run_id"]: (summary["status"], summary["damaged_lines"]) for summary in listed
        }

    assert statuses(NOW) == {
        "r": ("running", 0),
        "run_finished": ("succeeded", 0),
        "run_other": ("running", 0),
    }
    writer.kill()
    writer.wait()
    # The writer died: its lock is free, its torn line is damage; the other run went quiet.
    assert statuses(NOW + 3600) == {
        "r": ("abandoned", 1),
        "run_finished": ("succeeded", 0),
        "run_other": ("stale", 0),
    }


def test_the_fingerprint_follows_every_byte_of_the_readers_source(tmp_path: Path) -> None:
    package = tmp_path / "reader"
    shutil.copytree(REPO / "ledger_reader", package, ignore=shutil.ignore_patterns("__pycache__"))
    before = reader_fingerprint(package)
    assert before is not None
    assert reader_fingerprint(package) == before
    scan = package / "scan.py"
    scan.write_bytes(scan.read_bytes() + b"\n")
    changed = reader_fingerprint(package)
    assert changed not in (None, before)
    fold = package / "sessions" / "fold.py"  # a sub-package's source too
    fold.write_bytes(fold.read_bytes() + b"\n")
    assert reader_fingerprint(package) not in (None, before, changed)
    for source in package.rglob("*.py"):
        source.unlink()
    assert reader_fingerprint(package) is None


def test_a_cache_of_another_line_limit_is_not_used(ledgers: Path, tmp_path: Path) -> None:
    cache_path = tmp_path / "ls.cache"
    listing([ledgers], cache_path)
    written = cache_path.read_bytes()
    for limit in (1024, MAX_LINE_BYTES * 2):
        made_for_limit = SummaryCache(cache_path, "reader-1", racy_seconds=0)
        summaries, _ = scan_summaries(
            [ledgers], now=NOW, max_line_bytes=limit, cache=made_for_limit
        )
        assert made_for_limit.hits == 0
        assert _plain(summaries) == _plain(
            scan_summaries([ledgers], now=NOW, max_line_bytes=limit)[0]
        )
        other = SummaryCache(cache_path, "reader-1", max_line_bytes=limit, racy_seconds=0)
        assert other.loaded_paths == frozenset()
    assert cache_path.read_bytes() == written


def test_without_a_fingerprint_nothing_is_read_or_written(ledgers: Path, tmp_path: Path) -> None:
    cache_path = tmp_path / "ls.cache"
    cache = SummaryCache(cache_path, None, racy_seconds=0)
    summaries, _ = scan_summaries([ledgers], now=NOW, cache=cache)
    assert _plain(summaries) == read_all([ledgers])
    assert not cache_path.exists()


def test_at_most_so_many_cache_files_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNTOP_HOME", str(tmp_path / "home"))
    ledger = tmp_path / "run_one.jsonl"
    ledger.write_bytes(started() + completed(2))
    for number in range(MAX_CACHE_FILES + 4):
        path = tmp_path / f"{number}" / "run_one.jsonl"
        path.parent.mkdir()
        shutil.copyfile(ledger, path)
        cache = SummaryCache.for_listing([path], max_line_bytes=MAX_LINE_BYTES)
        scan_summaries([path], cache=cache)
        assert cache.path.exists()
        assert cache.path == cache_file([path], None)
    kept = list((tmp_path / "home" / "cache").iterdir())
    assert len(kept) == MAX_CACHE_FILES
    assert cache.path in kept


def test_a_huge_input_is_read_each_time_not_cached(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "run_huge.jsonl").write_bytes(started(input={"q": "x" * 100_000}) + completed(2))
    (runs / "run_small.jsonl").write_bytes(started() + completed(2))
    cache_path = tmp_path / "ls.cache"
    listing([runs], cache_path)
    listed, cache = listing([runs], cache_path)
    assert listed == read_all([runs])
    assert (cache.hits, cache.misses) == (1, 1)
    assert RunStatus(listed[0]["status"]) is RunStatus.SUCCEEDED


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=JSON_VALUES, status=st.sampled_from(["ok", "error", "suspended", "odd", None]))
def test_any_input_and_end_read_from_the_cache_is_what_was_read(
    tmp_path: Path, value: Any, status: str | None
) -> None:
    """The cache holds MessagePack, the listing prints JSON: every value survives the trip
    (an integer MessagePack cannot hold is not stored, and is read each time)."""
    runs = tmp_path / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    runs.mkdir()
    ending = completed(2, status, output=value) if status is not None else b""
    (runs / "run_any.jsonl").write_bytes(started(input=value, skill="s") + ending)
    cache_path = tmp_path / "any.cache"
    cache_path.unlink(missing_ok=True)
    listing([runs], cache_path)
    listed, cache = listing([runs], cache_path)
    assert listed == read_all([runs])
    try:
        msgspec.msgpack.encode(value)
    except OverflowError:
        storable = False
    else:
        storable = True
    assert cache.hits == (1 if storable else 0)
    assert listed[0]["input"] == value


# The command line: real processes, a real home.


@pytest.fixture(scope="module")
def quiet_ledgers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ledgers of :func:`ledgers`, once quiet for longer than the cache's margin.

    A file's ctime cannot be set back, so this waits (once for the module) until
    the clock has passed the last change by ``RACY_SECONDS``: only then does
    ``runtop ls`` store them.
    """
    directory = tmp_path_factory.mktemp("quiet") / "runs"
    write_fixture_ledgers(directory)
    newest = max(path.stat().st_ctime_ns for path in directory.iterdir())
    while (wait := (newest + RACY_SECONDS * 1e9 - time.time_ns()) / 1e9 + 0.05) > 0:
        time.sleep(wait)
    return directory


def _ls(
    home: Path,
    runs: Path,
    *extra: str,
    env: dict[str, str] | None = None,
    prefix: tuple[str, ...] = (),
    code: str | None = None,
) -> list[dict[str, Any]]:
    command = [sys.executable, "-m", "tui.cli"] if code is None else [sys.executable, "-c", code]
    result = subprocess.run(
        [*prefix, *command, "ls", "--json", str(runs), *extra],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "RUNTOP_HOME": str(home), **(env or {})},
    )
    assert (result.returncode, result.stderr) == (0, "")
    return runs_listed(result.stdout)  # type: ignore[no-any-return]


def _cached_paths(home: Path) -> frozenset[str]:
    [written] = (home / "cache").iterdir()
    return SummaryCache(written, reader_fingerprint()).loaded_paths


def test_ls_writes_the_cache_under_runtop_home_unless_told_not_to(
    quiet_ledgers: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    expected = _ls(home, quiet_ledgers, "--no-cache")
    assert not (home / "cache").exists()
    assert _ls(home, quiet_ledgers, env={"RUNTOP_NO_CACHE": "1"}) == expected
    assert not (home / "cache").exists()
    assert _ls(home, quiet_ledgers) == expected
    assert _cached_paths(home) == {str(path) for path in quiet_ledgers.iterdir()}
    assert (home / "cache").stat().st_mode & 0o777 == 0o700
    assert _ls(home, quiet_ledgers) == expected


def _root_powers_dropped() -> tuple[str, ...]:
    """A prefix that leaves a command unable to bypass file permissions, even as root."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "setpriv (util-linux) is needed to test permissions as root"
    return (setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--")


@pytest.mark.parametrize("made", [False, True], ids=["no cache dir", "cache dir read-only"])
def test_a_read_only_home_lists_as_without_a_cache(
    quiet_ledgers: Path, tmp_path: Path, made: bool
) -> None:
    home = tmp_path / "home"
    expected = _ls(home, quiet_ledgers, "--no-cache")
    locked = home / "cache" if made else home
    locked.mkdir(parents=True)
    locked.chmod(0o500)
    try:
        assert _ls(home, quiet_ledgers, prefix=_root_powers_dropped()) == expected
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o700)


def test_a_full_disk_lists_as_without_a_cache_and_leaves_nothing(
    quiet_ledgers: Path, tmp_path: Path
) -> None:
    """Writes past 1 KiB fail (``RLIMIT_FSIZE``: ``EFBIG``, as a full disk fails with ENOSPC)."""
    home = tmp_path / "home"
    expected = _ls(home, quiet_ledgers, "--no-cache")
    limited = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))\n"
        "from tui.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    assert _ls(home, quiet_ledgers, code=limited) == expected
    assert list((home / "cache").iterdir()) == []
    assert _ls(home, quiet_ledgers) == expected  # unlimited, the cache is larger than 1 KiB
    [written] = (home / "cache").iterdir()
    assert written.stat().st_size > 1024


def test_concurrent_listings_each_read_a_whole_cache(quiet_ledgers: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    expected = _ls(home, quiet_ledgers, "--no-cache")
    env = {**os.environ, "RUNTOP_HOME": str(home)}
    for round_ in range(3):
        if round_ % 2 == 0:
            shutil.rmtree(home / "cache", ignore_errors=True)  # all of them write
        listings = [
            subprocess.Popen(
                [sys.executable, "-m", "tui.cli", "ls", "--json", str(quiet_ledgers)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=REPO,
                env=env,
            )
            for _ in range(4)
        ]
        for process in listings:
            out, err = process.communicate(timeout=60)
            assert (process.returncode, err) == (0, "")
            assert runs_listed(out) == expected
        assert len(_cached_paths(home)) == len(expected)
