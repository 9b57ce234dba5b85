"""``agent.sandbox`` as the product uses it: defaults, the user's and the workspace's settings
combined (:func:`agent_ls.config.sections.merge_sandbox`: a workspace only narrows), and the
:class:`~agent_ls.core.sandbox.policy.SandboxPolicy` for a set of roots, for ``bash`` (the agent)
and stdio MCP servers (the MCP host) alike::

    "agent": {"sandbox": {
      "enabled": true,                          // default: on where a mechanism is available
      "allowWrite": ["~/.cache/my-tool"],       // more writable places (user settings only)
      "denyRead": ["~/secrets"],                // more unreadable places (a workspace may add)
      "network": "ask" | "off" | {"allow": ["pypi.org", "*.npmjs.org"]},   // default "ask"
      "autoAllow": false                        // commands the sandbox contains run unasked
    }}                                          //  (user settings only; bubblewrap only)
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from agent_ls.config import paths as config_paths
from agent_ls.config.sections import SandboxSection
from agent_ls.core.sandbox import Sandbox, detect
from agent_ls.core.sandbox.policy import (
    DEFAULT_CACHE_DIRS_HOME,
    DEFAULT_DENY_READ_HOME,
    Grants,
    NetworkPolicy,
    NetworkRuleError,
    SandboxPolicy,
    check_host_pattern,
)
from agent_ls.core.sandbox.proxy import AskHost

if TYPE_CHECKING:
    from agent_ls.config.state import HostState


@attrs.frozen
class SandboxSettings:
    enabled: bool = True
    allow_write: tuple[str, ...] = ()
    deny_read: tuple[str, ...] = ()
    network: NetworkPolicy = NetworkPolicy(ask=True)
    auto_allow: bool = False

    @classmethod
    def from_section(cls, section: SandboxSection | None) -> SandboxSettings:
        if section is None:
            return cls()
        return cls(enabled=section.enabled if section.enabled is not None else True,
                   allow_write=section.allow_write or (), deny_read=section.deny_read or (),
                   network=section.network if section.network is not None else NetworkPolicy(ask=True),
                   auto_allow=bool(section.auto_allow))

    def policy(self, roots: Sequence[str | os.PathLike[str]]) -> SandboxPolicy:
        """The policy for commands working in ``roots`` (relative ``denyRead`` entries are taken
        from the first root; ``allowWrite`` entries that do not exist are kept and skipped)."""
        home = os.path.expanduser("~")
        root_strs = [os.fspath(r) for r in roots] or [os.getcwd()]
        deny = [os.path.join(home, rel) for rel in DEFAULT_DENY_READ_HOME]
        deny += [str(config_paths.user_data_dir()), str(config_paths.user_config_dir())]
        deny += [os.path.join(root_strs[0], os.path.expanduser(p)) for p in self.deny_read]
        writes = [os.path.join(home, rel) for rel in DEFAULT_CACHE_DIRS_HOME] + list(self.allow_write)
        user_config = [str(config_paths.user_config_dir()), str(config_paths.user_settings_path())]
        return SandboxPolicy.build(root_strs, allow_write=writes, deny_read=deny, user_config=user_config,
                                   network=self.network, temp_dir=tempfile.gettempdir())

    def sandbox(self, roots: Sequence[str | os.PathLike[str]], ask_host: AskHost | None = None) -> Sandbox | None:
        """The sandbox for processes working in ``roots`` (None when the setting turns it off).
        Anything that starts a process for the agent (``bash``, a hook) wraps it with
        :meth:`Sandbox.wrap` / :meth:`Sandbox.wrap_shell`, and calls ``aclose()`` when done."""
        if not self.enabled:
            return None
        folders = [Path(r) for r in roots]
        return Sandbox(self.policy(roots), ask_host=ask_host, grants=lambda: workspace_grants(folders))


def server_sandbox_label(transport: str, sandbox: object | None) -> str | None:
    """How an MCP server is confined, in words for the status view (None: not sandboxed): its
    entry's ``sandbox`` (a :class:`~agent_ls.config.entries.ServerSandbox`) on a stdio server."""
    if transport != "stdio" or sandbox is None:
        return None
    avail = detect()
    if not avail.available:
        return "sandboxed, but no OS sandbox is available here: not started"
    network = getattr(sandbox, "network", None)
    described = network.describe() if isinstance(network, NetworkPolicy) else ""
    return f"sandboxed ({avail.mechanism.value})" + (f"; {described}" if described else "")


# -- the user's grants for a workspace ("allow for this workspace", "always allow this host") ----
_states: dict[Path, HostState] = {}
_states_lock = threading.Lock()


def _state() -> HostState:
    """The decisions file (``host-state.json``), one reader per path in this process."""
    from agent_ls.config.state import HostState

    path = config_paths.host_state_path()
    with _states_lock:
        state = _states.get(path)
        if state is None:
            state = _states[path] = HostState(path)
        return state


def grants_of(root: Path) -> dict[str, list[str]]:
    """``{"hosts": [...], "writes": [...]}``: the grants kept for one workspace folder."""
    return _state().sandbox_grants(root)


def workspace_grants(roots: Sequence[Path]) -> Grants:
    """The grants the user made for these workspace folders (none when the file cannot be read)."""
    hosts: list[str] = []
    writes: list[str] = []
    try:
        for root in roots:
            found = _state().sandbox_grants(root)
            hosts += found["hosts"]
            writes += found["writes"]
    except OSError:
        return Grants()
    return Grants(tuple(dict.fromkeys(hosts)), tuple(dict.fromkeys(writes)))


def check_grant(kind: str, value: str) -> str:
    """The grant's value as kept (a host name pattern, or an absolute real path), or ValueError."""
    if kind == "hosts":
        try:
            return check_host_pattern(value)
        except NetworkRuleError as exc:
            raise ValueError(str(exc)) from None
    if kind == "writes":
        if not isinstance(value, str) or not os.path.isabs(os.path.expanduser(value)):
            raise ValueError(f"a writable place must be an absolute path, not {value!r}")
        real = os.path.realpath(os.path.expanduser(value))
        if real in ("/", os.path.realpath(os.path.expanduser("~"))):
            raise ValueError(f"{real} is too broad to make writable from here (edit agent.sandbox.allowWrite "
                             "in your user settings if you mean it)")
        return real
    raise ValueError(f"unknown sandbox grant kind {kind!r} (expected hosts or writes)")


def set_workspace_grant(root: Path, kind: str, value: str, granted: bool) -> str:
    """Add or remove one grant for the workspace folder ``root``; the value as kept."""
    kept = check_grant(kind, value) if granted else value
    _state().set_sandbox_grant(root, kind, kept, granted)
    return kept
