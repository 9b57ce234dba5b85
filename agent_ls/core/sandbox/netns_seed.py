"""Run once per shared network namespace, inside a bubblewrap that has just made a new user and
network namespace (loopback up): hand the namespaces to agent-ls and exit.

    python3 -I -S netns_seed.py FD PORT

Sends, over the Unix socket ``FD`` (one end of a socket pair agent-ls holds the other end of),
file descriptors of this process's network namespace and of the user namespace that owns it, and, when ``PORT`` is
not 0, a TCP socket bound to 127.0.0.1:PORT in that namespace (agent-ls's network proxy listens
on it: the namespace's only way out). The descriptors in flight keep the namespaces alive after
this process ends; agent-ls holds them from then on (:mod:`agent_ls.core.sandbox.netns`).

Standard library only and run by path (it must not import agent-ls).
"""

import fcntl
import os
import socket
import sys

NS_GET_USERNS = 0xB701
"""``_IO(0xb7, 0x1)``: a new descriptor of the user namespace that owns a namespace."""


def main() -> int:
    fd, port = int(sys.argv[1]), int(sys.argv[2])
    channel = socket.socket(fileno=fd)
    net = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    # the user namespace that owns the network namespace: joining the network namespace needs
    # CAP_SYS_ADMIN there (an unprivileged bubblewrap runs this in a second, nested one)
    fds = [fcntl.ioctl(net, NS_GET_USERNS), net]
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
