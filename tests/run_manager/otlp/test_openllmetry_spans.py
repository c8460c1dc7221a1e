"""OpenLLMetry spans (Traceloop's conventions) into runs: hand-built as its packages send them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from run_manager.otlp.ingest import OtlpIngest
from run_manager.otlp.spans import decode_json
from tests.run_manager.otlp.test_ingest import ledgers, request, span, types

WORKFLOW = "f000000000000001"
AGENT = "f000000000000002"
CHAT_1 = "f000000000000003"
TOOL = "f000000000000004"
CHAT_2 = "f000000000000005"
TASK = "f000000000000006"

ASKED = "What's the weather in Paris?"
ANSWER = "It is sunny in Paris."


def agents_sdk_trace() -> list[dict[str, Any]]:
    """An OpenAI Agents SDK run as opentelemetry-instrumentation-openai-agents reports it: an
    ``Agent Workflow`` root, the agent, its model calls in the GenAI conventions, and a tool
    span that does not say its call id."""
    call = {
        "type": "tool_call",
        "name": "get_weather",
        "id": "call_1",
        "arguments": {"city": "Paris"},
    }
    asked = [{"role": "user", "parts": [{"type": "text", "content": ASKED}]}]
    answered = {"type": "tool_call_response", "id": "call_1", "response": "sunny in Paris"}
    return [
        span(
            CHAT_1,
            "openai.response",
            0.02,
            0.3,
            parent=AGENT,
            gen_ai__operation__name="chat",
            gen_ai__provider__name="openai",
            gen_ai__response__model="fake-gpt",
            gen_ai__usage__input_tokens=40,
            gen_ai__usage__output_tokens=7,
            gen_ai__input__messages=json.dumps(asked),
            gen_ai__output__messages=json.dumps([{"role": "assistant", "parts": [call]}]),
        ),
        span(
            TOOL,
            "get_weather.tool",
            0.31,
            0.4,
            parent=AGENT,
            traceloop__span__kind="tool",
            gen_ai__tool__name="get_weather",
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__call__arguments='{"city": "Paris"}',
            gen_ai__tool__call__result="sunny in Paris",
        ),
        span(
            CHAT_2,
            "openai.response",
            0.41,
            0.6,
            parent=AGENT,
            gen_ai__operation__name="chat",
            gen_ai__provider__name="openai",
            gen_ai__response__model="fake-gpt",
            gen_ai__usage__input_tokens=60,
            gen_ai__usage__output_tokens=9,
            gen_ai__input__messages=json.dumps(
                [
                    *asked,
                    {"role": "assistant", "parts": [call]},
                    {"role": "tool", "parts": [answered]},
                ]
            ),
            gen_ai__output__messages=json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}]
            ),
        ),
        span(
            AGENT,
            "weather.agent",
            0.01,
            0.7,
            parent=WORKFLOW,
            traceloop__span__kind="agent",
            gen_ai__agent__name="weather",
            gen_ai__operation__name="invoke_agent",
        ),
        span(
            WORKFLOW,
            "Agent Workflow",
            0.0,
            0.71,
            traceloop__span__kind="workflow",
            traceloop__workflow__name="Agent Workflow",
        ),
    ]


def test_an_agents_sdk_trace_is_one_run_named_after_its_agent(tmp_path: Path) -> None:
    OtlpIngest(tmp_path).ingest(decode_json(request(*agents_sdk_trace())))
    [events] = ledgers(tmp_path).values()
    started = events[0]["payload"]
    assert (started["agent"], started["input"]) == ("weather", ASKED)
    # The agent's span says no output: the run answered what its last model call said.
    assert (events[-1]["type"], events[-1]["payload"]["output"]) == ("run_completed", ANSWER)
    assert "otel_span" not in types(events)
    # The workflow that wraps the agent began first: nothing is shown before the run began.
    assert all(event["time"] >= events[0]["time"] for event in events)


def test_a_tool_span_without_a_call_id_takes_the_models_call_id(tmp_path: Path) -> None:
    OtlpIngest(tmp_path).ingest(decode_json(request(*agents_sdk_trace())))
    [events] = ledgers(tmp_path).values()
    [called] = [event["payload"] for event in events if event["type"] == "tool_call"]
    [answered] = [event["payload"] for event in events if event["type"] == "tool_result"]
    assert (called["call_id"], called["arguments"]) == ("call_1", {"city": "Paris"})
    assert (answered["call_id"], answered["output"]) == ("call_1", "sunny in Paris")
    calls = [event["payload"] for event in events if event["type"] == "llm_call"]
    assert calls[1]["messages"][-1] == {
        "role": "tool",
        "content": [
            {"type": "tool_result", "id": "call_1", "name": None, "output": "sunny in Paris"}
        ],
    }


def legacy_trace() -> list[dict[str, Any]]:
    """A traceloop-sdk ``@workflow`` around a ``@task`` and a ``@tool``, with a model call as the
    OpenAI instrumentation wrote it before its move to the GenAI conventions."""
    return [
        span(
            CHAT_1,
            "openai.chat",
            0.1,
            0.3,
            parent=TASK,
            llm__request__type="chat",
            gen_ai__system="openai",
            gen_ai__request__model="gpt-4o",
            gen_ai__response__model="gpt-4o-2024-08-06",
            gen_ai__usage__prompt_tokens=30,
            gen_ai__usage__completion_tokens=5,
            gen_ai__prompt__0__role="system",
            gen_ai__prompt__0__content="Be brief.",
            gen_ai__prompt__1__role="user",
            gen_ai__prompt__1__content="Plan a trip",
            gen_ai__completion__0__role="assistant",
            gen_ai__completion__0__tool_calls__0__id="call_9",
            gen_ai__completion__0__tool_calls__0__name="book",
            gen_ai__completion__0__tool_calls__0__arguments='{"to": "Oslo"}',
        ),
        span(
            TASK,
            "plan.task",
            0.05,
            0.35,
            parent=WORKFLOW,
            traceloop__span__kind="task",
            traceloop__entity__name="plan",
        ),
        span(
            TOOL,
            "book.tool",
            0.4,
            0.5,
            parent=WORKFLOW,
            traceloop__span__kind="tool",
            traceloop__entity__name="book",
            traceloop__entity__input=json.dumps({"args": [], "kwargs": {"to": "Oslo"}}),
            traceloop__entity__output=json.dumps("booked"),
        ),
        span(
            WORKFLOW,
            "trip.workflow",
            0.0,
            0.6,
            traceloop__span__kind="workflow",
            traceloop__workflow__name="trip",
            traceloop__entity__name="trip",
            traceloop__entity__input=json.dumps({"args": ["Plan a trip"], "kwargs": {}}),
            traceloop__entity__output=json.dumps("Off to Oslo"),
        ),
    ]


def test_a_workflow_with_no_agent_is_the_run_its_tasks_steps(tmp_path: Path) -> None:
    from inspector.timeline import NodeKind, Timeline
    from ledger_reader import iter_events, read_lines

    OtlpIngest(tmp_path).ingest(decode_json(request(*legacy_trace())))
    [events] = ledgers(tmp_path).values()
    started = events[0]["payload"]
    assert (started["agent"], started["input"]) == ("trip", "Plan a trip")
    assert events[-1]["payload"]["output"] == "Off to Oslo"
    [call] = [event["payload"] for event in events if event["type"] == "llm_call"]
    assert (call["model"], call["provider"], call["prompt_tokens"], call["output_tokens"]) == (
        "gpt-4o-2024-08-06",
        "openai",
        30,
        5,
    )
    assert call["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Plan a trip"},
    ]
    assert call["response"] == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_call", "id": "call_9", "name": "book", "arguments": {"to": "Oslo"}}
            ],
        }
    ]
    [called] = [event["payload"] for event in events if event["type"] == "tool_call"]
    assert (called["name"], called["call_id"], called["arguments"]) == (
        "book",
        "call_9",
        {"to": "Oslo"},
    )
    [path] = tmp_path.glob("*.jsonl")
    timeline = Timeline()
    with path.open("rb") as file:
        timeline.extend(
            iter_events(line.item for line in read_lines(file.fileno(), 0, path.stat().st_size))
        )
    assert [(node.kind, node.name) for node in timeline.rows()] == [
        (NodeKind.STEP, "plan"),
        (NodeKind.MODEL, "gpt-4o-2024-08-06"),
        (NodeKind.TOOL, "book"),
    ]


def test_a_handoff_is_one_run_ended_by_the_last_agent(tmp_path: Path) -> None:
    """The Agents SDK's handoff: two agent spans one after the other under the workflow."""
    spans = agents_sdk_trace()
    specialist = "f000000000000007"
    chat = next(each for each in spans if each["spanId"] == CHAT_2)
    chat["parentSpanId"] = specialist
    for each in spans:
        if each["spanId"] == AGENT:
            each["endTimeUnixNano"] = str(int(each["startTimeUnixNano"]) + 400_000_000)
    spans.append(
        span(
            specialist,
            "specialist.agent",
            0.405,
            0.7,
            parent=WORKFLOW,
            traceloop__span__kind="agent",
            gen_ai__agent__name="specialist",
            gen_ai__operation__name="invoke_agent",
        )
    )
    OtlpIngest(tmp_path).ingest(decode_json(request(*spans)))
    [events] = ledgers(tmp_path).values()
    assert events[0]["payload"]["agent"] == "weather"
    assert types(events).count("llm_call") == 2
    assert types(events)[-1] == "run_completed"
    assert types(events).count("run_completed") == 1
    assert events[-1]["payload"]["output"] == ANSWER
