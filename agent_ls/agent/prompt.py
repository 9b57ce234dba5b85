"""Prompt assembly: a frozen part (identity, instructions) and a dynamic part.

The frozen bytes are computed once per session and never change within it, so provider
prompt caches survive. The dynamic part (the deferred MCP tool catalogue, MCP server
instructions, reminders) follows them. For providers that take explicit breakpoints
(Anthropic through litellm), ``cache_control`` marks the end of the frozen block and the last
tool definition; other providers get plain strings (their caches work on the prefix).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from agent_ls.agent.workspace import Workspace, WorkspacePathError
from agent_ls.core.files import NONBLOCKING_READ, read_regular_fd
from agent_ls.core.tools import ToolSpec

IDENTITY = """You are agent-ls, a coding agent running inside the user's editor.
You help with software engineering tasks in the user's workspace: reading and changing code,
running commands, and using the tools the user connected through MCP servers."""

INSTRUCTIONS = """# How to work
- Use the tools to look before you change anything; read files instead of guessing.
- Keep changes minimal and focused on the request; follow the code's existing style.
- File tools are confined to the workspace roots. Paths may be relative to the first root.
- Some tools need the user's approval. If a call is denied, do not retry it unchanged: explain
  or take another way.
- MCP tools may be deferred: only their names are listed. Call `tool_search` with
  `select:<name>[,<name>...]` to load exact tools, or with keywords to find them; loaded tools
  can be called from your next step on.
- Tool results can be truncated; a marker says how much was cut.
- Answer concisely, in Markdown."""

PROJECT_FILES = ("AGENTS.md", "CLAUDE.md", ".agent-ls/instructions.md")
MAX_PROJECT_CHARS = 20_000
MAX_PROJECT_BYTES = MAX_PROJECT_CHARS * 4  # UTF-8: at most 4 bytes a character


def project_instructions(roots: Sequence[Path]) -> str:
    """The first project instructions file found in the first root that has one.

    Read as the file tools read (:mod:`agent_ls.agent.workspace`): a symlink that leads out of
    the folder is refused (a repository must not put, say, ``~/.aws/credentials`` into the
    conversation), one that stays inside is followed; only regular files (a FIFO must not hang
    the session), and no more than the part that is used.
    """
    for root in roots:
        workspace = Workspace([root])
        for rel in PROJECT_FILES:
            try:
                resolved = workspace.resolve(rel)
                fd = workspace.open_file(resolved, NONBLOCKING_READ)
                data = read_regular_fd(fd, MAX_PROJECT_BYTES, resolved)
                whole = len(data) <= MAX_PROJECT_BYTES
                text = data.decode("utf-8") if whole else data[:MAX_PROJECT_BYTES].decode("utf-8", errors="ignore")
            except (OSError, WorkspacePathError, UnicodeDecodeError):
                continue
            if len(text) > MAX_PROJECT_CHARS or not whole:
                cut = f"{len(text) - MAX_PROJECT_CHARS} characters cut" if whole else "the rest of the file cut"
                text = text[:MAX_PROJECT_CHARS] + f"\n[... {cut}]"
            return f"# Project instructions ({rel})\n{text.strip()}"
    return ""


@attrs.frozen
class FrozenPrompt:
    """Identity + instructions, fixed for the life of a session."""

    text: str

    @classmethod
    def build(cls, roots: Sequence[Path], extra_instructions: str = "") -> FrozenPrompt:
        parts = [IDENTITY, INSTRUCTIONS]
        if roots:
            parts.append("# Workspace\n" + "\n".join(f"- {Path(r)}" for r in roots))
        proj = project_instructions(roots)
        if proj:
            parts.append(proj)
        if extra_instructions.strip():
            parts.append("# User instructions\n" + extra_instructions.strip())
        return cls("\n\n".join(parts))


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def mcp_prefix(server: str) -> str:
    """``mcp__<server>__`` as it starts the model-facing names of a server's tools."""
    return f"mcp__{_UNSAFE.sub('_', server) or '_'}__"


def short_name(spec: ToolSpec) -> str:
    """How a deferred tool is listed under its server: the model-facing name without
    ``mcp__<server>__`` (the full name when it does not start that way, e.g. hashed names)."""
    prefix = mcp_prefix(spec.server or "")
    return spec.name[len(prefix):] if spec.server and spec.name.startswith(prefix) else spec.name


STARTING_MARK = "(still starting: tool_search waits for it and finds its tools)"
"""How the deferred catalogue lists a server whose tools are not known yet."""


def deferred_catalogue(specs: Sequence[ToolSpec], starting: Sequence[str] = ()) -> str:
    """Names of the deferred MCP tools, one line per server (in the order given), and the servers
    still starting (:data:`STARTING_MARK`: their tools are reached through ``tool_search`` too).

    Names only, as compact as they can be while staying exact: a listed ``name`` under server
    ``srv`` is the tool ``mcp__srv__name``. A full definition costs tens to hundreds of tokens;
    a listed name costs a few.
    """
    if not specs and not starting:
        return ""
    groups: dict[str, list[str]] = {}
    for s in specs:
        groups.setdefault(mcp_prefix(s.server or "")[5:-2], []).append(short_name(s))
    for server in starting:
        groups.setdefault(mcp_prefix(server)[5:-2], []).append(STARTING_MARK)
    lines = [
        "<system-reminder>",
        "Deferred MCP tools as SERVER: NAME, ... (full name mcp__SERVER__NAME, unless NAME starts with "
        "mcp__); load them with tool_search before calling:",
    ]
    for server, names in groups.items():
        lines.append(f"{server}: {', '.join(names)}")
    lines.append("</system-reminder>")
    return "\n".join(lines)


def dynamic_text(deferred: Sequence[ToolSpec], server_instructions: str, reminders: Sequence[str] = (), *,
                 starting: Sequence[str] = ()) -> str:
    parts = []
    cat = deferred_catalogue(deferred, starting)
    if cat:
        parts.append(cat)
    if server_instructions.strip():
        parts.append("# MCP server instructions\n" + server_instructions.strip())
    parts.extend(r for r in reminders if r.strip())
    return "\n\n".join(parts)


def system_messages(frozen: FrozenPrompt, dynamic: str, *, cache_control: bool) -> list[dict[str, Any]]:
    if cache_control:
        blocks: list[dict[str, Any]] = [
            {"type": "text", "text": frozen.text, "cache_control": {"type": "ephemeral"}}
        ]
        if dynamic:
            blocks.append({"type": "text", "text": dynamic})
        return [{"role": "system", "content": blocks}]
    text = frozen.text + ("\n\n" + dynamic if dynamic else "")
    return [{"role": "system", "content": text}]


def tool_definitions(specs: Sequence[ToolSpec], *, cache_control: bool) -> list[dict[str, Any]]:
    tools = [s.to_openai() for s in specs]
    if cache_control and tools:
        tools[-1] = {**tools[-1], "cache_control": {"type": "ephemeral"}}
    return tools
