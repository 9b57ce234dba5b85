"""The macOS ``sandbox-exec`` (Seatbelt) profile for a policy. It cannot run on Linux: the profile
text is what the tests check, and :func:`seatbelt_command` is what a Mac runs.

Same rules as bubblewrap: read everything but the denied places, write only the writable places
minus the files that grant power (a ``require-not`` subpath, so they stay read-only even when
they do not exist yet: Seatbelt matches paths, not inodes), network only to the proxy's loopback
port. Later rules win in SBPL, so the denials come after the allowances.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_ls.core.sandbox.policy import SandboxPolicy


def _quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def seatbelt_profile(policy: SandboxPolicy, *, proxy_port: int | None) -> str:
    lines = ["(version 1)", "(deny default)", "(allow process-exec)", "(allow process-fork)",
             "(allow signal (target same-sandbox))", "(allow sysctl-read)", "(allow mach-lookup)",
             "(allow ipc-posix-shm)", "(allow file-read*)",
             '(allow file-write* (literal "/dev/null") (literal "/dev/zero") (regex #"^/dev/tty"))']
    for place in policy.writable:
        lines.append(f"(allow file-write* (subpath {_quote(place)}))")
    for power in policy.power:
        lines.append(f"(deny file-write* (subpath {_quote(power.path)}))")
    for place in policy.deny_read:
        lines.append(f"(deny file-read* file-write* (subpath {_quote(place)}))")
    if proxy_port is not None:
        lines.append(f'(allow network-outbound (remote tcp "localhost:{proxy_port}"))')
    lines.append('(allow network-bind network-inbound (local tcp "localhost:*"))')
    return "\n".join(lines) + "\n"


def seatbelt_command(policy: SandboxPolicy, argv: Sequence[str], *, proxy_port: int | None) -> list[str]:
    return ["/usr/bin/sandbox-exec", "-p", seatbelt_profile(policy, proxy_port=proxy_port), *argv]
