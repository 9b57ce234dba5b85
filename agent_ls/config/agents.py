"""Agent definitions: what a subagent is (:class:`AgentDefinition`), the built-in ones
(``general``, ``explore``) and custom agents read from Markdown files with YAML frontmatter.

Where custom agents come from (:func:`agent_files`), later places overriding earlier ones by
name:

- ``<user config dir>/agents/*.md`` (the user's own);
- ``<folder>/.github/agents/*.agent.md`` (VS Code's custom agents), ``<folder>/.claude/agents/*.md``
  (Claude Code's) and ``<folder>/.agent-ls/agents/*.md`` (agent-ls's own): workspace files, read
  only once the folder is trusted (:func:`agent_trust_items`: one trust item per file, its whole
  text, so a changed file is asked about again).

A file::

    ---
    name: reviewer                      # default: the file name without .md / .agent.md
    description: Reviews a diff for bugs
    tools: Read, Grep, Glob             # or a YAML list; Claude Code's and VS Code's names mapped
    disallowedTools: [Bash]
    model: anthropic/claude-haiku-4-5   # default: the parent's model
    maxTurns: 10                        # default: agent.maxSteps
    maxDepth: 2                         # default 1: it starts no subagents of its own
    ---
    You review code. ...                # the system prompt

A file that cannot be used is a :class:`~agent_ls.config.diagnostics.ConfigDiagnostic` at its
place (broken frontmatter, a field of the wrong type, a tool name that names no tool), like a
settings file's.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from agent_ls.config.diagnostics import ConfigDiagnostic
from agent_ls.config.jsonc import Pos, Span

if TYPE_CHECKING:
    from agent_ls.config.trust import TrustItem

GENERAL = "general"
EXPLORE = "explore"
MAX_DEPTH = 3
"""The deepest a chain of subagents may go (the conversation's own session is depth 0)."""
MAX_AGENT_FILE_BYTES = 64_000
"""A definition file larger than this is refused (a diagnostic)."""


@attrs.frozen
class AgentDefinition:
    """One agent the ``agent`` tool can run."""

    name: str
    description: str
    prompt: str
    """Its system prompt (the project instructions follow it)."""
    tools: tuple[str, ...] | None = None
    """Tool names or patterns it may use (agent-ls names, mapped from Claude Code's); None: the parent's."""
    disallowed: tuple[str, ...] = ()
    read_only: bool = False
    """Only tools that read (capability ``read``): ``explore``."""
    model: str | None = None
    max_turns: int | None = None
    source: str = "built-in"
    """Where it was defined (a file path, or ``built-in``)."""
    max_depth: int = 1
    """How deep the chain of subagents may go while it runs (1: it gets no ``agent`` tool; 2: it
    may start subagents, which start none; at most :data:`MAX_DEPTH`, and never deeper than the
    agent that started it allows)."""


BUILTIN_AGENTS: tuple[AgentDefinition, ...] = (
    AgentDefinition(
        GENERAL, "General-purpose agent for multi-step tasks: researching, searching code, making changes. "
        "It has your tools.",
        "You are a subagent of agent-ls, a coding agent: another agent gave you one task. Do it with "
        "the tools you have, then answer with what you found or did, concisely: your answer is all "
        "the other agent sees."),
    AgentDefinition(
        EXPLORE, "Read-only agent that explores the codebase: finds files, reads code and answers questions "
        "about it. It cannot change anything.",
        "You are an exploring subagent of agent-ls, a coding agent: another agent asked you a question "
        "about the workspace. Search and read (you have read-only tools), then answer with the facts "
        "and the file paths that matter, concisely: your answer is all the other agent sees.",
        read_only=True),
)

CLAUDE_TOOLS: dict[str, tuple[str, ...]] = {
    "read": ("read_file",), "write": ("write_file",), "edit": ("edit_file",), "multiedit": ("edit_file",),
    "notebookedit": ("edit_file",), "bash": ("bash",), "grep": ("grep",), "glob": ("glob",), "ls": ("glob",),
    "todowrite": ("update_plan",), "task": ("agent",), "agent": ("agent",),
    # VS Code's custom agents (.github/agents/*.agent.md)
    "codebase": ("grep", "glob", "read_file"), "search": ("grep", "glob"), "readfile": ("read_file",),
    "editfiles": ("write_file", "edit_file"), "runcommands": ("bash",), "runinterminal": ("bash",),
    "terminal": ("bash",), "problems": ("diagnostics",), "usages": ("references",),
}
"""Tool names of Claude Code and VS Code (lower-case) -> agent-ls's. An agent-ls name (or an
``mcp__server__tool`` pattern) is kept as it is; Claude Code's ``mcp__server__tool`` names are ours."""


def map_tool(name: str) -> tuple[str, ...]:
    """agent-ls's tool names for a name a definition gives (``Read`` -> ``read_file``;
    ``Bash(git:*)`` -> ``bash``: the rule part is for permissions, not the tool list)."""
    bare = name.strip()
    if "(" in bare and bare.endswith(")"):
        bare = bare.split("(", 1)[0]
    if not bare or bare in _OURS or bare.startswith("mcp__"):
        return (bare,) if bare else ()
    return CLAUDE_TOOLS.get(bare.lower().replace("_", "").replace("-", ""), (bare,))


_OURS = frozenset({"read_file", "write_file", "edit_file", "bash", "grep", "glob", "update_plan", "read_output",
                   "diagnostics", "definition", "references", "symbols", "tool_search", "load_skill", "agent"})


def _tool_list(value: Any) -> tuple[str, ...] | str:
    """A ``tools`` value (a YAML list or Claude Code's comma-separated string) as agent-ls names,
    or what is wrong with it."""
    if isinstance(value, str):
        items: list[Any] = [v.strip() for v in re.split(r",(?![^(]*\))", value) if v.strip()]
    elif isinstance(value, list):
        items = value
    else:
        return "must be a list of tool names or a comma-separated string"
    out: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            return f"every tool must be a name, got {item!r}"
        out += [n for n in map_tool(item) if n not in out]
    return tuple(out)


def _diag(path: Path, message: str, line: int = 0, field: str | None = None) -> ConfigDiagnostic:
    pos = Pos(line, 0)
    return ConfigDiagnostic(path, (field,) if field else (), message, "error", Span(pos, Pos(line, 200)),
                            summary=f"{path.name}: {field + ': ' if field else ''}{message}")


def _field_line(text: str, field: str) -> int:
    for n, line in enumerate(text.splitlines()):
        if line.startswith(f"{field}:"):
            return n
    return 0


def parse_agent(path: Path, text: str, default_name: str | None = None) -> AgentDefinition | ConfigDiagnostic:
    """The agent ``text`` (a file's content) defines, or the problem at its place."""
    import yaml  # lazy: only when there are agent files

    name = default_name or agent_name_of(path)
    if not text.startswith("---"):
        return _diag(path, "an agent file starts with YAML frontmatter between '---' lines (name, description, "
                     "tools...), then the system prompt")
    lines = text.splitlines()
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return _diag(path, "the frontmatter has no closing '---' line")
    front_text = "\n".join(lines[1:end])
    try:
        meta = yaml.safe_load(front_text) if front_text.strip() else {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = (mark.line + 1) if mark is not None else 0
        problem = getattr(e, "problem", None) or str(e)
        return _diag(path, f"the frontmatter is not valid YAML: {problem}", line)
    if not isinstance(meta, dict):
        return _diag(path, "the frontmatter must be a mapping of fields (name: ..., description: ...)", 1)
    prompt = "\n".join(lines[end + 1:]).strip()

    def bad(field: str, message: str) -> ConfigDiagnostic:
        return _diag(path, message, _field_line(text, field), field)

    given = meta.get("name", name)
    if not isinstance(given, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", given):
        return bad("name", f"the name must be letters, digits, '-', '_' or '.' (at most 64), got {given!r}")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        return bad("description", "a description (what the agent is for; the model picks agents by it) is required")
    tools: tuple[str, ...] | None = None
    if meta.get("tools") is not None:
        found = _tool_list(meta["tools"])
        if isinstance(found, str):
            return bad("tools", found)
        tools = found
    disallowed: tuple[str, ...] = ()
    if meta.get("disallowedTools") is not None:
        found = _tool_list(meta["disallowedTools"])
        if isinstance(found, str):
            return bad("disallowedTools", found)
        disallowed = found
    model = meta.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        return bad("model", f"the model must be a model name, got {model!r}")
    if model in ("inherit", "sonnet", "opus", "haiku"):  # Claude Code's aliases: the parent's model
        model = None
    max_turns = meta.get("maxTurns")
    if max_turns is not None and (not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1):
        return bad("maxTurns", f"maxTurns must be a positive integer, got {max_turns!r}")
    max_depth = meta.get("maxDepth", 1)
    if not isinstance(max_depth, int) or isinstance(max_depth, bool) or not 1 <= max_depth <= MAX_DEPTH:
        return bad("maxDepth", f"maxDepth must be 1 to {MAX_DEPTH}, got {max_depth!r}")
    if not prompt:
        return _diag(path, "the system prompt (the text after the frontmatter) is empty", end)
    return AgentDefinition(given, description.strip(), prompt, tools, disallowed, False, model, max_turns, str(path),
                           max_depth)


def agent_name_of(path: Path) -> str:
    name = path.name
    for suffix in (".agent.md", ".md"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


WORKSPACE_AGENT_DIRS: tuple[tuple[str, str], ...] = (
    (".github/agents", "*.agent.md"),
    (".claude/agents", "*.md"),
    (".agent-ls/agents", "*.md"),
)
"""The workspace's agent folders and their files, lowest precedence first."""


def agent_files(user_dir: Path | None, folders: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """The user's agent files and the workspace folders' (each in precedence order, sorted by name)."""
    user = sorted(user_dir.glob("*.md")) if user_dir is not None and user_dir.is_dir() else []
    workspace: list[Path] = []
    for folder in folders:
        for sub, pattern in WORKSPACE_AGENT_DIRS:
            where = folder / sub
            if where.is_dir() and not where.is_symlink():
                workspace += sorted(p for p in where.glob(pattern) if p.is_file() and not p.is_symlink())
    return [p for p in user if p.is_file()], workspace


def read_agent_file(path: Path) -> str | ConfigDiagnostic:
    try:
        data = path.read_bytes()
    except OSError as e:
        return _diag(path, f"cannot be read: {e.strerror or e}")
    if len(data) > MAX_AGENT_FILE_BYTES:
        return _diag(path, f"is larger than {MAX_AGENT_FILE_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return _diag(path, "is not UTF-8 text")


@attrs.frozen
class AgentCatalog:
    """The agents a conversation may run: the built-ins, then the user's and the (trusted)
    workspace's custom agents by name, and the problems of the files that could not be used."""

    agents: tuple[AgentDefinition, ...] = BUILTIN_AGENTS
    diagnostics: tuple[ConfigDiagnostic, ...] = ()
    untrusted: tuple[Path, ...] = ()
    """Workspace agent files not offered until the folder is trusted (or the changed file is again)."""

    def get(self, name: str) -> AgentDefinition | None:
        return next((a for a in self.agents if a.name == name), None)

    def names(self) -> list[str]:
        return [a.name for a in self.agents]


def load_agents(user_files: Iterable[Path], workspace_files: Iterable[Path], *,
                trusted: Iterable[Path] | bool = True) -> AgentCatalog:
    """The catalog of the built-ins and the files (``trusted``: the workspace files that may be
    offered, or True/False for all of them)."""
    by_name: dict[str, AgentDefinition] = {a.name: a for a in BUILTIN_AGENTS}
    problems: list[ConfigDiagnostic] = []
    untrusted: list[Path] = []
    allowed = None if isinstance(trusted, bool) else {Path(p) for p in trusted}
    for path, workspace in [*((p, False) for p in user_files), *((p, True) for p in workspace_files)]:
        text = read_agent_file(path)
        if isinstance(text, ConfigDiagnostic):
            problems.append(text)
            continue
        found = parse_agent(path, text)
        if isinstance(found, ConfigDiagnostic):
            problems.append(found)
            continue
        if workspace and (trusted is False or (allowed is not None and path not in allowed)):
            untrusted.append(path)
            continue
        by_name[found.name] = found
    return AgentCatalog(tuple(by_name.values()), tuple(problems), tuple(untrusted))


AGENT_WHY = "a custom agent's instructions and tool list steer what the model does"


def agent_trust_items(files: Iterable[Path]) -> list[TrustItem]:
    """One trust item per workspace agent file: its name, description and tools as shown to the
    user, and a digest of its whole text (a changed file is asked about again). A file that
    cannot be read needs no trust (nothing of it is used)."""
    from agent_ls.config.trust import TrustItem

    items = []
    for path in files:
        text = read_agent_file(path)
        if isinstance(text, ConfigDiagnostic):
            continue
        found = parse_agent(path, text)
        shown: dict[str, Any] = {"sha256": hashlib.sha256(text.encode()).hexdigest()[:16]}
        if isinstance(found, AgentDefinition):
            shown |= {"name": found.name, "description": found.description,
                      "tools": list(found.tools) if found.tools is not None else "all of the conversation's"}
            if found.max_depth > 1:
                shown["maxDepth"] = found.max_depth
        items.append(TrustItem(path, ("agent", agent_name_of(path)), shown, AGENT_WHY))
    return items
