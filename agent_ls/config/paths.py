"""Where agent-ls keeps the user's files: the settings file and the data folder (host state,
sessions, OAuth tokens). Environment variables override the platform directories."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "agent-ls"


def user_config_dir() -> Path:
    override = os.environ.get("AGENT_LS_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir(APP_NAME))


def user_settings_path() -> Path:
    override = os.environ.get("AGENT_LS_USER_SETTINGS")
    return Path(override) if override else user_config_dir() / "settings.json"


def user_data_dir() -> Path:
    override = os.environ.get("AGENT_LS_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME))


def host_state_path() -> Path:
    """The user's remembered decisions (trust, enabled servers, protocol eras)."""
    return user_data_dir() / "host-state.json"


def catalogue_path() -> Path:
    """Where each MCP server's last catalogue is kept (tools ready before the servers connect)."""
    return user_data_dir() / "mcp-catalogue"
