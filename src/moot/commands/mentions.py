"""`@server:uri` mentions: an MCP server's resource, read and added to the person's message.

Front ends call `expand_mentions` before they submit a turn (as they attach an `@path` file):
each mention of a resource of one of the session's servers is read through the client
(`McpControl.mcp_resource`, which waits for a server that is still starting) and its text is
added after the message, images become attachments. What cannot be read is said in the
message instead, so the model knows; the turn is never refused for it.
"""

from __future__ import annotations

import re

from moot.protocol.client import Client
from moot.protocol.mcp import McpControl
from moot.protocol.messages import Attachment

MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_-]+):(\S+)")
"""`@server:uri`; a trailing `.`, `,`, `)` or `;` ends a sentence, not the URI."""
_TRAILING = ".,;)]}'\""


def mentions(text: str, servers: set[str]) -> list[tuple[str, str]]:
    """The (server, uri) pairs `text` mentions, in order, once each."""
    found: list[tuple[str, str]] = []
    for match in MENTION.finditer(text):
        server, uri = match.group(1), match.group(2).rstrip(_TRAILING)
        if server in servers and uri and (server, uri) not in found:
            found.append((server, uri))
    return found


async def expand_mentions(client: Client, text: str) -> tuple[str, tuple[Attachment, ...]]:
    """`text` with each mentioned resource's contents after it, and its images.

    Returns:
        The message to send and its attachments; `text` unchanged when it mentions nothing.
    """
    if "@" not in text or not isinstance(client, McpControl):
        return text, ()
    wanted = mentions(text, {s.name for s in client.mcp_servers()})
    if not wanted:
        return text, ()
    blocks: list[str] = []
    images: list[Attachment] = []
    for server, uri in wanted:
        try:
            resource = await client.mcp_resource(server, uri)
        except LookupError as exc:
            blocks.append(f"[moot: @{server}:{uri} could not be read: {exc}]")
            continue
        body = resource.text
        for mime, data in resource.blobs:
            if mime.startswith("image/"):
                images.append(Attachment(mime_type=mime, data=data, name=uri))
            else:
                body += f"\n[a binary part ({mime}), not shown]"
        blocks.append(f'<resource server="{server}" uri="{uri}">\n{body}\n</resource>')
    return text + "\n\n" + "\n\n".join(blocks), tuple(images)
