"""Arguments the model sent to a built-in tool, checked against the tool's (simple) object
schema before the tool runs: every problem named in one message the model can act on."""

from __future__ import annotations

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
