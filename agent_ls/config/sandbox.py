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
from collections.abc import Sequence

import attrs

from agent_ls.config import paths as config_paths
from agent_ls.config.sections import SandboxSection
from agent_ls.core.sandbox import Sandbox
from agent_ls.core.sandbox.policy import (
    DEFAULT_CACHE_DIRS_HOME,
    DEFAULT_DENY_READ_HOME,
    NetworkPolicy,
    SandboxPolicy,
)
from agent_ls.core.sandbox.proxy import AskHost


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
        return Sandbox(self.policy(roots), ask_host=ask_host) if self.enabled else None
