"""Agent events and stored history as ACP ``session/update`` payloads.

- Text deltas are ``agent_message_chunk``; the model's reasoning, when its provider streams it,
  is ``agent_thought_chunk`` (not stored, so not replayed). The model's plan (``update_plan``)
  is a ``plan`` update with the whole list after each change, and the stored plan again on
  ``session/load`` (:func:`plan_update`).
- A tool call is a ``tool_call`` (kind, title, locations, raw input; for file edits a diff of
  the whole file before and after, :func:`edit_preview`; the edited text alone when the file
  cannot be read)
  followed by ``tool_call_update``s: ``in_progress`` once it runs, then ``completed`` or
  ``failed`` with its result as text.
- A stored session is replayed as user and agent message chunks and finished tool calls.
- The session's title is a ``session_info_update``; its model choice a config option
  (``configOptions``, ``config_option_update``).
- After each model response a ``usage_update`` (tokens in context, the window) is the context
  meter (issue 26).
- Each hook run (issue 43) is a finished tool call of its own (:func:`hook_call`): kind
  ``other``, titled ``Hook PreToolUse `./check.sh`: blocked (12 ms)``, ``completed`` when it let
  the work go on, ``failed`` when it blocked or failed, its message and output as content.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
from acp.helpers import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    ConfigOptionUpdate,
    PermissionOption,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfoUpdate,
    ToolCallLocation,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
    UsageUpdate,
)

from agent_ls.core.tools import Capability, ToolSpec

MODEL_OPTION = "model"
"""The id of the session config option that chooses the model."""

RESULT_CHARS = 20_000
"""How much of a tool result the editor gets in the tool call card (the model gets it all)."""

_BUILTIN_KINDS: dict[str, ToolKind] = {
    "read_file": "read", "read_output": "read", "write_file": "edit", "edit_file": "edit",
    "glob": "search", "grep": "search", "tool_search": "search", "bash": "execute", "load_skill": "read",
    "update_plan": "think",
}
_CAPABILITY_KINDS: dict[Capability, ToolKind] = {
    Capability.READ: "read", Capability.WRITE: "edit", Capability.NETWORK: "fetch", Capability.UNKNOWN: "other",
}

PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Reject for this session", kind="reject_always"),
]
"""The answers to a tool's approval (``allow_always`` is the gate's "allow for session")."""


def permission_options(scopes: Sequence[Any]) -> list[Any]:
    """A tool approval's options: allow once, one ``allow_always`` per session scope the gate
    offers (named by its label; the narrowest has the id ``allow_always``, the others
    ``allow_always:<scope id>``), reject once and reject for the session. No scope: no
    ``allow_always`` (a shell command the parser cannot account for, a protected file)."""
    always = [PermissionOption(option_id="allow_always" if i == 0 else f"allow_always:{s.id}", name=s.label,
                               kind="allow_always") for i, s in enumerate(scopes)]
    return [PERMISSION_OPTIONS[0], *always, *PERMISSION_OPTIONS[2:]]

SAMPLING_OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Allow this server for the session", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Deny", kind="reject_once"),
]
"""The answers to an MCP server's sampling request (the model used on its behalf)."""

TRUST_OPTIONS = [
    PermissionOption(option_id="allow_once", name="Trust for this session", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Trust this folder", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Keep restricted for now", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Keep restricted", kind="reject_always"),
]
"""The answers to a workspace trust question."""


def usage_update(used: int, size: int, source: str = "") -> UsageUpdate:
    """The context meter: tokens in the model's context and its window (after each model
    response, and after ``/compact``): the same figure as the editor's meter, the provider's
    count when it reported one. ``_meta.agentLs.contextSource`` says which (``provider`` or
    ``estimate``)."""
    meta = {"agentLs": {"contextSource": source}} if source else None
    return UsageUpdate(session_update="usage_update", used=max(0, used), size=max(0, size), field_meta=meta)


def tool_kind(name: str, spec: ToolSpec | None) -> ToolKind:
    if name in _BUILTIN_KINDS and (spec is None or spec.server is None):
        return _BUILTIN_KINDS[name]
    if spec is None:
        return "other"
    return _CAPABILITY_KINDS.get(spec.capability, "other")


def _abs(path: Any, root: Path) -> str | None:
    if not isinstance(path, str) or not path:
        return None
    p = Path(path).expanduser()
    return str(p if p.is_absolute() else root / p)


def _short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def tool_title(name: str, args: dict[str, Any], spec: ToolSpec | None) -> str:
    path = args.get("path")
    if spec is not None and spec.server is not None:
        return f"{spec.display_name or name} ({spec.server})"
    if name == "read_file" and isinstance(path, str):
        return f"Read {path}"
    if name == "write_file" and isinstance(path, str):
        return f"Write {path}"
    if name == "edit_file" and isinstance(path, str):
        return f"Edit {path}"
    if name == "bash" and isinstance(args.get("command"), str):
        return f"Run `{_short(args['command'])}`"
    if name in ("grep", "glob") and isinstance(args.get("pattern"), str):
        return f"{name} {_short(args['pattern'], 60)}"
    if name == "tool_search" and isinstance(args.get("query"), str):
        return f"Search tools: {_short(args['query'], 60)}"
    return name


def tool_locations(name: str, args: dict[str, Any], root: Path) -> list[ToolCallLocation]:
    if name not in ("read_file", "write_file", "edit_file", "grep", "glob"):
        return []
    path = _abs(args.get("path"), root)
    if path is None:
        return []
    line = args.get("offset") if name == "read_file" else None
    return [ToolCallLocation(path=path, line=line if isinstance(line, int) and line > 0 else None)]


@attrs.frozen
class Preview:
    """A file tool call's change as whole texts: ``before`` (None: a new file) and ``after``."""

    path: str
    before: str | None
    after: str


def preview_path(name: str, args: dict[str, Any], root: Path) -> Path | None:
    """The file an ``edit_file`` / ``write_file`` call changes, if it is inside ``root``."""
    if name not in ("edit_file", "write_file"):
        return None
    raw = _abs(args.get("path"), root)
    if raw is None:
        return None
    path = Path(raw).resolve()
    return path if path.is_relative_to(root) else None


def edit_preview(name: str, args: dict[str, Any], path: Path, before: str | None) -> Preview | None:
    """The whole file after the call, as the tool would make it (None: it would fail)."""
    if name == "write_file" and isinstance(args.get("content"), str):
        return Preview(str(path), before, args["content"])
    old, new = args.get("old_string"), args.get("new_string")
    if name != "edit_file" or before is None or not isinstance(old, str) or not isinstance(new, str) or not old:
        return None
    if old not in before and "\r\n" in before and "\n" in old:  # as the tool does for CRLF files
        old = old.replace("\r\n", "\n").replace("\n", "\r\n")
        new = new.replace("\r\n", "\n").replace("\n", "\r\n")
    count = before.count(old)
    if count == 0 or (count > 1 and not args.get("replace_all")):
        return None
    return Preview(str(path), before, before.replace(old, new) if args.get("replace_all") else before.replace(old, new, 1))


def tool_diff(name: str, args: dict[str, Any], root: Path, preview: Preview | None = None) -> list[Any]:
    """The change a file tool asks for, as ACP diff content: the whole file when ``preview``
    has it, else the edited text alone."""
    if preview is not None:
        return [tool_diff_content(preview.path, preview.after, preview.before)]
    path = _abs(args.get("path"), root)
    if path is None:
        return []
    if name == "edit_file" and isinstance(args.get("new_string"), str):
        old = args.get("old_string")
        return [tool_diff_content(path, args["new_string"], old if isinstance(old, str) else None)]
    if name == "write_file" and isinstance(args.get("content"), str):
        return [tool_diff_content(path, args["content"], None)]
    return []


def tool_started(call_id: str, name: str, args: dict[str, Any], spec: ToolSpec | None, root: Path,
                 status: ToolCallStatus, preview: Preview | None = None) -> Any:
    return start_tool_call(call_id, tool_title(name, args, spec), kind=tool_kind(name, spec), status=status,
                           content=tool_diff(name, args, root, preview) or None,
                           locations=tool_locations(name, args, root) or None, raw_input=args)


def tool_progress(call_id: str, message: str) -> Any:
    """What a running call is doing (waiting for an MCP server to start): its content for now."""
    return update_tool_call(call_id, status="in_progress", content=[tool_content(text_block(message))])


def hook_call(call_id: str, run: Any) -> Any:
    """A hook run (a :class:`agent_ls.agent.events.HookRan`) as a finished tool call of its own."""
    how = f"{run.outcome}, {run.decision}" if run.decision and run.outcome == "ran" else run.outcome
    title = f"Hook {run.event} `{run.command}`: {how} ({run.duration_ms:.0f} ms)"
    text = "\n\n".join(t for t in (run.message.strip(), run.output.strip()) if t)
    raw = {"event": run.event, "command": run.command, "outcome": run.outcome, "decision": run.decision,
           "toolCallId": run.call_id, "tool": run.tool}
    return start_tool_call(call_id, title, kind="other", status="completed" if run.outcome == "ran" else "failed",
                           content=[tool_content(text_block(result_text(text)))] if text else None,
                           raw_input={k: v for k, v in raw.items() if v is not None})


def result_text(content: str) -> str:
    if len(content) <= RESULT_CHARS:
        return content
    return content[:RESULT_CHARS] + f"\n[… {len(content) - RESULT_CHARS} more characters not shown here]"


def tool_finished(call_id: str, name: str, args: dict[str, Any], root: Path, is_error: bool, content: str,
                  preview: Preview | None = None, terminal_id: str | None = None, notice: str | None = None) -> Any:
    """The end of a tool call: its diff (unless it failed), the terminal it ran in, its result
    as text; a terminal's output also as ``rawOutput`` (for clients that do not show terminals);
    ``notice``: the call has an MCP App that ACP cannot show (said after the text)."""
    blocks: list[Any] = [] if is_error else tool_diff(name, args, root, preview)
    if terminal_id is not None:
        blocks.append(tool_terminal_ref(terminal_id))
    if content:
        blocks.append(tool_content(text_block(result_text(content))))
    if notice:
        blocks.append(tool_content(text_block(notice)))
    raw = {"output": result_text(content)} if terminal_id is not None else None
    return update_tool_call(call_id, status="failed" if is_error else "completed", content=blocks or None,
                            raw_output=raw)


def permission_tool_call(call_id: str, name: str, args: dict[str, Any], spec: ToolSpec | None, root: Path,
                         reason: str, preview: Preview | None = None) -> Any:
    """The ``toolCall`` of a permission request: the card the editor already shows, plus why."""
    content = [*tool_diff(name, args, root, preview), tool_content(text_block(reason))]
    return ToolCallUpdate(tool_call_id=call_id, title=tool_title(name, args, spec), kind=tool_kind(name, spec),
                          status="pending", content=content, locations=tool_locations(name, args, root) or None,
                          raw_input=args)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def history_updates(messages: list[dict[str, Any]], root: Path, specs: dict[str, ToolSpec]) -> list[Any]:
    """A stored conversation as the updates that show it again (``session/load``)."""
    out: list[Any] = []
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        role = m.get("role")
        text = _text_of(m.get("content"))
        if role == "user" and text:
            out.append(update_user_message_text(text))
        elif role == "assistant":
            if text:
                out.append(update_agent_message_text(text))
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or {}
                name = str(fn.get("name", ""))
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    args = {}
                args = args if isinstance(args, dict) else {}
                call_id = str(call.get("id", ""))
                calls[call_id] = (name, args)
                out.append(tool_started(call_id, name, args, specs.get(name), root, "pending"))
        elif role == "tool":
            call_id = str(m.get("tool_call_id", ""))
            name, args = calls.get(call_id, ("", {}))
            out.append(tool_finished(call_id, name, args, root, text.startswith("Error"), text))
    return out


def model_options(choices: tuple[str, ...], default: str | None, current: str | None) -> list[Any] | None:
    """The session's config options: one select (category ``model``) over ``choices``."""
    if not choices or current is None:
        return None
    options = [SessionConfigSelectOption(value=m, name=m, description="the default"
                                         if m == default else None) for m in choices]
    return [SessionConfigOptionSelect(type="select", id=MODEL_OPTION, name="Model", category="model",
                                      description="The model that answers this session's next requests",
                                      current_value=current, options=options)]


def options_update(options: list[Any]) -> Any:
    return ConfigOptionUpdate(session_update="config_option_update", config_options=options)


def info_update(title: str, updated: float) -> Any:
    """``session_info_update`` with the session's title and last activity."""
    return SessionInfoUpdate(session_update="session_info_update", title=title,
                             updated_at=datetime.fromtimestamp(updated, UTC).isoformat())


def plan_update(entries: Sequence[Any]) -> Any:
    """``plan``: the session's whole plan (:class:`agent_ls.agent.plan.PlanEntry` items; empty:
    the plan was cleared)."""
    return update_plan(plan_entry(e.content, priority=e.priority, status=e.status) for e in entries)
