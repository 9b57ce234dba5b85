"""One variable syntax for every string field of a server entry.

Supported forms:

- ``${VAR}`` and ``${env:VAR}``: the environment variable; missing is an error.
- ``${VAR:-default}`` and ``${env:VAR:-default}``: the variable, or ``default`` when it is
  unset or empty (as in POSIX shells and Claude Code).
- ``${workspaceFolder}``: the workspace folder the entry belongs to (the first workspace
  folder for user-scope entries); ``${workspaceFolderBasename}`` its last path part.
- ``${userHome}``: the user's home directory.
- ``$${`` is a literal ``${``.

Anything else inside ``${...}`` (for example VS Code's ``${input:id}``) is an error that
names the variable, so a setting never silently reaches a server half-expanded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import attrs

_VAR = re.compile(r"\$\$\{|\$\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ExpansionError(ValueError):
    """A variable could not be expanded."""

    def __init__(self, variable: str, field: str, reason: str) -> None:
        self.variable = variable
        self.field = field
        self.reason = reason
        super().__init__(f"{reason} (variable ${{{variable}}} in {field})")


@attrs.frozen
class ExpansionContext:
    environ: Mapping[str, str]
    workspace_folder: Path | None = None
    user_home: Path = attrs.field(factory=Path.home)


def expand(value: str, ctx: ExpansionContext, field: str) -> str:
    """Expand every variable in ``value``; ``field`` names the setting for error messages."""

    def repl(m: re.Match[str]) -> str:
        if m.group(0) == "$${":
            return "${"
        body = m.group(1)
        return _resolve(body, ctx, field)

    return _VAR.sub(repl, value)


def variables_in(value: str) -> list[str]:
    """The variable bodies used in ``value`` (for diagnostics and tests)."""
    return [m.group(1) for m in _VAR.finditer(value) if m.group(0) != "$${"]


def _resolve(body: str, ctx: ExpansionContext, field: str) -> str:
    name, sep, default = body.partition(":-")
    has_default = bool(sep)
    if name == "workspaceFolder":
        if ctx.workspace_folder is None:
            if has_default:
                return default
            raise ExpansionError(body, field, "no workspace folder is open")
        return str(ctx.workspace_folder)
    if name == "workspaceFolderBasename":
        if ctx.workspace_folder is None:
            if has_default:
                return default
            raise ExpansionError(body, field, "no workspace folder is open")
        return ctx.workspace_folder.name
    if name == "userHome":
        return str(ctx.user_home)
    if name.startswith("env:"):
        name = name[4:]
    elif ":" in name:
        kind = name.split(":", 1)[0]
        raise ExpansionError(
            body, field, f"'${{{kind}:...}}' variables are not supported; use ${{env:NAME}} or ${{NAME}}"
        )
    if not _NAME.fullmatch(name):
        raise ExpansionError(body, field, f"invalid variable name {name!r}")
    value = ctx.environ.get(name)
    if value is None or (has_default and value == ""):
        if has_default:
            return default
        raise ExpansionError(body, field, f"environment variable {name} is not set")
    return value
