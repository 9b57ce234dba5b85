"""Why a server connection failed or died, in words for the status, and when to try again.

:func:`describe_failure` turns whatever ended a spawn, handshake or first listing into a
:class:`ServerError` (the phase, the reason, the stderr tail); :func:`death_message` says how
a server that was ready went away; :class:`RestartPolicy` is the backoff for restarting it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from agent_ls.mcp.oauth.state import describe_auth_error, is_auth_error
from agent_ls.mcp.status import Phase, ServerError

if TYPE_CHECKING:
    from agent_ls.config.entries import ServerConfig

CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001


class ServerUnavailable(RuntimeError):
    """A call was made to a server that is not connected."""


class SpawnError(Exception):
    """The stdio server could not be started (command or working directory missing, exec failed)."""

    def __init__(self, message: str, errno: int | None) -> None:
        super().__init__(message)
        self.errno = errno


class Lost(Exception):
    """A server that was ready went away (its process exited, its connection closed)."""


class AuthRequired(Exception):
    """The server refused a request for lack of sign-in during the handshake or first listing."""


@attrs.define
class RestartPolicy:
    max_restarts: int = 5
    """Restarts in a row before the server is left failed."""
    base_delay: float = 0.5
    max_delay: float = 30.0
    stable_after: float = 60.0
    """A connection that stayed up this long resets the restart count."""

    def delay(self, attempt: int) -> float:
        return min(self.max_delay, self.base_delay * (2 ** max(0, attempt - 1)))


def unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def http_status(exc: BaseException) -> int | None:
    resp = getattr(exc, "response", None)
    code = getattr(resp, "status_code", None)
    if isinstance(code, int):
        return code
    return None


def _how_it_exited(code: int | None) -> str:
    return f" with exit code {code}" if code is not None and code >= 0 else (
        f" on signal {-code}" if code is not None else "")


def death_message(exc: BaseException | None, stdio: bool, exit_code: int | None, tail: Sequence[str]) -> str:
    """How a server that was ready went away (``exit_code``: the stdio process's own status)."""
    detail = ""
    if exc is not None:
        inner = unwrap(exc)
        detail = f": {type(inner).__name__}: {inner}"
    msg = f"the server stopped responding (connection lost{detail})"
    if stdio:
        msg = f"the server process exited{_how_it_exited(exit_code)}{detail}"
    if tail:
        msg += " | stderr: " + " / ".join(tail)
    return msg


def describe_failure(
    exc: BaseException, phase: Phase, timed_out: bool, *, config: ServerConfig, tail: Sequence[str],
    exit_code: Callable[[], int | None], redact: Callable[[str], str],
) -> ServerError:
    """Why a connection attempt failed before the server was ready (``tail``: its last stderr lines)."""
    cfg = config
    inner = unwrap(exc)
    tail_txt = (" | stderr: " + " / ".join(tail)) if tail else ""
    if isinstance(inner, SpawnError):
        return ServerError(Phase.SPAWN, redact(str(inner) + tail_txt), errno=inner.errno)
    if is_auth_error(inner):
        return ServerError(Phase.AUTH, redact(f"sign-in failed: {describe_auth_error(inner)}"))
    if timed_out:
        what = "the handshake" if phase in (Phase.SPAWN, Phase.HANDSHAKE) else "the first listing"
        return ServerError(
            Phase.HANDSHAKE if phase is not Phase.LISTING else Phase.LISTING,
            redact(f"{what} did not finish within {cfg.connect_timeout:g}s (connectTimeout){tail_txt}"),
        )
    status = http_status(inner)
    if status is not None:
        hint = " (authentication required: check the headers or sign in)" if status in (401, 403) else ""
        return ServerError(
            Phase.HANDSHAKE, redact(f"HTTP {status} from {cfg.url}{hint}"), http_status=status
        )
    if isinstance(inner, MCPError) and inner.error.code == CONNECTION_CLOSED and cfg.transport == "stdio":
        code = exit_code()
        return ServerError(
            Phase.HANDSHAKE, redact(f"the server process exited during the handshake{_how_it_exited(code)}{tail_txt}"),
            exit_code=code,
        )
    if type(inner).__name__ == "ConnectError":
        return ServerError(Phase.HANDSHAKE, redact(f"cannot connect to {cfg.url}: {inner}"))
    if isinstance(inner, MCPError) and inner.error.code == types.UNSUPPORTED_PROTOCOL_VERSION \
            and phase in (Phase.SPAWN, Phase.HANDSHAKE):
        # -32022 ends the handshake only when no era worked: a modern-only server whose
        # server/discover answer was unusable (malformed, or naming no version we speak)
        data = inner.error.data
        theirs = data.get("supported") if isinstance(data, dict) else None
        says = f"the server says: {inner.error.message}" + (
            f"; it supports {', '.join(map(str, theirs))}" if isinstance(theirs, list) and theirs else "")
        ours = ", ".join([*MODERN_PROTOCOL_VERSIONS, *reversed(HANDSHAKE_PROTOCOL_VERSIONS)])
        why = (
            "the server refuses the initialize handshake (a 2026-era server), and its "
            "server/discover answer was unusable: malformed, or naming no protocol version agent-ls "
            f"speaks ({ours})" if cfg.protocol != "legacy" else
            'the server refuses the initialize handshake (it speaks only a newer protocol era); '
            'try "protocol": "auto"'
        )
        return ServerError(Phase.HANDSHAKE, redact(f"no protocol version in common: {why} ({says}){tail_txt}"))
    ph = Phase.HANDSHAKE if phase is Phase.SPAWN else phase
    return ServerError(ph, redact(f"{type(inner).__name__}: {inner}{tail_txt}"))
