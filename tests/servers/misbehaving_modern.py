"""A 2026-07-28 MCP server that claims the modern era and can then misbehave, for the host's
bad-input tests (issue 15).

Run it as ``python tests/servers/misbehaving_modern.py [options]``. It is built on the mcp 2.x
SDK (``MCPServer``); the misbehaviour is a server middleware that answers some requests itself
with a hand-written wire result (the SDK sends a middleware's short-circuit result as it is),
so no raw JSON-RPC layer is needed. It speaks the 2026-07-28 protocol only: the legacy
``initialize`` handshake is refused with -32022 (unsupported protocol version), like a
modern-only server.

Options
-------
--transport stdio|http    stdio (default) or Streamable HTTP on 127.0.0.1 (``--port 0`` picks a
                          free port; ``LISTENING http://127.0.0.1:<port>/mcp`` is printed as
                          the first stderr line once it accepts connections).
--record PATH             append one JSON line per request: ``{"method", "meta", "headers",
                          "arguments"}`` (``headers``: the HTTP request headers, lower-cased;
                          ``{}`` over stdio; ``arguments``: of a tools/call).
--discover ok|wrong-shape|unspoken-version|future-only
                          ``wrong-shape``: server/discover answers with a result of the wrong
                          shape (``supportedVersions`` a string, ``capabilities`` a list);
                          ``unspoken-version``: server/discover claims 2026-07-28, then every
                          other request is refused with -32022 naming only 2025-11-25 (the
                          server does not speak the version it claimed);
                          ``future-only``: server/discover (and initialize) name only
                          protocol version 2099-01-01.
--input-required ok|missing|unknown-kind|endless
                          how the tool ``needs_input`` asks for input. ``ok``: one proper
                          round (a roots request), then the roots as JSON text; ``missing``:
                          ``resultType: input_required`` with neither ``inputRequests`` nor
                          ``requestState``; ``unknown-kind``: an input request whose method is
                          ``bogus/unknownKind``; ``endless``: a new roots request on every
                          round, forever.
--no-result-type          ``echo`` answers with a result that has no ``resultType`` (valid: the
                          2026-07-28 spec reads an absent resultType as complete).
--bad-header not-a-token|on-number|duplicate
                          add the tool ``bad_header`` whose input schema declares an invalid
                          ``x-mcp-header`` parameter (a name with a space; on a ``number``
                          property; the same header name twice).

Tools that are always present
-----------------------------
echo(text)                        -> text.
route(region, shard, note="")     ``region`` (string) and ``shard`` (integer) are declared header
                                  parameters (``x-mcp-header`` Region / Shard): returns the
                                  ``Mcp-Param-*`` headers of the call as JSON (HTTP), ``{}`` on stdio.
shaped(...)                       input schema SCHEMA_2020_12 (``$schema`` 2020-12, ``$defs``,
                                  ``$ref``, ``prefixItems``, ``unevaluatedProperties``), served byte
                                  for byte; returns its arguments as JSON.
needs_input()                     see --input-required.
"""

from __future__ import annotations

import gc

if __name__ == "__main__":  # a server process: no collection during the imports (see the end of the file)
    gc.disable()

import argparse
import json
import socket
import sys
from collections.abc import Callable
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from pydantic import Field

MODERN = "2026-07-28"

SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "point": {
            "type": "array",
            "prefixItems": [{"type": "number"}, {"type": "number"}],
            "items": False,
            "minItems": 2,
        },
        "label": {"type": "string", "minLength": 1},
    },
    "properties": {
        "origin": {"$ref": "#/$defs/point"},
        "name": {"$ref": "#/$defs/label"},
        "style": {
            "type": "object",
            "properties": {"color": {"type": "string"}},
            "allOf": [{"properties": {"width": {"type": "integer"}}}],
            "unevaluatedProperties": False,
        },
    },
    "required": ["origin", "name"],
    "unevaluatedProperties": False,
}
"""The ``shaped`` tool's input schema: valid 2020-12, with keywords a draft-7 validator ignores."""

SHAPED_DESCRIPTION = "Place a named point; the schema is JSON Schema 2020-12."

BAD_HEADER_SCHEMAS: dict[str, dict[str, Any]] = {
    "not-a-token": {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region Name"}},
    },
    "on-number": {
        "type": "object",
        "properties": {"ratio": {"type": "number", "x-mcp-header": "Ratio"}},
    },
    "duplicate": {
        "type": "object",
        "properties": {
            "a": {"type": "string", "x-mcp-header": "Route"},
            "b": {"type": "string", "x-mcp-header": "route"},
        },
    },
}


def err(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def parse_options(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="misbehaving_modern.py", description=__doc__.split("\n")[0])
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--record", default=None)
    p.add_argument("--discover", choices=["ok", "wrong-shape", "unspoken-version", "future-only"], default="ok")
    p.add_argument("--input-required", choices=["ok", "missing", "unknown-kind", "endless"], default="ok")
    p.add_argument("--bad-header", choices=sorted(BAD_HEADER_SCHEMAS), default=None)
    p.add_argument("--no-result-type", action="store_true")
    return p.parse_args(argv)


def _complete(text: str) -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": text}], "isError": False}


def build_server(opts: argparse.Namespace) -> MCPServer:
    rounds = {"endless": 0}

    def record(ctx: ServerRequestContext[Any, Any]) -> None:
        if not opts.record:
            return
        params = ctx.params if isinstance(ctx.params, dict) else {}
        request = ctx.request
        headers = {k.lower(): v for k, v in request.headers.items()} if request is not None else {}
        line = {"method": ctx.method, "meta": params.get("_meta"), "headers": headers,
                "arguments": params.get("arguments") if ctx.method == "tools/call" else None}
        with open(opts.record, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")

    def tool_call_name(ctx: ServerRequestContext[Any, Any]) -> str | None:
        params = ctx.params if isinstance(ctx.params, dict) else {}
        name = params.get("name")
        return name if ctx.method == "tools/call" and isinstance(name, str) else None

    async def misbehave(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        record(ctx)
        if ctx.method == "initialize":
            supported = ["2099-01-01"] if opts.discover == "future-only" else [MODERN]
            raise MCPError(types.UNSUPPORTED_PROTOCOL_VERSION, "this server speaks only the 2026-07-28 protocol",
                           {"supported": supported})
        if ctx.method == "server/discover":
            if opts.discover == "wrong-shape":
                return {"resultType": "complete", "supportedVersions": MODERN, "capabilities": ["tools"],
                        "serverInfo": "misbehaving"}
            if opts.discover == "future-only":
                return {"resultType": "complete", "supportedVersions": ["2099-01-01"],
                        "capabilities": {"tools": {}}}
            return await call_next(ctx)
        if opts.discover == "unspoken-version":
            raise MCPError(types.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                           {"supported": ["2025-11-25"], "requested": MODERN})
        if ctx.method == "tools/list":
            result = await call_next(ctx)
            tools = list(result.get("tools", []))
            tools.append({"name": "shaped", "description": SHAPED_DESCRIPTION, "inputSchema": SCHEMA_2020_12})
            if opts.bad_header:
                tools.append({"name": "bad_header", "description": "Declares an invalid x-mcp-header parameter.",
                              "inputSchema": BAD_HEADER_SCHEMAS[opts.bad_header]})
            return {**result, "tools": tools}
        name = tool_call_name(ctx)
        params = ctx.params if isinstance(ctx.params, dict) else {}
        if name == "shaped":
            return _complete(json.dumps(params.get("arguments"), sort_keys=True))
        if name == "echo" and opts.no_result_type:
            arguments = params.get("arguments")
            text = arguments.get("text") if isinstance(arguments, dict) else None
            return {"content": [{"type": "text", "text": str(text)}], "isError": False}
        if name == "bad_header":
            return _complete("bad_header was called")
        if name == "needs_input" and opts.input_required != "ok":
            if opts.input_required == "missing":
                return {"resultType": "input_required"}
            if opts.input_required == "unknown-kind":
                return {"resultType": "input_required", "requestState": "s1",
                        "inputRequests": {"q": {"method": "bogus/unknownKind", "params": {"what": "?"}}}}
            rounds["endless"] += 1
            return {"resultType": "input_required", "requestState": f"round-{rounds['endless']}",
                    "inputRequests": {f"roots-{rounds['endless']}": {"method": "roots/list"}}}
        return await call_next(ctx)

    mcp = MCPServer("misbehaving", version="1.0.0", log_level="WARNING", middleware=[misbehave])

    @mcp.tool(structured_output=False)
    def echo(text: str) -> str:
        """Return the given text unchanged."""
        return text

    @mcp.tool(structured_output=False)
    def route(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
        shard: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Shard"})],
        note: str = "",
    ) -> str:
        """Route a request; region and shard travel as Mcp-Param-* headers on HTTP."""
        return "routed"

    # `route` returns the headers it saw: read them from the request in a second middleware (a
    # tool function has no access to the HTTP request without a Context parameter)
    async def route_headers(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        if tool_call_name(ctx) != "route":
            return await call_next(ctx)
        request = ctx.request
        headers = {k.lower(): v for k, v in request.headers.items()} if request is not None else {}
        return _complete(json.dumps({k: v for k, v in sorted(headers.items()) if k.startswith("mcp-")}))

    mcp._lowlevel_server.middleware.append(route_headers)

    @mcp.tool(structured_output=False)
    async def needs_input(ctx: Context) -> str | types.InputRequiredResult:
        """Ask the client for its roots through one input_required round."""
        answer = (ctx.input_responses or {}).get("roots")
        if answer is None:
            return types.InputRequiredResult(input_requests={"roots": types.ListRootsRequest()})
        roots = types.ListRootsResult.model_validate(answer.model_dump(by_alias=True, exclude_none=True))
        return json.dumps([str(r.uri) for r in roots.roots])

    return mcp


async def serve_stdio(mcp: MCPServer) -> None:
    low = mcp._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        await low.run(read_stream, write_stream, low.create_initialization_options())


async def serve_http(mcp: MCPServer, port: int) -> None:
    import uvicorn

    app = mcp.streamable_http_app(host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    bound = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async def announce() -> None:
        while not server.started:
            await anyio.sleep(0.01)
        err(f"LISTENING http://127.0.0.1:{bound}/mcp")

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await server.serve(sockets=[sock])
        tg.cancel_scope.cancel()


def main(argv: list[str] | None = None) -> None:
    opts = parse_options(argv)
    mcp = build_server(opts)
    runner: Callable[[], Any] = (lambda: serve_http(mcp, opts.port)) if opts.transport == "http" \
        else (lambda: serve_stdio(mcp))
    anyio.run(runner)


if __name__ == "__main__":
    gc.freeze()  # the imports' long-lived objects: never walked again, by a collection nor at exit
    gc.enable()
    main()
