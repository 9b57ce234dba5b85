"""The leader of a background command's process group: no process outlives agent-ls, even killed.

Run as a script (``python -I -S reaper.py PARENT_PID -- ARGV...``, started in a new session by
:mod:`agent_ls.agent.jobs`), it asks the kernel for a signal when its parent dies
(``PR_SET_PDEATHSIG``, Linux) and then runs ``ARGV`` as its child in the same process group. When
the parent (the agent-ls server) dies, however it dies (``SIGKILL`` included), the signal arrives
and the whole group is killed. While the parent lives, the parent stops the group itself
(``killpg``). The exit status is the command's own (a command killed by a signal ends this script
with the same signal). Where there is no ``prctl`` (macOS) the script only runs the command: the
group is still stopped at shutdown, not on a crash.

Nothing from agent_ls is imported: it starts in ~10 ms with ``-I -S``.
"""

import os
import signal
import sys

PDEATHSIG = signal.SIGUSR2
"""The signal the parent's death sends (one a command's ``killpg(SIGTERM)`` never does)."""
PR_SET_PDEATHSIG = 1


def _kill_group(*_: object) -> None:
    os.killpg(0, signal.SIGKILL)  # this script included: the group is gone


def _ask_for_parent_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, int(PDEATHSIG), 0, 0, 0)


def main(argv: list[str]) -> int:
    parent = int(argv[0])
    command = argv[2:] if argv[1:2] == ["--"] else argv[1:]
    signal.signal(PDEATHSIG, _kill_group)
    _ask_for_parent_death_signal()
    if os.getppid() != parent:  # the parent died before the request: nobody will stop us
        _kill_group()
    pid = os.fork()
    if pid == 0:
        signal.signal(PDEATHSIG, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as e:
            os.write(2, f"agent-ls: cannot run {command[0]}: {e.strerror}\n".encode())
            os._exit(127)
    # the group gets SIGTERM/SIGINT/SIGHUP when agent-ls stops it: the command's status tells
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            return 0
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        return 128 + number
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
