"""OpenInference spans (Phoenix's conventions) into runs: hand-built as LangGraph sends them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from run_manager.otlp.ingest import OtlpIngest
from run_manager.otlp.spans import decode_json
from tests.run_manager.otlp.test_ingest import ledgers, request, span, types

GRAPH = "e000000000000001"
NODE_1 = "e000000000000002"
LLM_1 = "e000000000000003"
TOOLS = "e000000000000004"
TOOL = "e000000000000005"
NODE_2 = "e000000000000006"
LLM_2 = "e000000000000007"

ASKED = "What's the weather in Paris?"
ANSWER = "It is sunny in Paris."


def langgraph_trace() -> list[dict[str, Any]]:
    """A ReAct graph as openinference-instrumentation-langchain reports it: the graph (the
    root, a CHAIN named after the agent), its ``agent`` nodes (marked AGENT for their name,
    with no ``agent.name``), two model calls and a one-argument tool."""
    said = {"messages": [["user", ASKED]]}
    state = {
        "messages": [
            {"type": "human", "data": {"content": ASKED}},
            {"type": "ai", "data": {"content": "", "tool_calls": [{"id": "call_1"}]}},
            {"type": "tool", "data": {"content": "sunny in Paris", "tool_call_id": "call_1"}},
            {"type": "ai", "data": {"content": ANSWER}},
        ]
    }
    tool_message = {"type": "tool", "data": {"content": "sunny in Paris", "tool_call_id": "call_1"}}
    first = {
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": ASKED,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": (
            '{"city": "Paris"}'
        ),
    }
    second = {
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": ASKED,
        "llm.input_messages.1.message.role": "assistant",
        "llm.input_messages.1.message.tool_calls.0.tool_call.id": "call_1",
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "get_weather",
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments": (
            '{"city": "Paris"}'
        ),
        "llm.input_messages.2.message.role": "tool",
        "llm.input_messages.2.message.content": "sunny in Paris",
        "llm.input_messages.2.message.tool_call_id": "call_1",
        "llm.input_messages.2.message.name": "get_weather",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": ANSWER,
    }

    def llm(span_id: str, parent: str, start: float, end: float, **more: Any) -> dict[str, Any]:
        attributes = {key.replace(".", "__"): value for key, value in more.items()}
        return span(
            span_id,
            "ChatFake",
            start,
            end,
            parent=parent,
            openinference__span__kind="LLM",
            llm__model_name="fake-gpt",
            llm__provider="fake",
            llm__token_count__prompt=40,
            llm__token_count__completion=7,
            **attributes,
        )

    # In the order they end, as the exporter sends them.
    return [
        llm(LLM_1, NODE_1, 0.02, 0.30, **first),
        span(NODE_1, "agent", 0.01, 0.31, parent=GRAPH, openinference__span__kind="AGENT"),
        span(
            TOOL,
            "get_weather",
            0.35,
            0.45,
            parent=TOOLS,
            openinference__span__kind="TOOL",
            tool__name="get_weather",
            input__value="Paris",
            output__value=json.dumps(tool_message),
        ),
        span(TOOLS, "tools", 0.34, 0.46, parent=GRAPH, openinference__span__kind="CHAIN"),
        llm(LLM_2, NODE_2, 0.50, 0.80, **second),
        span(NODE_2, "agent", 0.49, 0.81, parent=GRAPH, openinference__span__kind="AGENT"),
        span(
            GRAPH,
            "weather",
            0.0,
            0.9,
            openinference__span__kind="CHAIN",
            input__value=json.dumps(said),
            output__value=json.dumps(state),
        ),
    ]


def test_a_langgraph_trace_is_one_run_named_after_its_graph(tmp_path: Path) -> None:
    OtlpIngest(tmp_path).ingest(decode_json(request(*langgraph_trace())))
    [events] = ledgers(tmp_path).values()
    started, completed = events[0]["payload"], events[-1]["payload"]
    assert (started["agent"], started["input"]) == ("weather", ASKED)
    assert (events[-1]["type"], completed["status"], completed["output"]) == (
        "run_completed",
        "ok",
        ANSWER,
    )
    assert "otel_span" not in types(events)


def test_model_calls_carry_model_tokens_and_the_conversation(tmp_path: Path) -> None:
    OtlpIngest(tmp_path).ingest(decode_json(request(*langgraph_trace())))
    [events] = ledgers(tmp_path).values()
    calls = [event["payload"] for event in events if event["type"] == "llm_call"]
    assert [(c["model"], c["provider"], c["prompt_tokens"], c["output_tokens"]) for c in calls] == [
        ("fake-gpt", "fake", 40, 7)
    ] * 2
    assert calls[0]["messages"] == [{"role": "user", "content": ASKED}]
    call = {"type": "tool_call", "id": "call_1", "name": "get_weather"}
    assert calls[0]["response"] == [
        {"role": "assistant", "content": [{**call, "arguments": {"city": "Paris"}}]}
    ]
    assert calls[1]["messages"][2] == {
        "role": "tool",
        "content": [
            {
                "type": "tool_result",
                "id": "call_1",
                "output": "sunny in Paris",
                "name": "get_weather",
            }
        ],
    }
    assert calls[1]["response"] == [{"role": "assistant", "content": ANSWER}]


def test_a_tool_call_has_the_models_arguments_and_the_tools_words(tmp_path: Path) -> None:
    """LangChain hands a one-argument tool its argument alone ("Paris"); the call's arguments
    are the model's tool call's, found by the call id the tool's answer names."""
    OtlpIngest(tmp_path).ingest(decode_json(request(*langgraph_trace())))
    [events] = ledgers(tmp_path).values()
    [called] = [event["payload"] for event in events if event["type"] == "tool_call"]
    [answered] = [event["payload"] for event in events if event["type"] == "tool_result"]
    assert (called["name"], called["call_id"], called["arguments"]) == (
        "get_weather",
        "call_1",
        {"city": "Paris"},
    )
    assert (answered["call_id"], answered["output"], answered["is_error"]) == (
        "call_1",
        "sunny in Paris",
        False,
    )


def test_a_failed_one_argument_tool_has_the_models_call(tmp_path: Path) -> None:
    """A one-argument tool that raised has no answer to name its call: its call is the
    model's one call of that tool whose one argument is the tool's ("Paris")."""
    failed = [
        {**each, "status": {"code": 2, "message": "RuntimeError('down')"}}
        if each["spanId"] == TOOL
        else each
        for each in langgraph_trace()
    ]
    tool = next(each for each in failed if each["spanId"] == TOOL)
    tool["attributes"] = [a for a in tool["attributes"] if a["key"] != "output.value"]
    OtlpIngest(tmp_path).ingest(decode_json(request(*failed)))
    [events] = ledgers(tmp_path).values()
    [called] = [event["payload"] for event in events if event["type"] == "tool_call"]
    [answered] = [event["payload"] for event in events if event["type"] == "tool_result"]
    assert (called["call_id"], called["arguments"]) == ("call_1", {"city": "Paris"})
    assert (answered["call_id"], answered["is_error"]) == ("call_1", True)


def test_graph_nodes_are_steps_holding_their_calls_in_time_order(tmp_path: Path) -> None:
    from inspector.timeline import NodeKind, Timeline
    from ledger_reader import iter_events, read_lines

    OtlpIngest(tmp_path).ingest(decode_json(request(*langgraph_trace())))
    [path] = tmp_path.glob("*.jsonl")
    [events] = ledgers(tmp_path).values()
    times = [event["time"] for event in events]
    assert times == sorted(times)
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    timeline = Timeline()
    with path.open("rb") as file:
        fd = file.fileno()
        timeline.extend(iter_events(line.item for line in read_lines(fd, 0, path.stat().st_size)))
    rows = [
        (node.kind, node.name, node.parent.name if node.parent else None)
        for node in timeline.rows()
    ]
    assert rows == [
        (NodeKind.STEP, "agent", None),
        (NodeKind.MODEL, "fake-gpt", "agent"),
        (NodeKind.STEP, "tools", None),
        (NodeKind.TOOL, "get_weather", "tools"),
        (NodeKind.STEP, "agent", None),
        (NodeKind.MODEL, "fake-gpt", "agent"),
    ]


def test_an_agent_span_that_names_its_agent_is_a_child_run(tmp_path: Path) -> None:
    spans = langgraph_trace()
    for each in spans:
        if each["spanId"] == NODE_2:
            each["attributes"].append({"key": "agent.name", "value": {"stringValue": "helper"}})
        if not each.get("parentSpanId"):  # an agent named by the user, not a wrapper
            each["attributes"].append({"key": "agent.name", "value": {"stringValue": "weather"}})
    OtlpIngest(tmp_path).ingest(decode_json(request(*spans)))
    runs = {events[0]["payload"]["agent"]: events for events in ledgers(tmp_path).values()}
    assert set(runs) == {"weather", "helper"}
    parent, child = runs["weather"], runs["helper"]
    assert child[0]["payload"]["parent_run_id"] == parent[0]["run_id"]
    assert [e["payload"]["output"] for e in child if e["type"] == "run_completed"] == [ANSWER]
    assert types(child).count("llm_call") == 1
    assert types(parent).count("llm_call") == 1


def test_a_root_that_comes_late_ends_the_run_the_first_call_said_its_input(tmp_path: Path) -> None:
    *children, root = langgraph_trace()
    ingest = OtlpIngest(tmp_path)
    ingest.ingest(decode_json(request(*children)))
    ingest.ingest(decode_json(request(root)))
    [events] = ledgers(tmp_path).values()
    # The run was made before its root came: the first model call's words are its input.
    assert events[0]["payload"]["input"] == ASKED
    assert events[-1]["payload"]["output"] == ANSWER
    assert types(events).count("run_completed") == 1


def _model_span(messages: dict[str, str]) -> dict[str, Any]:
    attributes = {key.replace(".", "__"): value for key, value in messages.items()}
    return span(LLM_1, "ChatFake", 0.0, 0.1, openinference__span__kind="LLM", **attributes)


def test_a_conversation_over_the_cap_keeps_its_newest_messages(tmp_path: Path) -> None:
    """A conversation whose size cannot be told small from its attributes is measured: over
    the cap its oldest messages go; under it, though its bound is over, it is kept whole."""
    from ledger_reader.events import PAYLOAD_CAP_BYTES

    def said(count: int, words: str) -> dict[str, str]:
        messages = {}
        for index in range(count):
            messages[f"llm.input_messages.{index}.message.role"] = "user"
            messages[f"llm.input_messages.{index}.message.content"] = f"{index} {words}"
        return messages

    long = OtlpIngest(tmp_path / "long")
    long.ingest(decode_json(request(_model_span(said(40, "x" * 3000)))))
    [events] = ledgers(tmp_path / "long").values()
    [call] = [event["payload"] for event in events if event["type"] == "llm_call"]
    assert call["truncated"] is True
    assert call["messages"][-1]["content"].startswith("39 ")
    assert 1 < len(call["messages"]) < 40
    assert len(json.dumps(call["messages"], separators=(",", ":"))) <= PAYLOAD_CAP_BYTES
    # 12,000 control characters: as JSON six bytes each is over the cap, but they are not.
    close = OtlpIngest(tmp_path / "close")
    close.ingest(decode_json(request(_model_span(said(4, "\x01" * 20 + "y" * 3000)))))
    [events] = ledgers(tmp_path / "close").values()
    [call] = [event["payload"] for event in events if event["type"] == "llm_call"]
    assert "truncated" not in call
    assert [message["content"][:2] for message in call["messages"]] == ["0 ", "1 ", "2 ", "3 "]


def test_a_conversation_its_attributes_bound_under_the_cap_is_not_measured() -> None:
    from run_manager.otlp import openinference
    from run_manager.otlp.spans import decode_json as decode

    def call(words: str) -> Any:
        body = {
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": words,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "ok",
        }
        [read] = decode(request(_model_span(body))).spans
        return openinference.model_call(read)

    assert call("a question").within_cap
    assert not call("q" * 11_000).within_cap  # 66,000 bytes, were it all escaped


def test_message_attribute_names_are_remembered_up_to_a_bound() -> None:
    """The place of each name in the conversation is looked up once; names past the bound
    (a sender's own) are read all the same, each time, and not kept."""
    from run_manager.otlp import openinference

    count = openinference._KEYS_KEPT + 500
    attributes = {f"llm.input_messages.{index}.message.content": "hi" for index in range(count)}
    for _ in range(2):
        messages, _, _, _ = openinference._conversation(attributes)
        assert messages is not None
        assert len(messages) == count
        assert messages[-1] == {"role": "?", "content": "hi"}
        assert len(openinference._keys) <= openinference._KEYS_KEPT


def test_the_cyclic_collector_waits_for_a_request_to_be_written(tmp_path: Path) -> None:
    """A request's containers are many and short-lived, with no cycle among them: the
    collector is held off while its spans are placed and written, and runs after it."""
    import gc

    spans = []
    for number in range(60):
        for each in langgraph_trace():
            spans.append({**each, "traceId": f"{number + 1:032x}"})
    collections: list[str] = []

    def collecting(phase: str, info: dict[str, int]) -> None:
        collections.append(phase)

    for enabled in (True, False):
        ingest = OtlpIngest(tmp_path / str(enabled))
        decoded = decode_json(request(*spans))
        gc.collect()  # counted from nothing, whatever the tests before left
        collections.clear()
        (gc.enable if enabled else gc.disable)()
        gc.callbacks.append(collecting)
        try:
            ingest.ingest(decoded)
            assert gc.isenabled() is enabled
        finally:
            gc.callbacks.remove(collecting)
            gc.enable()
        # None while the spans are placed and written; at most the one it owes once let go
        # (what the request kept alive counts towards it), never one held off.
        assert collections in ([], ["start", "stop"]) if enabled else collections == []
        assert len(ledgers(tmp_path / str(enabled))) == 60


def test_the_collector_held_around_a_request_is_let_go_once_by_whoever_held_it() -> None:
    """The routes hold it around decoding and ingest, and ingest holds it again inside."""
    import gc

    from ledger_reader.collector import collector_held

    assert gc.isenabled()
    try:
        with collector_held():
            assert not gc.isenabled()
            with collector_held():
                assert not gc.isenabled()
            assert not gc.isenabled()
            raise ValueError("a request that fails")
    except ValueError:
        pass
    assert gc.isenabled()


def test_a_model_named_only_in_its_invocation_parameters_is_named(tmp_path: Path) -> None:
    """Some LangChain chat models say their model only in ``llm.invocation_parameters``:
    the call is named after it, never ``llm:default``."""
    spans = langgraph_trace()
    for each in spans:
        kept = [item for item in each["attributes"] if item["key"] != "llm.model_name"]
        if len(kept) < len(each["attributes"]):
            parameters = json.dumps({"model": "gpt-5-mini", "temperature": 0})
            kept.append({"key": "llm.invocation_parameters", "value": {"stringValue": parameters}})
        each["attributes"] = kept
    OtlpIngest(tmp_path).ingest(decode_json(request(*spans)))
    [events] = ledgers(tmp_path).values()
    calls = [event["payload"] for event in events if event["type"] == "llm_call"]
    assert [call["model"] for call in calls] == ["gpt-5-mini"] * 2
    entered = [event["payload"]["node_id"] for event in events if event["type"] == "node_enter"]
    assert "llm:default#1" not in entered
