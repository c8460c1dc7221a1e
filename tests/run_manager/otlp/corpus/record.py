"""Re-record the conformance corpus: real agents, traced by real instrumentations, offline.

Each agent asks a scripted model (an OpenAI-shaped HTTP server on loopback, in this
process) the same question, calls one tool (``get_weather``) and answers. Its spans are
exported as an OTLP/HTTP exporter sends them, one request per span as each ends
(``SimpleSpanProcessor``, the root last), and kept as ``<name>.pb``: the requests, each
a 4-byte big-endian length and an ``ExportTraceServiceRequest`` in protobuf. Beside
it, ``<name>.json`` says what the run must read as, from what the script did (the
agent's name, the question, the answer, the model calls the server answered, the tool
calls the tool saw), never from what runtop made of it.

The frameworks are not runtop's dependencies. Record in a scratch environment outside
the project, never from ``make test``::

    python3 -m venv /tmp/otlp-rec/venv
    /tmp/otlp-rec/venv/bin/pip install -r tests/run_manager/otlp/corpus/requirements.txt
    PYTHONPATH=. /tmp/otlp-rec/venv/bin/python tests/run_manager/otlp/corpus/record.py [NAME...]

``test_corpus.py`` replays each recording into a real ``runtop serve``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
ASKED = "What's the weather in Paris?"
ANSWER = "It is sunny in Paris."
MODEL = "fake-gpt"
BROKEN = "the weather service is down"
"""What the tool raises in a recording named ``*_tool_error``."""
SESSION = "session-7"
USER = "user-42"

os.environ.setdefault("OPENAI_API_KEY", "offline")
os.environ["OTEL_SDK_DISABLED"] = "false"
# No framework may phone home while recording.
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", "")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")
os.environ.setdefault("DSPY_CACHEDIR", "/tmp/otlp-rec/dspy-cache")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


# -- the scripted model -----------------------------------------------------------------


class ScriptedModel:
    """An OpenAI-shaped model (Chat Completions, streamed or not, and Responses) that
    asks for ``get_weather`` in Paris until it has the tool's answer, then answers."""

    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(size) or b"{}")
                with model.lock:
                    model.calls += 1
                    number = model.calls
                if self.path.endswith("/responses"):
                    self._json(model.response(body, number))
                elif body.get("stream"):
                    self._stream(model.chunks(body, number))
                else:
                    self._json(model.completion(body, number))

            def _json(self, answer: dict[str, Any]) -> None:
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, chunks: list[dict[str, Any]]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        return Handler

    # -- what it answers

    def decide(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]] | str:
        """A tool call (name, arguments) or the answer's text, from the conversation."""
        messages = body.get("messages") or body.get("input") or []
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        text = json.dumps(messages)
        tools = [(tool.get("function") or tool).get("name") for tool in body.get("tools") or []]
        answered = (
            any(
                isinstance(m, dict)
                and (m.get("role") == "tool" or m.get("type") == "function_call_output")
                for m in messages
            )
            or "sunny in Paris" in text
        )
        if "next_tool_name" in text:  # DSPy's ReAct, which calls tools by text fields
            return self._dspy(text)
        if "[[ ## answer ## ]]" in text:  # DSPy's extraction of the answer
            return (
                "[[ ## reasoning ## ]]\nThe tool said so.\n\n"
                f"[[ ## answer ## ]]\n{ANSWER}\n\n[[ ## completed ## ]]"
            )
        if not answered:
            return "get_weather", {"city": "Paris"}
        if "final_answer" in tools:  # smolagents answers by a tool of its own
            return "final_answer", {"answer": ANSWER}
        return ANSWER

    def _dspy(self, text: str) -> str:
        if "sunny in Paris" not in text:
            tool, args = "get_weather", '{"city": "Paris"}'
        else:
            tool, args = "finish", "{}"
        return (
            f"[[ ## next_thought ## ]]\nI ask the tool.\n\n[[ ## next_tool_name ## ]]\n{tool}\n\n"
            f"[[ ## next_tool_args ## ]]\n{args}\n\n[[ ## completed ## ]]"
        )

    @staticmethod
    def usage(number: int) -> tuple[int, int]:
        return 40 + 20 * (number % 2), 7 + number % 3

    def completion(self, body: dict[str, Any], number: int) -> dict[str, Any]:
        said = self.decide(body)
        prompt, output = self.usage(number)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(said, str):
            message["content"] = said
            reason = "stop"
        else:
            name, arguments = said
            message["tool_calls"] = [
                {
                    "id": f"call_{number}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            ]
            reason = "tool_calls"
        return {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": reason}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": output,
                "total_tokens": prompt + output,
            },
        }

    def chunks(self, body: dict[str, Any], number: int) -> list[dict[str, Any]]:
        said = self.decide(body)
        prompt, output = self.usage(number)

        def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
            return {
                "id": f"chatcmpl-{number}",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
            }

        found = [chunk({"role": "assistant", "content": ""})]
        if isinstance(said, str):
            half = len(said) // 2
            found += [chunk({"content": said[:half]}), chunk({"content": said[half:]})]
            found.append(chunk({}, "stop"))
        else:
            name, arguments = said
            call = {
                "index": 0,
                "id": f"call_{number}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            found += [chunk({"tool_calls": [call]}), chunk({}, "tool_calls")]
        found.append(
            {
                "id": f"chatcmpl-{number}",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": MODEL,
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": output,
                    "total_tokens": prompt + output,
                },
            }
        )
        return found

    def response(self, body: dict[str, Any], number: int) -> dict[str, Any]:
        said = self.decide(body)
        prompt, output = self.usage(number)
        if isinstance(said, str):
            item: dict[str, Any] = {
                "type": "message",
                "id": f"msg_{number}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": said, "annotations": []}],
            }
        else:
            name, arguments = said
            item = {
                "type": "function_call",
                "id": f"fc_{number}",
                "call_id": f"call_{number}",
                "name": name,
                "arguments": json.dumps(arguments),
                "status": "completed",
            }
        return {
            "id": f"resp_{number}",
            "object": "response",
            "created_at": int(time.time()),
            "model": MODEL,
            "status": "completed",
            "output": [item],
            "tool_choice": "auto",
            "tools": [],
            "parallel_tool_calls": False,
            "usage": {
                "input_tokens": prompt,
                "output_tokens": output,
                "total_tokens": prompt + output,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }


# -- recording -------------------------------------------------------------------------


class Recording:
    """What one agent did, as the script saw it, and its spans as they were exported."""

    def __init__(self, name: str, model: ScriptedModel) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        self.name = name
        self.model = model
        self.broken = name.endswith("_tool_error")
        """Its tool raises (:data:`BROKEN`): the run reads as the framework took it."""
        self.requests: list[bytes] = []
        self.tools: list[dict[str, Any]] = []
        self.provider = TracerProvider(
            resource=Resource.create({"service.name": f"{name}-service"})
        )
        self.provider.add_span_processor(SimpleSpanProcessor(_Exporter(self.requests)))

    def get_weather(self, city: str) -> str:
        """The weather in a city (the tool every agent calls)."""
        if self.broken:
            self.tools.append(
                {"name": "get_weather", "arguments": {"city": city}, "is_error": True}
            )
            raise RuntimeError(BROKEN)
        said = f"sunny in {city}"
        self.tools.append({"name": "get_weather", "arguments": {"city": city}, "output": said})
        return said

    def outcome(self, run: Callable[[], Any]) -> dict[str, Any]:
        """How the agent's run ended, as its caller saw it: its answer, or (its tool broken)
        the error it raised."""
        try:
            said = run()
        except Exception as error:
            if not self.broken or BROKEN not in str(error):
                raise
            return {"status": "failed", "output": None, "error": BROKEN}
        assert said == ANSWER, said
        return {"status": "succeeded", "output": said}

    def save(self, expected: dict[str, Any], session: str | None = None) -> None:
        """Keep the spans, and what the run must read as (``session``: the session its
        spans say)."""
        self.provider.force_flush()
        self.provider.shutdown()
        with (HERE / f"{self.name}.pb").open("wb") as file:
            for request in self.requests:
                file.write(struct.pack(">I", len(request)) + request)
        expected = {"tool_calls": self.tools, **expected, "session": session}
        (HERE / f"{self.name}.json").write_text(json.dumps(expected, indent=2) + "\n")
        print(f"{self.name}: {len(self.requests)} spans, {expected}", file=sys.stderr)


class _Exporter:
    """Spans as the OTLP/HTTP exporter encodes them, one request per export, kept."""

    def __init__(self, requests: list[bytes]) -> None:
        self.requests = requests

    def export(self, spans: Any) -> Any:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExportResult

        self.requests.append(encode_spans(spans).SerializeToString())
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


@contextlib.contextmanager
def counted(model: ScriptedModel) -> Iterator[dict[str, int]]:
    """The model calls the server answered inside the block."""
    before = model.calls
    found: dict[str, int] = {}
    yield found
    found["model_calls"] = model.calls - before


def documented_tool(rec: Recording) -> Callable[[str], str]:
    """The tool as a function documented as frameworks read a tool's docstring (Google
    style, its argument described), each call the recording's."""

    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: the city.
        """
        return rec.get_weather(city)

    return get_weather


@contextlib.contextmanager
def openinference_context() -> Iterator[None]:
    """Who asked, as OpenInference users say it: every span below carries it."""
    from openinference.instrumentation import using_attributes

    with using_attributes(
        session_id=SESSION, user_id=USER, tags=["corpus"], metadata={"team": "weather"}
    ):
        yield


# -- the agents ------------------------------------------------------------------------


def langgraph(rec: Recording) -> None:
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent
    from openinference.instrumentation.langchain import LangChainInstrumentor

    get_weather = tool(rec.get_weather)
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=rec.provider)
    try:
        chat = ChatOpenAI(model=MODEL, base_url=rec.model.url, api_key="offline")
        agent = create_react_agent(chat, [get_weather], name="weather")
        with counted(rec.model) as calls, openinference_context():
            result = agent.invoke({"messages": [("user", ASKED)]})
        assert result["messages"][-1].content == ANSWER
    finally:
        instrumentor.uninstrument()
    rec.save(
        {"agent": "weather", "input": ASKED, "output": ANSWER, **calls, "tokens": True},
        session=SESSION,
    )


def llamaindex(rec: Recording) -> None:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.tools import FunctionTool
    from llama_index.llms.openai import OpenAI
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=rec.provider)
    try:
        llm = OpenAI(model="gpt-4o-mini", api_base=rec.model.url, api_key="offline")
        agent = FunctionAgent(
            name="weather",
            tools=[FunctionTool.from_defaults(rec.get_weather, name="get_weather")],
            llm=llm,
        )
        with counted(rec.model) as calls, openinference_context():
            result = asyncio.run(_llamaindex_run(agent))
        assert ANSWER in str(result), result
    finally:
        instrumentor.uninstrument()
    # The instrumentation names the run's span after the class (``FunctionAgent.run``):
    # the agent's ``name=`` is in none of its attributes.
    rec.save(
        {"agent": "FunctionAgent", "input": ASKED, "output": ANSWER, **calls, "tokens": True},
        session=SESSION,
    )


async def _llamaindex_run(agent: Any) -> Any:
    return await agent.run(ASKED)


def dspy(rec: Recording) -> None:
    import dspy as dspy_
    from openinference.instrumentation.dspy import DSPyInstrumentor

    instrumentor = DSPyInstrumentor()
    instrumentor.instrument(tracer_provider=rec.provider)
    try:

        class WeatherAgent(dspy_.Module):
            def __init__(self, get_weather: Callable[[str], str]) -> None:
                super().__init__()
                self.react = dspy_.ReAct("question -> answer", tools=[get_weather])

            def forward(self, question: str) -> Any:
                return self.react(question=question)

        def get_weather(city: str) -> str:
            """The weather in a city."""
            return rec.get_weather(city)

        lm = dspy_.LM(f"openai/{MODEL}", api_base=rec.model.url, api_key="offline", cache=False)
        dspy_.configure(lm=lm)
        with counted(rec.model) as calls, openinference_context():
            result = WeatherAgent(get_weather)(question=ASKED)
        assert result.answer == ANSWER, result
    finally:
        instrumentor.uninstrument()
    # ReAct ends by calling a tool of its own; the instrumentation says no tokens.
    rec.tools.append({"name": "finish", "arguments": {}, "output": "Completed."})
    rec.save(
        {"agent": "WeatherAgent", "input": ASKED, "output": ANSWER, **calls, "tokens": False},
        session=SESSION,
    )


def smolagents(rec: Recording) -> None:
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    from smolagents import OpenAIServerModel, ToolCallingAgent, tool

    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: the city.
        """
        return rec.get_weather(city)

    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=rec.provider)
    try:
        model = OpenAIServerModel(model_id=MODEL, api_base=rec.model.url, api_key="offline")
        agent = ToolCallingAgent(
            tools=[tool(get_weather)], model=model, name="weather", max_steps=4, verbosity_level=0
        )
        with counted(rec.model) as calls, openinference_context():
            result = agent.run(ASKED)
        assert result == ANSWER, result
    finally:
        instrumentor.uninstrument()
    # smolagents answers by calling a tool of its own, a tool call like any other.
    rec.tools.append({"name": "final_answer", "arguments": {"answer": ANSWER}, "output": ANSWER})
    rec.save(
        {"agent": "weather", "input": ASKED, "output": ANSWER, **calls, "tokens": True},
        session=SESSION,
    )


def _agents_sdk_agent(rec: Recording) -> Any:
    from agents import Agent, OpenAIResponsesModel, function_tool
    from openai import AsyncOpenAI

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return rec.get_weather(city)

    client = AsyncOpenAI(api_key="offline", base_url=rec.model.url)
    return Agent(name="weather", tools=[get_weather], model=OpenAIResponsesModel(MODEL, client))


def agents_sdk_openinference(rec: Recording) -> None:
    import agents
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    agents.set_trace_processors([])
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=rec.provider)
    try:
        with counted(rec.model) as calls:
            result = asyncio.run(agents.Runner.run(_agents_sdk_agent(rec), ASKED))
        assert result.final_output == ANSWER
    finally:
        instrumentor.uninstrument()
        agents.set_trace_processors([])
    rec.save({"agent": "weather", "input": ASKED, "output": ANSWER, **calls, "tokens": True})


def agents_sdk_openllmetry(rec: Recording) -> None:
    import agents
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    agents.set_trace_processors([])
    instrumentor = OpenAIAgentsInstrumentor(replace_existing_processors=True)
    instrumentor.instrument(tracer_provider=rec.provider)
    try:
        with counted(rec.model) as calls:
            result = asyncio.run(agents.Runner.run(_agents_sdk_agent(rec), ASKED))
        assert result.final_output == ANSWER
    finally:
        instrumentor.uninstrument()
        agents.set_trace_processors([])
    rec.save({"agent": "weather", "input": ASKED, "output": ANSWER, **calls, "tokens": True})


_WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def _openai_loop(rec: Recording, run_tool: Callable[[str, str], str]) -> str:
    """A hand-written tool loop on the OpenAI SDK, as many small agents are; ``run_tool``
    runs a call (its id and arguments) in the span its instrumentation makes."""
    from openai import OpenAI

    client = OpenAI(api_key="offline", base_url=rec.model.url)
    messages: list[Any] = [{"role": "user", "content": ASKED}]
    while True:
        answer = client.chat.completions.create(
            model=MODEL, messages=messages, tools=[_WEATHER_TOOL]
        )
        message = answer.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            try:
                said = run_tool(call.id, call.function.arguments)
            except RuntimeError as error:  # told to the model, as such loops do
                said = f"error: {error}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": said})


def openai_openinference(rec: Recording) -> None:
    from openinference.instrumentation import OITracer, TraceConfig
    from openinference.instrumentation.openai import OpenAIInstrumentor

    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=rec.provider)
    tracer = OITracer(rec.provider.get_tracer("weather"), config=TraceConfig())

    def run_tool(call_id: str, arguments: str) -> str:
        with tracer.start_as_current_span("get_weather", openinference_span_kind="tool") as span:
            span.set_tool(name="get_weather", parameters={"city": "string"})
            span.set_attribute("tool_call.id", call_id)
            span.set_input(arguments, mime_type="application/json")
            said = rec.get_weather(**json.loads(arguments))
            span.set_output(said)
        return said

    try:
        agent_span = tracer.start_as_current_span("weather", openinference_span_kind="agent")
        with counted(rec.model) as calls, openinference_context(), agent_span as span:
            span.set_input(ASKED)
            said = _openai_loop(rec, run_tool)
            span.set_output(said)
        assert said == ANSWER
    finally:
        instrumentor.uninstrument()
    rec.save(
        {"agent": "weather", "input": ASKED, "output": ANSWER, **calls, "tokens": True},
        session=SESSION,
    )


def openai_openllmetry(rec: Recording) -> None:
    """OpenLLMetry as its users start it: ``Traceloop.init`` instruments the OpenAI SDK and
    traces its decorators (``@agent``, ``@tool``), each span exported as it ends."""
    from traceloop.sdk import Traceloop
    from traceloop.sdk.decorators import agent as traceloop_agent
    from traceloop.sdk.decorators import tool as traceloop_tool

    Traceloop.init(
        app_name=f"{rec.name}-service",
        exporter=_Exporter(rec.requests),
        disable_batch=True,
        telemetry_enabled=False,
    )
    Traceloop.set_association_properties({"session_id": SESSION, "user_id": USER})

    @traceloop_tool(name="get_weather")
    def get_weather(city: str) -> str:
        return rec.get_weather(city)

    def run_tool(call_id: str, arguments: str) -> str:
        return str(get_weather(**json.loads(arguments)))

    @traceloop_agent(name="weather")
    def weather(question: str) -> str:
        return _openai_loop(rec, run_tool)

    with counted(rec.model) as calls:
        said = weather(ASKED)
    assert said == ANSWER
    rec.save(
        {"agent": "weather", "input": ASKED, "output": ANSWER, **calls, "tokens": True},
        session=SESSION,
    )


def openai_genai(rec: Recording) -> None:
    """The OpenTelemetry project's own GenAI instrumentation on the newest conventions
    (``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``): the OpenAI SDK's calls
    by ``opentelemetry-instrumentation-openai-v2``, the agent and its tool calls by
    ``opentelemetry-util-genai``'s handler, as an instrumentation of a framework makes
    them; content as attributes (``gen_ai.input.messages``...) on each span."""
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.util.genai.handler import TelemetryHandler
    from opentelemetry.util.genai.types import InputMessage, OutputMessage, Text

    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=rec.provider)
    handler = TelemetryHandler(tracer_provider=rec.provider)

    def run_tool(call_id: str, arguments: str) -> str:
        with handler.tool("get_weather", tool_call_id=call_id, tool_type="function") as invocation:
            invocation.arguments = json.loads(arguments)
            said = rec.get_weather(**json.loads(arguments))
            invocation.tool_result = said
        return said

    try:
        with (
            counted(rec.model) as calls,
            handler.invoke_local_agent(agent_name="weather", request_model=MODEL) as agent,
        ):
            agent.input_messages = [InputMessage(role="user", parts=[Text(content=ASKED)])]
            ended = rec.outcome(lambda: _openai_loop(rec, run_tool))
            agent.output_messages = [
                OutputMessage(
                    role="assistant", parts=[Text(content=ended["output"])], finish_reason="stop"
                )
            ]
    finally:
        instrumentor.uninstrument()
    rec.save({"agent": "weather", "input": ASKED, **ended, **calls, "tokens": True})


def pydantic_ai(rec: Recording) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=rec.model.url, api_key="x"))
    agent = Agent(model, name="weather")
    agent.tool_plain(rec.get_weather)
    Agent.instrument_all(InstrumentationSettings(tracer_provider=rec.provider))
    try:
        with counted(rec.model) as calls:
            result = agent.run_sync(ASKED)
    finally:
        Agent.instrument_all(False)
    assert result.output == ANSWER, result.output
    rec.save({"agent": "weather", "input": ASKED, "output": ANSWER, **calls, "tokens": True})


def strands(rec: Recording) -> None:
    """Strands Agents speaks the GenAI conventions natively, its content in span events:
    one per message (``gen_ai.user.message``, ``gen_ai.choice``...)."""
    _strands(rec)


def strands_latest(rec: Recording) -> None:
    """Strands Agents on the newest GenAI conventions: a model call's conversation in one
    ``gen_ai.client.inference.operation.details`` event."""
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    _strands(rec)


def _strands(rec: Recording) -> None:
    from opentelemetry import trace
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    trace.set_tracer_provider(rec.provider)

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: the city.
        """
        return rec.get_weather(city)

    model = OpenAIModel(
        client_args={"api_key": "offline", "base_url": rec.model.url}, model_id=MODEL
    )
    agent = Agent(
        model=model, tools=[get_weather], name="weather", callback_handler=None,
        trace_attributes={"session.id": SESSION, "user.id": USER},
    )  # fmt: skip
    with counted(rec.model) as calls:
        result = agent(ASKED)
    assert str(result).strip() == ANSWER, str(result)
    rec.save(
        {"agent": "weather", "input": ASKED, "output": ANSWER, **calls, "tokens": True},
        session=SESSION,
    )


def google_adk(rec: Recording) -> None:
    """Google's Agent Development Kit traces itself on the GenAI conventions (no
    instrumentation to install): ``invoke_agent``, its model calls through LiteLLM to an
    OpenAI-compatible server, ``execute_tool``. Its spans hold content only on the newest
    conventions, as its docs say to ask for them."""
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    from google.adk.agents import LlmAgent
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import InMemoryRunner
    from google.genai import types
    from opentelemetry import trace

    trace.set_tracer_provider(rec.provider)
    get_weather = documented_tool(rec)
    model = LiteLlm(model=f"openai/{MODEL}", api_base=rec.model.url, api_key="offline")
    agent = LlmAgent(name="weather", model=model, tools=[get_weather], instruction="Help.")
    runner = InMemoryRunner(agent=agent, app_name="weather_app")

    async def run() -> str:
        session = await runner.session_service.create_session(
            app_name="weather_app", user_id=USER, session_id=SESSION
        )
        said = ""
        asked = types.Content(role="user", parts=[types.Part(text=ASKED)])
        async for event in runner.run_async(user_id=USER, session_id=session.id, new_message=asked):
            if event.is_final_response() and event.content and event.content.parts:
                said = "".join(part.text or "" for part in event.content.parts)
        return said

    with counted(rec.model) as calls:
        ended = rec.outcome(lambda: asyncio.run(run()))
    # ADK's session is the conversation its spans say (``gen_ai.conversation.id``).
    rec.save(
        {
            "agent": "weather", "input": ASKED, **ended, **calls, "tokens": True,
            "conversation": SESSION,
        }
    )  # fmt: skip


def agno(rec: Recording) -> None:
    from agno.agent import Agent
    from agno.models.openai import OpenAIChat
    from openinference.instrumentation.agno import AgnoInstrumentor

    get_weather = documented_tool(rec)
    instrumentor = AgnoInstrumentor()
    instrumentor.instrument(tracer_provider=rec.provider)
    try:
        model = OpenAIChat(id=MODEL, base_url=rec.model.url, api_key="offline")
        agent = Agent(name="weather", model=model, tools=[get_weather], telemetry=False)
        with counted(rec.model) as calls, openinference_context():
            ended = rec.outcome(lambda: agent.run(ASKED).content)
    finally:
        instrumentor.uninstrument()
    rec.save(
        {"agent": "weather", "input": ASKED, **ended, **calls, "tokens": True}, session=SESSION
    )


def autogen(rec: Recording) -> None:
    """AutoGen AgentChat's ``AssistantAgent`` traced by OpenInference's instrumentation,
    its model calls too (AutoGen's own runtime spans go to the global provider, unset)."""
    from autogen_agentchat.agents import AssistantAgent
    from autogen_ext.models.openai import OpenAIChatCompletionClient
    from openinference.instrumentation.autogen_agentchat import AutogenAgentChatInstrumentor

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return rec.get_weather(city)

    instrumentor = AutogenAgentChatInstrumentor()
    instrumentor.instrument(tracer_provider=rec.provider)
    try:
        client = OpenAIChatCompletionClient(
            model=MODEL, base_url=rec.model.url, api_key="offline",
            model_info={
                "vision": False, "function_calling": True, "json_output": False,
                "family": "unknown", "structured_output": False,
            },
        )  # fmt: skip
        agent = AssistantAgent(
            "weather", model_client=client, tools=[get_weather], reflect_on_tool_use=True
        )

        async def run() -> Any:
            result = await agent.run(task=ASKED)
            return result.messages[-1].content

        with counted(rec.model) as calls, openinference_context():
            ended = rec.outcome(lambda: asyncio.run(run()))
    finally:
        instrumentor.uninstrument()
    rec.save(
        {"agent": "weather", "input": ASKED, **ended, **calls, "tokens": True}, session=SESSION
    )


def semantic_kernel(rec: Recording) -> None:
    """Semantic Kernel's ``ChatCompletionAgent`` on its own GenAI spans (experimental,
    content asked for with its ``..._SENSITIVE`` setting), to the global provider."""
    os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
    os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "true"
    from openai import AsyncOpenAI
    from opentelemetry import trace
    from semantic_kernel.agents import ChatCompletionAgent
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
    from semantic_kernel.functions import kernel_function

    trace.set_tracer_provider(rec.provider)

    class Weather:
        @kernel_function(name="get_weather", description="The weather in a city.")
        def get_weather(self, city: str) -> str:
            return rec.get_weather(city)

    client = AsyncOpenAI(api_key="offline", base_url=rec.model.url)
    service = OpenAIChatCompletion(ai_model_id=MODEL, async_client=client)
    agent = ChatCompletionAgent(service=service, name="weather", plugins=[Weather()])

    async def run() -> Any:
        return str((await agent.get_response(messages=ASKED)).content)

    with counted(rec.model) as calls:
        ended = rec.outcome(lambda: asyncio.run(run()))
    for called in rec.tools:  # a plugin's function, as Semantic Kernel names it to the model
        called["name"] = "Weather-get_weather"
    # Its messages go to OpenTelemetry's logs, not its spans: no trace says what the run was
    # asked, nor a model call's conversation.
    rec.save(
        {
            "agent": "weather", "input": None, **ended, **calls, "tokens": True,
            "messages": False,
        }
    )  # fmt: skip


def crewai(rec: Recording) -> None:
    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool
    from openinference.instrumentation.crewai import CrewAIInstrumentor
    from openinference.instrumentation.openai import OpenAIInstrumentor

    # CrewAI's own instrumentation traces the crew, its agents and tools; its model calls
    # go through the OpenAI SDK, traced by OpenInference's, as Phoenix's docs pair them.
    instrumentor = CrewAIInstrumentor()
    instrumentor.instrument(tracer_provider=rec.provider)
    calls_instrumentor = OpenAIInstrumentor()
    calls_instrumentor.instrument(tracer_provider=rec.provider)
    try:

        @tool("get_weather")
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return rec.get_weather(city)

        llm = LLM(model=f"openai/{MODEL}", base_url=rec.model.url, api_key="offline")
        forecaster = Agent(
            role="weather", goal="Say the weather", backstory="A forecaster", llm=llm,
            tools=[get_weather],
        )  # fmt: skip
        task = Task(description=ASKED, expected_output="The weather", agent=forecaster)
        with counted(rec.model) as calls, openinference_context():
            result = Crew(name="weather", agents=[forecaster], tasks=[task]).kickoff()
        assert ANSWER in str(result), result
    finally:
        instrumentor.uninstrument()
        calls_instrumentor.uninstrument()
    rec.save(
        {"agent": "weather", "input": ASKED, "output": ANSWER, **calls, "tokens": True},
        session=SESSION,
    )


AGENTS: dict[str, Callable[[Recording], None]] = {
    "langgraph": langgraph,
    "llamaindex": llamaindex,
    "dspy": dspy,
    "smolagents": smolagents,
    "crewai": crewai,
    "agents_sdk_openinference": agents_sdk_openinference,
    "agents_sdk_openllmetry": agents_sdk_openllmetry,
    "openai_openinference": openai_openinference,
    "openai_openllmetry": openai_openllmetry,
    "openai_genai": openai_genai,
    "openai_genai_tool_error": openai_genai,
    "pydantic_ai": pydantic_ai,
    "strands": strands,
    "strands_latest": strands_latest,
    "google_adk": google_adk,
    "google_adk_tool_error": google_adk,
    "agno": agno,
    "agno_tool_error": agno,
    "autogen": autogen,
    "semantic_kernel": semantic_kernel,
    "semantic_kernel_tool_error": semantic_kernel,
}


def main(names: list[str]) -> int:
    failed = 0
    for name in names or list(AGENTS):
        model = ScriptedModel()
        try:
            AGENTS[name](Recording(name, model))
        except Exception as error:  # one framework's failure does not stop the others
            failed += 1
            print(f"{name}: not recorded: {type(error).__name__}: {error}", file=sys.stderr)
        finally:
            model.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
