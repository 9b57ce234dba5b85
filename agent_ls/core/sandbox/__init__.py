"""The OS sandbox for every process the agent causes (``bash``, hooks, stdio MCP servers) and the
same file rules for the tools that work in-process.

:mod:`.policy` (what may be touched), :mod:`.bwrap` (bubblewrap, Linux), :mod:`.landlock` (the
Linux fallback), :mod:`.seatbelt` (macOS profile text), :mod:`.proxy` (the network proxy outside),
:mod:`.runner` (which mechanism, and :meth:`Sandbox.wrap`: the one seam every spawn goes through),
:mod:`.netns` (the network namespace a conversation's commands share).
docs/security.md explains the choice of mechanisms.
"""

from agent_ls.core.sandbox.netns import SharedNetwork
from agent_ls.core.sandbox.policy import NetworkPolicy, NetworkRuleError, SandboxPolicy
from agent_ls.core.sandbox.runner import (
    Availability,
    Mechanism,
    Sandbox,
    SandboxUnavailable,
    Wrapped,
    detect,
    is_placeholder,
    placeholder_event,
)

__all__ = ["Availability", "Mechanism", "NetworkPolicy", "NetworkRuleError", "Sandbox", "SandboxPolicy",
           "SandboxUnavailable", "SharedNetwork", "Wrapped", "detect", "is_placeholder", "placeholder_event"]
