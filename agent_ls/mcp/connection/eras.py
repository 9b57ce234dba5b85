"""The protocol era each server entry negotiated (``protocol: auto``), remembered across starts.

An entry that negotiated the 2026-07-28 protocol before is connected with its remembered
``server/discover`` answer (no round trip); one that spoke the legacy handshake skips the
``server/discover`` probe. The record lives in the host state (:class:`EraMemory`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

if TYPE_CHECKING:
    from mcp import Client

    from agent_ls.config.entries import ServerConfig

log = logging.getLogger(__name__)


class EraMemory(Protocol):
    """The protocol era an entry negotiated, by entry key (:class:`agent_ls.config.state.HostState`)."""

    def era(self, key: str) -> dict[str, Any] | None: ...

    def set_era(self, key: str, name: str, mode: str, discover: dict[str, Any] | None) -> None: ...

    def forget_era(self, key: str) -> None: ...


def era_for_attempt(cfg: ServerConfig, eras: EraMemory | None) -> tuple[str, types.DiscoverResult | None, bool]:
    """``(mode, prior discover result, recalled)``: with ``protocol: auto`` an era this entry
    negotiated before is used directly (no ``server/discover`` probe for a legacy server, no
    round trip for a modern one); otherwise the configured mode."""
    if cfg.protocol != "auto" or eras is None:
        return cfg.protocol, None, False
    record = eras.era(cfg.fingerprint())
    mode = record.get("mode") if record else None
    if mode == "legacy":
        return "legacy", None, True
    if mode in MODERN_PROTOCOL_VERSIONS and record is not None and isinstance(record.get("discover"), dict):
        try:
            return str(mode), types.DiscoverResult.model_validate(record["discover"]), True
        except ValidationError:
            pass
    return "auto", None, False


def remember_era(cfg: ServerConfig, eras: EraMemory | None, client: Client) -> None:
    """Keep the era ``client`` negotiated (and its discover answer) for the entry's next start."""
    if cfg.protocol != "auto" or eras is None:
        return
    version = client.protocol_version
    discover = client.session.discover_result if version in MODERN_PROTOCOL_VERSIONS else None
    mode = version if discover is not None else "legacy"
    dumped = discover.model_dump(mode="json", by_alias=True, exclude_none=True) if discover is not None else None
    key = cfg.fingerprint()
    known = eras.era(key)
    if known is None or known.get("mode") != mode or known.get("discover") != dumped:
        try:
            eras.set_era(key, cfg.name, mode, dumped)
        except Exception as e:  # remembering is an optimisation: never a reason to fail
            log.info("MCP server %s: could not remember its protocol era: %s", cfg.name, e)
