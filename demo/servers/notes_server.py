"""A tiny notes MCP server for the agent-ls demo workspace (written with the mcp SDK)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer(
    "notes",
    instructions="Notes live in memory for the life of the server. Search before adding duplicates.",
)
NOTES: dict[str, str] = {}


@server.tool(annotations={"readOnlyHint": False, "openWorldHint": False})
def add_note(title: str, body: str) -> str:
    """Add a note with a title and a body."""
    NOTES[title] = body
    return f"saved note '{title}' ({len(NOTES)} notes in all)"


@server.tool(annotations={"readOnlyHint": True, "openWorldHint": False})  # in-memory: closed world
def search_notes(query: str) -> str:
    """Search notes whose title or body contains the query (case-insensitive)."""
    q = query.lower()
    hits = [f"{t}: {b}" for t, b in sorted(NOTES.items()) if q in t.lower() or q in b.lower()]
    return "\n".join(hits) if hits else "no matching notes"


@server.resource("notes://all")
def all_notes() -> str:
    """Every note, one per line."""
    return "\n".join(f"{t}: {b}" for t, b in sorted(NOTES.items()))


@server.prompt()
def summarize_notes() -> str:
    """Ask the agent to summarize the notes."""
    return "Summarize my notes (read the notes://all resource)."


if __name__ == "__main__":
    server.run("stdio")
