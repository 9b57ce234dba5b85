"""MCP tools adapted to the agent's :class:`~agent_ls.agent.tools.Tool` protocol."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from agent_ls.agent.tools import ToolResult, ToolSpec
from agent_ls.mcp.capability import infer_capability
from agent_ls.mcp.connection import REQUEST_TIMEOUT, ServerUnavailable
from agent_ls.mcp.results import convert_call_result

if TYPE_CHECKING:
    from agent_ls.mcp.connection import ServerConnection

EMPTY_SCHEMA: dict[str, Any] = {"type": "object"}


def normalize_schema(schema: dict[str, Any] | None) -> dict[str, Any]:
    """Providers want an object schema; an empty or missing one becomes ``{"type": "object"}``."""
    if not schema:
        return dict(EMPTY_SCHEMA)
    if "type" not in schema:
        return {"type": "object", **schema}
    return schema


def annotations_dict(tool: types.Tool) -> dict[str, Any] | None:
    if tool.annotations is None:
        return None
    return tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True)


def make_spec(server: str, tool: types.Tool, name: str) -> ToolSpec:
    ann = annotations_dict(tool)
    description = tool.description or (tool.title or "")
    return ToolSpec(
        name=name,
        description=description,
        input_schema=normalize_schema(tool.input_schema),
        capability=infer_capability(tool.name, description, ann),
        source="mcp",
        server=server,
        display_name=tool.name,
        output_schema=tool.output_schema,
        annotations=ann,
    )


class MCPTool:
    """One MCP tool; calls go through the live connection of its server."""

    def __init__(
        self, spec: ToolSpec, connection: ServerConnection, *, max_output_chars: Callable[[], int]
    ) -> None:
        self._spec = spec
        self._connection = connection
        self._max_output_chars = max_output_chars

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def server(self) -> str:
        return self._connection.name

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        conn = self._connection
        original = self._spec.display_name or self._spec.name
        tag = f"[MCP server '{conn.name}', tool '{original}']"
        try:
            result = await conn.call_tool(original, arguments)
        except ServerUnavailable as e:
            return ToolResult.error(f"{tag} {e}")
        except MCPError as e:
            problem = conn.auth_problem()
            if problem:
                return ToolResult.error(conn.redact(
                    f"{tag} was refused: {problem} (the user must sign in to '{conn.name}'; error {e.error.code}: "
                    f"{e.error.message})"))
            if e.error.code == REQUEST_TIMEOUT:
                return ToolResult.error(
                    f"{tag} timed out after {conn.config.call_timeout:g}s (callTimeout); the call was cancelled"
                )
            return ToolResult.error(conn.redact(f"{tag} error {e.error.code}: {e.error.message}"))
        except asyncio.CancelledError:
            raise
        except Exception as e:  # transport failures: tell the model, never crash the turn
            return ToolResult.error(conn.redact(f"{tag} failed: {type(e).__name__}: {e}"))
        out = convert_call_result(result, self._max_output_chars())
        if out.is_error:
            return ToolResult(
                content=f"{tag} returned an error: {out.content}",
                is_error=True,
                attachments=out.attachments,
                structured=out.structured,
                truncated_chars=out.truncated_chars,
            )
        return out
