"""Arguments the model sent to a built-in tool, checked against the tool's (simple) object
schema before the tool runs: every problem named in one message the model can act on."""

from __future__ import annotations

import json
import math
from typing import Any

from agent_ls.core.tools import ToolSpec


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def validate_arguments(spec: ToolSpec, arguments: Any) -> dict[str, Any] | str:
    """Check ``arguments`` against the (simple) object schema of a built-in tool.

    Returns the cleaned arguments (``null`` optional values dropped, integral floats turned
    into ints) or an error message naming every problem. Unknown keys are ignored.
    """
    if not isinstance(arguments, dict):
        return f"Invalid arguments for {spec.name}: expected an object, got {_type_name(arguments)}"
    schema = spec.input_schema
    props: dict[str, Any] = schema.get("properties", {})
    required: list[str] = schema.get("required", [])
    problems: list[str] = []
    cleaned: dict[str, Any] = {}
    for name in required:
        if arguments.get(name) is None:
            problems.append(f"missing required argument '{name}'")
    for name, value in arguments.items():
        prop = props.get(name)
        if prop is None:
            continue
        if value is None:
            continue  # treated as absent (required ones were reported above)
        kind = prop.get("type")
        if kind == "string":
            ok = isinstance(value, str)
        elif kind == "boolean":
            ok = isinstance(value, bool)
        elif kind == "integer":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif kind == "number":
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        else:
            ok = True
        if not ok:
            problems.append(f"'{name}' must be {'an' if kind == 'integer' else 'a'} {kind}, got {_type_name(value)}")
            continue
        if kind in ("integer", "number"):
            if "minimum" in prop and value < prop["minimum"]:
                problems.append(f"'{name}' must be at least {prop['minimum']}, got {value}")
                continue
            if "exclusiveMinimum" in prop and value <= prop["exclusiveMinimum"]:
                problems.append(f"'{name}' must be greater than {prop['exclusiveMinimum']}, got {value}")
                continue
            if "maximum" in prop and value > prop["maximum"]:
                problems.append(f"'{name}' must be at most {prop['maximum']}, got {value}")
                continue
        cleaned[name] = value
    if problems:
        return f"Invalid arguments for {spec.name}: " + "; ".join(problems)
    return cleaned


class SelectionDoesNotFit(ValueError):
    """The selected text cannot be the value a tool's schema asks for (the message says why)."""


_ARTICLE = {"integer": "an integer", "number": "a number", "boolean": "a boolean (true or false)",
            "object": "a JSON object", "array": "a JSON array"}


def schema_types(schema: Any) -> list[str]:
    """The JSON types a (sub)schema allows: its ``type`` (a name or a list) and those of its
    ``anyOf`` / ``oneOf`` branches (how ``Optional[int]`` comes out of pydantic), in order."""
    if not isinstance(schema, dict):
        return []
    kind = schema.get("type")
    found = [kind] if isinstance(kind, str) else [k for k in kind if isinstance(k, str)] if isinstance(kind, list) else []
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key) or ():
            found += [k for k in schema_types(branch) if k not in found]
    return found


def typed_text(text: str, schema: Any) -> Any:
    """``text`` (a selection that is a whole argument value) as the type ``schema`` asks for.

    A schema that allows a string, or says nothing about the type, keeps the text. Otherwise
    the text is read as JSON (``21``, ``2.5``, ``true``, ``{"a": 1}``, ``[1, 2]``; spaces
    around it ignored) and must be of an allowed type; :class:`SelectionDoesNotFit` says
    which type was wanted when it is not.
    """
    kinds = [k for k in schema_types(schema) if k != "null"]
    if not kinds or "string" in kinds or not set(kinds) & set(_ARTICLE):
        return text
    wanted = " or ".join(_ARTICLE[k] for k in kinds if k in _ARTICLE)
    stripped = text.strip()
    try:
        value = json.loads(stripped.lower() if stripped.lower() in ("true", "false") else stripped)
    except ValueError:
        value = _NO_VALUE
    for kind in kinds:
        if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool) \
                and math.isfinite(value) and float(value).is_integer():
            return int(value)
        if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool) \
                and math.isfinite(value):
            return value
        if kind == "boolean" and isinstance(value, bool):
            return value
        if (kind == "object" and isinstance(value, dict)) or (kind == "array" and isinstance(value, list)):
            return value
    shown = stripped if len(stripped) <= 40 else stripped[:37] + "..."
    raise SelectionDoesNotFit(f"needs {wanted}, and the selection {shown!r} is not one")


_NO_VALUE = object()
