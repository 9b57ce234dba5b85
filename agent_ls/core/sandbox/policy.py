"""What a sandboxed process may touch: the policy every mechanism enforces (the file tools that
work in-process refuse :attr:`SandboxPolicy.deny_read` too: :class:`agent_ls.agent.workspace.Workspace`).

Paths are absolute and real (symlinks resolved when the policy is built), so a symlink in the
workspace pointing at ``~/.ssh`` meets the same rule as ``~/.ssh`` itself.

- writable: the workspace roots and :attr:`SandboxPolicy.allow_write` (temp dir, package caches);
  everything else is read-only.
- read-only inside writable places: :attr:`SandboxPolicy.read_only`, the files that grant power
  (``.agent-ls/``, ``.claude/``, ``.vscode/``, ``.mcp.json``, ``.git/config``, ``.git/hooks``,
  the user's agent-ls config), **including when they do not exist yet** (the mechanism mounts an
  empty read-only placeholder there for the command's lifetime).
- unreadable: :attr:`SandboxPolicy.deny_read` (``~/.ssh``, ``~/.aws``, ... and the agent-ls
  config and data folders): an empty folder or an empty file inside the sandbox.
- network: :class:`NetworkPolicy`, decided per host name by the proxy outside the sandbox.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Sequence

import attrs

DEFAULT_DENY_READ_HOME: tuple[str, ...] = (
    ".ssh", ".aws", ".gnupg", ".config/gcloud", ".kube", ".netrc", ".docker/config.json",
    ".git-credentials", ".config/gh", ".npmrc", ".pypirc", ".azure",
)
"""Places under the home folder that hold credentials: unreadable in the sandbox by default."""

DEFAULT_CACHE_DIRS_HOME: tuple[str, ...] = (
    ".cache/pip", ".cache/uv", ".npm", ".cache/yarn", ".cache/pnpm", ".cargo/registry", ".cache/go-build",
)
"""Package managers' caches under the home folder: writable in the sandbox by default."""

POWER_NAMES: tuple[tuple[str, bool], ...] = (
    # (path relative to a workspace root, whether a placeholder guards it while it does not exist)
    (".agent-ls", True), (".claude", True), (".vscode", True), (".mcp.json", True),
    (".git/config", False), (".git/hooks", False), (".husky", False), (".githooks", False),
    (".envrc", False), (".gitmodules", False), (".gitattributes", False), (".github/workflows", False),
)
"""Files in a workspace that grant power (run code, name servers, loosen trust): read-only in the
sandbox. Those flagged stay read-only even while missing: an empty read-only placeholder is
mounted there (Claude Code's CVE-2026-25725: a sandboxed command created a missing
``.claude/settings.json`` whose hook later ran outside). A missing ``.git`` is guarded too
(``.git/hooks`` would run at the user's next commit): see :func:`power_paths`."""


class NetworkRuleError(ValueError):
    """A network rule that cannot be used (the message says which part and why)."""


def check_host_pattern(pattern: str) -> str:
    if not isinstance(pattern, str) or not pattern.strip():
        raise NetworkRuleError(f"a host name pattern must be a non-empty string, not {pattern!r}")
    p = pattern.strip().lower().rstrip(".")
    bad = set(p) - set("abcdefghijklmnopqrstuvwxyz0123456789-.*_:[]")
    if bad or "://" in pattern or "/" in p:
        raise NetworkRuleError(f"{pattern!r} is not a host name pattern (write 'pypi.org' or '*.npmjs.org': "
                               "no scheme, path or port)")
    return p


def host_matches(pattern: str, host: str) -> bool:
    """``pypi.org`` matches that name exactly; ``*.npmjs.org`` matches every subdomain (and not
    ``npmjs.org`` itself); ``*`` matches every host."""
    host = host.lower().rstrip(".")
    if pattern == "*":
        return True
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return fnmatch.fnmatchcase(host, pattern)


@attrs.frozen
class NetworkPolicy:
    """Which host names a sandboxed process may reach through the proxy (it has no other route).

    A host is refused unless it matches one pattern of every group in :attr:`limits` (what the
    workspace narrowed the user's setting to); then it is allowed when it matches :attr:`allow`,
    asked when :attr:`ask`, refused otherwise. ``off`` is no allow list and no asking."""

    allow: tuple[str, ...] = ()
    ask: bool = False
    limits: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def off(cls) -> NetworkPolicy:
        return cls()

    @classmethod
    def parse(cls, value: object) -> NetworkPolicy:
        """``"off"``, ``"ask"`` or ``{"allow": [...], "ask": false}``; :class:`NetworkRuleError`
        naming the problem otherwise."""
        if value == "off":
            return cls()
        if value == "ask":
            return cls(ask=True)
        if isinstance(value, dict):
            unknown = set(value) - {"allow", "ask"}
            if unknown:
                raise NetworkRuleError(f"unknown key(s) {', '.join(sorted(map(str, unknown)))} in the network rule "
                                       "(expected \"allow\" and \"ask\")")
            allow = value.get("allow", [])
            if not isinstance(allow, list):
                raise NetworkRuleError("\"allow\" must be a list of host name patterns")
            ask = value.get("ask", False)
            if not isinstance(ask, bool):
                raise NetworkRuleError("\"ask\" must be true or false")
            return cls(allow=tuple(check_host_pattern(p) for p in allow), ask=ask)
        raise NetworkRuleError(f"the network rule must be \"off\", \"ask\" or {{\"allow\": [...]}}, not {value!r}")

    @property
    def is_off(self) -> bool:
        return not self.allow and not self.ask

    def narrowed_by(self, other: NetworkPolicy) -> NetworkPolicy:
        """This (the user's) rule narrowed by ``other`` (a workspace's): never reaches more.
        ``off`` wins; ``ask`` changes nothing; an allow list limits the hosts to those it names."""
        if other.is_off or self.is_off:
            return NetworkPolicy.off()
        if other.allow and not other.ask:
            return attrs.evolve(self, limits=(*self.limits, other.allow))
        return self

    def decide(self, host: str) -> str:
        """``"allow"``, ``"ask"`` or ``"deny"`` for a host name."""
        if any(not any(host_matches(p, host) for p in group) for group in self.limits):
            return "deny"
        if any(host_matches(p, host) for p in self.allow):
            return "allow"
        return "ask" if self.ask else "deny"

    def describe(self) -> str:
        if self.is_off:
            return "no network"
        parts = []
        if self.allow:
            parts.append("only " + ", ".join(self.allow) if not self.ask else "allowed: " + ", ".join(self.allow))
        if self.ask:
            parts.append("other hosts are asked" if self.allow else "each new host is asked")
        if self.limits:
            parts.append("limited by the workspace to " + "; ".join(", ".join(g) for g in self.limits))
        return "network through the proxy: " + "; ".join(parts)


@attrs.frozen
class Grants:
    """What the user allowed for one workspace beyond the settings ("allow for this workspace",
    "always allow this host"): user decisions kept outside the workspace (``host-state.json``),
    read again for every command, so a grant made meanwhile holds at once and a revoked one ends."""

    hosts: tuple[str, ...] = ()
    """Host name patterns the proxy lets through (unless the network is off)."""
    writes: tuple[str, ...] = ()
    """More writable places (the power files inside them stay read-only)."""

    def allows_host(self, host: str) -> bool:
        return any(host_matches(p, host) for p in self.hosts)


GrantSource = Callable[[], Grants]
"""The current grants (read when a command starts or a host is decided)."""


def _real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


@attrs.frozen
class PowerPath:
    path: str
    guard_missing: bool
    """Mount a read-only placeholder while it does not exist."""
    is_dir: bool
    """What kind of placeholder (an empty folder or an empty file)."""


def power_paths(roots: Sequence[str], user_config: Sequence[str] = (), *, guard_git: bool = True) -> tuple[PowerPath, ...]:
    """The files that grant power in each root (and the user's agent-ls config), as absolute
    paths. ``.git``: its ``config`` and ``hooks`` when it is a folder; the ``.git`` file itself
    when it is a gitdir pointer (a worktree: the real config is outside the roots, read-only
    anyway); when missing, ``.git`` is guarded as a whole (``git init`` is refused inside)."""
    out: list[PowerPath] = []
    for root in roots:
        git = os.path.join(root, ".git")
        for rel, guard in POWER_NAMES:
            is_dir = not os.path.splitext(rel)[1] or rel in (".git/hooks", ".github/workflows")
            if rel.startswith(".git/") and not os.path.isdir(git):
                continue
            out.append(PowerPath(os.path.join(root, rel), guard, is_dir and rel not in (".git/config",
                                                                                          ".envrc")))
        if not os.path.lexists(git):
            if guard_git:
                out.append(PowerPath(git, True, True))
        elif not os.path.isdir(git) or os.path.islink(git):
            out.append(PowerPath(git, False, False))
    out += [PowerPath(p, False, os.path.isdir(p)) for p in user_config]
    return tuple(out)


def linked_git_dirs(root: str) -> list[str]:
    """A linked worktree's git folders (its own and the repository's common one), from the
    ``gitdir:`` line of ``root/.git`` and that folder's ``commondir`` file; none otherwise."""
    dot_git = os.path.join(root, ".git")
    if not os.path.isfile(dot_git) or os.path.islink(dot_git):
        return []
    try:
        with open(dot_git, encoding="utf-8") as f:
            first = f.readline(4096).strip()
    except (OSError, UnicodeDecodeError):
        return []
    if not first.startswith("gitdir:"):
        return []
    gitdir = os.path.realpath(os.path.join(root, first.removeprefix("gitdir:").strip()))
    out = [gitdir]
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as f:
            out.append(os.path.realpath(os.path.join(gitdir, f.readline(4096).strip())))
    except (OSError, UnicodeDecodeError):
        pass
    return [d for d in out if os.path.isdir(d)]


@attrs.frozen
class SandboxPolicy:
    """Everything a mechanism needs to confine one process (absolute, real paths)."""

    roots: tuple[str, ...]
    """The workspace roots: writable (the first is where commands start)."""
    allow_write: tuple[str, ...] = ()
    """More writable places (temp dir, package caches, ``agent.sandbox.allowWrite``)."""
    deny_read: tuple[str, ...] = ()
    """Unreadable places (credentials, the agent-ls config and data folders)."""
    power: tuple[PowerPath, ...] = ()
    """Read-only even inside writable places, existing or not."""
    network: NetworkPolicy = NetworkPolicy(ask=True)
    temp_dir: str | None = None
    """``TMPDIR`` inside the sandbox (one of :attr:`allow_write`)."""
    user_config: tuple[str, ...] = ()
    """The user's agent-ls config files and folders (read-only power files wherever they are)."""
    guard_git: bool = True
    """Guard a missing ``.git`` with a placeholder (not for long-lived processes such as MCP
    servers: an empty ``.git`` folder would break git for the user meanwhile)."""

    def refreshed(self) -> SandboxPolicy:
        """The same policy with the power files looked at again (a ``.git`` made since then), and
        the git folders of a root that is a linked worktree (``.git`` is a file naming them)
        writable but for their config and hooks, so git works there too."""
        power = power_paths(self.roots, self.user_config, guard_git=self.guard_git)
        extra_write: list[str] = []
        for root in self.roots:
            for folder in linked_git_dirs(root):
                extra_write.append(folder)
                power += (PowerPath(os.path.join(folder, "config"), False, False),
                          PowerPath(os.path.join(folder, "hooks"), False, True))
        writes = tuple(dict.fromkeys(self.allow_write + tuple(extra_write)))
        return attrs.evolve(self, power=power, allow_write=writes)

    @classmethod
    def build(cls, roots: Sequence[str], *, allow_write: Iterable[str] = (), deny_read: Iterable[str] = (),
              user_config: Sequence[str] = (), network: NetworkPolicy | None = None,
              temp_dir: str | None = None) -> SandboxPolicy:
        """A policy with every path resolved (``~`` expanded); places that do not exist are kept
        for the in-process checks and skipped by the mechanisms."""
        real_roots = tuple(dict.fromkeys(_real(r) for r in roots))
        temp = _real(temp_dir) if temp_dir else None
        writes = [_real(p) for p in allow_write] + ([temp] if temp else [])
        configs = tuple(_real(p) for p in user_config)
        return cls(real_roots, tuple(dict.fromkeys(w for w in writes if w not in real_roots)),
                   tuple(dict.fromkeys(_real(p) for p in deny_read)), power_paths(real_roots, configs),
                   network if network is not None else NetworkPolicy(ask=True), temp, configs)

    def with_grants(self, grants: Grants) -> SandboxPolicy:
        """This policy with the user's workspace grants: their places writable too."""
        extra = tuple(w for w in (_real(p) for p in grants.writes) if w not in self.writable)
        return attrs.evolve(self, allow_write=self.allow_write + extra) if extra else self

    @property
    def writable(self) -> tuple[str, ...]:
        return self.roots + self.allow_write

    def describe(self) -> str:
        """One paragraph for the model's tool description."""
        deny = ", ".join(self.deny_read) or "nothing"
        extra = ", ".join(self.allow_write) or "nothing else"
        return (f"Commands run in an OS sandbox: they may write only in the workspace and {extra}; "
                f"these stay unreadable: {deny}; the workspace's .agent-ls/, .claude/, .vscode/, .mcp.json "
                f"and .git/ config and hooks are read-only; {self.network.describe()}. A command that fails "
                "because of the sandbox (a read-only file system, permission denied, no network) may be "
                "retried with outside_sandbox: true, which always asks the user first.")
