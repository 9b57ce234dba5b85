"""The status the host is about to have, before the MCP SDK is even imported.

Loading the host (the SDK, pydantic models, HTTP stack) takes a second or more, longer while
twenty servers start on the same cores. Meanwhile the editor should already see every server
and, for the ones that will start, the tools kept from their last connection: this module
computes exactly what :meth:`MCPManager.status` reports right after ``apply`` (the same
activation decision, the same model-facing names, the same capabilities), from the settings,
the remembered decisions and the kept catalogue only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_ls.config.sandbox import server_sandbox_label
from agent_ls.core import naming
from agent_ls.mcp.capability import infer_capability
from agent_ls.mcp.catalogue import CatalogueStore, catalogue_key
from agent_ls.mcp.status import Phase, ServerStatus, State, ToolInfo, activation, error_dict

if TYPE_CHECKING:
    from agent_ls.config.settings import LoadedSettings
    from agent_ls.config.state import HostState


def _description(tool: dict[str, Any]) -> str:
    for key in ("description", "title"):
        value = tool.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def preview_status(settings: LoadedSettings, state: HostState | None,
                   catalogue: CatalogueStore | None) -> list[ServerStatus]:
    """One row per configured server, sorted by name as the manager sorts them: servers that
    will start are ``starting`` with their kept catalogue; the others in the state they will
    wait in; entries that failed to load are ``failed`` with the reason."""
    kept: dict[str, dict[str, list[dict[str, Any]]]] = {}
    rows: dict[str, dict[str, Any]] = {}
    for name, cfg in settings.servers.items():
        decided = activation(cfg, None, state)
        row: dict[str, Any] = {
            "name": name, "state": decided.state.value, "transport": cfg.transport,
            "scope": cfg.source.scope.value, "source": str(cfg.source.file), "error": error_dict(decided.error),
            "sandbox": server_sandbox_label(cfg.transport, cfg.sandbox),
        }
        if decided.state is State.STARTING and catalogue is not None:
            listing = catalogue.peek(catalogue_key(cfg.source.workspace_folder, name, cfg.fingerprint()))
            if listing is not None:
                kept[name] = listing
                row.update(tool_count=len(listing["tools"]), prompt_count=len(listing["prompts"]),
                           resource_count=len(listing["resources"]))
        rows[name] = row
    for name, failed in settings.failed.items():
        rows[name] = {"name": name, "state": State.FAILED.value, "transport": "?",
                      "scope": failed.source.scope.value, "source": str(failed.source.file),
                      "error": {"phase": Phase.CONFIG.value, "message": failed.reason}}
    names = naming.assign_names((server, t["name"]) for server, listing in kept.items() for t in listing["tools"])
    out = []
    for name in sorted(rows):
        tools = sorted(
            (ToolInfo(names[(name, t["name"])], t["name"],
                      infer_capability(t["name"], _description(t), _annotations(t)).value, _description(t))
             for t in kept.get(name, {}).get("tools", [])),
            key=lambda info: info.name,
        )
        out.append(ServerStatus(**rows[name], tools=tuple(tools)))
    return out


def _annotations(tool: dict[str, Any]) -> dict[str, Any] | None:
    ann = tool.get("annotations")
    return ann if isinstance(ann, dict) else None
