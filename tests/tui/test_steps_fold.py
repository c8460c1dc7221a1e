"""A traced agent's steps fold: its stream lists what it did, and ``s`` lists the steps.

The run is a real LangGraph ReAct agent instrumented with OpenInference, each
span exported as it ends (``SimpleSpanProcessor``, Phoenix's default) to a real
``runtop serve``: 22 of its 35 events are the enters and exits of chains and
graph nodes. Folded (as the run's screen opens), the stream lists the model
calls, the tool call and the run's start and end, each line saying how many
steps it holds; ``s`` lists every step, and folds them again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("openinference.instrumentation.langchain")

from inspector import LedgerDirectorySource
from tests.run_manager.otlp.conftest import OtlpServer, otlp_server  # noqa: F401 (a fixture)
from tests.tui.test_interaction import screen_lines
from tests.tui_support import loaded, open_run, settle
from tui.app import make_app
from tui.settings import Settings
from tui.text.entries import EntryIndex, folded_steps, is_step
from tui.widgets.event_list import EventList

ASKED = "What's the weather in Paris?"
ANSWER = "It is sunny in Paris."


def traced_langgraph_agent(server: OtlpServer) -> Path:
    """Run the agent, each span sent to ``server`` as it ends; its run's ledger."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    class FakeChat(GenericFakeChatModel):
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
                AIMessage(content="", tool_calls=[call]),
                AIMessage(content=ANSWER),
            ]
        )
    )
    exporter = OTLPSpanExporter(
        endpoint=f"{server.url}/v1/traces", headers={"Authorization": f"Bearer {server.token}"}
    )
    provider = TracerProvider(resource=Resource.create({"service.name": "lg-weather"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with pytest.warns(DeprecationWarning, match="create_react_agent has been moved"):
            agent = create_react_agent(model, [get_weather], name="weather")
        agent.invoke({"messages": [("user", ASKED)]})
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    [ledger] = server.runs.glob("*.jsonl")
    return ledger


@pytest.fixture
def traced_run(otlp_server: OtlpServer) -> Path:  # noqa: F811 (the fixture imported)
    return traced_langgraph_agent(otlp_server)


def test_steps_join_the_entry_before_them_and_are_counted_from_its_end(
    traced_run: Path,
) -> None:
    from inspector.ledger import read_ledger_lines

    items = [line.item for line in read_ledger_lines(traced_run) if line.item is not None]

    def item_at(at: int) -> Any:
        return items[at] if 0 <= at < len(items) else None

    steps = [item for item in items if is_step(item)]
    assert len(steps) >= 10  # chains and graph nodes, enters and exits
    folded = EntryIndex(item_at, fold_steps=True).entries_from(0, len(items), len(items))
    listed = EntryIndex(item_at).entries_from(0, len(items), len(items))
    assert len(folded) < len(listed) - len(steps) // 2
    assert sum(folded_steps(entry, item_at) for entry in folded) == len(steps)
    for entry in folded:  # what each line says is no step, but steps alone at the start
        head = entry.end - folded_steps(entry, item_at)
        assert not any(is_step(item_at(at)) for at in range(entry.start, head))
    said = [item_at(entry.start).type for entry in folded]
    assert said[0] == "run_started"
    assert said[-1] == "run_completed"
    assert said.count("llm_call") == 2


def listed(chains: list[str], app: Any) -> bool:
    shown = "\n".join(screen_lines(app))
    return any(chain in shown for chain in chains)


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_s_lists_the_steps_and_folds_them_again(
    traced_run: Path, size: tuple[int, int]
) -> None:
    run_id = traced_run.stem
    lines = traced_run.read_text().splitlines()
    chains = [
        json.loads(line)["payload"]["node_id"]
        for line in lines
        if json.loads(line)["type"] == "node_enter"
        and not json.loads(line)["payload"]["node_id"].startswith(("llm:", "tool:"))
    ]
    app = make_app(Settings(flush_interval=0.01), [LedgerDirectorySource(traced_run.parent)])
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, 1)
        screen = await open_run(pilot, run_id)
        events = screen.query_one(EventList)
        await settle(pilot, lambda: events.count == len(lines), "the run's events")
        await settle(pilot, lambda: "◆ model fake-gpt" in "\n".join(screen_lines(app)), "calls")
        folded = "\n".join(screen_lines(app))
        assert not listed(chains, app)
        assert "steps" in folded  # each line says how many it holds
        assert "Show steps" in folded  # the key bar says what s does
        await pilot.press("s")
        await settle(pilot, lambda: listed(chains, app), "the steps listed")
        assert "Fold steps" in "\n".join(screen_lines(app))
        await pilot.press("s")
        await settle(pilot, lambda: not listed(chains, app), "the steps folded")
