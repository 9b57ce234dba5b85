"""Knob server: one configurable MCP server for the MCP host's integration tests.

Run it as ``python tests/servers/knob_server.py [options]``. It is built on the mcp 2.x SDK
(``MCPServer`` plus a few reaches into the low-level ``Server`` it wraps) and serves both
protocol eras: the legacy ``initialize`` handshake (``mcp.Client(mode="legacy")``) and the
2026-07-28 protocol that ``mode="auto"`` negotiates. Server-to-client requests (roots,
elicitation, sampling) are sent as real JSON-RPC requests on legacy sessions and as
``InputRequiredResult`` rounds on modern sessions.

Every option can also be set through an environment variable ``KNOB_<NAME>`` (upper case,
dashes become underscores, e.g. ``KNOB_SLOW_HANDSHAKE=2``); a command-line option wins over
the variable. Boolean variables accept 1/true/yes/on.

Options (knobs)
---------------
--transport stdio|http    stdio (default) or Streamable HTTP on 127.0.0.1.
--port N                  HTTP port; 0 (default) picks a free one. Once the server accepts
                          connections it prints ``LISTENING http://127.0.0.1:<port>/mcp`` as
                          the first line on stderr (the startup stderr knobs follow it).
--name NAME               server name in serverInfo (default "knob").
--instructions TEXT       server instructions (default: none).
--tools N                 add N generated tools tool_0000 .. tool_<N-1> with varied
                          descriptions and input schemas.
--long-names              add tools whose names are 80+ characters long and contain '.',
                          '/', spaces and non-ASCII characters (see LONG_TOOL_NAMES).
--slow-handshake SECONDS  delay the answer to ``initialize`` (and ``server/discover``) by
                          SECONDS; the process is up and reading, it just does not answer.
--exit-during-handshake CODE
                          when ``initialize`` (or ``server/discover``) arrives, write a line
                          to stderr and exit with CODE without answering.
--garbage-stdout          (stdio only) write non-JSON lines to stdout before serving and
                          around every tools/call response.
--stderr-flood N          write N noise lines to stderr at start.
--stderr-line TEXT        write TEXT as one line to stderr at start.
--cancel-file PATH        file where cancel_probe() appends "started <id>" and
                          "cancelled <id>" lines.
--era both|legacy|modern  which protocol eras it speaks (default both): "legacy" answers
                          ``server/discover`` with "method not found" (like an mcp 1.x or
                          TypeScript reference server); "modern" answers ``initialize`` with
                          -32022 unsupported protocol version (supported: 2026-07-28).
--era-file PATH           read the era from PATH at start (overrides --era): the same command
                          line can speak another era on its next start.
--handshake-log PATH      append the method of every handshake request (initialize,
                          server/discover) to PATH, one per line.
--request-log PATH        append the method of every request to PATH, one per line.
--slow-start SECONDS      wait SECONDS before serving at all (like a server that loads a
                          lot first; no request is answered, whatever the protocol era).
--slow-start-file PATH    read the --slow-start seconds from PATH at start, when it exists
                          (the same command line starts slowly next time).
--list-ttl-ms N           the list results (tools, prompts, resources, templates) carry
                          ttlMs N and cacheScope private (2026-07-28 sessions).

Tools that are always present
-----------------------------
echo(text)                      -> text. readOnlyHint=True.
headers()                       the HTTP request headers of the call as JSON (HTTP only).
add(a, b)                       -> the sum as text ("3", "2.5"). readOnlyHint=True.
delete_item(id)                 destructiveHint=True (does nothing real).
fetch_url(url)                  openWorldHint=True (fake, no network).
no_annotations_write_file(path, content="")   no annotations at all (writes nothing).
crash()                         the process exits abruptly (os._exit(3)) mid-call.
hang()                          never returns.
sleep(seconds)                  returns "slept <seconds>" after the delay.
cancel_probe()                  sleeps until cancelled; records start/cancel in --cancel-file.
huge(chars)                     returns exactly `chars` characters of text.
flood(lines=2000)               writes `lines` noise lines to stderr, returns the count.
progress(steps=3)               sends `steps` progress notifications, returns "done".
add_tool(name)                  registers tool `name` (echoes its arguments) and sends
                                notifications/tools/list_changed.
remove_tool(name)               removes a tool and sends notifications/tools/list_changed.
touch_prompts()                 adds prompt dynamic_prompt_<n>, sends prompts/list_changed.
touch_resources()               adds resource knob://dynamic/<n>, sends resources/list_changed.
roots()                         asks the client for its roots; returns
                                {"roots": [{"uri", "name"}, ...]} as JSON text.
roots_changed_count()           how many notifications/roots/list_changed arrived.
ask(question)                   form elicitation with defaults (name="anon", count=3,
                                color="blue", ok required); returns {"action", "content"} JSON.
sample(prompt)                  sampling/createMessage; returns the text the client sampled.
image()                         a text block plus a 2x2 PNG image block.
resource_result()               a text block, an embedded text resource and a resource_link.
structured()                    structured content with an outputSchema (plus text).
structured_only()               structuredContent with an EMPTY content list (has outputSchema).
fail()                          a result with isError=true and a message.
raise_error()                   raises inside the tool (the SDK turns it into isError=true).

Resources: knob://readme (text/plain), knob://blob (application/octet-stream, bytes 0..255),
template knob://items/{item_id} (application/json).
Prompts: review(code), greet(name, style="friendly").
"""

import argparse
import base64
import json
import logging
import os
import socket
import struct
import sys
import time
import warnings
import zlib
from collections.abc import Callable
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.resources.types import TextResource
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

HANDSHAKE_METHODS = frozenset({"initialize", "server/discover"})

LONG_TOOL_NAMES = [
    "org.example.knob/filesystem/read_file_with_an_unreasonably_long_descriptive_name_v2.final",
    "tool with spaces in its name that is also quite long, to test quoting/escaping logic",
    "ünïcødé.tööl/名前/ツール/инструмент/εργαλείο — a long non-ASCII tool name for MCP hosts",
    "x" * 60 + ".y/z" + "-" * 20 + "end",
]

GARBAGE_LINES = [
    "this line is not JSON",
    "Loading model weights... 100%",
    "{not: json, either",
    '{"jsonrpc": "2.0", "id": ',
    "WARNING: something printed to stdout by a careless library",
]

README_TEXT = "# knob server\n\nA configurable MCP server used by the agent-ls integration tests.\n"


# --------------------------------------------------------------------------- options


def _env_name(option: str) -> str:
    return "KNOB_" + option.upper().replace("-", "_")


def _env_bool(option: str) -> bool:
    return os.environ.get(_env_name(option), "").strip().lower() in ("1", "true", "yes", "on")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="knob_server.py",
        description="Configurable MCP test server (see the module docstring for every knob).",
    )

    def add(option: str, **kwargs: Any) -> None:
        env = os.environ.get(_env_name(option))
        if env is not None:
            kwargs["default"] = env
        kwargs.setdefault("help", "")
        kwargs["help"] += f" (env {_env_name(option)})"
        parser.add_argument("--" + option, **kwargs)

    def flag(option: str, help: str) -> None:
        parser.add_argument(
            "--" + option,
            action="store_true",
            default=_env_bool(option),
            help=f"{help} (env {_env_name(option)})",
        )

    add("transport", choices=["stdio", "http"], default="stdio", help="transport")
    add("port", type=int, default=0, help="HTTP port, 0 = pick a free one")
    add("name", default="knob", help="server name")
    add("instructions", default=None, help="server instructions")
    add("tools", type=int, default=0, help="number of generated tools tool_NNNN")
    flag("long-names", "add tools with long, odd names")
    add("slow-handshake", type=float, default=0.0, help="seconds to delay the initialize answer")
    add("exit-during-handshake", type=int, default=None, help="exit code to use when initialize arrives")
    flag("garbage-stdout", "write non-JSON lines to stdout (stdio only)")
    add("stderr-flood", type=int, default=0, help="noise lines written to stderr at start")
    add("stderr-line", default=None, help="a line written to stderr at start")
    add("cancel-file", default=None, help="file cancel_probe() records into")
    add("era", choices=["both", "legacy", "modern"], default="both", help="protocol eras it speaks")
    add("era-file", default=None, help="file holding the era (overrides --era)")
    add("handshake-log", default=None, help="file the handshake methods are appended to")
    add("request-log", default=None, help="file every request method is appended to")
    add("slow-start", type=float, default=0.0, help="seconds to wait before serving")
    add("slow-start-file", default=None, help="file holding the --slow-start seconds")
    add("list-ttl-ms", type=int, default=0, help="ttlMs of the list results")
    return parser


def parse_options(argv: list[str] | None = None) -> argparse.Namespace:
    opts = build_parser().parse_args(argv)
    # argparse applies `type` to string defaults, so env values arrive converted; be explicit anyway.
    opts.port = int(opts.port)
    opts.tools = int(opts.tools)
    opts.slow_handshake = float(opts.slow_handshake)
    opts.slow_start = float(opts.slow_start)
    if opts.slow_start_file and os.path.exists(opts.slow_start_file):
        with open(opts.slow_start_file, encoding="utf-8") as f:
            opts.slow_start = float(f.read().strip() or 0)
    opts.list_ttl_ms = int(opts.list_ttl_ms)
    if opts.era_file:
        with open(opts.era_file, encoding="utf-8") as f:
            opts.era = f.read().strip()
        if opts.era not in ("both", "legacy", "modern"):
            raise SystemExit(f"knob: --era-file {opts.era_file}: unknown era {opts.era!r}")
    opts.stderr_flood = int(opts.stderr_flood)
    if opts.exit_during_handshake is not None:
        opts.exit_during_handshake = int(opts.exit_during_handshake)
    return opts


# --------------------------------------------------------------------------- helpers


def err(line: str) -> None:
    """One line to stderr, flushed (the host captures a stderr tail)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


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


def _is_modern(ctx: Context) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


async def _ask_client(ctx: Context, key: str, request: types.InputRequest, result_type: type[Any]) -> Any:
    """Send a server-to-client request in whatever way the session's protocol era allows.

    Legacy sessions get a real JSON-RPC request on this call's channel. Modern sessions
    (2026-07-28) cannot receive server requests: the first round returns an
    InputRequiredResult (the caller returns it as the tool result); the client answers it
    and retries the call, and the answer is then found in ctx.input_responses.
    Returns either the parsed result or the InputRequiredResult to hand back.
    """
    if _is_modern(ctx):
        responses = ctx.input_responses or {}
        if key in responses:
            answer = responses[key]
            if isinstance(answer, result_type):
                return answer
            return result_type.model_validate(answer.model_dump(by_alias=True, exclude_none=True))
        return types.InputRequiredResult(input_requests={key: request})
    return await ctx.session.send_request(
        request,
        result_type,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_context.request_id),
    )


async def _list_changed(ctx: Context, kind: str) -> None:
    """Announce a tools/prompts/resources list change in the session's era."""
    if _is_modern(ctx):
        # 2026-07-28: delivered to subscriptions/listen streams.
        publish = {
            "tools": ctx.notify_tools_changed,
            "prompts": ctx.notify_prompts_changed,
            "resources": ctx.notify_resources_changed,
        }[kind]
        await publish()
        return
    notification = {
        "tools": types.ToolListChangedNotification,
        "prompts": types.PromptListChangedNotification,
        "resources": types.ResourceListChangedNotification,
    }[kind]()
    # Request-scoped: on Streamable HTTP it rides this call's response stream, so the client
    # sees it even without a standalone GET stream; on stdio it is the same pipe.
    await ctx.session.send_notification(notification, related_request_id=ctx.request_context.request_id)


class Weather(BaseModel):
    city: str
    temperature_c: float
    conditions: list[str]


WEATHER = {"city": "Lisbon", "temperature_c": 21.5, "conditions": ["sunny", "breezy"]}

READ_ONLY = types.ToolAnnotations(read_only_hint=True)


# --------------------------------------------------------------------------- the server


def build_server(opts: argparse.Namespace) -> MCPServer:
    state: dict[str, Any] = {"roots_changed": 0, "dynamic_prompts": 0, "dynamic_resources": 0}

    async def handshake_knobs(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        """Middleware: delay or die on the handshake request (initialize / server/discover); speak
        one era only (--era)."""
        if opts.request_log:
            with open(opts.request_log, "a", encoding="utf-8") as f:
                f.write(ctx.method + "\n")
        if ctx.method in HANDSHAKE_METHODS and opts.handshake_log:
            with open(opts.handshake_log, "a", encoding="utf-8") as f:
                f.write(ctx.method + "\n")
        if opts.era == "legacy" and ctx.method != "initialize" and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            # (HTTP: each request is its own; stdio serves the handshake era only, see serve_stdio)
            raise MCPError(types.METHOD_NOT_FOUND, f"Method not found: {ctx.method} (this server speaks only the "
                           "initialize handshake era)")
        if ctx.method in HANDSHAKE_METHODS:
            if opts.era == "modern" and ctx.method == "initialize":
                raise MCPError(types.UNSUPPORTED_PROTOCOL_VERSION, "this server speaks only 2026-07-28",
                               {"supported": list(MODERN_PROTOCOL_VERSIONS)})
            if opts.exit_during_handshake is not None:
                err(
                    f"knob: exiting with code {opts.exit_during_handshake} on {ctx.method} (--exit-during-handshake)"
                )
                os._exit(opts.exit_during_handshake)
            if opts.slow_handshake > 0:
                err(f"knob: delaying {ctx.method} by {opts.slow_handshake}s (--slow-handshake)")
                await anyio.sleep(opts.slow_handshake)
        return await call_next(ctx)

    mcp = MCPServer(
        opts.name,
        instructions=opts.instructions or None,
        version="1.0.0",
        log_level="WARNING",
        warn_on_duplicate_tools=False,
        middleware=[handshake_knobs],
        cache_hints={method: CacheHint(ttl_ms=opts.list_ttl_ms, scope="private")
                     for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list")}
        if opts.list_ttl_ms > 0 else None,
    )
    low = mcp._lowlevel_server

    # Advertise listChanged for tools/prompts/resources on handshake-era sessions. Both the
    # stdio path and the Streamable HTTP session manager call create_initialization_options()
    # on the low-level server, so wrap it on the instance.
    original_init_options = low.create_initialization_options

    def init_options(
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> Any:
        return original_init_options(
            notification_options
            or NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True),
            experimental_capabilities,
            extensions,
        )

    low.create_initialization_options = init_options  # type: ignore[method-assign]

    # notifications/roots/list_changed is not exposed by MCPServer: register it on the
    # low-level server (add_notification_handler avoids the constructor's deprecation warning).
    async def on_roots_list_changed(
        ctx: ServerRequestContext[Any, Any], params: types.NotificationParams
    ) -> None:
        state["roots_changed"] += 1
        err(f"knob: notifications/roots/list_changed #{state['roots_changed']}")

    low.add_notification_handler(
        "notifications/roots/list_changed", types.NotificationParams, on_roots_list_changed
    )

    def tool(**kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        # Plain text results unless a tool asks for structured output explicitly.
        kwargs.setdefault("structured_output", False)
        return mcp.tool(**kwargs)

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
        await _list_changed(ctx, "tools")
        return f"added tool {name}"

    @tool()
    async def remove_tool(name: str, ctx: Context) -> str:
        """Remove a tool and send notifications/tools/list_changed."""
        mcp.remove_tool(name)
        await _list_changed(ctx, "tools")
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
        await _list_changed(ctx, "prompts")
        return f"added prompt {prompt_name}"

    @tool()
    async def touch_resources(ctx: Context) -> str:
        """Add resource knob://dynamic/<n> and send notifications/resources/list_changed."""
        n = state["dynamic_resources"]
        state["dynamic_resources"] += 1
        uri = f"knob://dynamic/{n}"
        mcp.add_resource(TextResource(uri=uri, name=f"dynamic_{n}", text=f"dynamic resource {n}"))
        await _list_changed(ctx, "resources")
        return f"added resource {uri}"

    # ---- server -> client ---------------------------------------------------------------

    @tool()
    async def roots(ctx: Context) -> str | types.InputRequiredResult:
        """Ask the client for its roots (roots/list) and return them as JSON."""
        result = await _ask_client(ctx, "roots", types.ListRootsRequest(), types.ListRootsResult)
        if isinstance(result, types.InputRequiredResult):
            return result
        return json.dumps({"roots": [{"uri": str(r.uri), "name": r.name} for r in result.roots]})

    @tool()
    def roots_changed_count() -> str:
        """How many notifications/roots/list_changed the server has received."""
        return str(state["roots_changed"])

    @tool()
    async def ask(question: str, ctx: Context) -> str | types.InputRequiredResult:
        """Ask the user through a form elicitation whose fields have defaults."""
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "description": "Your name", "default": "anon"},
                "count": {"type": "integer", "title": "Count", "minimum": 0, "maximum": 100, "default": 3},
                "color": {
                    "type": "string",
                    "title": "Color",
                    "enum": ["red", "green", "blue"],
                    "default": "blue",
                },
                "ok": {"type": "boolean", "title": "OK?", "description": "Confirm"},
            },
            "required": ["ok"],
        }
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=question, requested_schema=schema)
        )
        result = await _ask_client(ctx, "ask", request, types.ElicitResult)
        if isinstance(result, types.InputRequiredResult):
            return result
        return json.dumps({"action": result.action, "content": result.content})

    @tool()
    async def sample(prompt: str, ctx: Context) -> str | types.InputRequiredResult:
        """Ask the client's LLM (sampling/createMessage) and return the text it produced."""
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[
                    types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
                ],
                max_tokens=200,
                system_prompt="You are the knob test server's sampling target.",
            )
        )
        result = await _ask_client(ctx, "sample", request, types.CreateMessageResult)
        if isinstance(result, types.InputRequiredResult):
            return result
        content = result.content
        if isinstance(content, types.TextContent):
            return content.text
        return json.dumps(content.model_dump(mode="json", by_alias=True, exclude_none=True))

    # ---- result shapes ------------------------------------------------------------------

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

    # ---- generated and oddly named tools -----------------------------------------------

    for i in range(opts.tools):
        _add_generated_tool(mcp, i)
    if opts.long_names:
        for name in LONG_TOOL_NAMES:
            _add_long_name_tool(mcp, name)

    # ---- resources and prompts -----------------------------------------------------------

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

    return mcp


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


# --------------------------------------------------------------------------- transports


class _WireOut:
    """stdout for stdio_server(stdout=...) when --garbage-stdout is on.

    Writes are synchronous (in the event loop thread), so a garbage line can never tear a
    JSON-RPC frame. `garbage_after_next_frame` asks for a garbage line right after the next
    frame written (a tools/call response).
    """

    def __init__(self) -> None:
        self._buf = sys.stdout.buffer
        self._count = 0
        self.garbage_after_next_frame = False

    def garbage(self) -> None:
        self._buf.write((GARBAGE_LINES[self._count % len(GARBAGE_LINES)] + "\n").encode())
        self._buf.flush()
        self._count += 1

    async def write(self, data: str) -> None:
        self._buf.write(data.encode("utf-8"))
        if self.garbage_after_next_frame and data.endswith("\n"):
            self.garbage_after_next_frame = False
            self._buf.flush()
            self.garbage()

    async def flush(self) -> None:
        self._buf.flush()


async def serve_stdio(mcp: MCPServer, opts: argparse.Namespace) -> None:
    low = mcp._lowlevel_server
    wire: _WireOut | None = None
    if opts.garbage_stdout:
        wire = _WireOut()
        for _ in range(3):
            wire.garbage()

        async def garbage_around_tool_calls(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
            result = await call_next(ctx)
            if ctx.method == "tools/call":
                wire.garbage()  # before the response frame
                wire.garbage_after_next_frame = True  # and right after it
            return result

        low.middleware.append(garbage_around_tool_calls)

    async with stdio_server(stdout=wire) as (read_stream, write_stream):  # type: ignore[arg-type]
        if opts.era == "legacy":
            # handshake era only (what mcp 1.x servers do): a request before initialize is an error,
            # so a 2026-07-28 client's server/discover probe falls back to initialize
            async with low.lifespan(low) as state:
                await serve_loop(low, read_stream, write_stream, lifespan_state=state,
                                 init_options=low.create_initialization_options())
        else:
            await low.run(read_stream, write_stream, low.create_initialization_options())


async def serve_http(mcp: MCPServer, opts: argparse.Namespace, announce: Callable[[], None]) -> None:
    import uvicorn

    app = mcp.streamable_http_app(host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", opts.port))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async def announce_when_started() -> None:
        while not server.started:
            await anyio.sleep(0.01)
        err(f"LISTENING http://127.0.0.1:{port}/mcp")
        announce()

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce_when_started)
        await server.serve(sockets=[sock])
        tg.cancel_scope.cancel()


def startup_stderr(opts: argparse.Namespace) -> None:
    if opts.stderr_line is not None:
        err(opts.stderr_line)
    for i in range(opts.stderr_flood):
        sys.stderr.write(f"knob stderr flood line {i}/{opts.stderr_flood}: lorem ipsum dolor sit amet\n")
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> None:
    warnings.simplefilter("ignore", MCPDeprecationWarning)
    # --long-names registers non-conforming names on purpose; keep stderr free of the SEP-986 warnings.
    logging.getLogger("mcp.shared.tool_name_validation").setLevel(logging.ERROR)
    opts = parse_options(argv)
    mcp = build_server(opts)
    if opts.slow_start > 0:
        err(f"knob: waiting {opts.slow_start}s before serving (--slow-start)")
        time.sleep(opts.slow_start)
    if opts.transport == "http":
        # LISTENING must be the first stderr line, so the startup noise follows it.
        anyio.run(serve_http, mcp, opts, lambda: startup_stderr(opts))
    else:
        startup_stderr(opts)
        anyio.run(serve_stdio, mcp, opts)


if __name__ == "__main__":
    main()
