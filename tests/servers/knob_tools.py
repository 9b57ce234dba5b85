"""The knob server's own tools (see knob_server.py for the list): plain tools with and without
annotations, tools that misbehave on purpose (crash, hang, flood, ...), tools that change the
lists at run time, and the generated and oddly named tools of --tools and --long-names.
"""

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.resources.types import TextResource

try:
    from tests.servers.knob_exchange import list_changed
    from tests.servers.knob_io import err
except ImportError:  # run as a script: tests/servers is on sys.path
    from knob_exchange import list_changed  # type: ignore[no-redef]
    from knob_io import err  # type: ignore[no-redef]

LONG_TOOL_NAMES = [
    "org.example.knob/filesystem/read_file_with_an_unreasonably_long_descriptive_name_v2.final",
    "tool with spaces in its name that is also quite long, to test quoting/escaping logic",
    "ünïcødé.tööl/名前/ツール/инструмент/εργαλείο — a long non-ASCII tool name for MCP hosts",
    "x" * 60 + ".y/z" + "-" * 20 + "end",
]

READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
"""Read-only and closed-world: the only annotations that let a tool run without asking."""


def register_tools(mcp: MCPServer, tool: Callable[..., Any], opts: argparse.Namespace, state: dict[str, Any]) -> None:
    """The plain tools and the dynamic-list tools."""
    # ---- plain tools ------------------------------------------------------------------

    @tool(annotations=READ_ONLY)
    def echo(text: str) -> str:
        """Return the given text unchanged."""
        return text

    @tool(annotations=READ_ONLY)
    def add(a: float, b: float) -> str:
        """Add two numbers and return the sum as text."""
        total = a + b
        return str(int(total)) if float(total).is_integer() else str(total)

    @tool(annotations=READ_ONLY)
    def headers(ctx: Context) -> str:
        """Return the HTTP request headers this call arrived with, as JSON (HTTP transport only)."""
        return json.dumps({k.lower(): v for k, v in (ctx.headers or {}).items()})

    @tool(annotations=types.ToolAnnotations(destructive_hint=True, read_only_hint=False))
    def delete_item(id: str) -> str:
        """Delete an item by id (pretend: nothing is deleted)."""
        return f"deleted item {id}"

    @tool(annotations=types.ToolAnnotations(open_world_hint=True))
    def fetch_url(url: str) -> str:
        """Fetch a URL from the internet (fake: no network access happens)."""
        return f"fetched {url}: <html>fake page</html>"

    @tool()
    def no_annotations_write_file(path: str, content: str = "") -> str:
        """Write a file (pretend: nothing is written). Has no annotations at all."""
        return f"wrote {len(content)} characters to {path}"

    @tool()
    def crash() -> str:
        """Kill the server process abruptly in the middle of the call."""
        err("knob: crash() called, exiting with code 3")
        os._exit(3)

    @tool()
    async def hang() -> str:
        """Never return."""
        await anyio.sleep_forever()
        return "unreachable"

    @tool()
    async def sleep(seconds: float) -> str:
        """Return after the given number of seconds."""
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    @tool()
    async def cancel_probe(ctx: Context) -> str:
        """Sleep until cancelled; record start and cancellation in --cancel-file."""
        request_id = ctx.request_id

        def record(what: str) -> None:
            err(f"knob: cancel_probe {what} (request {request_id})")
            if opts.cancel_file:
                with open(opts.cancel_file, "a", encoding="utf-8") as f:
                    f.write(f"{what} {request_id}\n")

        record("started")
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            record("cancelled")
            raise
        return "unreachable"

    @tool()
    def huge(chars: int) -> str:
        """Return exactly `chars` characters of text."""
        line = "huge output line: 0123456789 abcdefghijklmnopqrstuvwxyz\n"
        return (line * (chars // len(line) + 1))[:chars]

    @tool()
    def flood(lines: int = 2000) -> str:
        """Write a lot of noise lines to stderr."""
        for i in range(lines):
            sys.stderr.write(f"knob flood tool line {i}: the quick brown fox jumps over the lazy dog\n")
        sys.stderr.flush()
        return f"wrote {lines} lines to stderr"

    @tool()
    async def progress(ctx: Context, steps: int = 3) -> str:
        """Send `steps` progress notifications (when the caller asked for progress)."""
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps, f"step {i}/{steps}")
        return "done"

    # ---- dynamic lists ----------------------------------------------------------------

    @tool()
    async def add_tool(name: str, ctx: Context) -> str:
        """Register a new tool called `name` and send notifications/tools/list_changed."""

        def dynamic(text: str = "") -> str:
            return f"dynamic tool {name} says {text}"

        mcp.add_tool(
            dynamic, name=name, description=f"Dynamically added tool {name}.", structured_output=False
        )
        await list_changed(ctx, "tools")
        return f"added tool {name}"

    @tool()
    async def remove_tool(name: str, ctx: Context) -> str:
        """Remove a tool and send notifications/tools/list_changed."""
        mcp.remove_tool(name)
        await list_changed(ctx, "tools")
        return f"removed tool {name}"

    @tool()
    async def touch_prompts(ctx: Context) -> str:
        """Add prompt dynamic_prompt_<n> and send notifications/prompts/list_changed."""
        n = state["dynamic_prompts"]
        state["dynamic_prompts"] += 1
        prompt_name = f"dynamic_prompt_{n}"

        def dynamic_prompt() -> str:
            return f"This is {prompt_name}."

        mcp.add_prompt(
            Prompt.from_function(dynamic_prompt, name=prompt_name, description="A dynamic prompt.")
        )
        await list_changed(ctx, "prompts")
        return f"added prompt {prompt_name}"

    @tool()
    async def touch_resources(ctx: Context) -> str:
        """Add resource knob://dynamic/<n> and send notifications/resources/list_changed."""
        n = state["dynamic_resources"]
        state["dynamic_resources"] += 1
        uri = f"knob://dynamic/{n}"
        mcp.add_resource(TextResource(uri=uri, name=f"dynamic_{n}", text=f"dynamic resource {n}"))
        await list_changed(ctx, "resources")
        return f"added resource {uri}"


def register_generated_tools(mcp: MCPServer, opts: argparse.Namespace) -> None:
    """--tools N, --long-names and --hinted-tools."""
    for i in range(opts.tools):
        _add_generated_tool(mcp, i)
    if opts.long_names:
        for name in LONG_TOOL_NAMES:
            _add_long_name_tool(mcp, name)
    if opts.hinted_tools:
        _add_hinted_tools(mcp)


def _add_hinted_tools(mcp: MCPServer) -> None:
    """Tools whose hints and words issue 25 (finding 4) found classed read although they may
    send data anywhere or change it."""

    def lookup_docs(q: str) -> str:
        return f"docs for {q}"

    def query(sql: str) -> str:
        return f"ran {sql}"

    def count_lines(text: str) -> str:
        return str(len(text.splitlines()))

    mcp.add_tool(lookup_docs, name="lookup_docs", description="Look up a term in the documentation.",
                 annotations=types.ToolAnnotations(read_only_hint=True), structured_output=False)
    mcp.add_tool(query, name="query", description="Run a SQL statement.", structured_output=False)
    mcp.add_tool(count_lines, name="count_lines", description="Count the lines of a text.",
                 annotations=READ_ONLY, structured_output=False)


_DESCRIPTIONS = [
    "Generated tool #{i}.",
    "Generated tool #{i}: look up records in the {domain} service and return a short summary.",
    "Generated tool #{i} for {domain}. "
    + "It has a deliberately long description to inflate the tool list. " * 4,
    "Generated tool #{i} ({domain}): counts things. Use when the user asks how many {domain} items exist.",
    "",
]
_DOMAINS = ["calendar", "billing", "inventory", "weather", "git", "tickets", "search"]


def _add_generated_tool(mcp: MCPServer, i: int) -> None:
    name = f"tool_{i:04d}"
    description = _DESCRIPTIONS[i % len(_DESCRIPTIONS)].format(i=i, domain=_DOMAINS[i % len(_DOMAINS)])
    kind = i % 3
    if kind == 0:

        def fn(text: str = "") -> str:
            return f"{name}: {text}"

    elif kind == 1:

        def fn(count: int = 1, flag: bool = False) -> str:  # type: ignore[misc]
            return f"{name}: count={count} flag={flag}"

    else:

        def fn() -> str:  # type: ignore[misc]
            return f"{name}: ok"

    mcp.add_tool(fn, name=name, description=description or None, structured_output=False)


def _add_long_name_tool(mcp: MCPServer, name: str) -> None:
    def fn(text: str = "") -> str:
        return f"{name}: {text}"

    mcp.add_tool(
        fn, name=name, description=f"A tool with a {len(name)}-character name.", structured_output=False
    )
