"""Loop overhead: framework time per model iteration, glove_core against pydantic-ai.

Both agents run the same workload in the same process and event loop, with a model that
answers instantly, so what is measured is the framework's own work per model call: building
the request, saving the reply, validating and running the tool calls, saving their results.

Workload, identical on both sides:

- 50 tools, each the *same* async Python function object registered with both libraries
  (two typed parameters, a Google-style docstring; its body formats one string).
- A 200-message conversation history before the request: 50 rounds of user question, agent
  reply with 3 tool calls, the 3 tool results, agent answer.
- Each request makes 10 model calls: 9 replies with 3 tool calls each (27 tool runs, each
  validated against the tool's pydantic input schema), then a final text reply.
- The model side does the same work on both sides: it picks the next scripted reply and
  estimates token usage at four characters a token over the request, counting only the
  messages added since its previous request (``ScriptedModel`` keeps the count of the saved
  prefix; the peer's function model keeps the count of the message list it last saw).

glove_core runs ``Glove.process_request`` with a ``ScriptedModel`` over a ``MemoryStore``
pre-filled with the history; pydantic-ai runs ``Agent.run`` with a ``FunctionModel`` and the
history as ``message_history``. Tool calls run one after another (``--mode sequential``,
glove's default), concurrently (``--mode parallel``, pydantic-ai's default), or both (default).

Timing: ``time.perf_counter`` around each request's ``await`` only (building the agent, the
store and the script is setup and is not timed), after a warm-up, repeated ``--repeats`` times
alternating the sides; the figure is the median over repetitions of (total time / model calls).
A CPU-time column (``time.process_time`` around the same awaits) shows how much of the wall
time was this process working rather than waiting for a busy machine's CPU.

pydantic-ai is a benchmark-only peer, not a project dependency: install ``pydantic-ai-slim``
into the venv to compare. Without it the script reports glove_core's own figures.

The earlier tree (a standing figure, issue 31): the same workload also runs against
``glove_core`` as it was at ``--baseline`` (default ``3efbf08``, the end of the first round),
extracted with ``git archive`` into a temporary directory. Each tree runs in a worker process
of its own (this script with ``--worker``, that tree first on ``PYTHONPATH``), both with the
same harness; the parent asks them for batches in turn, alternating which goes first, and
prints today's time as a ratio of the old tree's (target ≤ 0.8x): the median over the repetitions
of the ratio within each back-to-back pair (a slow spell of a shared machine moves both halves of
a pair alike), beside the ratio of the medians. ``--baseline none`` skips it.

Tracing (issue 34): ``--tracing sdk`` configures the OpenTelemetry SDK in every worker (a
``TracerProvider`` with a ``BatchSpanProcessor`` over an exporter that drops what it gets, and
a ``MeterProvider`` whose reader drops too), so ``--baseline main --tracing sdk`` states what
recording every span and metric costs against a tree that records none; ``--tracing none``
(the default) leaves the API's no-op providers, so ``--baseline main`` states what the
instrumentation costs when nobody traces.

Run: ``python bench/loop_overhead.py [--requests 20] [--repeats 7] [--pairs 15] [--mode both]
[--profile] [--baseline 3efbf08] [--tracing none|sdk]``
"""

import argparse
import asyncio
import cProfile
import gc
import importlib
import importlib.metadata
import io
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from glove_core import (
    Glove,
    MemoryStore,
    Message,
    ScriptedModel,
    Tool,
    ToolCall,
    ToolResult,
    ToolResultData,
    tool,
)

__all__ = ["main"]

N_TOOLS = 50
HISTORY_ROUNDS = 50  # four messages a round: 200 messages
CALLS_PER_REPLY = 3
TOOL_REPLIES = 9
MODEL_CALLS = TOOL_REPLIES + 1  # the last reply is text
SYSTEM = "You are a travel assistant. Use the lookup tools to answer; be brief."
PROMPT = "Plan a weekend: check the weather and opening hours for each stop."
FINAL_TEXT = "Here is your plan: Paris on Saturday, Lyon on Sunday."
TARGET_RATIO = 50.0  # at least this many times faster than pydantic-ai
TARGET_US = 200.0  # the loop's own time per model iteration
TARGET_OLD = 0.8  # at most this fraction of the old tree's time
BASELINE = "3efbf08"  # the tree at the end of the first round
ROOT = Path(__file__).resolve().parent.parent

Mode = Literal["sequential", "parallel"]
ToolFn = Callable[[str, int], Awaitable[str]]


# --- the shared workload ----------------------------------------------------------------


def make_tool_functions() -> list[ToolFn]:
    """The 50 tool functions; each library registers these same function objects."""

    def make(index: int) -> ToolFn:
        async def lookup(city: str, count: int) -> str:
            """Look up facts about a city.

            Args:
                city: the city to look up.
                count: how many facts to return.
            """
            return f"{city}: {count + index} facts"

        lookup.__name__ = lookup.__qualname__ = tool_name(index)
        return lookup

    return [make(i) for i in range(N_TOOLS)]


def tool_name(index: int) -> str:
    return f"lookup_{index:02d}"


@dataclass(frozen=True)
class Call:
    """One tool call of the workload, library-neutral."""

    id: str
    name: str
    args: dict[str, Any]
    result: str


@dataclass(frozen=True)
class Round:
    """One history round: question, tool calls and their results, answer."""

    question: str
    calls: list[Call]
    answer: str


def make_calls(prefix: str, turn: int) -> list[Call]:
    calls = []
    for k in range(CALLS_PER_REPLY):
        index = (turn * CALLS_PER_REPLY + k) % N_TOOLS
        city = ("Paris", "Lyon", "Nice")[k]
        calls.append(
            Call(
                id=f"{prefix}_{turn}_{k}",
                name=tool_name(index),
                args={"city": city, "count": k},
                result=f"{city}: {k + index} facts",
            )
        )
    return calls


def make_history() -> list[Round]:
    return [
        Round(
            question=f"Question {r}: what should I see in the city today, and when is it open?",
            calls=make_calls("hist", r),
            answer=f"Answer {r}: the museum opens at nine and the market closes at one.",
        )
        for r in range(HISTORY_ROUNDS)
    ]


# --- glove_core -------------------------------------------------------------------------


def glove_history(rounds: list[Round]) -> list[Message]:
    messages: list[Message] = []
    for r in rounds:
        messages.append(Message(sender="user", text=r.question))
        messages.append(
            Message(
                sender="agent",
                tool_calls=[ToolCall(id=c.id, name=c.name, input=c.args) for c in r.calls],
            )
        )
        messages.append(
            Message(
                sender="user",
                tool_results=[
                    ToolResult(call_id=c.id, name=c.name, result=ToolResultData(data=c.result))
                    for c in r.calls
                ],
            )
        )
        messages.append(Message(sender="agent", text=r.answer))
    return messages


class GloveSide:
    """Runs the workload through ``Glove.process_request``."""

    label = "glove_core"

    def __init__(self, functions: list[ToolFn], rounds: list[Round], mode: Mode) -> None:
        parallel = mode == "parallel"
        self.tools: list[Tool] = [
            tool(name=fn.__name__, parallel_safe=parallel)(fn) for fn in functions
        ]
        self.history = glove_history(rounds)
        self.script: list[str | list[ToolCall]] = [
            [ToolCall(id=c.id, name=c.name, input=c.args) for c in make_calls("call", turn)]
            for turn in range(TOOL_REPLIES)
        ]
        self.script.append(FINAL_TEXT)

    async def prepare(self) -> tuple[Glove, ScriptedModel]:
        store = MemoryStore("bench")
        await store.append_messages(self.history)
        model = ScriptedModel(self.script)
        glove = Glove(model=model, system_prompt=SYSTEM, store=store)
        for t in self.tools:
            glove.fold(t)
        glove.build()
        # build() folds built-in tools (tasks, inbox) for a capable store; the peer has none,
        # so they go: both sides offer exactly the 50 lookup tools.
        ours = {t.name for t in self.tools}
        for extra in [t.name for t in glove.tools if t.name not in ours]:
            glove.unfold(extra)
        return glove, model

    async def run_once(self) -> tuple[float, float]:
        """Run one request; its wall-clock and CPU seconds."""
        glove, model = await self.prepare()
        cpu = time.process_time()
        start = time.perf_counter()
        result = await glove.process_request(PROMPT)
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu
        self.check(result.text, result.messages, model)
        return elapsed, cpu

    @staticmethod
    def check(text: str, added: list[Message], model: ScriptedModel) -> None:
        results = [r for m in added for r in (m.tool_results or [])]
        ok = sum(1 for r in results if r.result.status == "success")
        if (
            text != FINAL_TEXT
            or len(model.requests) != MODEL_CALLS
            or ok != TOOL_REPLIES * CALLS_PER_REPLY
            or len(model.requests[0].messages) != HISTORY_ROUNDS * 4 + 1
            or len(model.requests[0].tools) != N_TOOLS
        ):
            raise RuntimeError(
                f"glove_core did not run the workload: text={text!r}, "
                f"model calls={len(model.requests)}, successful tool results={ok}"
            )


# --- pydantic-ai ------------------------------------------------------------------------


def import_pydantic_ai() -> dict[str, Any] | None:
    """pydantic-ai's classes, or None when it is not installed.

    Imported dynamically so the type checker never needs the package: it is a benchmark-only
    peer, not a project dependency.
    """
    try:
        agent: Any = importlib.import_module("pydantic_ai")
        messages: Any = importlib.import_module("pydantic_ai.messages")
        function: Any = importlib.import_module("pydantic_ai.models.function")
        usage: Any = importlib.import_module("pydantic_ai.usage")
    except ImportError:
        return None
    return {
        "Agent": agent.Agent,
        "Tool": agent.Tool,
        "FunctionModel": function.FunctionModel,
        "ModelRequest": messages.ModelRequest,
        "ModelResponse": messages.ModelResponse,
        "UserPromptPart": messages.UserPromptPart,
        "TextPart": messages.TextPart,
        "ToolCallPart": messages.ToolCallPart,
        "ToolReturnPart": messages.ToolReturnPart,
        "RequestUsage": usage.RequestUsage,
    }


class PeerSide:
    """Runs the workload through pydantic-ai's ``Agent.run`` with a ``FunctionModel``."""

    label = "pydantic-ai"

    def __init__(
        self, pai: dict[str, Any], functions: list[ToolFn], rounds: list[Round], mode: Mode
    ) -> None:
        self.pai = pai
        self.mode = mode
        self.history = self._history(rounds)
        self.replies = [make_calls("call", turn) for turn in range(TOOL_REPLIES)]
        self.turn = 0
        self.calls = 0
        self._seen: list[Any] = []
        self._seen_chars = 0
        tools = [pai["Tool"](fn, takes_ctx=False, name=fn.__name__) for fn in functions]
        model = pai["FunctionModel"](self._respond, model_name="bench")
        self.agent: Any = pai["Agent"](model, instructions=SYSTEM, tools=tools)

    def _history(self, rounds: list[Round]) -> list[Any]:
        p = self.pai
        messages: list[Any] = []
        for r in rounds:
            messages.append(p["ModelRequest"](parts=[p["UserPromptPart"](r.question)]))
            messages.append(
                p["ModelResponse"](
                    parts=[
                        p["ToolCallPart"](c.name, dict(c.args), tool_call_id=c.id) for c in r.calls
                    ]
                )
            )
            messages.append(
                p["ModelRequest"](
                    parts=[
                        p["ToolReturnPart"](c.name, c.result, tool_call_id=c.id) for c in r.calls
                    ]
                )
            )
            messages.append(p["ModelResponse"](parts=[p["TextPart"](r.answer)]))
        return messages

    async def _respond(self, messages: list[Any], info: Any) -> Any:
        """The FunctionModel: the next scripted reply, usage estimated like ScriptedModel's."""
        p = self.pai
        self.calls += 1
        turn = self.turn
        self.turn += 1
        if turn < TOOL_REPLIES:
            parts = [
                p["ToolCallPart"](c.name, dict(c.args), tool_call_id=c.id)
                for c in self.replies[turn]
            ]
            output = 20 * len(parts)
        else:
            parts = [p["TextPart"](FINAL_TEXT)]
            output = max(1, len(FINAL_TEXT) // 4)
        usage = p["RequestUsage"](input_tokens=self._estimate(messages, info), output_tokens=output)
        return p["ModelResponse"](parts=parts, usage=usage)

    def _estimate(self, messages: list[Any], info: Any) -> int:
        """ScriptedModel's estimate, counting only the messages added since the last call."""
        known = len(self._seen)
        if known <= len(messages) and messages[:known] == self._seen:
            chars = self._seen_chars + _message_chars(messages[known:])
        else:
            chars = _message_chars(messages)
        self._seen, self._seen_chars = list(messages), chars
        return _estimate(info, chars)

    @contextmanager
    def execution_mode(self) -> Iterator[None]:
        """pydantic-ai's tool-call execution mode for this side (set outside the timed part)."""
        with self.pai["Agent"].parallel_tool_call_execution_mode(self.mode):
            yield

    async def run_once(self) -> tuple[float, float]:
        """Run one request; its wall-clock and CPU seconds."""
        self.turn = 0
        self.calls = 0
        history = list(self.history)
        cpu = time.process_time()
        start = time.perf_counter()
        result = await self.agent.run(PROMPT, message_history=history)
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu
        self.check(result)
        return elapsed, cpu

    def check(self, result: Any) -> None:
        returns = [
            part
            for message in result.new_messages()
            for part in message.parts
            if isinstance(part, self.pai["ToolReturnPart"])
        ]
        if (
            result.output != FINAL_TEXT
            or self.calls != MODEL_CALLS
            or len(returns) != TOOL_REPLIES * CALLS_PER_REPLY
            or not all(str(r.content).endswith("facts") for r in returns)
        ):
            raise RuntimeError(
                f"pydantic-ai did not run the workload: output={result.output!r}, "
                f"model calls={self.calls}, tool returns={len(returns)}"
            )


def _estimate(info: Any, message_chars: int) -> int:
    """ScriptedModel's estimate (four characters a token), over pydantic-ai's request."""
    chars = len(info.instructions or "") + message_chars
    for spec in info.function_tools:
        chars += len(spec.name) + len(spec.description or "") + 200
    return max(1, chars // 4)


def _message_chars(messages: list[Any]) -> int:
    chars = 0
    for message in messages:
        for part in message.parts:
            content = getattr(part, "content", None)
            if part.part_kind in ("tool-call", "tool-return"):
                chars += 50
            elif isinstance(content, str):
                chars += len(content)
    return chars


# --- measuring --------------------------------------------------------------------------


Side = GloveSide | PeerSide


@dataclass
class Figures:
    """Per-repetition µs per model iteration of one side in one mode."""

    label: str
    mode: Mode
    samples: list[float]
    cpu_samples: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu_samples)


@contextmanager
def side_context(side: Side) -> Iterator[None]:
    if isinstance(side, PeerSide):
        with side.execution_mode():
            yield
    else:
        yield


async def run_batch(side: Side, requests: int) -> tuple[float, float]:
    """Wall-clock and CPU µs per model iteration over ``requests`` requests."""
    wall = cpu = 0.0
    with side_context(side):
        for _ in range(requests):
            request_wall, request_cpu = await side.run_once()
            wall += request_wall
            cpu += request_cpu
    iterations = requests * MODEL_CALLS
    return wall / iterations * 1e6, cpu / iterations * 1e6


async def measure(
    sides: list[Side], mode: Mode, requests: int, repeats: int, warmup: int
) -> list[Figures]:
    figures = [Figures(s.label, mode, [], []) for s in sides]
    for side in sides:
        if warmup:
            await run_batch(side, warmup)
    for rep in range(repeats):
        gc.collect()
        # Alternate which side goes first so drift on a busy machine hits both alike.
        order = list(range(len(sides)))
        if rep % 2:
            order.reverse()
        for i in order:
            wall, cpu = await run_batch(sides[i], requests)
            figures[i].samples.append(wall)
            figures[i].cpu_samples.append(cpu)
    return figures


async def profile_glove(side: GloveSide, requests: int, top: int) -> str:
    """cProfile of glove_core's timed part only, sorted by own time."""
    await side.run_once()  # warm-up: tool schemas are built once, on the first request
    profiler = cProfile.Profile()
    for _ in range(requests):
        glove, model = await side.prepare()
        profiler.enable()
        result = await glove.process_request(PROMPT)
        profiler.disable()
        side.check(result.text, result.messages, model)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


# --- the earlier tree, side by side ------------------------------------------------------


def extract_tree(revision: str, into: Path) -> Path:
    """``glove_core`` as it was at ``revision``, unpacked under ``into`` (``git archive``)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision, "glove_core"],
        check=True,
        capture_output=True,
    )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


class TreeWorker:
    """This script in ``--worker`` mode with one tree's ``glove_core`` first on the path."""

    def __init__(
        self, label: str, tree: Path, mode: Mode, warmup: int, tracing: str = "none"
    ) -> None:
        self.label = label
        env = {**os.environ, "PYTHONPATH": str(tree), _TRACING_ENV: tracing}
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", mode, "--warmup", str(warmup)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tree,
        )
        self.origin = self._read()["glove_core"]  # answered after its warm-up

    def _read(self) -> dict[str, Any]:
        out: IO[str] | None = self.process.stdout
        line = out.readline() if out is not None else ""
        if not line:
            raise RuntimeError(f"the {self.label} worker stopped (exit {self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def batch(self, requests: int) -> tuple[float, float]:
        """Wall-clock and CPU µs per model iteration over ``requests`` requests."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(f"{requests}\n")
        stdin.flush()
        answer = self._read()
        return float(answer["wall"]), float(answer["cpu"])

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


_TRACING_ENV = "GLOVE_BENCH_TRACING"


def configure_dropping_sdk() -> None:
    """The OpenTelemetry SDK with exporters that drop everything: what recording costs."""
    from collections.abc import Sequence as Seq

    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        MetricExporter,
        MetricExportResult,
        MetricsData,
        PeriodicExportingMetricReader,
    )
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )

    class DropSpans(SpanExporter):
        def export(self, spans: Seq[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    class DropMetrics(MetricExporter):
        def export(
            self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
        ) -> MetricExportResult:
            return MetricExportResult.SUCCESS

        def force_flush(self, timeout_millis: float = 10_000) -> bool:
            return True

        def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
            return None

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(DropSpans()))
    trace.set_tracer_provider(provider)
    reader = PeriodicExportingMetricReader(DropMetrics(), export_interval_millis=1000)
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))


async def worker(mode: Mode, warmup: int) -> int:
    """Serve batches on stdin ("N" requests a line), one JSON answer a line on stdout."""
    import glove_core

    if os.environ.get(_TRACING_ENV) == "sdk":
        configure_dropping_sdk()

    side = GloveSide(make_tool_functions(), make_history(), mode)
    if warmup:
        await run_batch(side, warmup)
    print(json.dumps({"glove_core": str(Path(glove_core.__file__).parent)}), flush=True)
    for line in sys.stdin:
        gc.collect()
        wall, cpu = await run_batch(side, int(line))
        print(json.dumps({"wall": wall, "cpu": cpu}), flush=True)
    return 0


def compare_trees(
    revision: str,
    modes: list[Mode],
    requests: int,
    repeats: int,
    warmup: int,
    tracing: str = "none",
) -> dict[Mode, tuple[Figures, Figures]]:
    """Today's tree against ``revision``'s, batch for batch in turn, per mode."""
    out: dict[Mode, tuple[Figures, Figures]] = {}
    with tempfile.TemporaryDirectory(prefix="glove-baseline-") as tmp:
        old_tree = extract_tree(revision, Path(tmp))
        for mode in modes:
            workers = [
                TreeWorker("today", ROOT, mode, warmup, tracing),
                TreeWorker(revision, old_tree, mode, warmup, tracing),
            ]
            try:
                if workers[0].origin == workers[1].origin:
                    raise RuntimeError("both workers imported the same glove_core")
                figures = (
                    Figures("today", mode, [], []),
                    Figures(revision, mode, [], []),
                )
                for rep in range(repeats):
                    order = [0, 1] if rep % 2 == 0 else [1, 0]
                    for i in order:
                        wall, cpu = workers[i].batch(requests)
                        figures[i].samples.append(wall)
                        figures[i].cpu_samples.append(cpu)
                out[mode] = figures
            finally:
                for w in workers:
                    w.close()
    return out


def version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def print_table(figures: list[Figures]) -> None:
    header = (
        f"{'library':<12} {'tool calls':<11} {'µs/iteration':>13} {'min':>9} {'max':>9} "
        f"{'CPU µs/iteration':>17}"
    )
    print(header)
    print("-" * len(header))
    for f in figures:
        print(
            f"{f.label:<12} {f.mode:<11} {f.median:>13.1f} {min(f.samples):>9.1f} "
            f"{max(f.samples):>9.1f} {f.cpu_median:>17.1f}"
        )


def verdict(glove_us: float, ratio: float | None) -> str:
    fast = glove_us <= TARGET_US
    if ratio is None:
        return f"target <= {TARGET_US:.0f} µs {'met' if fast else 'MISSED'}; ratio not measured"
    both = fast and ratio >= TARGET_RATIO
    return (
        f"targets (>= {TARGET_RATIO:.0f}x the peer, <= {TARGET_US:.0f} µs): "
        f"{'met' if both else 'MISSED'}"
    )


def print_trees(revision: str, trees: dict[Mode, tuple[Figures, Figures]]) -> None:
    print(
        f"today's tree against {revision} (each in a worker process of its own, same harness, "
        f"batches in turn):"
    )
    print_table([f for pair in trees.values() for f in pair])
    for mode, (today, old) in trees.items():
        ratio = today.median / old.median
        cpu = today.cpu_median / old.cpu_median
        # Each repetition ran the two trees back to back: the ratio within a pair is what a
        # slow spell of a shared machine (every figure of both trees up by a third for a few
        # seconds) leaves alone, so its median decides.
        paired = statistics.median(t / o for t, o in zip(today.samples, old.samples, strict=True))
        verdict = "met" if paired <= TARGET_OLD else "MISSED"
        print(
            f"{mode:<11} today / {revision}: {paired:.2f}x (median of {len(today.samples)} "
            f"back-to-back pairs); medians {ratio:.2f}x wall, {cpu:.2f}x CPU "
            f"(target <= {TARGET_OLD}x: {verdict})"
        )


async def run(args: argparse.Namespace) -> int:
    functions = make_tool_functions()
    rounds = make_history()
    pai = import_pydantic_ai()
    modes: list[Mode] = ["sequential", "parallel"] if args.mode == "both" else [args.mode]

    print("Loop overhead: framework time per model iteration (model answers instantly)")
    print(
        f"python {platform.python_version()}, glove {version('glove-agents')}, "
        f"pydantic {version('pydantic')}, pydantic-ai-slim {version('pydantic-ai-slim')}"
    )
    print(
        f"workload: {N_TOOLS} tools (the same async functions on both sides), "
        f"{HISTORY_ROUNDS * 4}-message history, {MODEL_CALLS} model calls per request "
        f"({TOOL_REPLIES} replies x {CALLS_PER_REPLY} tool calls + 1 final text reply)"
    )
    print(
        "  glove_core : Glove.process_request, ScriptedModel (latency 0), MemoryStore pre-filled"
        " with the history, @tool input models"
    )
    if pai is None:
        print(
            "  pydantic-ai: NOT RUN - pydantic_ai is not importable; install pydantic-ai-slim "
            "into this venv to measure the ratio (benchmark-only, not a project dependency)"
        )
    else:
        print(
            "  pydantic-ai: Agent.run(message_history=history), FunctionModel (async function, "
            "same scripted replies and usage estimate), Tool(fn, takes_ctx=False)"
        )
    print(
        f"timing: perf_counter around each request, {args.warmup} warm-up requests, "
        f"{args.repeats} repetitions of {args.requests} requests "
        f"({args.requests * MODEL_CALLS} iterations) per side; median of repetitions"
    )
    print()

    all_figures: list[Figures] = []
    for mode in modes:
        sides: list[Side] = [GloveSide(functions, rounds, mode)]
        if pai is not None:
            sides.append(PeerSide(pai, functions, rounds, mode))
        all_figures += await measure(sides, mode, args.requests, args.repeats, args.warmup)
    print_table(all_figures)
    print()

    ratios: dict[Mode, float] = {}
    for mode in modes:
        ours = next(f for f in all_figures if f.mode == mode and f.label == GloveSide.label)
        peer = next((f for f in all_figures if f.mode == mode and f.label != ours.label), None)
        if peer is not None:
            ratios[mode] = peer.median / ours.median
            print(f"{mode:<11} ratio pydantic-ai / glove_core: {ratios[mode]:.2f}x")

    if args.baseline != "none":
        print()
        if args.tracing == "sdk":
            print("both trees with the OpenTelemetry SDK configured (exporters that drop)")
        trees = compare_trees(
            args.baseline, modes, args.requests, args.pairs, args.warmup, args.tracing
        )
        print_trees(args.baseline, trees)

    if args.profile:
        print()
        print(f"cProfile of glove_core ({args.requests} requests, timed part only):")
        print(await profile_glove(GloveSide(functions, rounds, modes[0]), args.requests, 25))

    primary = modes[0]
    ours = next(f for f in all_figures if f.mode == primary and f.label == GloveSide.label)
    ratio = ratios.get(primary)
    if ratio is None:
        print(
            f"summary: glove_core {ours.median:.0f} µs (CPU {ours.cpu_median:.0f} µs) per model "
            f"iteration ({primary} tool calls); pydantic-ai not importable, no ratio; "
            f"{verdict(ours.median, None)}"
        )
        return 0
    peer_us = ours.median * ratio
    others = "".join(f", {m} {r:.1f}x" for m, r in ratios.items() if m != primary)
    print(
        f"summary: glove_core {ours.median:.0f} µs (CPU {ours.cpu_median:.0f} µs) vs "
        f"pydantic-ai {peer_us:.0f} µs per model iteration ({primary} tool calls): "
        f"{ratio:.1f}x faster{others}; "
        f"{verdict(ours.median, min(ratios.values()))}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a table and a summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=20, help="requests per repetition")
    parser.add_argument("--repeats", type=int, default=7, help="repetitions per side")
    parser.add_argument(
        "--pairs",
        type=int,
        default=15,
        help="back-to-back batches of the two trees (--baseline); on a shared virtual machine "
        "a median of 7 moved by 0.1 from run to run",
    )
    parser.add_argument("--warmup", type=int, default=5, help="warm-up requests per side")
    parser.add_argument(
        "--mode", choices=["sequential", "parallel", "both"], default="both", help="tool calls"
    )
    parser.add_argument("--profile", action="store_true", help="cProfile glove_core's loop")
    parser.add_argument(
        "--baseline",
        default=BASELINE,
        help=f"git revision whose glove_core runs side by side (default {BASELINE}; none: skip)",
    )
    parser.add_argument(
        "--tracing",
        choices=["none", "sdk"],
        default="none",
        help="sdk: the OpenTelemetry SDK with dropping exporters in the --baseline workers",
    )
    parser.add_argument("--worker", choices=["sequential", "parallel"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return asyncio.run(worker(args.worker, args.warmup))
    if min(args.requests, args.repeats, args.pairs) < 1 or args.warmup < 0:
        parser.error("--requests, --repeats and --pairs must be at least 1, --warmup at least 0")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
