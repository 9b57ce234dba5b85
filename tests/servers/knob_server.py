"""Knob server: one configurable MCP server for the MCP host's integration tests.

Run it as ``python tests/servers/knob_server.py [options]``. It is built on the mcp 2.x SDK
(``MCPServer`` plus a few reaches into the low-level ``Server`` it wraps) and serves both
protocol eras: the legacy ``initialize`` handshake (``mcp.Client(mode="legacy")``) and the
2026-07-28 protocol that ``mode="auto"`` negotiates. Server-to-client requests (roots,
elicitation, sampling) are sent as real JSON-RPC requests on legacy sessions and as
``InputRequiredResult`` rounds on modern sessions.

The entry file holds the options, the handshake knobs and the assembly of the server; the rest
is in sibling modules it imports (as ``tests.servers.<module>``, or as plain ``<module>`` when run as
a script): knob_tools.py (plain, misbehaving, dynamic-list and generated tools), knob_exchange.py
(server-to-client requests and list-changed notifications in either era), knob_content.py (result
shapes, resources, prompts) and knob_io.py (the stdio and HTTP transports, stderr).

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
                          '/', spaces and non-ASCII characters (LONG_TOOL_NAMES, knob_tools.py).
--hinted-tools            add lookup_docs (readOnlyHint only), query ("Run a SQL statement", no
                          annotations) and count_lines (read-only, closed world).
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
--start-gate PATH         serve only once PATH exists (a server that starts late on purpose,
                          for as long as the test wants: no timing involved)
--list-ttl-ms N           the list results (tools, prompts, resources, templates) carry
                          ttlMs N and cacheScope private (2026-07-28 sessions).

Tools that are always present
-----------------------------
echo(text)                      -> text. readOnlyHint=True, openWorldHint=False.
headers()                       the HTTP request headers of the call as JSON (HTTP only).
add(a, b)                       -> the sum as text ("3", "2.5"). readOnlyHint=True, openWorldHint=False.
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

import gc

if __name__ == "__main__":  # a server process: the collector waits until the imports are done (see main)
    gc.disable()

import argparse
import logging
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

try:
    from tests.servers.knob_content import register_resources_and_prompts, register_result_tools
    from tests.servers.knob_exchange import register_exchange_tools, register_roots_notifications
    from tests.servers.knob_io import err, serve_http, serve_stdio, startup_stderr
    from tests.servers.knob_tools import LONG_TOOL_NAMES, register_generated_tools, register_tools
except ImportError:  # run as a script: tests/servers is on sys.path
    from knob_content import register_resources_and_prompts, register_result_tools  # type: ignore[no-redef]
    from knob_exchange import register_exchange_tools, register_roots_notifications  # type: ignore[no-redef]
    from knob_io import err, serve_http, serve_stdio, startup_stderr  # type: ignore[no-redef]
    from knob_tools import LONG_TOOL_NAMES, register_generated_tools, register_tools  # type: ignore[no-redef]

__all__ = ["LONG_TOOL_NAMES", "build_parser", "build_server", "main", "parse_options"]

HANDSHAKE_METHODS = frozenset({"initialize", "server/discover"})


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
    flag("hinted-tools", "add lookup_docs, query and count_lines (tool classes, issue 25)")
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
    add("start-gate", default=None, help="serve only once this file exists (a server that starts late on purpose, "
        "as long as the test wants)")
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

    register_roots_notifications(low, state)

    def tool(**kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        # Plain text results unless a tool asks for structured output explicitly.
        kwargs.setdefault("structured_output", False)
        return mcp.tool(**kwargs)

    register_tools(mcp, tool, opts, state)
    register_exchange_tools(tool, state)
    register_result_tools(tool)
    register_generated_tools(mcp, opts)
    register_resources_and_prompts(mcp)
    return mcp


def main(argv: list[str] | None = None) -> None:
    warnings.simplefilter("ignore", MCPDeprecationWarning)
    # --long-names registers non-conforming names on purpose; keep stderr free of the SEP-986 warnings.
    logging.getLogger("mcp.shared.tool_name_validation").setLevel(logging.ERROR)
    opts = parse_options(argv)
    mcp = build_server(opts)
    # The SDK's import and the server's assembly made ~1M long-lived objects with the collector off;
    # frozen, they are never walked again, by a collection nor by the interpreter's exit (~0.25 s of
    # CPU per server start in all; the suite starts hundreds).
    gc.freeze()
    gc.enable()
    if opts.slow_start > 0:
        err(f"knob: waiting {opts.slow_start}s before serving (--slow-start)")
        time.sleep(opts.slow_start)
    if opts.start_gate:
        err(f"knob: waiting for {opts.start_gate} before serving (--start-gate)")
        while not os.path.exists(opts.start_gate):
            time.sleep(0.02)
    if opts.transport == "http":
        # LISTENING must be the first stderr line, so the startup noise follows it.
        anyio.run(serve_http, mcp, opts, lambda: startup_stderr(opts))
    else:
        startup_stderr(opts)
        anyio.run(serve_stdio, mcp, opts)


if __name__ == "__main__":
    main()
