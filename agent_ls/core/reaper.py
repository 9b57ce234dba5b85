"""The leader of a background command's process group: no process outlives agent-ls, even killed.

Run as a script (``python -I -S reaper.py LIFELINE_FD -- ARGV...``, started in a new session by
:mod:`agent_ls.agent.jobs`), it runs ``ARGV`` as its child in its own process group and watches
its lifeline: the read end of a pipe whose write end only the agent-ls process holds
(:func:`agent_ls.agent.jobs.lifeline`). The kernel closes that end when agent-ls dies, however it dies (``SIGKILL``
included), and the read end sees the end of the file: the script then kills its whole group.
While agent-ls lives, agent-ls stops the group itself (``killpg``). The exit status is the
command's own (a command killed by a signal ends this script with the same signal). Linux and
macOS alike (a pipe, no ``prctl``).

Nothing from agent_ls is imported here: it starts in a few ms with ``-I -S``.
"""

import os
import select
import signal
import sys


class _ChildExited(Exception):
    pass


def _child_exited(*_: object) -> None:
    raise _ChildExited


def _kill_group() -> None:
    os.killpg(0, signal.SIGKILL)  # this script included: the group is gone


def main(argv: list[str]) -> int:
    fd = int(argv[0])
    command = argv[2:] if argv[1:2] == ["--"] else argv[1:]
    if os.getpgrp() != os.getpid():  # started without a session of its own: never kill the caller's group
        os.setpgid(0, 0)
    os.set_inheritable(fd, False)  # the command does not hold the lifeline
    pid = 0
    try:
        signal.signal(signal.SIGCHLD, _child_exited)
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            try:
                os.execvp(command[0], command)
            except OSError as e:
                os.write(2, f"agent-ls: cannot run {command[0]}: {e.strerror}\n".encode())
                os._exit(127)
        # the group gets SIGTERM/SIGINT/SIGHUP when agent-ls stops it: the command's status tells
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        while True:
            readable, _, _ = select.select([fd], [], [])
            if readable and not os.read(fd, 1):
                _kill_group()  # agent-ls is gone
    except _ChildExited:
        pass
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _, status = os.waitpid(pid or -1, 0)  # (-1: the signal came before the fork's pid was kept)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        return 128 + number
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
