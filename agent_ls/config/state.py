"""Decisions the user made, remembered per workspace in ``host-state.json`` (user data dir).

- workspace trust: one decision per workspace folder, bound to the digest of what its
  settings files ask for (see :mod:`agent_ls.config.trust`);
- entry trust: a workspace-defined MCP server runs only once approved; keyed by workspace
  folder and the entry's trust key (a hash of everything that decides what runs or where data
  goes), so a changed entry asks again; the last trusted version is kept to show what changed;
- enabled/disabled overrides made from the editor (persistent per-project on/off);
- sandbox grants (issue 47): per workspace folder, the hosts the user allowed always and the
  places they let sandboxed commands write ("allow for this workspace"); a workspace file can
  never add one (this file is outside the workspace, and unreadable inside the sandbox);
- the protocol era each MCP server entry negotiated (``protocol: auto``), so a legacy server is
  not probed with ``server/discover`` on every start and a modern one skips the probe too.

Several processes share the file (two editor windows, the terminal chat): every change is a
read-modify-write under an inter-process file lock (``filelock``), written atomically, so a
decision made in another window is never lost; reads pick up other processes' changes (the
file's stat is compared on each read). A file that cannot be parsed is moved aside
(``host-state.json.corrupt-<time>``) and reported, never overwritten: starting empty trusts
nothing.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import filelock

log = logging.getLogger(__name__)

LOCK_TIMEOUT = 15.0
"""Seconds to wait for another process's update of the file."""


class HostState:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock_file = path.with_name(path.name + ".lock")
        self._mutex = threading.RLock()
        self._data: dict[str, Any] = {}
        self._stamp: tuple[int, int, int] | None = None
        self.problem: str | None = None
        """Set when a corrupt file was moved aside (shown with the settings problems)."""

    # file I/O ------------------------------------------------------------------------------
    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _current(self, *, locked: bool = False) -> dict[str, Any]:
        """The file's content, re-read when it changed on disk (another process wrote it)."""
        stamp = self._file_stamp()
        if stamp is None:
            self._data, self._stamp = {}, None
            return self._data
        if stamp == self._stamp:
            return self._data
        try:
            text = self.path.read_text(encoding="utf-8")
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError(f"the file holds {type(data).__name__}, not an object")
        except (OSError, UnicodeDecodeError, ValueError) as e:
            if not locked:
                with self._file_lock():
                    return self._current(locked=True)
            self._set_aside(e)
            return self._data
        self._data, self._stamp = data, stamp
        return data

    def _set_aside(self, error: BaseException) -> None:
        aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
        try:
            os.replace(self.path, aside)
            where = f"moved to {aside}"
        except OSError as e:
            where = f"could not be moved aside ({e})"
        self.problem = (f"{self.path} could not be read ({error}); it was {where}. Trust and enable decisions "
                        "made before are not applied: the workspaces' servers ask again")
        log.error("%s", self.problem)
        self._data, self._stamp = {}, None

    def _file_lock(self) -> filelock.BaseFileLock:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return filelock.FileLock(str(self._lock_file), timeout=LOCK_TIMEOUT)

    def _write(self, data: dict[str, Any]) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".host-state.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=2, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._data, self._stamp = data, self._file_stamp()

    def _update(self, change: Callable[[dict[str, Any]], None]) -> None:
        """Read-modify-write under the inter-process lock."""
        with self._mutex, self._file_lock():
            self._stamp = None  # always re-read under the lock
            data = copy.deepcopy(self._current(locked=True))
            change(data)
            self._write(data)

    def _read(self, *keys: str) -> Any:
        with self._mutex:
            value: Any = self._current()
            for k in keys:
                if not isinstance(value, dict):
                    return None
                value = value.get(k)
            return copy.deepcopy(value)

    @staticmethod
    def _ws(workspace: Path | None) -> str:
        return str(workspace.resolve()) if workspace is not None else "(none)"

    # entry trust -----------------------------------------------------------------------------
    def trust(self, workspace: Path | None, key: str) -> bool | None:
        record = self._read("trust", self._ws(workspace), key)
        if isinstance(record, dict):
            record = record.get("trusted")
        return record if isinstance(record, bool) else None

    def set_trust(self, workspace: Path | None, key: str, trusted: bool, *, name: str | None = None,
                  entry: dict[str, Any] | None = None) -> None:
        """Remember the decision on one entry; ``entry`` (how it was shown) lets a later version
        of the same server say what changed."""
        record: dict[str, Any] = {"trusted": trusted, "at": time.time()}
        if name is not None:
            record["name"] = name
        if entry is not None:
            record["entry"] = entry

        def change(data: dict[str, Any]) -> None:
            data.setdefault("trust", {}).setdefault(self._ws(workspace), {})[key] = record

        self._update(change)

    def last_trusted_entry(self, workspace: Path | None, name: str) -> dict[str, Any] | None:
        """The most recently trusted version of the server ``name`` (as it was shown), if any."""
        table = self._read("trust", self._ws(workspace))
        best: dict[str, Any] | None = None
        for record in (table or {}).values():
            if (isinstance(record, dict) and record.get("trusted") is True and record.get("name") == name
                    and isinstance(record.get("entry"), dict)
                    and (best is None or record.get("at", 0) > best.get("at", 0))):
                best = record
        return best["entry"] if best is not None else None

    # workspace trust -------------------------------------------------------------------------
    def workspace_decision(self, workspace: Path) -> dict[str, Any] | None:
        """``{"digest", "trusted", "settings", "at"}`` of the folder's last decision, or None."""
        record = self._read("workspaces", self._ws(workspace))
        return record if isinstance(record, dict) else None

    def last_trusted_workspace(self, workspace: Path) -> dict[str, Any] | None:
        record = self._read("trustedWorkspaces", self._ws(workspace))
        return record if isinstance(record, dict) else None

    def set_workspace_decision(self, workspace: Path, digest: str, trusted: bool, settings: list[dict[str, Any]],
                               entries: Sequence[tuple[str, str, dict[str, Any]]] = ()) -> None:
        """Remember the folder's decision for ``digest``; trusting also trusts ``entries``
        (``(name, key, shown entry)``: the servers the user saw in the same prompt). All in one
        locked update."""
        ws = self._ws(workspace)
        now = time.time()
        record = {"digest": digest, "trusted": trusted, "settings": settings, "at": now}

        def change(data: dict[str, Any]) -> None:
            data.setdefault("workspaces", {})[ws] = record
            if trusted:
                data.setdefault("trustedWorkspaces", {})[ws] = record
                table = data.setdefault("trust", {}).setdefault(ws, {})
                for name, key, entry in entries:
                    table[key] = {"trusted": True, "at": now, "name": name, "entry": entry}

        self._update(change)

    # negotiated protocol eras ---------------------------------------------------------------------
    MAX_ERAS = 500

    def era(self, key: str) -> dict[str, Any] | None:
        """``{"mode": "legacy" | "<modern version>", "discover": {...} | None}`` for an entry key."""
        record = self._read("eras", key)
        return record if isinstance(record, dict) and isinstance(record.get("mode"), str) else None

    def set_era(self, key: str, name: str, mode: str, discover: dict[str, Any] | None) -> None:
        """Remember what an entry negotiated (the oldest records go beyond ``MAX_ERAS``)."""
        record = {"mode": mode, "discover": discover, "name": name, "at": time.time()}

        def change(data: dict[str, Any]) -> None:
            table = data.setdefault("eras", {})
            table[key] = record
            if len(table) > self.MAX_ERAS:
                for old in sorted(table, key=lambda k: table[k].get("at", 0))[: len(table) - self.MAX_ERAS]:
                    del table[old]

        self._update(change)

    def forget_era(self, key: str) -> None:
        if self.era(key) is not None:
            self._update(lambda data: data.get("eras", {}).pop(key, None))

    # enabled overrides -----------------------------------------------------------------------
    def enabled_override(self, workspace: Path | None, server: str) -> bool | None:
        value = self._read("enabled", self._ws(workspace), server)
        return value if isinstance(value, bool) else None

    def set_enabled(self, workspace: Path | None, server: str, enabled: bool | None) -> None:
        def change(data: dict[str, Any]) -> None:
            table = data.setdefault("enabled", {}).setdefault(self._ws(workspace), {})
            if enabled is None:
                table.pop(server, None)
            else:
                table[server] = enabled

        self._update(change)

    # sandbox grants ----------------------------------------------------------------------------
    GRANT_KINDS = ("hosts", "writes")

    def sandbox_grants(self, workspace: Path | None) -> dict[str, list[str]]:
        """``{"hosts": [...], "writes": [...]}``: what the user allowed the sandbox in this folder."""
        record = self._read("sandbox", self._ws(workspace))
        record = record if isinstance(record, dict) else {}
        return {k: [v for v in record.get(k, []) if isinstance(v, str)] if isinstance(record.get(k), list) else []
                for k in self.GRANT_KINDS}

    def set_sandbox_grant(self, workspace: Path | None, kind: str, value: str, granted: bool) -> None:
        """Add (``granted``) or remove one grant of ``kind`` (``hosts`` or ``writes``)."""
        if kind not in self.GRANT_KINDS:
            raise ValueError(f"unknown sandbox grant kind {kind!r} (expected hosts or writes)")
        ws = self._ws(workspace)

        def change(data: dict[str, Any]) -> None:
            table = data.setdefault("sandbox", {})
            record = table.setdefault(ws, {})
            values = [v for v in record.get(kind, []) if v != value]
            if granted:
                values.append(value)
            record[kind] = values
            if not any(record.get(k) for k in self.GRANT_KINDS):
                table.pop(ws, None)

        self._update(change)
