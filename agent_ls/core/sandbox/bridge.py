"""Inside the sandbox, when ``socat`` is not installed: listen on 127.0.0.1:PORT (the sandbox's own
loopback) and forward each connection to the proxy's Unix socket, then run the command.

    python3 -I -S bridge.py SOCKET PORT -- ARGV...

Standard library only and run by path (the sandbox must not import agent-ls). The listener is
bound before the command starts; the bridge exits with the command's status when it ends.
"""

import os
import socket
import sys
import threading


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            up.connect(path)
        except OSError:
            conn.close()
            up.close()
            continue
        threading.Thread(target=_pipe, args=(conn, up), daemon=True).start()
        threading.Thread(target=_pipe, args=(up, conn), daemon=True).start()


def main() -> int:
    path, port, sep, *argv = sys.argv[1:]
    if sep != "--" or not argv:
        sys.stderr.write("usage: bridge.py SOCKET PORT -- ARGV...\n")
        return 2
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(port)))
    listener.listen(64)
    pid = os.fork()
    if pid == 0:
        listener.close()
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            sys.stderr.write(f"{argv[0]}: {exc.strerror}\n")
            os._exit(127)
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main())
