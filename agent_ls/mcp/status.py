"""What the host says about each server: its state, why it is not usable, and the status rows
the editor and the CLI show. Light on purpose (no MCP SDK import): the language server answers
``mcp/status`` from these types, the settings and the kept catalogue before the SDK is loaded
(:mod:`agent_ls.mcp.preview`)."""

from __future__ import annotations

import enum
import time
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from agent_ls.config.entries import ServerConfig
    from agent_ls.config.state import HostState

WAITING_FOR_WORKSPACE_TRUST = "waiting until you trust this workspace (its settings files define this server)"
NOT_TRUSTED = "you did not trust this workspace server"
STILL_STARTING = ("This MCP server is still starting: its tools are not listed yet. tool_search finds them: "
                  "a search waits for the server to connect (at most its connectTimeout).")
"""What the model is told in place of a server's instructions while it starts (a prompt does not
wait for the servers starting with the host, issue 30 item 2; ``tool_search`` does, issue 44)."""


class State(enum.StrEnum):
    STARTING = "starting"
    CONNECTED = "connected"
    LISTING_FAILED = "connected-listing-failed"
    RESTARTING = "restarting"
    FAILED = "failed"
    DISABLED = "disabled"
    AWAITING_TRUST = "awaiting-trust"
    UNTRUSTED = "untrusted"
    NEEDS_SIGN_IN = "needs-sign-in"
    """An OAuth server with no usable tokens: waits for ``MCPManager.sign_in`` (no browser opens
    by itself)."""
    STOPPED = "stopped"


class Phase(enum.StrEnum):
    CONFIG = "config"
    TRUST = "trust"
    SPAWN = "spawn"
    HANDSHAKE = "handshake"
    AUTH = "auth"
    LISTING = "listing"
    RUNNING = "running"


@attrs.frozen
class ServerError:
    """Why a server is not (fully) usable: the phase that failed and the details."""

    phase: Phase
    message: str
    errno: int | None = None
    exit_code: int | None = None
    http_status: int | None = None
    at: float = attrs.field(factory=time.time)

    def __str__(self) -> str:
        return f"{self.phase.value}: {self.message}"


@attrs.frozen
class ToolInfo:
    name: str
    """Model-facing name."""
    original: str
    """Name on the server."""
    capability: str
    description: str


@attrs.frozen
class ServerStatus:
    """What the status view shows for one server (secrets redacted)."""

    name: str
    state: str
    transport: str
    scope: str
    source: str
    """The settings file that defines the server."""
    tool_count: int = 0
    prompt_count: int = 0
    resource_count: int = 0
    error: dict[str, Any] | None = None
    """``phase``, ``message`` and, when known, ``errno``, ``exitCode``, ``httpStatus``."""
    stderr_tail: tuple[str, ...] = ()
    server_info: str | None = None
    protocol_version: str | None = None
    restarts: int = 0
    tools: tuple[ToolInfo, ...] = ()
    pid: int | None = None
    """Process id of a connected stdio server."""
    auth: dict[str, Any] | None = None
    """OAuth: None when the server does not use it, else ``state`` (needs-sign-in, signing-in,
    signed-in, failed), ``expiresAt`` (epoch seconds, when signed in and known) and ``reason``."""
    sandbox: str | None = None
    """A stdio server that runs in the OS sandbox: the mechanism and its network in words (None:
    not sandboxed, or not a stdio server)."""


def error_dict(err: ServerError | None) -> dict[str, Any] | None:
    if err is None:
        return None
    out: dict[str, Any] = {"phase": err.phase.value, "message": err.message}
    if err.errno is not None:
        out["errno"] = err.errno
    if err.exit_code is not None:
        out["exitCode"] = err.exit_code
    if err.http_status is not None:
        out["httpStatus"] = err.http_status
    return out


@attrs.frozen
class Activation:
    """What becomes of a configured server when the host takes it up."""

    state: State
    """STARTING when it may start; otherwise the state it waits in."""
    error: ServerError | None = None
    ask_trust: bool = False
    """A workspace server never decided on: ask the user."""


def activation(cfg: ServerConfig, override: bool | None, state_store: HostState | None) -> Activation:
    """The one decision on whether a server starts: a restricted folder's servers wait for the
    folder's trust, a disabled one stays off (``override``: enabled or disabled from the editor),
    a workspace server runs only once the user trusted this exact entry."""
    ws = cfg.source.workspace_folder
    if override is None and state_store is not None:
        override = state_store.enabled_override(ws, cfg.name)
    disabled = cfg.disabled if override is None else not override
    if cfg.restricted:
        return Activation(State.AWAITING_TRUST, ServerError(Phase.TRUST, WAITING_FOR_WORKSPACE_TRUST))
    if disabled:
        return Activation(State.DISABLED)
    if cfg.needs_trust:
        decision = state_store.trust(ws, cfg.trust_key()) if state_store else None
        if decision is False:
            return Activation(State.UNTRUSTED, ServerError(Phase.TRUST, NOT_TRUSTED))
        if decision is None:
            return Activation(State.AWAITING_TRUST, ask_trust=True)
    return Activation(State.STARTING)
