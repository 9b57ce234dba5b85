"""The OS sandbox under real bubblewrap: real processes, a canary key in a fake home, a real HTTP
server on the host's loopback. Each test is an attempt to get out (issue 47)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from agent_ls.core.sandbox import Mechanism, NetworkPolicy, Sandbox, SandboxPolicy, detect
from agent_ls.core.sandbox.bwrap import bwrap_command
from agent_ls.core.sandbox.runner import sweep_placeholders
from tests.sandbox.conftest import CANARY, Place, run_wrapped

pytestmark = pytest.mark.skipif(
    detect().mechanism is not Mechanism.BUBBLEWRAP,
    reason=f"bubblewrap does not work here ({detect().detail}); scripts/setup.sh installs it",
)

FETCH = """
import socket, sys, urllib.request
url = sys.argv[1]
if sys.argv[2:] == ["direct"]:  # ignore the proxy variables: connect straight to the port
    host, port = url.split("//")[1].split("/")[0].split(":")
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
        print("DIRECT-CONNECTED")
    except OSError as exc:
        print("DIRECT-FAILED", exc)
    sys.exit(0)
try:
    with urllib.request.urlopen(url, timeout=5) as r:
        print("STATUS", r.status, r.read().decode())
except Exception as exc:
    print("FAILED", exc, getattr(exc, "read", lambda: b"")().decode())
"""


def _sandbox(place: Place, network: NetworkPolicy | None = None, **kw: object) -> Sandbox:
    policy = SandboxPolicy.build([str(place.ws)], deny_read=[str(place.home / ".ssh")], temp_dir=str(place.tmp),
                                 network=network or NetworkPolicy.off(), **kw)  # type: ignore[arg-type]
    return Sandbox(policy)


async def test_the_canary_key_is_unreadable_directly_and_through_a_symlink(place: Place) -> None:
    (place.ws / "keys").symlink_to(place.home / ".ssh")
    code, out = await run_wrapped(_sandbox(place), "cat ~/.ssh/id_ed25519; cat keys/id_ed25519; "
                                  "cat /proc/self/root$HOME/.ssh/id_ed25519; ls -a ~/.ssh", place)
    assert CANARY not in out
    assert "No such file" in out


async def test_writes_outside_the_workspace_and_temp_are_refused(place: Place) -> None:
    code, out = await run_wrapped(_sandbox(place), (
        'touch "$HOME/x"; echo "home:$?"; cd / && touch x; echo "root:$?"; cd - >/dev/null; '
        f'touch /proc/self/root{place.outside}/y; echo "proc:$?"; touch {place.outside}/z; echo "outside:$?"; '
        'touch made-here; echo "ws:$?"; touch "$TMPDIR/t"; echo "tmp:$?"'), place)
    assert "home:1" in out and "root:1" in out and "proc:1" in out and "outside:1" in out, out
    assert "Read-only file system" in out
    assert "ws:0" in out and "tmp:0" in out
    assert not (place.home / "x").exists() and not list(place.outside.iterdir())
    assert (place.ws / "made-here").exists() and (place.tmp / "t").exists()


async def test_power_files_stay_read_only_even_when_missing_and_no_placeholder_is_left(place: Place) -> None:
    (place.ws / ".git" / "hooks").mkdir(parents=True)
    (place.ws / ".git" / "config").write_text("[core]\n")
    code, out = await run_wrapped(_sandbox(place), (
        "mkdir -p .claude && echo '{\"hooks\":1}' > .claude/settings.json; echo \"claude:$?\"; "
        "echo '{}' > .mcp.json; echo \"mcp:$?\"; echo x > .git/hooks/pre-commit; echo \"hook:$?\"; "
        "echo '[core] fsmonitor=evil' >> .git/config; echo \"gitconfig:$?\"; "
        "mkdir -p .vscode && echo '{}' > .vscode/tasks.json; echo \"vscode:$?\"; "
        "rm -rf .agent-ls; mv .claude c2; echo \"moved:$?\""), place)
    for what in ("claude", "mcp", "hook", "gitconfig", "vscode", "moved"):
        assert f"{what}:0" not in out, out
    sweep_placeholders()  # (the unused placeholders go after SWEEP_DELAY, or at exit)
    assert not (place.ws / ".claude").exists() and not (place.ws / ".mcp.json").exists()
    assert not (place.ws / ".vscode").exists() and not (place.ws / ".agent-ls").exists()
    assert not (place.ws / "c2").exists()
    assert (place.ws / ".git" / "config").read_text() == "[core]\n"
    assert not (place.ws / ".git" / "hooks" / "pre-commit").exists()


async def test_a_missing_git_folder_is_guarded_then_removed(place: Place) -> None:
    code, out = await run_wrapped(_sandbox(place), "git init -q . ; echo \"init:$?\"", place)
    assert "init:0" not in out
    assert (place.ws / ".git").is_dir() and not list((place.ws / ".git").iterdir())
    sweep_placeholders()
    assert not (place.ws / ".git").exists()


async def test_ld_preload_never_reaches_bubblewrap_itself(place: Place) -> None:
    policy = SandboxPolicy.build([str(place.ws)], deny_read=[str(place.home / ".ssh")])
    argv, env = bwrap_command(policy, ["true"], cwd=str(place.ws), env={"LD_PRELOAD": "/evil.so", "PATH": "/bin"})
    assert "LD_PRELOAD" not in env
    assert argv[argv.index("LD_PRELOAD") - 1] == "--setenv"
    code, out = await run_wrapped(_sandbox(place), "cat ~/.ssh/id_ed25519; echo LD=$LD_PRELOAD", place,
                                  LD_PRELOAD="/nonexistent/evil.so")
    assert CANARY not in out and "LD=/nonexistent/evil.so" in out


async def test_a_daemon_started_by_the_command_cannot_write_later(place: Place) -> None:
    code, out = await run_wrapped(_sandbox(place), (
        f"(sleep 1; touch {place.outside}/late; touch {place.ws}/late-ws) >/dev/null 2>&1 & echo started"), place)
    assert "started" in out
    import asyncio

    await asyncio.sleep(1.5)
    assert not (place.outside / "late").exists()


async def test_the_workspace_builds_and_tests_inside(place: Place) -> None:
    code, out = await run_wrapped(_sandbox(place), f"{sys.executable} -m venv .v && .v/bin/pip --version && "
                                  "mkdir -p src && echo ok > src/a.txt && cat src/a.txt", place, timeout=180)
    assert code == 0, out
    assert f"from {place.ws / '.v'}" in out and "ok" in out


async def test_network_off_reaches_nothing_even_ignoring_the_proxy(place: Place, http_port: int) -> None:
    (place.outside / "fetch.py").write_text(FETCH)
    url = f"http://127.0.0.1:{http_port}/"
    code, out = await run_wrapped(_sandbox(place), f"{sys.executable} {place.outside}/fetch.py {url}; "
                                  f"{sys.executable} {place.outside}/fetch.py {url} direct", place)
    assert "STATUS 200" not in out and "DIRECT-CONNECTED" not in out, out
    assert "FAILED" in out and "DIRECT-FAILED" in out


async def test_an_allow_list_lets_only_listed_names_through_the_proxy(place: Place, http_port: int) -> None:
    (place.outside / "fetch.py").write_text(FETCH)
    sandbox = _sandbox(place, NetworkPolicy.parse({"allow": ["localhost"]}))
    try:
        code, out = await run_wrapped(sandbox, (
            f"{sys.executable} {place.outside}/fetch.py http://localhost:{http_port}/; "
            f"{sys.executable} {place.outside}/fetch.py http://127.0.0.1:{http_port}/; "
            f"{sys.executable} {place.outside}/fetch.py http://localhost:{http_port}/ direct"), place)
    finally:
        await sandbox.aclose()
    lines = out.splitlines()
    assert "STATUS 200 hello from the host" in lines[0], out
    assert "FAILED" in out and "refused" in out and "127.0.0.1" in out
    assert "DIRECT-FAILED" in out
    assert sandbox.take_refused() == ["127.0.0.1"]


async def test_ask_puts_the_host_to_the_user_and_the_answer_holds(place: Place, http_port: int) -> None:
    (place.outside / "fetch.py").write_text(FETCH)
    asked: list[str] = []

    async def ask(host: str) -> str:
        asked.append(host)
        return "session" if host == "localhost" else "deny"

    policy = SandboxPolicy.build([str(place.ws)], network=NetworkPolicy.parse("ask"))
    sandbox = Sandbox(policy, ask_host=ask)  # type: ignore[arg-type]
    fetch = f"{sys.executable} {place.outside}/fetch.py"
    try:
        code, out = await run_wrapped(sandbox, f"{fetch} http://localhost:{http_port}/; "
                                      f"{fetch} http://localhost:{http_port}/again; {fetch} http://127.0.0.1:{http_port}/",
                                      place)
    finally:
        await sandbox.aclose()
    assert out.count("STATUS 200") == 2, out
    assert "refused" in out
    assert asked == ["localhost", "127.0.0.1"]  # the session answer held for the second request


@pytest.mark.skipif(shutil.which("socat") is None, reason="the Python bridge is tried below instead")
async def test_the_python_bridge_works_without_socat(place: Place, http_port: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (place.outside / "fetch.py").write_text(FETCH)
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "socat" else real_which(name, *a, **k))
    sandbox = _sandbox(place, NetworkPolicy.parse({"allow": ["localhost"]}))
    try:
        code, out = await run_wrapped(sandbox, f"{sys.executable} {place.outside}/fetch.py http://localhost:{http_port}/",
                                      place)
    finally:
        await sandbox.aclose()
    assert "STATUS 200" in out, out


async def test_a_placeholder_in_use_by_another_command_is_not_removed_under_it(place: Place) -> None:
    import asyncio

    box = _sandbox(place)
    first = asyncio.ensure_future(run_wrapped(box, "sleep 0.8", place))  # makes the .claude placeholder
    await asyncio.sleep(0.4)
    second = asyncio.ensure_future(run_wrapped(box, "sleep 1.5; mkdir -p .claude/x && echo made", place))
    await first
    await asyncio.sleep(0.2)
    sweep_placeholders()  # must not remove it: the second command still runs in front of it
    code, out = await second
    assert "made" not in out, out
    sweep_placeholders()
    assert not (place.ws / ".claude").exists()


async def test_git_works_inside_a_repository_but_its_config_and_hooks_do_not(place: Place) -> None:
    box = _sandbox(place)  # the policy is made before the repository exists: power files are looked at per command
    git = "git -c user.name=t -c user.email=t@example.com"
    init = subprocess.run(["git", "init", "-q", str(place.ws)], capture_output=True)
    assert init.returncode == 0
    code, out = await run_wrapped(box, f"echo a > a.txt && {git} add a.txt && {git} commit -qm one && echo committed; "
                                  "echo x > .git/hooks/post-commit; echo \"hook:$?\"; "
                                  "git config core.fsmonitor evil; echo \"config:$?\"", place)
    assert "committed" in out, out
    assert "hook:0" not in out and "config:0" not in out
    assert not (place.ws / ".git" / "hooks" / "post-commit").exists()
    assert "fsmonitor" not in (place.ws / ".git" / "config").read_text()


async def test_git_works_in_a_linked_worktree_whose_common_config_stays_read_only(place: Place) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    main = place.outside / "main"
    for args in (["init", "-q", str(main)], ["-C", str(main), "commit", "-q", "--allow-empty", "-m", "root"],
                 ["-C", str(main), "worktree", "add", "-q", str(place.ws / "wt")]):
        assert subprocess.run([*git, *args], capture_output=True).returncode == 0
    wt = place.ws / "wt"
    box = Sandbox(SandboxPolicy.build([str(wt)], deny_read=[str(place.home / ".ssh")], temp_dir=str(place.tmp)))
    cmd = " ".join(git)
    code, out = await run_wrapped(box, f"cd {wt} && echo a > a.txt && {cmd} add a.txt && {cmd} commit -qm one && "
                                  f"echo committed; echo x > {main}/.git/hooks/post-commit; echo \"hook:$?\"; "
                                  f"git config core.fsmonitor evil; echo \"config:$?\"", place)
    assert "committed" in out, out
    assert "hook:0" not in out and "config:0" not in out
    assert "fsmonitor" not in (main / ".git" / "config").read_text()
