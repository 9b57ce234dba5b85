"""Each server's last tool/prompt/resource catalogue, kept on disk so the agent and the servers
view have every tool from the first moment, before the servers have connected.

One file per entry: ``<dir>/<key>.json`` where the key hashes the workspace folder, the server
name and the entry's effective configuration (:meth:`ServerConfig.fingerprint`), so an entry
that changed in any way starts with no cache. A file holds

- ``listing``: the catalogue the server listed last (written after every complete listing);
- ``responses``: the mcp SDK's response cache for this entry (``ttlMs``/``cacheScope`` of the
  2026-07-28 protocol, :class:`FileResponseCache`), so a list the server declared fresh is not
  asked for again within its TTL, across reconnects and editor restarts.

Files are private (0600 in a 0700 folder), written atomically, bounded in size and number
(the least recently written are removed first). A file that cannot be read is a miss, never
an error: the catalogue is an optimisation.

The language server reads it before any server is connected (``server/host.py``), so this
module imports neither pydantic nor the mcp SDK at its top: ``mcp_types`` costs 400-900 ms and
``mcp.client.caching`` about 1 s (the whole SDK) on a loaded 2-core machine, pydantic about
50 ms (``python -X importtime``); the functions that need them import them when called.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.client.caching import CacheEntry, CacheKey
    from pydantic import BaseModel

log = logging.getLogger(__name__)

MAX_FILES = 256
"""Catalogues kept; beyond that the least recently written are removed."""
MAX_FILE_BYTES = 8 * 1024 * 1024
"""A catalogue larger than this is not kept (nor read)."""
FORMAT = 1

def _result_types() -> dict[str, type[BaseModel]]:
    """The results the response cache keeps, by type name (the SDK's models, imported when a
    cache is first used: this module is read before the SDK is loaded, see :meth:`peek_tools`)."""
    import mcp_types as types

    return {
        cls.__name__: cls
        for cls in (types.ListToolsResult, types.ListPromptsResult, types.ListResourcesResult,
                    types.ListResourceTemplatesResult, types.ReadResourceResult)
    }


@attrs.define
class Listing:
    """What a server listed (a connection's live listing, and the catalogue kept of it)."""

    tools: list[types.Tool] = attrs.field(factory=list)
    prompts: list[types.Prompt] = attrs.field(factory=list)
    resources: list[types.Resource] = attrs.field(factory=list)
    resource_templates: list[types.ResourceTemplate] = attrs.field(factory=list)
    errors: list[str] = attrs.field(factory=list)
    notes: list[str] = attrs.field(factory=list)
    """Tools the SDK left out (an invalid ``x-mcp-header``): shown in the status, not a failure."""

    @property
    def empty(self) -> bool:
        return not (self.tools or self.prompts or self.resources or self.resource_templates)


def _kinds() -> tuple[tuple[str, type[BaseModel]], ...]:
    import mcp_types as types

    return (("tools", types.Tool), ("prompts", types.Prompt), ("resources", types.Resource),
            ("resource_templates", types.ResourceTemplate))


def catalogue_key(workspace_folder: Path | None, name: str, fingerprint: str) -> str:
    data = json.dumps([str(workspace_folder) if workspace_folder else "", name, fingerprint])
    return hashlib.sha256(data.encode()).hexdigest()[:32]


class CatalogueStore:
    """The folder of per-entry catalogue files."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def _read(self, key: str) -> dict[str, Any]:
        path = self._path(key)
        try:
            with open(path, "rb") as f:
                raw = f.read(MAX_FILE_BYTES + 1)
            if len(raw) > MAX_FILE_BYTES:
                return {}
            data = json.loads(raw)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            log.info("MCP catalogue %s is unreadable (%s); starting without it", path.name, e)
            return {}
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return {}
        return data

    def _write(self, key: str, update: dict[str, Any]) -> None:
        data = self._read(key)
        data.update(update)
        data["format"] = FORMAT
        text = json.dumps(data, separators=(",", ":"))
        if len(text) > MAX_FILE_BYTES:
            log.info("MCP catalogue %s is over %d bytes; not kept", key, MAX_FILE_BYTES)
            self.forget(key)
            return
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".catalogue-", dir=self.directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self._path(key))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._prune()

    def _prune(self) -> None:
        try:
            files = sorted(self.directory.glob("*.json"), key=lambda p: p.stat().st_mtime)
        except OSError:
            return
        for old in files[:-MAX_FILES] if len(files) > MAX_FILES else []:
            with contextlib.suppress(OSError):
                old.unlink()

    # the catalogue --------------------------------------------------------------------------
    def load(self, key: str) -> Listing | None:
        listing = self._read(key).get("listing")
        if not isinstance(listing, dict):
            return None
        from pydantic import ValidationError

        out = Listing()
        try:
            for kind, model in _kinds():
                items = listing.get(kind, [])
                setattr(out, kind, [model.model_validate(item) for item in items])
        except (ValidationError, TypeError) as e:
            log.info("MCP catalogue %s does not match the current schema (%s); ignored", key, e)
            return None
        return out

    def save(self, key: str, catalogue: Listing) -> None:
        """Keep what ``catalogue`` lists (its errors and notes are not kept)."""
        listing: dict[str, Any] = {"savedAt": time.time()}
        for kind, _model in _kinds():
            listing[kind] = [i.model_dump(mode="json", by_alias=True, exclude_none=True)
                             for i in getattr(catalogue, kind)]
        try:
            self._write(key, {"listing": listing})
        except OSError as e:
            log.info("could not keep the MCP catalogue %s: %s", key, e)

    def peek(self, key: str) -> dict[str, list[dict[str, Any]]] | None:
        """The kept catalogue as plain JSON objects by kind (``tools``, ``prompts``...; each item
        with a string ``name`` or ``uri``), read without the SDK: what the editor is shown while
        the host itself is still loading. None when nothing is kept."""
        listing = self._read(key).get("listing")
        if not isinstance(listing, dict):
            return None
        out: dict[str, list[dict[str, Any]]] = {}
        for kind in ("tools", "prompts", "resources", "resource_templates"):
            items = listing.get(kind)
            out[kind] = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
        out["tools"] = [t for t in out["tools"] if isinstance(t.get("name"), str)]
        return out

    def forget(self, key: str) -> None:
        with contextlib.suppress(OSError):
            self._path(key).unlink()

    # the SDK's response cache ------------------------------------------------------------------
    def responses(self, key: str) -> FileResponseCache:
        return FileResponseCache(self, key)


def _cache_id(key: CacheKey) -> str:
    return json.dumps([key.method, key.params_key, key.partition])


class FileResponseCache:
    """A :class:`mcp.client.caching.ResponseCacheStore` kept in an entry's catalogue file.

    The SDK decides what is fresh (``ttlMs``), what may be shared (``cacheScope``) and what a
    list-changed notification evicts; this class only stores entries. Values are written as
    JSON with their result type and read back as that model (anything else is a miss).
    """

    def __init__(self, store: CatalogueStore, key: str) -> None:
        self._store = store
        self._key = key

    def _entries(self) -> dict[str, Any]:
        entries = self._store._read(self._key).get("responses")
        return entries if isinstance(entries, dict) else {}

    def _put(self, entries: dict[str, Any]) -> None:
        now = time.time()
        live = {k: v for k, v in entries.items()
                if isinstance(v, dict) and isinstance(v.get("expiresAt"), (int, float)) and v["expiresAt"] > now}
        try:
            self._store._write(self._key, {"responses": live})
        except OSError as e:
            log.info("could not keep the MCP response cache %s: %s", self._key, e)

    async def get(self, key: CacheKey) -> CacheEntry | None:
        from mcp.client.caching import CacheEntry
        from pydantic import ValidationError

        raw = self._entries().get(_cache_id(key))
        if not isinstance(raw, dict):
            return None
        model = _result_types().get(str(raw.get("type")))
        scope = raw.get("scope")
        if model is None or scope not in ("public", "private"):
            return None
        try:
            value = model.model_validate(raw.get("value"))
        except ValidationError:
            return None
        expires = raw.get("expiresAt")
        return CacheEntry(value=value, scope=scope, expires_at=float(expires) if expires is not None else None)

    async def set(self, key: CacheKey, entry: CacheEntry) -> None:
        from pydantic import BaseModel

        value = entry.value
        if not isinstance(value, BaseModel) or type(value).__name__ not in _result_types():
            return
        entries = self._entries()
        entries[_cache_id(key)] = {
            "type": type(value).__name__,
            "value": value.model_dump(mode="json", by_alias=True, exclude_none=True),
            "scope": entry.scope,
            "expiresAt": entry.expires_at,
        }
        self._put(entries)

    async def delete(self, key: CacheKey) -> None:
        entries = self._entries()
        if entries.pop(_cache_id(key), None) is not None:
            self._put(entries)

    async def clear(self) -> None:
        self._put({})
