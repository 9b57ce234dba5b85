"""The settings files as the editor sees them: which files they are, their diagnostics, watching them.

The settings parser's problems are published as LSP diagnostics on the files they are in
(positions converted to the client's units); the editor is asked to watch every settings file
and the user's remembered decisions (dynamic registration of ``didChangeWatchedFiles``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp
from pygls.uris import from_fs_path

from agent_ls.core.files import read_regular_file

if TYPE_CHECKING:
    from agent_ls.runtime.host import RuntimeHost
    from agent_ls.server.client import EditorClient

log = logging.getLogger("agent_ls.server")


SETTINGS_GLOBS = ("**/.agent-ls/settings.json", "**/.mcp.json", "**/.vscode/mcp.json", "**/.claude/settings.json",
                 "**/.claude/settings.local.json",
                 "**/.agent-ls/agents/*.md", "**/.claude/agents/*.md", "**/.github/agents/*.agent.md")


def is_settings_file(path: str | None) -> bool:
    if not path:
        return False
    p = Path(path)
    return (p.name == "settings.json" and p.parent.name in (".agent-ls", ".claude")) or (
        p.name == "settings.local.json" and p.parent.name == ".claude") or p.name == ".mcp.json" or (
        p.name == "mcp.json" and p.parent.name == ".vscode") or _is_user_settings(p) or _is_agent_file(p)


def _is_agent_file(p: Path) -> bool:
    """A custom agent's definition (:mod:`agent_ls.config.agents`)."""
    return p.suffix == ".md" and p.parent.name == "agents" and (
        p.parent.parent.name in (".agent-ls", ".claude") or p.name.endswith(".agent.md"))


def is_host_state(path: str | None) -> bool:
    """The user's remembered decisions (another window, or `agent-ls trust`, wrote them)."""
    # lazy: platformdirs, bz2, lzma: +17 modules, ~7 ms at start-up
    from agent_ls.config.paths import host_state_path

    try:
        return path is not None and Path(path).resolve() == host_state_path().resolve()
    except OSError:
        return False


def _is_user_settings(p: Path) -> bool:
    # lazy: platformdirs, bz2, lzma: +17 modules, ~7 ms at start-up
    from agent_ls.config.paths import user_settings_path

    try:
        return p.resolve() == user_settings_path().resolve()
    except OSError:
        return False


class SettingsDiagnostics:
    """The settings parser's problems, published on the files they are in (``ls.settings_diagnostics``)."""

    def __init__(self, client: EditorClient, runtime: RuntimeHost) -> None:
        self.client = client
        self.runtime = runtime
        self.published: dict[str, list[lsp.Diagnostic]] = {}
        """What each settings file was last given (a file whose problems went is cleared once)."""

    def publish(self, force: bool = False) -> None:
        """Publish the problems of the settings as read now; ``force``: also the empty lists of
        files published before (a file the editor just opened)."""
        # lazy: +2 modules, ~4 ms at start-up
        from agent_ls.config.jsonc import format_path

        settings = self.runtime.settings
        if settings is None:
            return
        by_file: dict[str, list[lsp.Diagnostic]] = {}
        for f in settings.files:
            uri = from_fs_path(str(f))
            if uri:
                by_file[uri] = []
        lines_of: dict[Path, list[str]] = {}
        codec = self.client.workspace.position_codec

        def client_pos(file: Path, line: int, column: int) -> lsp.Position:
            # The settings parser counts code points; the editor counts UTF-16 units (usually).
            if file not in lines_of:
                try:
                    # lazy: the settings loader, +39 modules, ~50 ms at start-up
                    from agent_ls.config.settings import MAX_SETTINGS_BYTES

                    data = read_regular_file(file, MAX_SETTINGS_BYTES)  # never blocks on a FIFO
                    lines_of[file] = data.decode("utf-8").splitlines(keepends=True)
                except (OSError, UnicodeDecodeError):
                    lines_of[file] = []
            lines = lines_of[file]
            if line >= len(lines):
                return lsp.Position(line, column)
            return codec.position_to_client_units(lines, lsp.Position(line, column))

        for d in settings.diagnostics:
            uri = from_fs_path(str(d.file))
            if not uri:
                continue
            if d.span is not None:
                rng = lsp.Range(client_pos(d.file, d.span.start.line, d.span.start.column),
                                client_pos(d.file, d.span.end.line, d.span.end.column))
            else:
                rng = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
            sev = {"error": lsp.DiagnosticSeverity.Error, "information": lsp.DiagnosticSeverity.Information}.get(
                d.severity, lsp.DiagnosticSeverity.Warning)
            message = f"{format_path(d.json_path)}: {d.message}" if d.json_path else d.message
            by_file.setdefault(uri, []).append(lsp.Diagnostic(range=rng, message=message, severity=sev,
                                                              source="agent-ls"))
        for uri, diags in by_file.items():
            if diags or self.published.get(uri) or (force and uri in self.published):
                self.client.publish_diagnostics(uri, diags)
            self.published[uri] = diags


async def watch_settings_files(client: EditorClient) -> None:
    """Ask the editor to watch the settings files (dynamic registration)."""
    caps = client.capabilities
    ws = caps.workspace
    if ws is None or ws.did_change_watched_files is None or not ws.did_change_watched_files.dynamic_registration:
        return
    # lazy: platformdirs, bz2, lzma: +17 modules, ~7 ms at start-up
    from agent_ls.config.paths import user_settings_path

    watchers = [lsp.FileSystemWatcher(glob_pattern=g) for g in SETTINGS_GLOBS]
    # lazy: platformdirs, bz2, lzma: +17 modules, ~7 ms at start-up
    from agent_ls.config.paths import host_state_path

    for file in (user_settings_path(), host_state_path()):
        watchers.append(lsp.FileSystemWatcher(glob_pattern=lsp.RelativePattern(
            base_uri=file.parent.as_uri(), pattern=file.name)))
    try:
        await client.register_capability(lsp.RegistrationParams(registrations=[lsp.Registration(
            id="agent-ls-settings", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
    except Exception as e:
        log.info("could not register settings file watchers: %s", e)
