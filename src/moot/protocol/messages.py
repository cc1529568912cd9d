"""Provider-neutral conversation values: what a model sees and what it answers.

The model's context is a list of these, rebuilt from the event log by a fold; providers map
them to their wire formats.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import msgspec


class _Value(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A frozen value. msgspec checks types when it decodes or converts (the log, ops from
    outside), not on construction: code builds these from values it already checked."""


class Attachment(_Value, frozen=True):
    """A binary attachment (an image or a PDF) carried as base64 data.

    The log stores its bytes once, by hash (`moot.store.attachment_blobs`): events read back
    with the base64 as it was sent; a resumed history holds a reference (`ref`), resolved when
    a request is built.
    """

    mime_type: str
    """IANA media type, e.g. `image/png`, `application/pdf`."""
    data: str
    """The content, base64-encoded."""
    name: str | None = None
    """An optional file name, shown to people, never needed by models."""
    width: int | None = None
    """An image's width in pixels, when known (token estimates, chips)."""
    height: int | None = None
    """An image's height in pixels, when known."""
    text: str | None = None
    """A document's text, for models that cannot read the document itself."""
    ref: str | None = None
    """The sha256 of the bytes when the store holds them and `data` is left empty until a
    request needs it (a resumed session's history: its screenshots are not read to resume
    it); `Store.attachment_data` gives the base64."""

    @property
    def is_image(self) -> bool:
        return self.mime_type.startswith("image/")

    @property
    def is_document(self) -> bool:
        return self.mime_type in DOCUMENT_TYPES

    @property
    def label(self) -> str:
        """How people and notes name it: its name, else its type."""
        return self.name or self.mime_type

    def as_text(self) -> str:
        """What a model that cannot take this attachment reads in its place."""
        if self.is_document and self.text is not None:
            return f'<document name="{self.label}">\n{self.text}\n</document>'
        return f"[{self.label} ({self.mime_type}) omitted: this model does not accept it]"


DOCUMENT_TYPES = frozenset({"application/pdf"})
"""Attachments sent as documents (Anthropic `document`, OpenAI `file`/`input_file`)."""
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image types every provider with vision takes."""


class AttachedFile(_Value, frozen=True):
    """A workspace file the person named as `@path` in a message, as the model reads it."""

    path: str
    """Workspace-relative, `/`-joined, as the person wrote it (normalised)."""
    text: str = ""
    """The file's text, capped (empty when it was not attached: see `note`)."""
    note: str = ""
    """Why it is cut or not attached (binary, a directory, hidden by a deny rule, ...)."""

    def for_model(self) -> str:
        """The block the model reads after the prompt."""
        if not self.text:
            return f"[@{self.path}: {self.note}]"
        note = f" ({self.note})" if self.note else ""
        return f'<file path="{self.path}"{note}>\n{self.text}\n</file>'


class Usage(_Value, frozen=True):
    """Tokens one model call used, as the provider reported them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __post_init__(self) -> None:
        # Some servers send counts as JSON floats (`12.0`); a count is an int, and one that is
        # not a number at all counts nothing rather than failing a turn already paid for.
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                msgspec.structs.force_setattr(self, name, _count(value))

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


def plain_value(value: object) -> object:
    """What msgspec writes for a value it does not know (its `enc_hook`, for events and ops).

    A `str`, `int` or `float` subclass (`markupsafe.Markup`, a parsed HTML string) is written
    as the plain value, a path as its string, a pydantic model (a tool's parameters may be
    models) as its JSON form; anything else raises `TypeError`.
    """
    for plain in (str, int, float):  # msgspec encodes only the exact types
        if isinstance(value, plain):
            return plain(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if callable(dump := getattr(value, "model_dump", None)):
        return dump(mode="json")
    raise TypeError(f"cannot hold a {type(value).__name__}")


def _count(value: object) -> int:
    # Below zero counts nothing too: a model that reported -10**12 tokens once would lift
    # every token limit of the session for good.
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return max(0, int(value))
    return 0


class ToolCall(_Value, frozen=True):
    """One tool call a model asked for."""

    id: str
    """The provider's id for this call; tool results answer it."""
    name: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    """The parsed arguments. Empty when `arguments_error` is set."""
    arguments_error: str | None = None
    """Why the model's argument text could not be parsed as a JSON object, if it could not."""
    raw_arguments: str | None = None
    """The model's argument text, kept only when it did not parse."""


class Thinking(_Value, frozen=True):
    """A reasoning block; providers that sign them need the signature sent back unchanged."""

    text: str
    signature: str | None = None


class _Message(_Value, tag_field="role", frozen=True):
    @property
    def role(self) -> str:
        """`user`, `assistant` or `tool`: the tag that tells the kinds apart in JSON."""
        return self.__struct_config__.tag  # type: ignore[return-value]


class UserMessage(_Message, tag="user", frozen=True):
    content: str
    attachments: tuple[Attachment, ...] = ()


class AssistantMessage(_Message, tag="assistant", frozen=True):
    content: str = ""
    thinking: tuple[Thinking, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()


class ToolResultMessage(_Message, tag="tool", frozen=True):
    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    attachments: tuple[Attachment, ...] = ()


Message = UserMessage | AssistantMessage | ToolResultMessage
"""Tagged by `role` in JSON."""


IMAGE_OMITTED = "[{count} image(s) omitted: this model does not accept images]"


def without_images(messages: list[Message]) -> list[Message]:
    """The messages with every attachment replaced by a short note (for text-only models)."""
    return [without_image(message) for message in messages]


def without_image(message: Message) -> Message:
    """The message with its attachments replaced by a short note, a document by its text
    (itself if it has none)."""
    attachments: tuple[Attachment, ...] = getattr(message, "attachments", ())
    if not attachments:
        return message
    images = sum(1 for a in attachments if not a.is_document)
    notes = [IMAGE_OMITTED.format(count=images)] if images else []
    notes += [a.as_text() for a in attachments if a.is_document]
    content = "\n".join([message.content, *notes] if message.content else notes)
    return msgspec.structs.replace(message, content=content, attachments=())


def without_documents(message: Message) -> Message:
    """The message with each document replaced by its text (for models that read images but
    not documents); itself when it holds no document."""
    attachments: tuple[Attachment, ...] = getattr(message, "attachments", ())
    if not any(a.is_document for a in attachments):
        return message
    texts = [a.as_text() for a in attachments if a.is_document]
    content = "\n".join([message.content, *texts] if message.content else texts)
    kept = tuple(a for a in attachments if not a.is_document)
    return msgspec.structs.replace(message, content=content, attachments=kept)


def with_data(message: Message, data_of: Callable[[str], str]) -> Message:
    """The message with each attachment the store holds by reference (`Attachment.ref`, no
    data) given its base64 by `data_of(ref)`; itself when it holds none."""
    attachments: tuple[Attachment, ...] = getattr(message, "attachments", ())
    if not any(a.ref and not a.data for a in attachments):
        return message
    full = tuple(
        msgspec.structs.replace(a, data=data_of(a.ref), ref=None) if a.ref and not a.data else a
        for a in attachments
    )
    return msgspec.structs.replace(message, attachments=full)
