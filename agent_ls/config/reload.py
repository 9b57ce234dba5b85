"""On a reload, the last valid configuration stays in force (the language server and
``agent-ls acp`` both reload through :func:`keep_last_valid`).

A settings file that does not parse keeps everything it defined before: its servers and all of
its sections. An MCP server entry that is invalid now keeps its last valid version running. A
section that is invalid now keeps its previous valid value (the one the previous load used,
itself perhaps kept from an earlier load), with the section's diagnostics and one more, at its
key, saying so. A section that was absent or never valid stays absent. Diagnostics always show
the current problems.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from agent_ls.config.diagnostics import ConfigDiagnostic
from agent_ls.config.sections import SECTION_KEYS, FileSections
from agent_ls.config.settings import LoadedSettings

KEPT = "not valid: the last valid value of this section stays in force until it is fixed"


def unreadable_files(settings: LoadedSettings) -> set[Path]:
    """Files that could not be read as settings at all (their error has no JSON path)."""
    return {d.file for d in settings.diagnostics if d.severity == "error" and d.json_path == ()}


def keep_last_valid(old: LoadedSettings, new: LoadedSettings) -> None:
    """Put into ``new`` what ``old`` had that works where ``new`` has nothing that does (see the
    module)."""
    broken = unreadable_files(new)
    if broken:
        # The file's previous content stays in force: its servers, and its other settings.
        for name, cfg in old.servers.items():
            if cfg.source.file in broken and (name not in new.servers or new.servers[name].source.file != cfg.source.file):
                new.servers[name] = cfg
                new.failed.pop(name, None)
        old_layers = {file: (scope, root) for scope, file, root in old.layers}
        for file in broken:
            if file in old_layers:
                scope, root = old_layers[file]
                new.layers.append((scope, file, root))
                for k, v in root.items():
                    if k != "mcpServers":
                        new.other.setdefault(k, v)
    for name, failed in list(new.failed.items()):
        prev = old.servers.get(name)
        if prev is not None and prev.source.file == failed.source.file:
            new.servers[name] = prev  # the entry is broken now: its last valid version keeps running
            del new.failed[name]
    keep_last_valid_sections(old, new)  # the same per settings section (model, agent, toolActions...)


def keep_last_valid_sections(old: LoadedSettings, new: LoadedSettings) -> None:
    """Put ``old``'s valid sections where ``new`` has none that work (see the module)."""
    previous = {f.file: f for f in old.sections}
    out: list[FileSections] = []
    for current in new.sections:
        prev = previous.get(current.file)
        kept = {key: value for key in sorted(current.invalid)
                if prev is not None and (value := getattr(prev.values, SECTION_KEYS[key])) is not None}
        if kept:
            values = attrs.evolve(current.values, **{SECTION_KEYS[key]: value for key, value in kept.items()})
            current = attrs.evolve(current, values=values, invalid=current.invalid - set(kept))
            new.diagnostics.extend(ConfigDiagnostic(current.file, (key,), KEPT, "information",
                                                    current.key_spans.get(key)) for key in kept)
        out.append(current)
    present = {f.file for f in new.sections}
    unreadable = unreadable_files(new)
    out += [f for f in old.sections if f.file in unreadable and f.file not in present]
    order = {file: i for i, file in enumerate(new.files)}
    out.sort(key=lambda f: order.get(f.file, len(order)))
    new.sections[:] = out
