"""Approvals and cancels sent from runtop record who sent them (``--user``, else the OS
user) in the ledger, beside what sent them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from inspector import ManagerSource, RunKey, RunStore
from inspector.actions import os_user
from run_manager import Manager
from tests.agents import Gatekeeper, Sleeper
from tui.settings import Settings

pytestmark = pytest.mark.timeout(30)


def ledger_lines(directory: Path, run_id: str) -> list[dict[str, Any]]:
    text = (directory / f"{run_id}.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


async def until_waiting(store: RunStore, key: RunKey) -> None:
    changes = store.changes()
    while store.refusal(key, "approve") is not None:
        await anext(changes)


async def test_an_answer_and_a_cancel_record_the_user(tmp_path: Path) -> None:
    async with (
        Manager(ledger_dir=tmp_path) as manager,
        RunStore(flush_interval=0.01, user="ada") as store,
    ):
        store.add_source(ManagerSource(manager, name="here"))
        gated = manager.start(Gatekeeper(), "ship")
        sleeping = manager.start(Sleeper(), "30")
        await until_waiting(store, RunKey("here", gated.run_id))
        await store.approve(RunKey("here", gated.run_id), True, "fine")
        assert await asyncio.wait_for(gated.result(), 10) == "approved"
        changes = store.changes()
        while store.refusal(RunKey("here", sleeping.run_id), "cancel") is not None:
            await anext(changes)
        await store.cancel(RunKey("here", sleeping.run_id), "enough")
        await asyncio.wait_for(sleeping.wait(), 10)
    answered = next(
        line for line in ledger_lines(tmp_path, gated.run_id) if line["type"] == "approval_response"
    )
    assert (answered["payload"]["source"], answered["payload"]["answered_by"]) == ("runtop", "ada")
    asked = next(
        line
        for line in ledger_lines(tmp_path, sleeping.run_id)
        if line["type"] == "cancel_requested"
    )
    assert (asked["payload"]["source"], asked["payload"]["requested_by"]) == ("runtop", "ada")


def test_the_user_is_the_os_user_unless_named() -> None:
    assert Settings.from_env({}).user == os_user()
    assert Settings.from_env({"RUNTOP_USER": "grace"}).user == "grace"
    assert os_user()  # this machine names its users
