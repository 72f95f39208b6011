"""glove_mcp's own view of what MCP servers send: tools, tool-call results, resources and
prompts.

``McpServerConnection.list_tools`` returns ``McpTool``\\s and ``call_tool`` an
``McpCallResult``; ``list_resources``, ``read_resource``, ``list_prompts`` and ``get_prompt``
return ``McpResource``, ``McpReadResult``, ``McpPrompt`` and ``McpPromptResult``; all are
converted from the SDK's models where they arrive, so code that uses
glove_mcp never imports ``mcp`` (the SDK session stays reachable as
``McpServerConnection.raw``). The models are frozen pydantic models with the SDK's snake_case
field names; ``model_dump(by_alias=True)`` gives MCP's camelCase wire names (``mimeType``,
``inputSchema``), which is how bridged tools hand content blocks to an application
(``ToolResultData.render_data``).

What is left out: ``_meta`` (but the MCP Apps fields of a tool's), icons, and result types
other than a completed call or read.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "McpAudioContent",
    "McpCallResult",
    "McpContent",
    "McpContentAnnotations",
    "McpEmbeddedResource",
    "McpImageContent",
    "McpPrompt",
    "McpPromptArgument",
    "McpPromptMessage",
    "McpPromptResult",
    "McpReadResult",
    "McpResource",
    "McpResourceContents",
    "McpResourceLink",
    "McpResourceTemplate",
    "McpTextContent",
    "McpTool",
    "McpToolAnnotations",
    "TaskSupport",
]


class _Model(BaseModel):
    # Fields are named in snake_case; those whose MCP name differs carry it as a serialization
    # alias, which only dumps use: constructors take the snake_case names.
    model_config = ConfigDict(frozen=True, extra="forbid")


TaskSupport = Literal["forbidden", "optional", "required"]
"""Whether a tool runs as a task (``execution.taskSupport``): ``"required"`` tools are not
offered, because glove_mcp makes plain calls only."""


class McpToolAnnotations(_Model):
    """Hints a server gives about a tool (all optional, and only hints: a server may lie).

    Attributes:
        title: a display name.
        read_only_hint: the tool changes nothing; bridged tools run without asking then.
        destructive_hint: it may destroy data.
        idempotent_hint: calling it twice with the same arguments does nothing more.
        open_world_hint: it reaches outside the server (the web, other systems).
    """

    title: str | None = None
    read_only_hint: bool | None = Field(default=None, serialization_alias="readOnlyHint")
    destructive_hint: bool | None = Field(default=None, serialization_alias="destructiveHint")
    idempotent_hint: bool | None = Field(default=None, serialization_alias="idempotentHint")
    open_world_hint: bool | None = Field(default=None, serialization_alias="openWorldHint")


class McpTool(_Model):
    """A tool as a server lists it.

    Attributes:
        name: its real, un-namespaced name (``call_tool`` takes it).
        title: a display name, if the server gave one.
        description: what it does, if the server said.
        input_schema: the JSON Schema of its arguments.
        output_schema: the JSON Schema of its structured result, if it declares one.
        annotations: the server's hints (empty when it gave none).
        task_support: its ``execution.taskSupport``, or None when the server did not say.
        ui_resource_uri: the ``ui://`` view it renders its results in (MCP Apps,
            ``_meta.ui.resourceUri``), or None.
        ui_visibility: who may call it (``_meta.ui.visibility``): ``"model"``, ``"app"`` or
            both; None when unsaid (both).
    """

    name: str
    title: str | None = None
    description: str | None = None
    input_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object"}, serialization_alias="inputSchema"
    )
    output_schema: dict[str, Any] | None = Field(default=None, serialization_alias="outputSchema")
    annotations: McpToolAnnotations = McpToolAnnotations()
    task_support: TaskSupport | None = Field(default=None, serialization_alias="taskSupport")
    ui_resource_uri: str | None = None
    ui_visibility: tuple[str, ...] | None = None

    @property
    def read_only(self) -> bool:
        """Whether the server marked it read-only."""
        return self.annotations.read_only_hint is True

    @property
    def for_model(self) -> bool:
        """Whether the agent may see and call it (an app-only tool is for its view alone)."""
        return self.ui_visibility is None or "model" in self.ui_visibility

    @property
    def for_app(self) -> bool:
        """Whether a view of the same server may call it."""
        return self.ui_visibility is None or "app" in self.ui_visibility


class McpContentAnnotations(_Model):
    """Who a content block is for and how much it matters.

    Attributes:
        audience: ``"user"``, ``"assistant"`` or both; None when unsaid.
        priority: 0 (optional) to 1 (essential).
        last_modified: an ISO 8601 timestamp.
    """

    audience: tuple[Literal["user", "assistant"], ...] | None = None
    priority: float | None = None
    last_modified: str | None = Field(default=None, serialization_alias="lastModified")


class McpTextContent(_Model):
    """Text."""

    type: Literal["text"] = "text"
    text: str
    annotations: McpContentAnnotations | None = None


class McpImageContent(_Model):
    """An image, base64-encoded."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str = Field(serialization_alias="mimeType")
    annotations: McpContentAnnotations | None = None


class McpAudioContent(_Model):
    """Audio, base64-encoded."""

    type: Literal["audio"] = "audio"
    data: str
    mime_type: str = Field(serialization_alias="mimeType")
    annotations: McpContentAnnotations | None = None


class McpResourceLink(_Model):
    """A link to a resource the server offers (read it with the server's resource API)."""

    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = Field(default=None, serialization_alias="mimeType")
    size: int | None = None
    annotations: McpContentAnnotations | None = None


class McpResourceContents(_Model):
    """The contents of a resource: ``text``, or ``blob`` (base64) for binary data."""

    uri: str
    mime_type: str | None = Field(default=None, serialization_alias="mimeType")
    text: str | None = None
    blob: str | None = None


class McpEmbeddedResource(_Model):
    """A resource sent inside the result."""

    type: Literal["resource"] = "resource"
    resource: McpResourceContents
    annotations: McpContentAnnotations | None = None


McpContent = Annotated[
    McpTextContent | McpImageContent | McpAudioContent | McpResourceLink | McpEmbeddedResource,
    Field(discriminator="type"),
]
"""One block of a tool result; ``type`` tells which."""


class McpCallResult(_Model):
    """What a tool call returned.

    Attributes:
        content: the content blocks, in order.
        structured_content: the JSON result, when the tool has an output schema (or chose to
            send one).
        is_error: the tool failed on the server; ``content`` says why.
    """

    content: tuple[McpContent, ...] = ()
    structured_content: Any = Field(default=None, serialization_alias="structuredContent")
    is_error: bool = Field(default=False, serialization_alias="isError")

    @property
    def text(self) -> str:
        """The text blocks, joined by newlines."""
        return "\n".join(b.text for b in self.content if isinstance(b, McpTextContent))


# -- resources ---------------------------------------------------------------------------------


class McpResource(_Model):
    """A resource a server lists (``resources/list``); read it with ``read_resource(uri)``.

    Attributes:
        uri: what ``read_resource`` takes.
        name: its programmatic name.
        title: a display name, if the server gave one.
        description: what it is, if the server said.
        mime_type: its MIME type, if known.
        size: its size in bytes (before base64), if known.
        annotations: who it is for and how much it matters, if the server said.
    """

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = Field(default=None, serialization_alias="mimeType")
    size: int | None = None
    annotations: McpContentAnnotations | None = None


class McpResourceTemplate(_Model):
    """A family of resources a server can read (``resources/templates/list``): fill in the
    RFC 6570 ``uri_template`` and pass the URI to ``read_resource``.

    Attributes:
        uri_template: e.g. ``"notes://page/{page_id}"``.
        name: its programmatic name.
        title: a display name, if the server gave one.
        description: what it reads, if the server said.
        mime_type: the MIME type of every resource it matches, if they share one.
    """

    uri_template: str = Field(serialization_alias="uriTemplate")
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = Field(default=None, serialization_alias="mimeType")


class McpReadResult(_Model):
    """What ``read_resource`` returned: the resource's contents, or those of its parts.

    Attributes:
        contents: each has ``text``, or ``blob`` (base64) for binary data.
    """

    contents: tuple[McpResourceContents, ...] = ()

    @property
    def text(self) -> str:
        """The text contents, joined by newlines (blobs left out)."""
        return "\n".join(c.text for c in self.contents if c.text is not None)


# -- prompts -----------------------------------------------------------------------------------


class McpPromptArgument(_Model):
    """One argument of a prompt template.

    Attributes:
        name: the key to pass in ``get_prompt(..., arguments={name: value})``.
        description: what to pass, if the server said.
        required: ``get_prompt`` fails without it.
    """

    name: str
    description: str | None = None
    required: bool = False


class McpPrompt(_Model):
    """A prompt (template) a server offers (``prompts/list``).

    Attributes:
        name: what ``get_prompt`` takes.
        title: a display name, if the server gave one.
        description: what it is for, if the server said.
        arguments: the arguments it takes, in the server's order.
    """

    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[McpPromptArgument, ...] = ()


class McpPromptMessage(_Model):
    """One message of a prompt: who says it, and one content block."""

    role: Literal["user", "assistant"]
    content: McpContent


class McpPromptResult(_Model):
    """What ``get_prompt`` returned: the prompt's messages, in order.

    Attributes:
        description: what the prompt is for, if the server said.
        messages: the conversation the prompt is made of.
    """

    description: str | None = None
    messages: tuple[McpPromptMessage, ...] = ()

    @property
    def text(self) -> str:
        """The text blocks of the messages, joined by blank lines."""
        return "\n\n".join(
            m.content.text for m in self.messages if isinstance(m.content, McpTextContent)
        )
