"""On a reload, the last valid value of each settings section stays in force.

A settings file that does not parse keeps all of its previous sections; a section that is
invalid now keeps its previous valid value (the one the previous load used, itself perhaps
kept from an earlier load), with the section's diagnostics and one more, at its key, saying
so. A section that was absent or never valid stays absent.
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
