"""Building the MCP manager of a set of workspace folders from their settings.

Every front end starts the host through :class:`agent_ls.runtime.host.RuntimeHost`, which
imports this module off the event loop (the MCP SDK takes a while) and calls
:func:`create_manager`, so a headless check (``agent-ls mcp status``) runs exactly the code the
editor runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_ls.config.paths import catalogue_path, host_state_path, user_data_dir
from agent_ls.config.settings import LoadedSettings
from agent_ls.config.state import HostState
from agent_ls.mcp.catalogue import CatalogueStore
from agent_ls.mcp.manager import MCPManager
from agent_ls.mcp.oauth.store import OAuthStore
from agent_ls.mcp.results import DEFAULT_MAX_OUTPUT_CHARS


def max_output_chars(settings: LoadedSettings) -> int:
    """``"mcp": {"maxOutputChars": N}`` (checked by the settings layer), else the default."""
    mcp_opts = settings.merged_sections().mcp
    if mcp_opts is not None and mcp_opts.max_output_chars is not None:
        return mcp_opts.max_output_chars
    return DEFAULT_MAX_OUTPUT_CHARS


def oauth_store_path() -> Path:
    """Where OAuth tokens and client registrations live (0700; one 0600 file per server)."""
    return user_data_dir() / "oauth"


def create_manager(folders: Sequence[Path], settings: LoadedSettings, **kwargs: Any) -> MCPManager:
    """The manager the editor and the CLI use. Keyword arguments go to :class:`MCPManager`
    (``trust_handler``, ``elicitation_handler``, ``sampling_handler``, ``on_change``,
    ``auth_opener``, ``sign_in_timeout``...)."""
    kwargs.setdefault("state", HostState(host_state_path()))
    kwargs.setdefault("oauth_store", OAuthStore(oauth_store_path()))
    kwargs.setdefault("catalogue", CatalogueStore(catalogue_path()))
    kwargs.setdefault("max_output_chars", max_output_chars(settings))
    return MCPManager(roots=list(folders), **kwargs)
