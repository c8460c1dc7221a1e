"""Every way runtop reads a ledger says the same of it, and says it right.

The four readers: ``runtop ls --json`` and ``runtop show --json`` (the
command line, in this process), the store following the directory (what
the TUI draws), and the attach API served on loopback. Each ledger, the
shared samples and one for each bug fixed, is read by all four; the runs'
summaries must agree field for field and their lines line for line.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from inspector import LedgerDirectorySource, RunStore
from ledger_reader import DamagedLine, LedgerItem, event_of
from tests.conftest import runs_listed
from tests.ledger_fixtures import EXPECTED, write_fixture_ledgers
from tests.run_manager.server.test_attach_api import served
from tui.cli import main

pytestmark = pytest.mark.timeout(60)

SUMMARY_FIELDS = (
    "status",
    "event_count",
    "damaged_lines",
    "partial",
    "last_seq",
    "pending_approval",
    "started_at",
    "completed_at",
    "skill",
)

Line = tuple[object, ...]
"""A line as all readers can say it: ("event", seq, type) or ("damaged", offset)."""


def _summary(raw: dict[str, Any]) -> dict[str, Any]:
    picked = {field: raw.get(field) for field in SUMMARY_FIELDS}
    pending = picked["pending_approval"]
    picked["pending_approval"] = pending["approval_id"] if pending else None
    return picked


def _event_line(record: dict[str, Any]) -> Line:
    return ("event", record.get("seq", 0), record.get("type"))


def _item_lines(items: list[LedgerItem]) -> list[Line]:
    lines: list[Line] = []
    for item in items:
        if isinstance(item, DamagedLine):
            lines.append(("damaged", item.offset))
        event = event_of(item)
        if event is not None:
            lines.append(("event", event.seq, event.type))
    return lines


def _run_cli(*arguments: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(arguments)) == 0
    return out.getvalue()


def read_ls(directory: Path) -> dict[str, dict[str, Any]]:
    return {
        raw["run_id"]: _summary(raw)
        for raw in runs_listed(_run_cli("ls", str(directory), "--json"))
    }


def read_show(path: Path) -> list[Line]:
    lines: list[Line] = []
    for text in _run_cli("show", str(path), "--json").splitlines():
        record = json.loads(text)
        if record.get("type") == "damaged_line":
            lines.append(("damaged", record["offset"]))
        else:
            lines.append(_event_line(record))
    return lines


async def read_store(directory: Path, count: int) -> dict[str, tuple[dict[str, Any], list[Line]]]:
    found: dict[str, tuple[dict[str, Any], list[Line]]] = {}
    async with RunStore() as store:
        store.add_source(LedgerDirectorySource(directory))
        changes = store.changes()
        while len(store.snapshot().runs) < count:
            await anext(changes)
        for run in store.snapshot().runs:
            total = await store.event_count(run.key)
            items = await store.events(run.key, 0, total + 1)
            summary = _summary(json.loads(json.dumps(_builtins(run.summary))))
            found[run.key.run_id] = (summary, _item_lines(items))
    return found


def _builtins(value: object) -> Any:
    import msgspec

    return msgspec.to_builtins(value)


async def read_attach(directory: Path) -> dict[str, tuple[dict[str, Any], list[Line]]]:
    """Through the attach API, served on loopback over the directory (``runs`` in its parent)."""
    assert directory.name == "runs"
    found: dict[str, tuple[dict[str, Any], list[Line]]] = {}
    async with served(directory.parent) as server:
        status, body = await server.get("runs", params={"limit": "500"})
        assert status == 200
        for raw in body["runs"]:
            run_id = raw["run_id"]
            async with server.session.get(server.api(f"runs/{run_id}/events")) as response:
                assert response.status == 200
                text = await response.text()
            found[run_id] = (_summary(raw), _frame_lines(text))
    return found


def _frame_lines(text: str) -> list[Line]:
    lines: list[Line] = []
    for block in text.split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":")
        )
        if "data" not in fields:
            continue
        data = json.loads(fields["data"])
        if fields.get("event") == "damaged":
            lines.append(("damaged", data["offset"]))
            if "recovered" in data:
                lines.append(_event_line(data["recovered"]))
        elif fields.get("event") is None:
            lines.append(_event_line(data))
    return lines


@pytest.fixture(scope="module")
def readings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every ledger read by all four readers, once for the module."""
    directory = tmp_path_factory.mktemp("agreement") / "runs"
    paths = write_fixture_ledgers(directory)
    store = asyncio.run(read_store(directory, len(paths)))
    attach = asyncio.run(read_attach(directory))
    return {
        "paths": paths,
        "ls": read_ls(directory),
        "show": {name: read_show(path) for name, path in paths.items()},
        "store": store,
        "attach": attach,
    }


NAMES = sorted(
    [f"sample_{stem}" for stem in ("143000012", "143000031", "143000045", "143000052")]
    + ["sample_143000058", "sample_143000063"]
    + ["capped_65k", "capped_3m", "bom", "empty", "blank", "suspended", "abandoned_torn"]
)


@pytest.mark.parametrize("name", NAMES)
def test_all_four_readers_agree(readings: dict[str, Any], name: str) -> None:
    path: Path = readings["paths"][name]
    run_id = path.name.removesuffix(".jsonl")
    listed = readings["ls"][run_id]
    stored_summary, stored_lines = readings["store"][run_id]
    served_summary, served_lines = readings["attach"][run_id]
    shown = readings["show"][name]
    assert stored_summary == listed
    assert served_summary == listed
    assert stored_lines == shown
    assert served_lines == shown
    for field, value in EXPECTED.get(name, {}).items():
        assert listed[field] == value, field
    events = [line for line in shown if line[0] == "event"]
    if listed["event_count"] is not None and not listed["partial"]:
        assert listed["event_count"] == len(events)
    if listed["damaged_lines"] is not None:
        assert listed["damaged_lines"] == sum(1 for line in shown if line[0] == "damaged")


def test_the_torn_tail_of_an_abandoned_run_is_shown_where_it_is(
    readings: dict[str, Any],
) -> None:
    path: Path = readings["paths"]["abandoned_torn"]
    complete = path.read_bytes().rfind(b"\n") + 1
    assert readings["show"]["abandoned_torn"][-1] == ("damaged", complete)


def _ls_rows(directory: Path) -> dict[str, tuple[str, str]]:
    """``runtop ls``'s status and duration of each run, as it prints them (into a pipe)."""
    lines = _run_cli("ls", str(directory)).splitlines()
    header = lines[0]
    run_at, started_at = header.index("RUN ID"), header.index("STARTED (UTC)")
    duration_end = header.index("DURATION") + len("DURATION")
    rows: dict[str, tuple[str, str]] = {}
    for line in lines[1:]:
        run_id = line[run_at:].split()[0]
        started = line[started_at : started_at + 19].strip()
        took = line[:duration_end].rsplit(None, 1)[-1] if started else ""
        rows[run_id] = (line[:run_at].strip(), took)
    return rows


async def test_the_tui_and_ls_say_the_same_status_and_time(tmp_path: Path) -> None:
    """The sample awaiting an approval whose 24 h timeout passed days ago (by its own
    times) was ticking in the TUI (``59h21m``, live) while ``ls`` said ``0.1s``."""
    from tests.tui_support import loaded
    from tui.app import make_app
    from tui.settings import Settings
    from tui.text import duration
    from tui.text.runs import status_mark

    directory = tmp_path / "runs"
    paths = write_fixture_ledgers(directory)
    listed = _ls_rows(directory)
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(directory)])
    async with app.run_test(size=(200, 50)) as pilot:
        table = await loaded(pilot, len(paths))
        drawn = {
            run.run_id: (" ".join(status_mark(run)[:2]), duration(run.duration(table.now)))
            for run in table.rows
        }
    assert drawn == listed
    waiting = listed[paths["sample_143000052"].stem]
    assert waiting == ("? stale", "0.1s")
