"""An MCP tool's result as the model reads it: text capped like a command's output, images kept.

A server may answer with megabytes. The model gets at most `max_chars` of text, the head and the
tail around a marker, and the whole text is saved in the session's outputs directory, which the
`read` tool may open, exactly as for the shell's output. Images go to the model as attachments
(up to `MAX_IMAGE_BYTES` each); audio and binary resources are named, not sent.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from moot.protocol.messages import DOCUMENT_TYPES, IMAGE_TYPES
from moot.sandbox.output import HeadTail, OutputDir

MAX_IMAGE_BYTES = 5 << 20
"""The largest image (base64 characters) passed to the model; a larger one is named only."""
MAX_IMAGES = 8


class Rendered:
    """Text and images gathered from content blocks."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.images: list[tuple[str, str]] = []

    def text(self) -> str:
        return "\n".join(part for part in self.parts if part)


def render_blocks(blocks: Iterable[Any]) -> Rendered:
    """MCP content blocks (text, image, audio, resource link, embedded resource) as text and
    images."""
    rendered = Rendered()
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            rendered.parts.append(block.text)
        elif kind == "image":
            if len(block.data) <= MAX_IMAGE_BYTES and len(rendered.images) < MAX_IMAGES:
                rendered.images.append((block.mime_type, block.data))
            else:
                rendered.parts.append(f"[an image ({block.mime_type}) too large to pass on]")
        elif kind == "audio":
            rendered.parts.append(f"[audio ({block.mime_type}), not passed on]")
        elif kind == "resource_link":
            rendered.parts.append(
                f"[resource {block.uri}" + (f": {block.name}]" if block.name else "]")
            )
        elif kind == "resource" and _attachable(block.resource):
            # An embedded image or PDF goes to the model as one, like an image block.
            contents = block.resource
            if len(contents.blob) <= MAX_IMAGE_BYTES and len(rendered.images) < MAX_IMAGES:
                rendered.images.append((contents.mime_type, contents.blob))
            else:
                rendered.parts.append(f"[resource {contents.uri} too large to pass on]")
        elif kind == "resource":
            rendered.parts.append(resource_text(block.resource))
    return rendered


def _attachable(contents: Any) -> bool:
    """Whether an embedded resource is an image or a PDF the model can be given as one."""
    mime = getattr(contents, "mime_type", None) or ""
    blob = getattr(contents, "blob", None)
    return isinstance(blob, str) and (mime in IMAGE_TYPES or mime in DOCUMENT_TYPES)


def resource_text(contents: Any) -> str:
    """An embedded resource as text: its text, or a note naming a binary one."""
    text = getattr(contents, "text", None)
    if isinstance(text, str):
        return text
    mime = getattr(contents, "mime_type", None) or "binary"
    return f"[resource {contents.uri} ({mime}), not text]"


def tool_text(result: Any) -> Rendered:
    """A `CallToolResult` as text and images; structured content stands in for no text."""
    rendered = render_blocks(result.content or ())
    if not rendered.text() and result.structured_content is not None:
        rendered.parts.append(
            json.dumps(result.structured_content, ensure_ascii=False, default=str)
        )
    return rendered


def capped(text: str, max_chars: int, outputs: OutputDir | None, prefix: str) -> str:
    """`text`, or its head and tail with the whole saved to a file the marker names."""
    if len(text) <= max_chars:
        return text
    where = ""
    if outputs is not None:
        try:
            file, path = outputs.create(f"{prefix}-{secrets.token_hex(4)}.txt")
            with file:
                file.write(text.encode("utf-8", "replace"))
            where = outputs.display(path)
        except OSError:
            where = ""  # the cut still says how much is missing
    kept = HeadTail(max_chars)
    kept.add(text)
    return kept.render(where=where)


def outputs_dir(workspace: str, directory: str) -> OutputDir | None:
    return OutputDir(Path(workspace), Path(directory)) if directory else None
