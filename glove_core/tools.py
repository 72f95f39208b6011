"""Tools: what the model can call.

A ``Tool`` has either a pydantic ``input_model`` (the input is validated locally and ``do`` gets
the model instance) or a raw ``json_schema`` (sent to the model verbatim; ``do`` gets the dict
as the model wrote it, because the source of truth lives elsewhere, e.g. an MCP server).
``@tool`` builds a Tool from a typed function.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, get_type_hints, overload, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from glove_core.abort import AbortSignal
from glove_core.context_items import ContextItem
from glove_core.display import DisplayManager
from glove_core.errors import ToolDefinitionError
from glove_core.event_queue import WhenIdle
from glove_core.events import EventDisposition
from glove_core.result import RequestResult
from glove_core.stores.base import StoreAdapter
from glove_core.subscribers import Subscriber, SubscriberEvent
from glove_core.types import ContentPart, ToolResultData

__all__ = [
    "AgentHandle",
    "AppToolSource",
    "JoiningToolSource",
    "Tool",
    "ToolContext",
    "ToolInputError",
    "ToolSource",
    "ToolSpec",
    "parse_docstring",
    "tool",
    "wrap_result",
]

_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@runtime_checkable
class ToolSource(Protocol):
    """Offers tools to a Glove (``Glove.add_tool_source``). The loop asks every source before
    each model call, so what a source offers may change between calls; the tool list is the
    start of the cached prompt prefix, so a source should keep its order stable and only
    append (see ``Glove.switch_tools`` for taking a tool away without changing the list); a
    source that adds tools mid-conversation should also be a ``JoiningToolSource``, so they
    join outside the cached prefix."""

    def get_tools(self) -> Sequence[Tool]:
        """The tools offered now, in a stable order. Called before every model call and
        every tool step: keep it cheap and free of I/O."""
        ...


@runtime_checkable
class JoiningToolSource(Protocol):
    """A tool source whose tools may join after the conversation began (an MCP mount: servers
    activated mid-conversation, tools added on ``list_changed``). The loop keeps such tools out
    of the cached prompt prefix: declared deferred once a tool result references them
    (``ToolResultData.tool_references``), held back until one does."""

    def joined_tools(self) -> Collection[str]:
        """Names of offered tools that joined mid-conversation. Keep it cheap and free of I/O:
        it is read before every model call."""
        ...


@runtime_checkable
class AppToolSource(Protocol):
    """A tool source that also holds tools for the application alone, never offered to the
    model (an MCP App's view calls them: tools whose visibility leaves the model out).
    ``Glove.run_tool`` finds them by name."""

    def app_tools(self) -> Mapping[str, Tool]:
        """The application-only tools, by name. Cheap and free of I/O."""
        ...


class AgentHandle(Protocol):
    """The agent a tool runs in, as the tool sees it (``ctx.glove``).

    At run time it is the ``Glove`` itself; this protocol names what a running tool may rely
    on, so that tools, and this module, do not depend on ``glove.py``. Setup-time methods
    (``build``, ``define_sub_agent``, ``add_turn_preparer``, ``set_model``,
    ``add_context_provider``) are left out; a tool that needs them can
    ``cast(Glove, ctx.glove)``.
    """

    @property
    def store(self) -> StoreAdapter:
        """The conversation store."""
        ...

    @property
    def display_manager(self) -> DisplayManager:
        """The display stack tools push to."""
        ...

    @property
    def server_mode(self) -> bool:
        """True when the agent runs headless."""
        ...

    @property
    def tools(self) -> list[Tool]:
        """Every tool offered to the model now."""
        ...

    def fold(self, tool: Tool) -> AgentHandle:
        """Add a tool (``Glove.fold``)."""
        ...

    def unfold(self, name: str) -> Tool:
        """Remove a folded tool (``Glove.unfold``)."""
        ...

    def switch_tools(self, *, disable: Sequence[str] = (), enable: Sequence[str] = ()) -> None:
        """Switch tools off or on from the next model call (``Glove.switch_tools``)."""
        ...

    async def switched_off_tools(self) -> set[str]:
        """The tools switched off now (``Glove.switched_off_tools``)."""
        ...

    async def add_context(self, items: Sequence[ContextItem], key: str | None = None) -> int:
        """Queue context items (``Glove.add_context``)."""
        ...

    async def emit_event(
        self,
        *,
        id: str,
        source: str,
        kind: str,
        content: str | list[ContentPart],
        when_idle: WhenIdle = "auto",
        expires_at: datetime | None = None,
    ) -> EventDisposition:
        """Hand the agent an outside event (``Glove.emit_event``)."""
        ...

    async def publish(self, event: SubscriberEvent) -> None:
        """Send an event to the subscribers (``Glove.publish``)."""
        ...

    def add_subscriber(self, subscriber: Subscriber) -> None:
        """Send every event to ``subscriber`` (``Glove.add_subscriber``)."""
        ...

    def remove_subscriber(self, subscriber: Subscriber) -> None:
        """Stop sending events to ``subscriber`` (``Glove.remove_subscriber``)."""
        ...

    async def process_request(
        self, request: str | Sequence[ContentPart], signal: AbortSignal | None = None
    ) -> RequestResult:
        """Run a request (``Glove.process_request``; from a tool of the same agent it raises
        ``ReentrantRequestError``)."""
        ...


@dataclass(frozen=True)
class ToolContext:
    """What a running tool can reach besides its input."""

    display: DisplayManager
    glove: AgentHandle
    """The agent running the tool: the ``Glove`` itself (typed by what a tool may use)."""
    signal: AbortSignal
    call_id: str


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    input_schema: dict[str, Any]


class ToolInputError(Exception):
    """The model's input does not fit the tool's schema (becomes an error result, never raised
    to the caller)."""

    def __init__(self, tool_name: str, problems: list[str]) -> None:
        self.tool_name = tool_name
        self.problems = problems
        super().__init__(
            f"invalid input for tool {tool_name!r}: "
            + "; ".join(problems)
            + ". Fix the input and call the tool again."
        )


ToolFunction = Callable[[Any, ToolContext], Awaitable[Any] | Any]


@functools.lru_cache(maxsize=512)
def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


def _input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON Schema, generated once per class: pydantic takes about a millisecond
    each time, and the built-in tools are made anew for every Glove. A copy, so a caller that
    edits one tool's schema never edits another's."""
    return copy.deepcopy(_schema_of(model))


@dataclass(eq=False)
class Tool:
    """A capability the model can call.

    Args:
        name: unique within a Glove; ``[A-Za-z0-9_-]``, at most 64 characters.
        description: what the tool does and when to use it; the model reads it.
        do: ``do(input, ctx)``, sync or async. Returns a ``ToolResultData`` or a plain value
            (wrapped as a success).
        input_model: a pydantic model validating the input locally.
        json_schema: a raw JSON Schema passed to the model verbatim, not validated locally.
        requires_permission: ask the user (``permission_request`` display slot) before running.
            The slot is resolved with True (allowed, remembered by a ``PermissionStore`` for
            this tool and input), False (denied, remembered), or ``{"granted": bool,
            "remember": False}`` for an answer that holds for this call only.
        un_abortable: run to completion even when the request is aborted.
        parallel_safe: may run concurrently with the other calls of the same reply.
        idempotent: running it twice with the same input does no more than running it once.
            Under a durable execution (``Glove(execution=...)``) a call of this tool that was
            in flight when its process died is run again; a call of any other tool is
            answered "interrupted; not run again" instead.
    """

    name: str
    description: str
    do: ToolFunction
    input_model: type[BaseModel] | None = None
    json_schema: dict[str, Any] | None = None
    requires_permission: bool = False
    un_abortable: bool = False
    parallel_safe: bool = False
    idempotent: bool = False
    _spec: ToolSpec | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not _NAME_RE.match(self.name):
            raise ToolDefinitionError(
                f"tool name {self.name!r} is invalid: use 1-64 characters from [A-Za-z0-9_-]"
            )
        if self.input_model is not None and self.json_schema is not None:
            raise ToolDefinitionError(
                f"tool {self.name!r} has both input_model and json_schema; pass exactly one"
            )
        if not callable(self.do):
            raise ToolDefinitionError(f"tool {self.name!r}: do must be callable")

    @property
    def spec(self) -> ToolSpec:
        """The name, description and input schema sent to the model (computed once)."""
        if self._spec is None:
            if self.json_schema is not None:
                schema = self.json_schema
            elif self.input_model is not None:
                schema = _input_schema(self.input_model)
            else:
                schema = {"type": "object", "properties": {}}
            self._spec = ToolSpec(self.name, self.description, schema)
        return self._spec

    def parse_input(self, raw: dict[str, Any]) -> Any:
        """Validate the model's input.

        Raises:
            ToolInputError: the input does not fit ``input_model``.
        """
        if self.input_model is None:
            return raw
        try:
            return self.input_model.model_validate(raw)
        except ValidationError as exc:
            problems = []
            for err in exc.errors(include_url=False):
                where = ".".join(str(p) for p in err["loc"]) or "(input)"
                problems.append(f"field {where!r}: {err['msg']}")
            raise ToolInputError(self.name, problems) from None


def wrap_result(value: Any) -> ToolResultData:
    """Turn what a tool returned into a ToolResultData (plain values are a success)."""
    if isinstance(value, ToolResultData):
        return value
    return ToolResultData(status="success", data=value)


# --- @tool ---------------------------------------------------------------------------------

_SECTION_RE = re.compile(
    r"^\s*(Args|Arguments|Parameters|Returns|Yields|Raises|Example|Examples"
    r"|Note|Notes|Attributes)\s*:\s*$"
)
_ARG_RE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and the ``Args:`` descriptions."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    arg_indent: int | None = None
    current: str | None = None
    for line in lines:
        header = _SECTION_RE.match(line)
        if header:
            section = header.group(1)
            arg_indent, current = None, None
            continue
        if section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters") and line.strip():
            indent = len(line) - len(line.lstrip())
            match = _ARG_RE.match(line)
            if match and (arg_indent is None or indent <= arg_indent):
                arg_indent = indent
                current = match.group(1).lstrip("*")
                args[current] = match.group(3).strip()
            elif current is not None:
                args[current] = f"{args[current]} {line.strip()}".strip()
    return "\n".join(summary).strip(), args


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    requires_permission: bool = False,
    un_abortable: bool = False,
    parallel_safe: bool = False,
    idempotent: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_permission: bool = False,
    un_abortable: bool = False,
    parallel_safe: bool = False,
    idempotent: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Build a Tool from a typed function, sync or async.

    The input schema comes from the parameters' type hints and defaults; the description from
    the docstring, and each parameter's description from its ``Args:`` section. A parameter
    annotated ``ToolContext`` receives the context and is not part of the schema.

    Example:
        >>> @tool
        ... def add(a: int, b: int) -> int:
        ...     '''Add two numbers.
        ...
        ...     Args:
        ...         a: the first number.
        ...         b: the second number.
        ...     '''
        ...     return a + b
        >>> add.name
        'add'
    """

    def build(func: Callable[..., Any]) -> Tool:
        return _tool_from_function(
            func,
            name=name,
            description=description,
            requires_permission=requires_permission,
            un_abortable=un_abortable,
            parallel_safe=parallel_safe,
            idempotent=idempotent,
        )

    if fn is not None:
        return build(fn)
    return build


def _tool_from_function(
    func: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    requires_permission: bool,
    un_abortable: bool,
    parallel_safe: bool,
    idempotent: bool = False,
) -> Tool:
    tool_name = name or func.__name__
    summary, arg_docs = parse_docstring(func.__doc__)
    try:
        hints = get_type_hints(func)
    except Exception as exc:
        raise ToolDefinitionError(
            f"tool {tool_name!r}: cannot resolve the type hints of {func.__qualname__}: {exc}"
        ) from exc
    fields: dict[str, Any] = {}
    ctx_param: str | None = None
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"tool {tool_name!r}: *args/**kwargs cannot be described to the model; "
                "declare each parameter"
            )
        annotation = hints.get(param.name)
        if annotation is ToolContext:
            ctx_param = param.name
            continue
        if annotation is None:
            raise ToolDefinitionError(
                f"tool {tool_name!r}: parameter {param.name!r} needs a type hint"
            )
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (
            annotation,
            Field(default=default, description=arg_docs.get(param.name)),
        )
    model_name = "".join(part.title() for part in tool_name.split("_")) + "Input"
    input_model = create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)

    is_async = inspect.iscoroutinefunction(func)

    def arguments(input: BaseModel, ctx: ToolContext) -> dict[str, Any]:
        # The validated fields, in order (pydantic keeps them in the instance's __dict__).
        kwargs = input.__dict__.copy()
        if ctx_param is not None:
            kwargs[ctx_param] = ctx
        return kwargs

    def do_async(input: BaseModel, ctx: ToolContext) -> Any:
        # The function's own coroutine, which the runner awaits: no wrapper coroutine per call.
        return func(**arguments(input, ctx))

    async def do_sync(input: BaseModel, ctx: ToolContext) -> Any:
        # A sync function may block (files, sockets): keep it off the event loop.
        result = await asyncio.to_thread(func, **arguments(input, ctx))
        if inspect.isawaitable(result):
            result = await result
        return result

    do = do_async if is_async else do_sync

    return Tool(
        name=tool_name,
        description=description or summary or tool_name,
        do=do,
        input_model=input_model,
        requires_permission=requires_permission,
        un_abortable=un_abortable,
        parallel_safe=parallel_safe,
        idempotent=idempotent,
    )
