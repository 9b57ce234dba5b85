"""Run once per shared network namespace, inside a bubblewrap that has just made a new user and
network namespace (loopback up): hand the namespaces to agent-ls and exit.

    python3 -I -S netns_seed.py FD PORT

Sends, over the Unix socket ``FD`` (one end of a socket pair agent-ls holds the other end of),
file descriptors of this process's user namespace and network namespace, and, when ``PORT`` is
not 0, a TCP socket bound to 127.0.0.1:PORT in that namespace (agent-ls's network proxy listens
on it: the namespace's only way out). The descriptors in flight keep the namespaces alive after
this process ends; agent-ls holds them from then on (:mod:`agent_ls.core.sandbox.netns`).

Standard library only and run by path (it must not import agent-ls).
"""

import os
import socket
import sys


def main() -> int:
    fd, port = int(sys.argv[1]), int(sys.argv[2])
    channel = socket.socket(fileno=fd)
    fds = [os.open("/proc/self/ns/user", os.O_RDONLY | os.O_CLOEXEC),
           os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)]
    if port:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
        fds.append(listener.fileno())
    socket.send_fds(channel, [b"agent-ls-netns"], fds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
