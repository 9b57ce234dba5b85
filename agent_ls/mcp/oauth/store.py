"""Per-server OAuth state on disk: tokens, the client registration, discovered metadata.

One JSON file per server in ``<user data dir>/oauth/``, named by a hash of the server name
and URL (so a renamed server or a changed URL never reuses another server's tokens). The
directory is 0700 and every file 0600; writes go to a private temporary file that replaces
the old one atomically, so a crash never leaves half a token file. Tokens never go into
settings files.

What a record holds:

- ``tokens``: the last token response (access token, refresh token, scope) and
  ``expiresAt``, the absolute expiry (epoch seconds) computed when it was saved, so a new
  process knows whether to refresh before the first request;
- ``client``: the client registration (dynamic registration or a client ID metadata
  document) with ``clientSource`` (``dcr`` or ``cimd``); pre-registered clients from the
  settings are never stored;
- ``metadata``: the discovered authorization server and protected resource metadata, so a
  refresh after a restart goes to the right token endpoint without a new discovery;
- ``redirectPort``: the loopback port of the registered redirect URI;
- ``dpop``: the server's DPoP key (a private JWK, :mod:`agent_ls.mcp.oauth.dpop`) and ``ath``,
  the hash of the access token bound to it; kept with the tokens because a DPoP-bound token
  (and its refresh token) is useless without the key.

Several host processes share the records (two editor windows, the terminal chat): a token
refresh holds the record's lock file (``<key>.lock``, an OS file lock through ``filelock``)
from reading the stored refresh token until the rotated one is saved, so no process spends a
refresh token that another one has already rotated.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import stat
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import attrs
from filelock import AsyncFileLock

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600


def record_key(name: str, url: str) -> str:
    return hashlib.sha256(f"{name}\n{url}".encode()).hexdigest()[:32]


@attrs.define
class AuthRecord:
    server: str
    url: str
    tokens: dict[str, Any] | None = None
    expires_at: float | None = None
    client: dict[str, Any] | None = None
    client_source: str | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)
    redirect_port: int | None = None
    dpop: dict[str, Any] | None = None
    updated_at: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "url": self.url,
            "tokens": self.tokens,
            "expiresAt": self.expires_at,
            "client": self.client,
            "clientSource": self.client_source,
            "metadata": self.metadata,
            "redirectPort": self.redirect_port,
            "dpop": self.dpop,
            "updatedAt": self.updated_at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AuthRecord:
        def opt_dict(v: Any) -> dict[str, Any] | None:
            return v if isinstance(v, dict) else None

        exp = data.get("expiresAt")
        port = data.get("redirectPort")
        return cls(
            server=str(data.get("server", "")),
            url=str(data.get("url", "")),
            tokens=opt_dict(data.get("tokens")),
            expires_at=float(exp) if isinstance(exp, (int, float)) and not isinstance(exp, bool) else None,
            client=opt_dict(data.get("client")),
            client_source=data.get("clientSource") if isinstance(data.get("clientSource"), str) else None,
            metadata=opt_dict(data.get("metadata")) or {},
            redirect_port=port if isinstance(port, int) and not isinstance(port, bool) else None,
            dpop=opt_dict(data.get("dpop")),
            updated_at=float(data.get("updatedAt") or 0.0),
        )


class OAuthStore:
    """The ``oauth`` folder of the user data dir (created 0700 on first write)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()

    def path_for(self, name: str, url: str) -> Path:
        return self.root / f"{record_key(name, url)}.json"

    def load(self, name: str, url: str) -> AuthRecord | None:
        path = self.path_for(name, url)
        with self._lock:
            try:
                st = path.stat()
            except FileNotFoundError:
                return None
            except OSError as e:
                log.warning("cannot read the OAuth record of %s: %s", name, e)
                return None
            if stat.S_IMODE(st.st_mode) & 0o077:
                # Someone widened it: put it back before reading secrets out of it.
                with contextlib.suppress(OSError):
                    os.chmod(path, FILE_MODE)
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                log.warning("the OAuth record of %s is unreadable (%s); ignoring it", name, type(e).__name__)
                return None
        if not isinstance(data, dict):
            return None
        rec = AuthRecord.from_json(data)
        if rec.server != name or rec.url != url:
            return None
        return rec

    def save(self, record: AuthRecord) -> None:
        record.updated_at = time.time()
        path = self.path_for(record.server, record.url)
        with self._lock:
            self._ensure_dir()
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".oauth.", suffix=".tmp")
            try:
                os.fchmod(fd, FILE_MODE)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(record.to_json(), f, indent=2, sort_keys=True)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise

    def refresh_lock(self, name: str, url: str) -> AsyncFileLock:
        """The inter-process lock of one record (not reentrant; one per refresh)."""
        self._ensure_dir()
        return AsyncFileLock(self.root / f"{record_key(name, url)}.lock", mode=FILE_MODE,
                             preserve_lock_file=True)

    def delete(self, name: str, url: str) -> bool:
        with self._lock:
            try:
                self.path_for(name, url).unlink()
                return True
            except FileNotFoundError:
                return False

    def _ensure_dir(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        st = self.root.stat()
        if stat.S_IMODE(st.st_mode) != DIR_MODE:
            os.chmod(self.root, DIR_MODE)
