"""The shapes of what the knob server returns (see knob_server.py for the list): tool results with
images, embedded resources and links, structured content, errors; its resources and prompts.
"""

import base64
import json
import struct
import zlib
from collections.abc import Callable
from typing import Annotated, Any

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

README_TEXT = "# knob server\n\nA configurable MCP server used by the agent-ls integration tests.\n"


def _png_2x2() -> bytes:
    """A valid 2x2 RGB PNG (red, green / blue, white)."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
        )

    rows = b"\x00\xff\x00\x00\x00\xff\x00" + b"\x00\x00\x00\xff\xff\xff\xff"
    ihdr = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG_BASE64 = base64.b64encode(_png_2x2()).decode()


class Weather(BaseModel):
    city: str
    temperature_c: float
    conditions: list[str]


WEATHER = {"city": "Lisbon", "temperature_c": 21.5, "conditions": ["sunny", "breezy"]}


def register_result_tools(tool: Callable[..., Any]) -> None:
    """image, resource_result, structured, structured_only, fail, raise_error."""

    @tool()
    def image() -> types.CallToolResult:
        """Return a text block and a small PNG image block."""
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text="a 2x2 PNG: red, green, blue, white"),
                types.ImageContent(type="image", data=PNG_BASE64, mime_type="image/png"),
            ]
        )

    @tool()
    def resource_result() -> types.CallToolResult:
        """Return an embedded text resource and a resource_link."""
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text="here is a resource and a link"),
                types.EmbeddedResource(
                    type="resource",
                    resource=types.TextResourceContents(
                        uri="knob://readme", mime_type="text/plain", text=README_TEXT
                    ),
                ),
                types.ResourceLink(
                    type="resource_link",
                    uri="knob://blob",
                    name="blob",
                    description="256 bytes of binary data",
                    mime_type="application/octet-stream",
                ),
            ]
        )

    @tool(structured_output=True)
    def structured() -> Weather:
        """Return structured weather data (the tool has an outputSchema)."""
        return Weather(**WEATHER)

    @tool(structured_output=None)  # the Annotated metadata supplies the outputSchema
    def structured_only() -> Annotated[types.CallToolResult, Weather]:
        """Return structuredContent with an empty content list."""
        return types.CallToolResult(content=[], structured_content=dict(WEATHER))

    @tool()
    def fail() -> types.CallToolResult:
        """Return a result with isError=true."""
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="knob: fail() always fails")], is_error=True
        )

    @tool()
    def raise_error() -> str:
        """Raise an exception inside the tool."""
        raise RuntimeError("knob: raise_error() raised on purpose")


def register_resources_and_prompts(mcp: MCPServer) -> None:
    """knob://readme, knob://blob, the template knob://items/{item_id}; the prompts review and greet."""

    @mcp.resource(
        "knob://readme", name="readme", description="The knob server readme", mime_type="text/plain"
    )
    def readme() -> str:
        return README_TEXT

    @mcp.resource("knob://blob", name="blob", description="256 bytes", mime_type="application/octet-stream")
    def blob() -> bytes:
        return bytes(range(256))

    @mcp.resource(
        "knob://items/{item_id}", name="item", description="An item by id", mime_type="application/json"
    )
    def item(item_id: str) -> str:
        return json.dumps({"id": item_id, "title": f"Item {item_id}"})

    @mcp.prompt(description="Review a piece of code")
    def review(code: str) -> str:
        return f"Please review this code and point out bugs:\n\n{code}"

    @mcp.prompt(description="Greet someone")
    def greet(name: str, style: str = "friendly") -> str:
        return f"Write a {style} greeting for {name}."
