"""MCP results -> :class:`~agent_ls.core.tools.ToolResult` for the model and the UI.

Text blocks are joined; every other block is kept: images and audio as attachments plus a
one-line note in the text (so the model knows they exist), embedded text resources inlined
with their URI, blob resources and resource links as attachments with a note, and
``structuredContent`` kept as data and rendered as JSON text when the result has no text
(servers that return structured content only would otherwise look empty). Text beyond the
cap (``mcp.maxOutputChars``: what is kept of one result, not what the model sees at once; the
agent pages long results, see agent_ls/agent/tools/output_store.py) is cut with an explicit marker
that says how much was cut, never silently.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from agent_ls.core.tools import Attachment, ToolResult, cap_text

DEFAULT_MAX_OUTPUT_CHARS = 10_000_000
"""What is kept of one MCP result's text (the agent's default output store holds as much)."""
__all__ = ["DEFAULT_MAX_OUTPUT_CHARS", "cap_text", "convert_call_result", "convert_content"]


def _b64_size(data: str) -> int:
    """Decoded size of a base64 payload (padding is not data)."""
    return len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))


def convert_content(blocks: list[types.ContentBlock]) -> tuple[list[str], list[Attachment]]:
    texts: list[str] = []
    attachments: list[Attachment] = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            texts.append(block.text)
        elif isinstance(block, types.ImageContent):
            attachments.append(Attachment(kind="image", mime_type=block.mime_type, data=block.data))
            texts.append(f"[image: {block.mime_type}, {_b64_size(block.data)} bytes, shown to the user]")
        elif isinstance(block, types.AudioContent):
            attachments.append(Attachment(kind="audio", mime_type=block.mime_type, data=block.data))
            texts.append(f"[audio: {block.mime_type}, {_b64_size(block.data)} bytes]")
        elif isinstance(block, types.EmbeddedResource):
            res = block.resource
            uri = str(res.uri)
            if isinstance(res, types.TextResourceContents):
                attachments.append(Attachment(kind="resource", mime_type=res.mime_type, text=res.text, uri=uri))
                texts.append(f"[resource {uri}]\n{res.text}")
            else:
                attachments.append(Attachment(kind="resource", mime_type=res.mime_type, data=res.blob, uri=uri))
                texts.append(f"[binary resource {uri}: {res.mime_type or 'unknown type'}, "
                             f"{_b64_size(res.blob)} bytes]")
        elif isinstance(block, types.ResourceLink):
            uri = str(block.uri)
            attachments.append(Attachment(kind="resource_link", mime_type=block.mime_type, uri=uri, name=block.name))
            desc = f" - {block.description}" if block.description else ""
            texts.append(f"[resource link: {block.name} <{uri}>{desc}]")
        else:  # a content type from a newer protocol revision
            dumped = block.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(
                block, "model_dump") else str(block)
            texts.append(f"[{getattr(block, 'type', 'content')}: {json.dumps(dumped)[:2000]}]")
    return texts, attachments


def convert_call_result(result: types.CallToolResult, max_chars: int = DEFAULT_MAX_OUTPUT_CHARS) -> ToolResult:
    texts, attachments = convert_content(list(result.content))
    structured: dict[str, Any] | None = None
    sc = result.structured_content
    if sc is not None:
        structured = sc if isinstance(sc, dict) else {"result": sc}
        # Only the server's own text counts: notes about images etc. do not carry the data.
        if not any(isinstance(b, types.TextContent) and b.text.strip() for b in result.content):
            texts.append(json.dumps(sc, ensure_ascii=False, indent=2))
    text = "\n".join(texts)
    if not text and not attachments:
        text = "(the tool returned no content)"
    text, cut = cap_text(text, max_chars)
    return ToolResult(
        content=text,
        is_error=bool(result.is_error),
        attachments=tuple(attachments),
        structured=structured,
        truncated_chars=cut,
    )
