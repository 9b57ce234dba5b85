"""Decisions the user made about servers, remembered per workspace in the user data dir.

- trust: a stdio server defined by a workspace file runs only once approved; the decision
  is keyed by workspace folder and the entry's trust key (a hash of command, args, env keys
  and cwd), so a changed entry asks again;
- enabled/disabled overrides made from the editor (persistent per-project on/off).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any


class HostState:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._data: dict[str, Any] = self._read()

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".host-state.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self._data, f, indent=2, sort_keys=True)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @staticmethod
    def _ws(workspace: Path | None) -> str:
        return str(workspace.resolve()) if workspace is not None else "(none)"

    def trust(self, workspace: Path | None, key: str) -> bool | None:
        with self._lock:
            return self._data.get("trust", {}).get(self._ws(workspace), {}).get(key)

    def set_trust(self, workspace: Path | None, key: str, trusted: bool) -> None:
        with self._lock:
            self._data.setdefault("trust", {}).setdefault(self._ws(workspace), {})[key] = trusted
            self._write()

    def enabled_override(self, workspace: Path | None, server: str) -> bool | None:
        with self._lock:
            return self._data.get("enabled", {}).get(self._ws(workspace), {}).get(server)

    def set_enabled(self, workspace: Path | None, server: str, enabled: bool | None) -> None:
        with self._lock:
            table = self._data.setdefault("enabled", {}).setdefault(self._ws(workspace), {})
            if enabled is None:
                table.pop(server, None)
            else:
                table[server] = enabled
            self._write()
