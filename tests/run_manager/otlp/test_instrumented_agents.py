"""Real agents, instrumented by the real packages, exported by the real OTLP exporters (HTTP and
gRPC) to a real ``runtop serve``: each becomes one run read as a user would read it.

- a LangGraph ``create_react_agent`` with a fake chat model that calls one tool,
  instrumented with ``openinference-instrumentation-langchain`` (what Phoenix users run);
- an OpenAI Agents SDK agent on the SDK's own Responses model, its HTTP answered by a
  script in this process (no network), instrumented with OpenLLMetry's
  ``opentelemetry-instrumentation-openai-agents``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ledger_reader import iter_events, read_lines
from tests.conftest import REPO, runs_listed
from tests.run_manager.otlp.conftest import OtlpServer

pytest.importorskip("opentelemetry.exporter.otlp.proto.grpc")

ASKED = "What's the weather in Paris?"
ANSWER = "It is sunny in Paris."


@pytest.fixture(params=["http", "grpc"])
def provider(request: pytest.FixtureRequest, otlp_server: OtlpServer) -> Iterator[Any]:
    """A tracer provider whose spans go to ``otlp_server`` by the real exporter of each kind."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    if request.param == "http":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter: Any = OTLPSpanExporter(
            endpoint=f"{otlp_server.url}/v1/traces",
            headers={"Authorization": f"Bearer {otlp_server.token}"},
        )
    else:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcSpanExporter,
        )

        exporter = GrpcSpanExporter(
            endpoint=otlp_server.grpc,
            insecure=True,
            headers={"authorization": f"Bearer {otlp_server.token}"},
        )
    # The service is not the agent: the run must be named after the agent.
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-service"}))
    # Each span sent as it ends, the run's own last (Phoenix's default): the run is named
    # and asked by that span all the same.
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        yield provider
    finally:
        provider.shutdown()


def runtop(server: OtlpServer, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        capture_output=True,
        text=True,
        env=server.env,
        cwd=REPO,
        timeout=30,
        check=True,
    )
    return result.stdout


def the_run(server: OtlpServer) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The one run the server holds, as ``runtop ls`` lists it and ``runtop show`` shows it."""
    [listed] = runs_listed(runtop(server, "ls", server.url, "--json"))
    shown = runtop(server, "show", listed["run_id"], "--from", server.url, "--json")
    return listed, [json.loads(text) for text in shown.splitlines()]


def timeline_of(server: OtlpServer) -> Any:
    from inspector.timeline import Timeline

    [path] = server.runs.glob("*.jsonl")
    timeline = Timeline()
    with path.open("rb") as file:
        lines = read_lines(file.fileno(), 0, path.stat().st_size)
        timeline.extend(iter_events(line.item for line in lines))
    return timeline.summary()


def assert_read_truthfully(server: OtlpServer, *, tokens: list[tuple[int, int]]) -> None:
    """One run named after its agent, with its input and output, a model call per call
    (model, tokens, messages), a tool call and its result, and time counted as model and
    tool time; no event shown before the run began."""
    listed, events = the_run(server)
    assert (listed["agent"], listed["status"], listed["input"]) == ("weather", "succeeded", ASKED)
    assert events[0]["payload"]["writer"] == "otlp"
    assert (events[-1]["type"], events[-1]["payload"]["output"]) == ("run_completed", ANSWER)
    assert all(event["time"] >= events[0]["time"] for event in events)
    assert not [event for event in events if event["type"] == "otel_span"]
    calls = [event["payload"] for event in events if event["type"] == "llm_call"]
    assert [(call["model"], call["prompt_tokens"], call["output_tokens"]) for call in calls] == [
        ("fake-gpt", *counts) for counts in tokens
    ]
    assert calls[0]["messages"][-1] == {"role": "user", "content": ASKED}
    [asked_for] = [
        part
        for message in calls[0]["response"]
        for part in message["content"]
        if isinstance(part, dict) and part["type"] == "tool_call"
    ]
    assert (asked_for["name"], asked_for["arguments"]) == ("get_weather", {"city": "Paris"})
    assert calls[1]["response"] == [{"role": "assistant", "content": ANSWER}]
    [called] = [event["payload"] for event in events if event["type"] == "tool_call"]
    [answered] = [event["payload"] for event in events if event["type"] == "tool_result"]
    assert (called["name"], called["arguments"]) == ("get_weather", {"city": "Paris"})
    assert called["call_id"] == answered["call_id"] == asked_for["id"]
    assert (answered["output"], answered["is_error"]) == ("sunny in Paris", False)
    summary = timeline_of(server)
    assert (summary.model_calls, summary.tool_calls) == (2, 1)
    assert summary.model_time > 0
    assert summary.tool_time > 0


def test_a_langgraph_agent_instrumented_with_openinference(
    provider: Any, otlp_server: OtlpServer
) -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent
    from openinference.instrumentation.langchain import LangChainInstrumentor

    class FakeChat(GenericFakeChatModel):
        """A fake chat model that says its model's name, and takes tools as a real one does."""

        model_name: str = "fake-gpt"

        @property
        def _identifying_params(self) -> dict[str, Any]:
            return {"model_name": self.model_name}

        def bind_tools(self, tools: Any, **kwargs: Any) -> FakeChat:  # type: ignore[override]
            return self

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}
    model = FakeChat(
        messages=iter(
            [
                AIMessage(
                    content="",
                    tool_calls=[call],
                    usage_metadata={"input_tokens": 40, "output_tokens": 7, "total_tokens": 47},
                ),
                AIMessage(
                    content=ANSWER,
                    usage_metadata={"input_tokens": 60, "output_tokens": 9, "total_tokens": 69},
                ),
            ]
        )
    )
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with pytest.warns(DeprecationWarning, match="create_react_agent has been moved"):
            agent = create_react_agent(model, [get_weather], name="weather")
        agent.invoke({"messages": [("user", ASKED)]})
        assert provider.force_flush(10_000)
    finally:
        instrumentor.uninstrument()
    assert_read_truthfully(otlp_server, tokens=[(40, 7), (60, 9)])


def responses_api(turns: list[dict[str, Any]]) -> Callable[[Any], Any]:
    """An OpenAI Responses API answering each request with the next scripted output item."""
    import httpx2

    def answer(request: Any) -> Any:
        item = turns.pop(0)
        body = {
            "id": "resp_1",
            "object": "response",
            "created_at": 0,
            "model": "fake-gpt",
            "status": "completed",
            "output": [item],
            "tool_choice": "auto",
            "tools": [],
            "parallel_tool_calls": False,
            "usage": {
                "input_tokens": 40,
                "output_tokens": 7,
                "total_tokens": 47,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }
        return httpx2.Response(200, json=body)

    return answer


def test_an_agents_sdk_agent_instrumented_with_openllmetry(
    provider: Any, otlp_server: OtlpServer
) -> None:
    import agents
    import httpx2
    from agents import Agent, OpenAIResponsesModel, Runner, function_tool
    from openai import AsyncOpenAI
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    turns = [
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
            "status": "completed",
        },
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
        },
    ]
    client = AsyncOpenAI(
        api_key="offline",
        base_url="http://offline.invalid/v1",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(responses_api(turns))),
    )
    agent = Agent(
        name="weather",
        tools=[get_weather],
        model=OpenAIResponsesModel("fake-gpt", client),
    )
    # The SDK's traces go to OpenLLMetry's processor alone (never to OpenAI's servers);
    # other tests turn the SDK's tracing off for the process.
    agents.set_tracing_disabled(False)
    instrumentor = OpenAIAgentsInstrumentor(replace_existing_processors=True)
    instrumentor.instrument(tracer_provider=provider)
    try:
        result = asyncio.run(Runner.run(agent, ASKED))
        assert result.final_output == ANSWER
        assert provider.force_flush(10_000)
    finally:
        instrumentor.uninstrument()
        agents.set_trace_processors([])
        agents.set_tracing_disabled(True)
    assert_read_truthfully(otlp_server, tokens=[(40, 7), (40, 7)])
