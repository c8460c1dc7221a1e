"""Coding agents' real session files folded into runs (tests/sessions_home/README.md says
where each came from)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from ledger_reader import (
    ApprovalRequest,
    DamagedLine,
    LlmCall,
    NodeEnter,
    NodeExit,
    RunStarted,
    RunStatus,
    ToolCall,
    ToolResult,
    UnknownEvent,
)
from ledger_reader.sessions import (
    AGENT_NOTICE,
    CONTEXT_COMPACTED,
    IDLE_AFTER,
    SESSION_RESUMED,
    USER_MESSAGE,
    SessionFile,
    agent_of,
    find_sessions,
    home_session_dirs,
    quick_summary,
    read_session,
)
from ledger_reader.sessions.fold import exit_code_of
from ledger_reader.timespan import model_answered
from tests.session_times import retimed

HOME = Path(__file__).parent.parent / "sessions_home"
CLAUDE = HOME / ".claude" / "projects"
CLAUDE_20 = CLAUDE / "-Users-test_user-agent-sample" / "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9.jsonl"
WARMUP_20 = CLAUDE / "-Users-test_user-agent-sample" / "agent-0c4c3cf8.jsonl"
CLAUDE_21_DIR = CLAUDE / "-home-USER-projects-spotter-worktrees-spotter-4te"
CLAUDE_21 = CLAUDE_21_DIR / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
SUBAGENT_21 = (
    CLAUDE_21_DIR / "ae4a77f8-aedd-4bc1-888f-c94edc91af04" / "subagents" / "agent-aac57f5.jsonl"
)
INTERRUPTED_21 = (
    CLAUDE / "-home-marco-projects-spotter" / "d6e0bada-1959-4eec-a9d2-0bfade768d8f.jsonl"
)
QUEUED_21 = (
    CLAUDE
    / "-home-USER-projects-spotter-worktrees-spotter-gqc"
    / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)
COMPACTED_21 = (
    CLAUDE
    / "-home-USER-projects-spotter-worktrees-spotter-dov"
    / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
)
COMPACTING_21 = COMPACTED_21.with_suffix("") / "subagents" / "agent-acompact-e1f845.jsonl"
NOTIFIED_21 = (
    CLAUDE
    / "-home-USER-projects-spotter-worktrees-spotter-fum"
    / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
)
CODEX = next((HOME / ".codex" / "sessions" / "2025").rglob("rollout-*.jsonl"))
CODEX_104 = next((HOME / ".codex" / "sessions").rglob("rollout-*019c8a4c-*.jsonl"))
CODEX_COMPACTED = next((HOME / ".codex" / "sessions").rglob("rollout-*019c8a59-*.jsonl"))
GEMINI = next((HOME / ".gemini" / "tmp").rglob("session-*.json"))
CLAUDE_FILES = [
    CLAUDE_20,
    WARMUP_20,
    CLAUDE_21,
    SUBAGENT_21,
    INTERRUPTED_21,
    QUEUED_21,
    COMPACTED_21,
    COMPACTING_21,
    NOTIFIED_21,
]
CODEX_FILES = [CODEX, CODEX_104, CODEX_COMPACTED]
ALL_FILES = [*CLAUDE_FILES, *CODEX_FILES, GEMINI]


def claude_usage_by_message(path: Path) -> dict[str, dict[str, int]]:
    """The oracle: each response's usage, by message id, the largest output of its records."""
    found: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        message = record.get("message")
        if record.get("type") != "assistant" or not isinstance(message, dict):
            continue
        usage = message.get("usage")
        if message.get("model") == "<synthetic>" or not usage:
            continue
        seen = found.setdefault(message["id"], {"output": 0})
        seen["prompt"] = (
            usage["input_tokens"]
            + usage.get("cache_read_input_tokens", 0)
            + usage.get("cache_creation_input_tokens", 0)
        )
        seen["read"] = usage.get("cache_read_input_tokens", 0)
        seen["write"] = usage.get("cache_creation_input_tokens", 0)
        seen["output"] = max(seen["output"], usage["output_tokens"])
    return found


def test_each_file_is_told_by_its_place_and_name() -> None:
    assert [agent_of(path) for path in ALL_FILES] == [
        *["claude-code"] * len(CLAUDE_FILES),
        *["codex"] * len(CODEX_FILES),
        "gemini-cli",
    ]
    assert agent_of(HOME / "notes.jsonl") is None
    assert sorted(find_sessions(HOME)) == sorted(str(path) for path in ALL_FILES)


def test_the_home_folders_come_from_home(monkeypatch: pytest.MonkeyPatch) -> None:
    assert home_session_dirs({"HOME": str(HOME)}) == [
        HOME / ".claude" / "projects",
        HOME / ".codex" / "sessions",
        HOME / ".gemini" / "tmp",
    ]
    assert home_session_dirs({"HOME": str(HOME / "nowhere")}) == []


@pytest.mark.parametrize("path", CLAUDE_FILES, ids=str)
def test_claude_code_counts_each_response_once(path: Path) -> None:
    session = read_session(str(path))
    calls = [item for item in session.items if isinstance(item, LlmCall)]
    oracle = claude_usage_by_message(path)
    assert len(calls) == len(oracle)
    summary = session.summary()
    assert summary.prompt_tokens == sum(usage["prompt"] for usage in oracle.values())
    assert summary.output_tokens == sum(usage["output"] for usage in oracle.values())
    assert summary.cache_read_tokens == sum(usage["read"] for usage in oracle.values())
    assert summary.cache_write_tokens == sum(usage["write"] for usage in oracle.values())
    assert summary.cost_usd is not None
    assert summary.cost_usd > 0
    assert summary.cost_estimated
    assert summary.damaged_lines == 0
    assert summary.warnings == []


def test_claude_code_runs_say_who_where_and_what() -> None:
    main = read_session(str(CLAUDE_21)).summary()
    assert main.run_id == "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
    assert main.agent == "claude-code"
    assert main.project == "/home/USER/projects/spotter-worktrees/spotter-4te"
    assert main.git_branch == "spotter-4te"
    assert main.model == "claude-haiku-4-5-20251001"
    first_prompt = next(
        record
        for record in map(json.loads, CLAUDE_21.read_text().splitlines())
        if record.get("type") == "user"
    )
    assert main.started_at == first_prompt["timestamp"]
    assert main.input == first_prompt["message"]["content"]
    child = read_session(str(SUBAGENT_21)).summary()
    assert child.run_id == "ae4a77f8-aedd-4bc1-888f-c94edc91af04.agent-aac57f5"
    assert child.parent_run_id == main.run_id
    assert child.model == "claude-sonnet-4-5-20250929"
    warmup = read_session(str(WARMUP_20)).summary()
    assert warmup.parent_run_id == "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"
    assert warmup.input == "Warmup"


@pytest.mark.parametrize(
    "path", [CLAUDE_20, CLAUDE_21, SUBAGENT_21, INTERRUPTED_21, CODEX, CODEX_104, GEMINI], ids=str
)
def test_tool_calls_pair_with_their_results(path: Path) -> None:
    items = read_session(str(path)).items
    called = [item.payload.call_id for item in items if isinstance(item, ToolCall)]
    answered = [item.payload.call_id for item in items if isinstance(item, ToolResult)]
    assert called
    assert answered
    assert set(answered) <= set(called)
    assert len(called) == len(set(called))
    assert all(
        not isinstance(item, DamagedLine) and item.seq == number
        for number, item in enumerate(items, 1)
    )


def test_a_shell_command_and_a_patch_read_as_themselves() -> None:
    items = read_session(str(CODEX)).items
    calls: dict[str | None, ToolCall] = {}
    for item in items:
        if isinstance(item, ToolCall):
            calls.setdefault(item.payload.name, item)
    assert calls["shell_command"].payload.arguments["command"] == "mkdir -p myapp"
    assert "*** Add File: myapp/hoge.py" in calls["apply_patch"].payload.arguments


@pytest.mark.parametrize("path", CODEX_FILES, ids=str)
def test_codex_counts_each_response_once(path: Path) -> None:
    """The oracle: each count whose running total moved adds its response's usage (a file
    read from its start ends on its running total)."""
    total = None
    said = Counter[str]()
    for line in path.read_text().splitlines():
        payload = json.loads(line)["payload"]
        info = payload.get("info") if payload.get("type") == "token_count" else None
        if info and info["total_token_usage"] != total:
            total = info["total_token_usage"]
            said.update(
                {key: info["last_token_usage"][key] for key in ("input_tokens", "output_tokens")}
            )
            said["cached_input_tokens"] += info["last_token_usage"]["cached_input_tokens"]
    summary = read_session(str(path)).summary()
    assert summary.prompt_tokens == said["input_tokens"]
    assert summary.cache_read_tokens == said["cached_input_tokens"]
    assert summary.output_tokens == said["output_tokens"]
    assert summary.agent == "codex"
    assert summary.warnings == []


def test_codex_runs_say_who_where_and_what() -> None:
    summary = read_session(str(CODEX)).summary()
    assert summary.model == "gpt-5.1-codex-max"
    assert summary.git_branch == "codex"
    last_total = None
    for line in CODEX.read_text().splitlines():
        payload = json.loads(line)["payload"]
        if payload.get("type") == "token_count" and payload.get("info"):
            last_total = payload["info"]["total_token_usage"]
    assert last_total is not None
    assert summary.prompt_tokens == last_total["input_tokens"]
    desktop = read_session(str(CODEX_104)).summary()  # Codex Desktop 0.104 (source "vscode")
    assert (desktop.model, desktop.git_branch) == ("gpt-5.3-codex", "main")


def test_gemini_counts_thoughts_as_output() -> None:
    document = json.loads(GEMINI.read_text())
    tokens = [m["tokens"] for m in document["messages"] if m.get("tokens")]
    summary = read_session(str(GEMINI)).summary()
    assert summary.prompt_tokens == sum(t["input"] for t in tokens)
    assert summary.cache_read_tokens == sum(t["cached"] for t in tokens)
    assert summary.output_tokens == sum(t["output"] + t["thoughts"] for t in tokens)
    assert summary.model == "gemini-2.5-flash"
    assert summary.warnings == []


def old(path: Path) -> Path:
    """``path`` as written long ago."""
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return path


def test_a_quiet_session_is_idle_and_a_fresh_one_running(tmp_path: Path) -> None:
    copy = tmp_path / CLAUDE_20.name
    copy.write_bytes(retimed(CLAUDE_20.read_bytes()))
    old(copy)
    assert read_session(str(copy)).summary().status is RunStatus.IDLE
    copy.touch()
    assert read_session(str(copy)).summary().status is RunStatus.RUNNING
    later = os.stat(copy).st_mtime + IDLE_AFTER + 1
    assert read_session(str(copy)).summary(now=later).status is RunStatus.IDLE


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda path: path.name)
def test_a_session_copied_just_now_is_as_quiet_as_its_last_event(
    tmp_path: Path, path: Path
) -> None:
    """A session of last year copied (or checked out) a moment ago read ``running``, its
    duration 7,000 hours, until two minutes had passed: its own times say it is idle."""
    copy = tmp_path / path.relative_to(HOME)  # in its agent's folder, as a home holds it
    copy.parent.mkdir(parents=True)
    shutil.copy(path, copy)
    copy.touch()
    assert read_session(str(copy)).summary().status is RunStatus.IDLE
    copy.write_bytes(retimed(path.read_bytes()))
    assert read_session(str(copy)).summary().status is RunStatus.RUNNING


def cut_at_first_bash(source: Path, target: Path) -> list[bytes]:
    """Write ``source`` up to its first Bash tool use into ``target``, as if just now
    (:func:`~tests.conftest.retimed`); the lines after it."""
    lines = retimed(source.read_bytes()).splitlines(keepends=True)
    at = next(
        number
        for number, line in enumerate(lines)
        if b'"tool_use"' in line and b'"name":"Bash"' in line
    )
    target.write_bytes(b"".join(lines[: at + 1]))
    return lines[at + 1 :]


def test_a_tool_use_waits_on_the_person_until_its_result(tmp_path: Path) -> None:
    copy = tmp_path / CLAUDE_20.name
    rest = cut_at_first_bash(CLAUDE_20, copy)
    session = SessionFile(str(copy))
    session.poll()
    summary = session.summary()
    assert summary.status is RunStatus.AWAITING_APPROVAL
    assert summary.pending_approval is not None
    assert summary.pending_approval.prompt == "Bash: mkdir -p myapp"
    result = next(n for n, line in enumerate(rest) if b'"tool_result"' in line)
    with copy.open("ab") as file:
        file.write(b"".join(rest[: result + 1]))
    session.poll()
    assert session.summary().status is RunStatus.RUNNING
    assert session.summary().pending_approval is None


def test_a_session_that_bypasses_permissions_waits_on_nobody(tmp_path: Path) -> None:
    copy = tmp_path / CLAUDE_21.name
    cut_at_first_bash(CLAUDE_21, copy)
    session = SessionFile(str(copy))
    session.poll()
    assert session.summary().status is RunStatus.RUNNING


def test_an_appended_session_reads_as_one_read_whole(tmp_path: Path) -> None:
    data = CLAUDE_21.read_bytes()
    copy = tmp_path / CLAUDE_21.name
    copy.write_bytes(b"")
    session = SessionFile(str(copy))
    for start in range(0, len(data), 7919):  # torn lines at every read
        with copy.open("ab") as file:
            file.write(data[start : start + 7919])
        session.poll()
    session.rest()
    whole = read_session(str(CLAUDE_21))
    # A tool use still running at the end of a read is told without its result (HOLD),
    # where a whole read tells the two together: the same events, perhaps in another order.
    assert Counter(item.type for item in session.items) == Counter(
        item.type for item in whole.items
    )
    assert [getattr(item, "seq", 0) for item in session.items] == list(
        range(1, len(whole.items) + 1)
    )
    assert session.summary().prompt_tokens == whole.summary().prompt_tokens


def test_unknown_records_and_damage_lose_nothing_around_them(tmp_path: Path) -> None:
    lines = CLAUDE_20.read_bytes().splitlines(keepends=True)
    middle = len(lines) // 2
    odd = b'{"type":"brand-new-kind","sessionId":"x","timestamp":"2025-12-09T19:48:00.000Z"}\n'
    copy = tmp_path / CLAUDE_20.name
    copy.write_bytes(
        b"".join([*lines[:middle], odd, b"{not json\n", *lines[middle:], b'{"type":"user","mes'])
    )
    session = read_session(str(copy))
    unknown = [item for item in session.items if isinstance(item, UnknownEvent)]
    assert "claude-code.brand-new-kind" in [item.type for item in unknown]
    assert sum(isinstance(item, DamagedLine) for item in session.items) == 1
    whole = read_session(str(CLAUDE_20))
    assert session.summary().prompt_tokens == whole.summary().prompt_tokens
    mine = Counter(item.type for item in session.items if isinstance(item, ToolResult | LlmCall))
    theirs = Counter(item.type for item in whole.items if isinstance(item, ToolResult | LlmCall))
    assert mine == theirs


def test_a_gemini_document_caught_mid_rewrite_keeps_what_was_read(tmp_path: Path) -> None:
    chats = tmp_path / ".gemini" / "tmp" / "0123" / "chats"
    chats.mkdir(parents=True)
    copy = chats / GEMINI.name
    whole = GEMINI.read_bytes()
    copy.write_bytes(whole)
    session = SessionFile(str(copy))
    session.poll(final=True)
    before = len(session.items)
    copy.write_bytes(whole[: len(whole) // 2])  # the writer is half-way through
    items, reset = session.poll(final=True)
    assert (items, reset) == ([], False)
    assert len(session.items) == before
    document = json.loads(whole)
    document["messages"].append(
        {"id": "new", "timestamp": "2025-12-09T19:55:00.000Z", "type": "user", "content": "more"}
    )
    copy.write_text(json.dumps(document))
    items, reset = session.poll(final=True)
    assert not reset
    assert [item.type for item in items] == ["user_message"]


def test_a_quick_summary_says_what_the_ends_say(tmp_path: Path) -> None:
    full = read_session(str(CLAUDE_21)).summary()
    quick = quick_summary(str(CLAUDE_21))
    assert (quick.run_id, quick.project, quick.git_branch, quick.model) == (
        full.run_id,
        full.project,
        full.git_branch,
        full.model,
    )
    assert quick.partial
    assert quick.prompt_tokens is None
    assert quick.event_count is None
    started = next(item for item in read_session(str(CLAUDE_21)).items)
    assert isinstance(started, RunStarted)
    assert not any(isinstance(item, ApprovalRequest) for item in read_session(str(CODEX)).items)


@pytest.mark.parametrize("path", [CLAUDE_20, CLAUDE_21, SUBAGENT_21, CODEX, GEMINI], ids=str)
def test_each_tool_result_follows_its_call(path: Path) -> None:
    """A reader pairs a call with the result right after it: so are they told, even where a
    response asked for several tools at once (the sub-agent's six WebSearch) and their
    results came after all of them."""
    items = read_session(str(path)).items
    for before, item in itertools.pairwise(items):
        if isinstance(item, ToolResult):
            assert isinstance(before, ToolCall), item
            assert before.payload.call_id == item.payload.call_id
            assert before.payload.node_id == item.payload.node_id
            assert (item.payload.node_id or "").startswith("tool:")


@pytest.mark.parametrize("path", ALL_FILES, ids=str)
def test_each_node_lasts_from_its_enter_to_its_exit(path: Path) -> None:
    """A node's ``duration_micros`` is the time between its events, as the timeline
    measures it (Gemini's tools ran for as long as their results took)."""
    entered: dict[str, datetime] = {}
    exits = 0
    for item in read_session(str(path)).items:
        if isinstance(item, NodeEnter):
            entered[item.payload.node_id] = item.timestamp  # type: ignore[assignment]
        elif isinstance(item, NodeExit):
            start = entered.pop(item.payload.node_id)
            assert item.timestamp is not None
            lasted = round((item.timestamp - start).total_seconds() * 1e6)
            assert item.payload.duration_micros == lasted
            exits += 1
    assert exits
    assert all(node.startswith("tool:") for node in entered)  # still running (cut short)


def test_gemini_tools_last_until_their_results() -> None:
    items = read_session(str(GEMINI)).items
    first = next(
        item for item in items if isinstance(item, NodeExit) and "tool:" in item.payload.node_id
    )
    assert first.payload.duration_micros is not None
    assert 24 < first.payload.duration_micros / 1e6 < 25  # mkdir, from 19:51:50.1 to 19:52:14.5


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ("Exit code: 1\nWall time: 0.1 seconds\nOutput:\nerror\n", 1),
        ("Exit code: 0\nWall time: 0.1 seconds\nOutput:\n", 0),
        ("Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 2\nOutput:\n", 2),
        ("Command: ls\nDirectory: (root)\nOutput: x\nError: (none)\nExit Code: 127\n", 127),
        ('{"output":"ok","metadata":{"exit_code":3,"duration_seconds":1.0}}', 3),
        ({"output": "ok", "metadata": {"exit_code": 0}}, 0),
        ("Process running with session ID 73\n\nOutput:\nstill", None),
        ("the words Exit code: 1 in a file read", None),
        ('{"not": "metadata", "exit_code": "x"', None),
        (None, None),
    ],
)
def test_a_commands_exit_code_is_read_as_each_agent_says_it(
    output: object, code: int | None
) -> None:
    assert exit_code_of(output) == code


@pytest.mark.parametrize("path", [CODEX, GEMINI], ids=str)
def test_a_command_that_exited_non_zero_failed(path: Path) -> None:
    items = read_session(str(path)).items
    results = [item for item in items if isinstance(item, ToolResult)]
    failed = [r for r in results if exit_code_of(r.payload.output) not in (None, 0)]
    assert failed  # python hoge.py: "error: target shim binary not found"
    assert all(r.payload.is_error for r in failed)
    assert not any(r.payload.is_error for r in results if r not in failed)


def resumed_days_later(source: Path, target: Path, days: int) -> None:
    """``source`` as if its second prompt was typed ``days`` later (``claude --resume``)."""
    lines = source.read_text().splitlines(keepends=True)
    prompts = 0
    out = []
    for text in lines:
        record = json.loads(text)
        message = record.get("message")
        typed = record.get("type") == "user" and isinstance(message, dict)
        if typed and isinstance(message.get("content"), str):
            prompts += 1
        if prompts >= 2 and "timestamp" in record:
            moment = datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00"))
            record["timestamp"] = (moment + timedelta(days=days)).isoformat().replace("+00:00", "Z")
            text = json.dumps(record) + "\n"
        out.append(text)
    target.write_text("".join(out))


@pytest.mark.parametrize("days", [1, 3])
def test_a_session_resumed_days_later_says_the_gap(tmp_path: Path, days: int) -> None:
    copy = tmp_path / CLAUDE_20.name
    resumed_days_later(CLAUDE_20, copy, days)
    items = read_session(str(copy)).items
    gaps = [
        item for item in items if isinstance(item, UnknownEvent) and item.type == SESSION_RESUMED
    ]
    assert len(gaps) == 1
    assert gaps[0].payload["after_seconds"] == pytest.approx(days * 86400 + 3.4, abs=0.1)
    after = items[items.index(gaps[0]) + 1]
    assert isinstance(after, UnknownEvent)
    assert after.type == USER_MESSAGE
    assert after.payload["text"] == "cd to myapp and run python hoge.py"
    # No node spans the gap: the model call before it ended before it.
    lasted = [item.payload.duration_micros or 0 for item in items if isinstance(item, NodeExit)]
    assert max(lasted) < 60e6


@pytest.mark.parametrize(
    "meta",
    [
        {"source": {"subagent": {"thread_spawn": {"parent_thread_id": "019b-parent", "depth": 1}}}},
        {"source": "cli", "parent_thread_id": "019b-parent"},
    ],
)
def test_a_codex_sub_agent_is_a_child_of_the_session_that_spawned_it(
    tmp_path: Path, meta: dict[str, object]
) -> None:
    """The real rollout, its ``session_meta`` saying what a spawned sub-agent's says (Codex's
    ``SubAgentSource::ThreadSpawn``, or the newer field)."""
    lines = CODEX.read_text().splitlines()
    first = json.loads(lines[0])
    assert first["type"] == "session_meta"
    first["payload"].update(meta)
    copy = tmp_path / CODEX.name
    copy.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    assert read_session(str(copy)).summary().parent_run_id == "019b-parent"
    assert read_session(str(CODEX)).summary().parent_run_id is None


def said_in_the_persons_turn(path: Path) -> list[tuple[str, object]]:
    """What a session's events say was in the person's turn, in order: the person's own
    words, and what the agent put there (its kind and text)."""
    said: list[tuple[str, object]] = []
    for item in read_session(str(path)).items:
        if isinstance(item, UnknownEvent) and item.type == USER_MESSAGE:
            said.append(("user", item.payload["text"]))
        elif isinstance(item, UnknownEvent) and item.type == AGENT_NOTICE:
            said.append((item.payload["kind"], item.payload["text"]))
        elif isinstance(item, UnknownEvent) and item.type == CONTEXT_COMPACTED:
            said.append(("compacted", item.payload))
    return said


def test_an_interruption_and_a_slash_command_are_not_prompts_typed() -> None:
    """Claude Code 2.1.38 writes an Esc as the person's turn (``[Request interrupted by
    user]``), a local command in tags (``<command-name>/mcp</command-name>``, also as a
    ``system`` record) and the command's output as the person's turn too."""
    records = [json.loads(line) for line in INTERRUPTED_21.read_text().splitlines()]
    typed = next(
        r["message"]["content"]
        for r in records
        if r["type"] == "user" and str(r["message"]["content"]).startswith("scrolling")
    )
    assert said_in_the_persons_turn(INTERRUPTED_21) == [
        ("interrupted", "[Request interrupted by user]"),
        ("user", "/mcp"),
        ("command_output", "Reconnected to tidewave."),
        ("user", "/mcp"),
        ("command_output", "MCP dialog dismissed"),
        ("user", typed),
        ("interrupted", "[Request interrupted by user]"),
    ]
    assert read_session(str(INTERRUPTED_21)).summary().input == "start phoenix in background"


def test_a_compaction_says_so_and_its_summary_is_not_the_persons() -> None:
    """A session compacted when its context filled (Claude Code 2.1.39: a ``system``
    ``compact_boundary`` record, then the summary in the person's turn, ``isCompactSummary``)."""
    said = said_in_the_persons_turn(COMPACTED_21)
    assert said[0] == ("compacted", {"trigger": "auto", "tokens_before": 170251})
    assert [kind for kind, _ in said] == ["compacted", "compact_summary"]
    assert str(said[1][1]).startswith("This session is being continued")
    summary = read_session(str(COMPACTED_21)).summary()
    assert summary.input is None  # no prompt typed in what the file holds


def test_a_background_tasks_notice_is_the_agents_not_the_persons() -> None:
    """A background command finished: Claude Code tells the model in the person's turn
    (``<task-notification>``), and the model answers it."""
    assert said_in_the_persons_turn(NOTIFIED_21) == [
        (
            "task_notification",
            'Background command "Run transcript renderer tests" completed (exit code 0)',
        )
    ]
    items = read_session(str(NOTIFIED_21)).items
    assert sum(isinstance(item, LlmCall) for item in items) == 1


def test_a_sub_agents_first_prompt_is_its_input_after_the_context_put_before_it() -> None:
    """The sub-agent that wrote a compaction's summary (2.1.39, ``agent-acompact-*``): its
    file begins with three hooks' reminders (``isMeta``) copied from minutes before."""
    records = [json.loads(line) for line in COMPACTING_21.read_text().splitlines()]
    prompt = next(r for r in records if r["type"] == "user" and not r.get("isMeta"))
    child = read_session(str(COMPACTING_21)).summary()
    assert child.input == prompt["message"]["content"]
    assert child.started_at == prompt["timestamp"]
    assert child.parent_run_id == "4d5611e5-241a-462a-8d15-5122611a9569"


def test_a_codex_web_search_is_a_tool_call_told_with_its_status() -> None:
    """Codex 0.104 writes a web search the model ran as ``web_search_call`` with no name, no
    call id and no results: only its status (and, by version, its ``action``)."""
    items = read_session(str(CODEX_104)).items
    searches = [i for i in items if isinstance(i, ToolCall) and i.payload.name == "web_search"]
    assert len(searches) == 1
    result = next(
        i
        for i in items
        if isinstance(i, ToolResult) and i.payload.call_id == searches[0].payload.call_id
    )
    assert result.payload.output == "completed"
    assert not result.payload.is_error
    assert not [i for i in items if isinstance(i, UnknownEvent) and i.type.startswith("codex.")]


def test_a_codex_compaction_is_one_event_and_the_run_is_named_by_its_file() -> None:
    """Lines from within a Codex 0.104 session that compacted its context: a ``compacted``
    record (the history that replaced the conversation) and an ``event_msg``
    ``context_compacted``; no ``session_meta`` among them, so the file's name says the id."""
    session = read_session(str(CODEX_COMPACTED))
    kinds = [item.type for item in session.items if isinstance(item, UnknownEvent)]
    assert kinds == [CONTEXT_COMPACTED]
    assert session.summary().run_id == "019c8a59-e9dd-71f0-9ae3-4079fe9726a9"


def test_words_typed_while_the_agent_worked_are_the_persons() -> None:
    """Claude Code 2.1.39 queues what the person types during a turn (``queue-operation``
    ``enqueue``) and takes it into the turn (``remove``) with no ``user`` record of its own;
    a background task's notice, queued before, is told by its own record instead."""
    records = [json.loads(line) for line in QUEUED_21.read_text().splitlines()]
    typed = next(r["content"] for r in records if r.get("operation") == "enqueue")
    assert said_in_the_persons_turn(QUEUED_21) == [
        ("interrupted", "[Request interrupted by user for tool use]"),
        (
            "task_notification",
            'Background command "Force recompile ash deps to clear stale associations" '
            "completed (exit code 0)",
        ),
        ("user", typed),
    ]
    # A slash command typed ahead (/mcp) runs as a command of its own, told by its records
    # (a user record and a system one), not again as it left the queue.
    assert [text for kind, text in said_in_the_persons_turn(INTERRUPTED_21)].count("/mcp") == 2


def test_a_model_call_is_answered_when_its_response_ends_not_when_it_is_written() -> None:
    """A response's counts are final only once the tools it asked for have run, so its
    ``llm_call`` is written after their results: it says it was answered at its last
    record, and every measure of it (``call_seconds``) ends there, not at its tools'."""
    last_record: dict[str, float] = {}
    with CLAUDE_21.open() as lines:
        for raw in lines:
            record = json.loads(raw)
            message = record.get("message")
            if record.get("type") != "assistant" or not isinstance(message, dict):
                continue
            moment = datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00"))
            last_record[message["id"]] = moment.timestamp()
    calls = [item for item in read_session(str(CLAUDE_21)).items if isinstance(item, LlmCall)]
    answered = {model_answered(call) for call in calls}
    assert set(last_record.values()) <= answered
    written_later = [
        call
        for call in calls
        if call.timestamp is not None
        and (at := model_answered(call)) is not None
        and at < call.timestamp.timestamp()
    ]
    assert written_later  # responses whose tools' results came before their counts
