"""MCP tools adapted to the agent's :class:`~agent_ls.core.tools.Tool` protocol."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import mcp_types as types
from mcp.client import InputRequiredRoundsExceededError
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from agent_ls.core.tools import ToolResult, ToolSpec
from agent_ls.mcp.apps import APP_INITIATED, AppError, AppResource, AppResources, ToolUi, tool_ui
from agent_ls.mcp.capability import infer_capability
from agent_ls.mcp.connection.failures import REQUEST_TIMEOUT, ServerUnavailable
from agent_ls.mcp.results import convert_call_result

if TYPE_CHECKING:
    from agent_ls.mcp.connection.connection import ServerConnection

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
    ui, _problem = tool_ui(tool)  # a malformed _meta.ui: a plain tool (the problem is a note in the status)
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
        app_resource=ui.resource_uri if ui is not None else None,
        visibility=ui.visibility if ui is not None else ("model", "app"),
    )


def schema_validator(schema: dict[str, Any]) -> Any | None:
    """A JSON Schema validator for a tool's input schema: the dialect its ``$schema`` names, JSON
    Schema 2020-12 (the MCP default) when it names none. None when the schema itself is invalid
    (the server is left to judge the arguments then)."""
    # lazy: jsonschema costs 80-140 ms to import (python -X importtime, after agent_ls.mcp.manager)
    # and only a tool call that is checked needs it, not the listing that starts the host
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    try:
        cls = validator_for(schema, default=Draft202012Validator)
        cls.check_schema(schema)
        return cls(schema)
    except (SchemaError, Exception):  # noqa: BLE001 - an unusable schema: the server judges the arguments
        return None


def argument_problems(validator: Any, arguments: dict[str, Any], limit: int = 5) -> list[str]:
    """What is wrong with ``arguments`` (empty: valid). A ``$ref`` the validator cannot resolve (a
    remote one) counts as valid: the server still checks. A ``null`` for an optional top-level
    property counts as leaving it out (models write optional parameters that way, and MCP omits
    a null header parameter); the arguments are still sent as given."""
    schema = validator.schema if isinstance(getattr(validator, "schema", None), dict) else {}
    declared = schema.get("required")
    required: list[Any] = declared if isinstance(declared, list) else []
    checked = {k: v for k, v in arguments.items() if v is not None or k in required}
    try:
        errors = sorted(validator.iter_errors(checked), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    except Exception:  # noqa: BLE001 - unresolvable references and the like
        return []
    out = []
    for e in errors[:limit]:
        where = "/".join(map(str, e.absolute_path))
        message = e.message if len(e.message) <= 300 else e.message[:300] + " [...]"
        out.append(f"{where}: {message}" if where else message)
    if len(errors) > limit:
        out.append(f"({len(errors) - limit} more)")
    return out


def describe_malformed_result(e: ValidationError) -> str:
    """A readable account of a result the SDK could not parse (a tool result or an
    ``input_required`` result of the wrong shape)."""
    # with an extension's result claim (the tasks extension) the SDK parses a union tagged "core"
    # (the spec's shapes) and the claimed shapes: the core part is what went wrong
    errs: list[Any] = [{**x, "loc": tuple(x["loc"][1:])} if x["loc"][:1] == ("core",) else x
                       for x in e.errors(include_url=False)]
    tagged = [x for x in errs if x["loc"] and not str(x["loc"][0]).startswith(("task", "claim"))]
    errs = tagged or errs
    input_required = [x for x in errs if x["loc"] and "InputRequiredResult" in str(x["loc"][0])]
    if input_required:
        unknown: dict[str, tuple[Any, list[str]]] = {}
        for x in input_required:
            loc = x["loc"][1:]
            if len(loc) == 4 and loc[0] == "inputRequests" and loc[3] == "method" and x["type"] == "literal_error":
                expected = str((x.get("ctx") or {}).get("expected", "")).strip("'")
                unknown.setdefault(str(loc[1]), (x.get("input"), []))[1].append(expected)
        if unknown:
            parts = [f"request {key!r} has method {method!r} (known: {', '.join(known)})"
                     for key, (method, known) in unknown.items()]
            return "its input_required result asks for input of an unknown kind: " + "; ".join(parts)
        return "its input_required result is malformed: " + _error_summary(input_required, skip=1)
    return "its result is malformed: " + _error_summary(errs, skip=0)


def _error_summary(errs: list[Any], skip: int, limit: int = 3) -> str:
    parts = []
    for x in errs[:limit]:
        where = ".".join(str(p) for p in x["loc"][skip:])
        msg = str(x["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {msg}" if where else msg)
    more = f" ({len(errs) - limit} more)" if len(errs) > limit else ""
    return "; ".join(parts) + more


class MCPTool:
    """One MCP tool; calls go through the live connection of its server."""

    def __init__(
        self, spec: ToolSpec, connection: ServerConnection, *, max_output_chars: Callable[[], int],
        apps: AppResources | None = None,
    ) -> None:
        self._spec = spec
        self._connection = connection
        self._max_output_chars = max_output_chars
        self._apps = apps
        self._validator: Any | None = None
        self._validator_built = False

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def server(self) -> str:
        return self._connection.name

    async def app_resource(self) -> AppResource:
        """The tool's MCP App, read from its server now (cached as :meth:`AppResources.load` says):
        :class:`AppError` saying why not (the tool has no app any more, the read failed)."""
        name = self._spec.display_name or self._spec.name
        if self._spec.app_resource is None or self._apps is None:
            raise AppError(f"the tool {name!r} of MCP server {self.server!r} has no app any more")
        return await self._apps.load(self._connection, self._spec.app_resource)

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        conn = self._connection
        original = self._spec.display_name or self._spec.name
        tag = f"[MCP server '{conn.name}', tool '{original}']"
        if not self._validator_built:
            self._validator = schema_validator(self._spec.input_schema)
            self._validator_built = True
        if self._validator is not None and (problems := argument_problems(self._validator, arguments)):
            return ToolResult.error(conn.redact(
                f"{tag} was not called: the arguments do not match its input schema: " + "; ".join(problems)))
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
        except ValidationError as e:  # the server's answer does not parse: a protocol violation
            return ToolResult.error(conn.redact(f"{tag} call failed: {describe_malformed_result(e)}"))
        except InputRequiredRoundsExceededError as e:
            return ToolResult.error(
                f"{tag} call failed: the server kept asking for more input (input_required) for more than "
                f"{e.max_rounds} rounds; the call was abandoned")
        except Exception as e:  # transport failures: tell the model, never crash the turn
            return ToolResult.error(conn.redact(f"{tag} failed: {type(e).__name__}: {e}"))
        out = convert_call_result(result, self._max_output_chars())
        if self._spec.app_resource is not None and self._apps is not None and not APP_INITIATED.get():
            ui = ToolUi(self._spec.app_resource, self._spec.visibility)
            out = attrs.evolve(out, app=await self._apps.view(conn, original, ui, arguments, result))
        if out.is_error:
            return ToolResult(
                content=f"{tag} returned an error: {out.content}",
                is_error=True,
                attachments=out.attachments,
                structured=out.structured,
                truncated_chars=out.truncated_chars,
                app=out.app,
            )
        return out
