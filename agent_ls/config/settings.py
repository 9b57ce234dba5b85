"""Settings: scopes, merge by server name, validation with exact locations.

Scopes, lowest precedence first (a later scope replaces an earlier entry of the same name):

1. user: ``settings.json`` in the platform config dir (``AGENT_LS_CONFIG_DIR`` overrides
   the directory, ``AGENT_LS_USER_SETTINGS`` the file);
2. per workspace folder, the ecosystem's files: ``.vscode/mcp.json`` (``servers``), then
   ``.mcp.json`` (``mcpServers``);
3. per workspace folder, ``.agent-ls/settings.json`` (``mcpServers``).

Custom agents (:mod:`agent_ls.config.agents`) come from ``<user config dir>/agents/*.md`` and each
folder's ``.github/agents/*.agent.md``, ``.claude/agents/*.md`` and ``.agent-ls/agents/*.md``; a
folder's only once it is trusted (each file is a trust item: a changed file is asked about again).

Hooks (:mod:`agent_ls.config.hooks`) come from the user file, each folder's
``.agent-ls/settings.json``, its ``.claude/settings.json`` and ``.claude/settings.local.json``
(only their ``hooks`` key), all together; a folder's only once it is trusted.

With several workspace folders, the first folder wins over later ones at the same scope.
A broken file or entry produces diagnostics and never stops the other entries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from agent_ls.config import jsonc
from agent_ls.config.agents import AgentCatalog, agent_files, agent_trust_items, load_agents
from agent_ls.config.diagnostics import ConfigDiagnostic, Problems, type_name
from agent_ls.config.entries import (
    SCOPE_RANK,
    ConfigSource,
    FailedEntry,
    Scope,
    ServerConfig,
    parse_entry,
)
from agent_ls.config.expand import ExpansionContext
from agent_ls.config.hooks import HookSpec, parse_hooks
from agent_ls.config.paths import user_settings_path
from agent_ls.config.sections import KNOWN_TOP_LEVEL, FileSections, Sections, merge_sections, read_sections
from agent_ls.config.structure import DEFAULT_OUTPUT_PAGE_CHARS
from agent_ls.config.trust import (
    EntryView,
    TrustItem,
    TrustPolicy,
    WorkspaceRequest,
    WorkspaceTrustInfo,
    hook_trust_items,
    split_settings,
)
from agent_ls.core.files import NotRegularFile, read_regular_file
from agent_ls.core.process_secrets import environment

WORKSPACE_FILES: tuple[tuple[Scope, str, str], ...] = (
    (Scope.VSCODE, ".vscode/mcp.json", "servers"),
    (Scope.MCP_JSON, ".mcp.json", "mcpServers"),
    (Scope.WORKSPACE, ".agent-ls/settings.json", "mcpServers"),
)

CLAUDE_SETTINGS = ".claude/settings.json"
"""Claude Code's project settings: agent-ls reads only its ``hooks``."""
CLAUDE_LOCAL_SETTINGS = ".claude/settings.local.json"
"""Claude Code's local project settings (not committed, same rules): only its ``hooks`` too."""
CLAUDE_FILES = (CLAUDE_SETTINGS, CLAUDE_LOCAL_SETTINGS)

MAX_SETTINGS_BYTES = 1024 * 1024
"""Settings files larger than this are refused with a diagnostic (a settings file is a few KB)."""


@attrs.define
class LoadedSettings:
    servers: dict[str, ServerConfig] = attrs.field(factory=dict)
    failed: dict[str, FailedEntry] = attrs.field(factory=dict)
    diagnostics: list[ConfigDiagnostic] = attrs.field(factory=list)
    files: list[Path] = attrs.field(factory=list)
    """Every settings file that was looked at (existing or not), for file watching."""
    other: dict[str, Any] = attrs.field(factory=dict)
    """Non-MCP top-level settings merged across agent-ls files (workspace over user), as the
    files say them (unchecked; the product reads :meth:`merged_sections`)."""
    layers: list[tuple[Scope, Path, dict[str, Any]]] = attrs.field(factory=list)
    """Each agent-ls settings file's top-level object, highest precedence first, unchecked. An
    untrusted folder's layer holds only what an untrusted folder may set."""
    sections: list[FileSections] = attrs.field(factory=list)
    """Each agent-ls settings file's typed sections, highest precedence first (what
    :meth:`merged_sections` combines; an invalid section counts as absent)."""
    workspaces: dict[Path, WorkspaceTrustInfo] = attrs.field(factory=dict)
    """The trust state of each workspace folder, in folder order."""
    hooks: list[HookSpec] = attrs.field(factory=list)
    """Every hook in effect: the trusted folders' (``.agent-ls/settings.json``, then
    ``.claude/settings.json`` and ``.claude/settings.local.json``, in folder order), then the user's."""
    agents: AgentCatalog = AgentCatalog()
    """The agents the ``agent`` tool may run: the built-ins, the user's files, the trusted folders'."""

    def diagnostics_for(self, file: Path) -> list[ConfigDiagnostic]:
        return [d for d in self.diagnostics if d.file == file]

    def merged_sections(self) -> Sections:
        """``model``, ``apiBase``, ``permissions``, ``agent``, ``toolActions`` and ``mcp``
        combined across the files (see :func:`agent_ls.config.sections.merge_sections`)."""
        return merge_sections(self.sections)


def _placeholder(path: Path) -> bool:
    """A sandboxed command's read-only placeholder at ``path`` while it runs (an empty folder
    bubblewrap mounted on a missing power file): as if the file were absent. A user's own folder
    there is said (a diagnostic)."""
    # lazy: the sandbox's runner, only on this rare path
    from agent_ls.core.sandbox.runner import is_placeholder

    return is_placeholder(str(path))


def _read_file(file: Path, problems_out: list[ConfigDiagnostic]) -> jsonc.Document | None:
    """The parsed file, None when absent or unusable (with a diagnostic naming the file).

    Never raises: one bad file (unreadable, too large, too deep, not JSON) must not stop the
    other scopes' servers.
    """
    try:
        data = read_regular_file(file, MAX_SETTINGS_BYTES)  # a FIFO here must not hang the host
    except FileNotFoundError:
        return None
    except NotRegularFile as e:
        if _placeholder(file):
            return None
        problems_out.append(ConfigDiagnostic(file, (), f"cannot read the file: it is {e.strerror}, not a regular "
                                                       "file; it is ignored"))
        return None
    except OSError as e:
        problems_out.append(ConfigDiagnostic(file, (), f"cannot read the file: {e}"))
        return None
    if len(data) > MAX_SETTINGS_BYTES:
        problems_out.append(ConfigDiagnostic(
            file, (), f"the file is larger than {MAX_SETTINGS_BYTES // 1024} KiB, the limit for a settings file; "
                      "it is ignored"))
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        problems_out.append(ConfigDiagnostic(file, (), f"cannot read the file: it is not UTF-8 ({e})"))
        return None
    if not text.strip():
        return jsonc.Document(value={}, spans={}, key_spans={})
    try:
        return jsonc.parse(text)
    except jsonc.JsoncError as e:
        if e.message == jsonc.EMPTY_DOCUMENT:  # only comments: as good as an empty file
            return jsonc.Document(value={}, spans={}, key_spans={})
        span = jsonc.Span(e.pos, jsonc.Pos(e.pos.line, e.pos.column + 1))
        problems_out.append(ConfigDiagnostic(file, (), f"invalid JSON: {e.message}", span=span))
        return None
    except (RecursionError, MemoryError, ValueError) as e:  # belt and braces: the parser's own limits come first
        problems_out.append(ConfigDiagnostic(file, (), f"cannot parse the file: {type(e).__name__}: {e}"))
        return None


@attrs.frozen
class _FileRead:
    scope: Scope
    file: Path
    key: str
    """The key that holds the server entries."""
    doc: jsonc.Document | None


def _read_folder(folder: Path, loaded: LoadedSettings) -> tuple[list[_FileRead], WorkspaceRequest]:
    """A folder's workspace files (highest scope first) and what they ask for that needs trust."""
    reads: list[_FileRead] = []
    items: list[TrustItem] = []
    entries: list[EntryView] = []
    for scope, rel, key in reversed(WORKSPACE_FILES):
        file = folder / rel
        loaded.files.append(file)
        doc = _read_file(file, loaded.diagnostics)
        reads.append(_FileRead(scope, file, key, doc))
        root = doc.value if doc is not None else None
        if not isinstance(root, dict):
            continue
        if scope is Scope.WORKSPACE:
            items += split_settings(root, file)[1]
        servers = root.get(key)
        if isinstance(servers, dict):
            entries += [EntryView.from_raw(n, e, file) for n, e in servers.items() if isinstance(n, str) and n.strip()]
    items += agent_trust_items(agent_files(None, [folder])[1])
    for rel in CLAUDE_FILES:
        claude = folder / rel
        loaded.files.append(claude)
        doc = _read_file(claude, loaded.diagnostics)
        if doc is not None and isinstance(doc.value, dict):
            items += hook_trust_items(doc.value.get("hooks"), claude)
            reads.append(_FileRead(Scope.WORKSPACE, claude, "hooks", doc))
    return reads, WorkspaceRequest(folder, tuple(items), tuple(entries))


def _claude_hooks(read: _FileRead, folder: Path, trust: WorkspaceTrustInfo, loaded: LoadedSettings) -> None:
    """The hooks of a folder's ``.claude/settings.json`` or ``.claude/settings.local.json`` (their
    other keys are Claude Code's own)."""
    assert read.doc is not None and isinstance(read.doc.value, dict)
    problems = Problems(read.file, read.doc)
    value = read.doc.value.get("hooks")
    if trust.trusted:
        loaded.hooks += parse_hooks(value, read.file, scope="claude", folder=folder, problems=problems)
    else:
        for item in hook_trust_items(value, read.file):
            problems.add(item.path, f"ignored until you trust this workspace: {item.why}", severity="information",
                         key=True)
    loaded.diagnostics.extend(problems.items)


def _servers_in(
    read: _FileRead,
    workspace_folder: Path | None,
    ctx: ExpansionContext,
    loaded: LoadedSettings,
    *,
    agent_settings_file: bool,
    trust: WorkspaceTrustInfo | None = None,
) -> list[ServerConfig | FailedEntry]:
    """The server entries of one file; for an agent-ls settings file, also its other settings
    (into ``loaded.sections``, ``loaded.other`` and ``loaded.layers``). ``trust`` None: the
    user scope."""
    doc, file, key = read.doc, read.file, read.key
    if doc is None:
        return []
    problems = Problems(file, doc)
    out: list[ServerConfig | FailedEntry] = []
    root = doc.value
    if not isinstance(root, dict):
        problems.add((), f"the settings file must contain a JSON object, not {type_name(root)}")
        loaded.diagnostics.extend(problems.items)
        return []
    restricted = trust is not None and not trust.trusted
    servers = root.get(key, {})
    if agent_settings_file:
        layer: dict[str, Any] = root
        if restricted:
            layer, ignored = split_settings(root, file)
            layer["mcpServers"] = servers
            for item in ignored:
                problems.add(item.path, f"ignored until you trust this workspace: {item.why}",
                             severity="information", key=True)
        loaded.sections.append(read_sections(root, layer, read.scope, problems))
        loaded.hooks += parse_hooks(layer.get("hooks"), file, scope=read.scope.value,
                                    folder=workspace_folder if trust is not None else None,
                                    problems=problems)
        for k, v in layer.items():
            if k != key and k in KNOWN_TOP_LEVEL:
                loaded.other.setdefault(k, v)
        loaded.layers.append((read.scope, file, layer))
    if not isinstance(servers, dict):
        problems.add((key,), f'"{key}" must be an object mapping server names to entries')
        servers = {}
    for name, entry in servers.items():
        if not isinstance(name, str) or not name.strip():
            problems.add((key, name), "server names must be non-empty", key=True)
            continue
        source = ConfigSource(read.scope, file, workspace_folder, (key, name))
        out.append(parse_entry(name, entry, source, problems, ctx, restricted=restricted))
    loaded.diagnostics.extend(problems.items)
    return out


def load_settings(
    workspace_folders: Sequence[Path] = (),
    *,
    user_settings: Path | None = None,
    environ: Mapping[str, str] | None = None,
    trust: TrustPolicy | None = None,
) -> LoadedSettings:
    """Read every scope and merge server entries by name (higher scope replaces lower).

    ``trust`` decides which workspace folders are trusted (see :mod:`agent_ls.config.trust`);
    without one, every folder that asks for something is restricted. A restricted folder's
    servers are listed (``restricted``, not started) unless a user-scope server has the same
    name, and its settings that need trust are ignored, each with a diagnostic.
    """
    env = environment() if environ is None else dict(environ)  # with the secrets taken at start-up
    policy = trust or TrustPolicy()
    loaded = LoadedSettings()
    user_file = user_settings or user_settings_path()
    primary = workspace_folders[0] if workspace_folders else None
    candidates: list[tuple[int, int, ServerConfig | FailedEntry]] = []
    docs: dict[Path, jsonc.Document] = {}

    # Workspace scopes first so that their non-MCP settings win in ``other`` (setdefault).
    for folder_index, folder in enumerate(workspace_folders):
        ctx = ExpansionContext(environ=env, workspace_folder=folder)
        reads, request = _read_folder(folder, loaded)
        info = policy.evaluate(request)
        if not info.trusted:
            info = attrs.evolve(info, ignored=request.settings)
        loaded.workspaces[folder] = info
        for read in reads:
            if read.doc is not None:
                docs[read.file] = read.doc
            if read.key == "hooks":
                _claude_hooks(read, folder, info, loaded)
                continue
            entries = _servers_in(read, folder, ctx, loaded, agent_settings_file=read.scope is Scope.WORKSPACE,
                                  trust=info)
            # An untrusted folder's entries rank below the user scope: a user server of the same
            # name runs instead of them.
            rank = SCOPE_RANK[read.scope] if info.trusted else -1
            candidates.extend((rank, -folder_index, e) for e in entries)
    loaded.files.append(user_file)
    ctx = ExpansionContext(environ=env, workspace_folder=primary)
    user_read = _FileRead(Scope.USER, user_file, "mcpServers", _read_file(user_file, loaded.diagnostics))
    if user_read.doc is not None:
        docs[user_file] = user_read.doc
    for e in _servers_in(user_read, primary, ctx, loaded, agent_settings_file=True):
        candidates.append((SCOPE_RANK[Scope.USER], 0, e))

    # Highest (scope rank, folder order) wins per name.
    best: dict[str, tuple[int, int, ServerConfig | FailedEntry]] = {}
    for cand in candidates:
        name = cand[2].name
        if name not in best or (cand[0], cand[1]) > (best[name][0], best[name][1]):
            best[name] = cand
    for rank, _order, entry in candidates:
        if rank < 0 and best[entry.name][2] is not entry and best[entry.name][0] == SCOPE_RANK[Scope.USER]:
            loaded.diagnostics.append(ConfigDiagnostic(
                entry.source.file, entry.source.json_path,
                f"ignored until you trust this workspace: your user-scope server '{entry.name}' runs instead",
                "information", docs[entry.source.file].span(entry.source.json_path, key=True), entry.name))
    # Where a stdio server starts when its entry has no "cwd": a workspace entry in its folder; a
    # user entry in the first folder once the user trusts it, else in the home directory (a
    # folder's .npmrc, uv.toml or .env must not steer npx, uvx or the server before that).
    user_cwd = str(primary) if primary is not None and policy.explicit(primary) else str(Path.home())
    for name in sorted(best):
        entry = best[name][2]
        if isinstance(entry, ServerConfig):
            if entry.transport == "stdio" and entry.cwd is None:
                where = entry.source.workspace_folder
                cwd = user_cwd if entry.source.scope is Scope.USER or where is None else str(where)
                entry = attrs.evolve(entry, cwd=cwd)
            loaded.servers[name] = entry
        else:
            loaded.failed[name] = entry
    _check_output_sizes(loaded, docs)
    _load_agents(loaded, user_file.parent / "agents", workspace_folders)
    return loaded


def _load_agents(loaded: LoadedSettings, user_dir: Path, folders: Sequence[Path]) -> None:
    """The custom agents: the user's, and those of the folders that are trusted (the others'
    files get a note that they are ignored until then)."""
    user, workspace = agent_files(user_dir, folders)
    loaded.files += [*workspace, *user]
    if not user and not workspace:
        return
    trusted = [f for f in workspace if any(
        f.is_relative_to(folder) and loaded.workspaces[folder].trusted for folder in loaded.workspaces)]
    loaded.agents = load_agents(user, workspace, trusted=trusted)
    loaded.diagnostics += loaded.agents.diagnostics
    for path in loaded.agents.untrusted:
        loaded.diagnostics.append(ConfigDiagnostic(
            path, (), "ignored until you trust this workspace: a custom agent's instructions and tool list steer "
            "what the model does", "information", summary=f"{path.name}: ignored until you trust this workspace"))


def _check_output_sizes(loaded: LoadedSettings, docs: Mapping[Path, jsonc.Document]) -> None:
    """``agent.outputStoreChars`` below the page size in effect (the two may come from different
    files): a warning at the store value in effect; the agent keeps one page instead."""

    def in_effect(attr: str) -> tuple[Path, int] | None:
        for file_sections in loaded.sections:  # highest precedence first, only what applies
            agent = file_sections.values.agent
            value = getattr(agent, attr) if agent is not None else None
            if value is not None:
                return file_sections.file, value
        return None

    store = in_effect("output_store_chars")
    page_set = in_effect("output_page_chars")
    page = page_set[1] if page_set is not None else DEFAULT_OUTPUT_PAGE_CHARS
    if store is None or store[1] >= page:
        return
    file, value = store
    path = ("agent", "outputStoreChars")
    where = "agent.outputPageChars" if page_set is None or page_set[0] == file else f"agent.outputPageChars in {page_set[0]}"
    message = f"must be at least {where} ({page}), got {value}; {page} is used"
    doc = docs.get(file)
    loaded.diagnostics.append(ConfigDiagnostic(file, path, message, "warning", doc.span(path) if doc is not None else None,
                                               summary=f"agent.outputStoreChars {message}"))
