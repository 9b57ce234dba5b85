"""A stdio MCP server (the SDK's MCPServer) whose tools read and write files and open a TCP
connection: what a server in the sandbox may and may not do."""

import socket
import sys

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("files")


@mcp.tool()
def read(path: str) -> str:
    try:
        with open(path) as f:
            return "READ " + f.read()
    except OSError as exc:
        return f"FAILED {exc.strerror}"


@mcp.tool()
def write(path: str, text: str) -> str:
    try:
        with open(path, "w") as f:
            f.write(text)
        return "WROTE"
    except OSError as exc:
        return f"FAILED {exc.strerror}"


@mcp.tool()
def connect(port: int) -> str:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        return "CONNECTED"
    except OSError as exc:
        return f"FAILED {exc}"


if __name__ == "__main__":
    sys.exit(mcp.run())
