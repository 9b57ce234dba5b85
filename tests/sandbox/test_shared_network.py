"""The network namespace a conversation's sandboxed commands share (agent_ls.core.sandbox.netns),
with real processes under the real bubblewrap and loopback only: a background server one ``bash``
call starts is reached by the next call; the host's loopback stays out of reach; two
conversations do not share; nothing is left when the conversation ends or the server is killed
with SIGKILL."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.jobs import JobTable
from agent_ls.agent.workspace import Workspace
from agent_ls.config.sandbox import SandboxSettings
from agent_ls.core.sandbox import Mechanism, NetworkPolicy, detect, landlock
from agent_ls.core.sandbox.runner import FORCE_VARIABLE
from agent_ls.core.tools import Tool
from tests.sandbox.conftest import CANARY, Place

bwrap_only = pytest.mark.skipif(detect().mechanism is not Mechanism.BUBBLEWRAP, reason="bubblewrap does not work here")

FETCH = textwrap.dedent("""\
    import sys, time, urllib.error, urllib.request
    url, direct = sys.argv[1], sys.argv[2] == "direct"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({})) if direct else urllib.request.build_opener()
    for attempt in range(int(sys.argv[3])):
        try:
            print("status", opener.open(url, timeout=5).status, flush=True)
            break
        except urllib.error.HTTPError as e:
            print("status", e.code, flush=True)
            break
        except OSError as e:
            error = e
            time.sleep(0.1)
    else:
        print("unreachable", error, flush=True)
""")


@pytest.fixture
def home(place: Place, monkeypatch: pytest.MonkeyPatch) -> Place:
    monkeypatch.setenv("HOME", str(place.home))
    monkeypatch.setenv("AGENT_LS_CONFIG_DIR", str(place.home / "cfg"))
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(place.home / "data"))
    (place.tmp / "fetch.py").write_text(FETCH)
    return place


def _tools(place: Place, jobs: JobTable, network: NetworkPolicy) -> dict[str, Tool]:
    return {t.spec.name: t for t in builtin_tools(Workspace([place.ws]), output_cap_chars=20_000, jobs=jobs,
                                                  sandbox=SandboxSettings(network=network))}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fetch(place: Place, url: str, *, direct: bool = True, attempts: int = 100) -> str:
    return f"{sys.executable} {place.tmp / 'fetch.py'} {url} {'direct' if direct else 'env'} {attempts}"


def serve(port: int) -> str:
    return f"exec {sys.executable} -u -m http.server {port} --bind 127.0.0.1"


def in_namespace(inode: int) -> list[int]:
    """The processes (zombies aside) whose network namespace is ``net:[inode]``."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "ns" / "net") != f"net:[{inode}]":
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
        except OSError:
            continue
        out.append(int(entry.name))
    return out


def held_by_us(inode: int) -> bool:
    """This process holds a descriptor of ``net:[inode]``."""
    for fd in Path("/proc/self/fd").iterdir():
        try:
            if os.readlink(fd) == f"net:[{inode}]":
                return True
        except OSError:
            continue
    return False


async def until_empty(inode: int, seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := in_namespace(inode)) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return left


async def namespace_of(tool: Tool) -> int:
    r = await tool.call({"command": "readlink /proc/self/ns/net"})
    found = re.search(r"net:\[(\d+)\]", r.content)
    assert found is not None, r.content
    return int(found.group(1))


@bwrap_only
@pytest.mark.parametrize("network", ["off", "ask"])
async def test_a_background_server_is_reached_by_a_later_sandboxed_command(home: Place, network: str,
                                                                           http_port: int) -> None:
    jobs = JobTable()
    t = _tools(home, jobs, NetworkPolicy.parse(network))
    port = free_port()
    try:
        started = await t["bash"].call({"command": serve(port), "run_in_background": True})
        assert not started.is_error and "bg-1" in started.content, started.content
        # the client as the model would run it (proxy variables as the sandbox sets them)
        health = await t["bash"].call({"command": fetch(home, f"http://127.0.0.1:{port}/health", direct=False)})
        assert "status 404" in health.content, health.content  # http.server answers: no such file
        assert "GET /health" in (await t["shell_output"].call({"id": "bg-1"})).content
        # the host's loopback stays out of reach (a server the host runs there, connected to directly)
        host = await t["bash"].call({"command": fetch(home, f"http://127.0.0.1:{http_port}/", attempts=1)})
        assert "unreachable" in host.content and "hello" not in host.content, host.content
    finally:
        await jobs.close()


@bwrap_only
async def test_two_conversations_do_not_share_a_namespace(home: Place) -> None:
    a, b = JobTable(), JobTable()
    ta, tb = _tools(home, a, NetworkPolicy.off()), _tools(home, b, NetworkPolicy.off())
    port = free_port()
    try:
        await ta["bash"].call({"command": serve(port), "run_in_background": True})
        mine = await ta["bash"].call({"command": fetch(home, f"http://127.0.0.1:{port}/")})
        assert "status 200" in mine.content, mine.content
        theirs = await tb["bash"].call({"command": fetch(home, f"http://127.0.0.1:{port}/", attempts=3)})
        assert "unreachable" in theirs.content, theirs.content
        assert await namespace_of(ta["bash"]) != await namespace_of(tb["bash"])
        # B may run its own server on the same port
        await tb["bash"].call({"command": serve(port), "run_in_background": True})
        own = await tb["bash"].call({"command": fetch(home, f"http://127.0.0.1:{port}/")})
        assert "status 200" in own.content, own.content
    finally:
        await a.close()
        await b.close()


@bwrap_only
async def test_the_proxy_serves_the_shared_namespace_and_still_decides(home: Place, http_port: int) -> None:
    """One listener per namespace: a background command and later ones use it at once; only
    listed names pass; a connection that ignores the proxy reaches nothing."""
    jobs = JobTable()
    t = _tools(home, jobs, NetworkPolicy.parse({"allow": ["localhost"]}))
    port = free_port()
    proxy = 'import os, sys, urllib.request as u; print(os.environ["HTTP_PROXY"])'
    try:
        await t["bash"].call({"command": serve(port), "run_in_background": True})
        loop = (f"while true; do {sys.executable} -c '{proxy}' >/dev/null; sleep 0.2; done")
        await t["bash"].call({"command": loop, "run_in_background": True})
        # loopback names skip the proxy by default (the loopback is the conversation's own): ask for it
        through = (f"NO_PROXY= no_proxy= {sys.executable} -c \"import os, urllib.request as u; p = os.environ['HTTP_PROXY']; "
                   "o = u.build_opener(u.ProxyHandler({'http': p})); import sys; "
                   "print(o.open(sys.argv[1], timeout=5).read().decode())\"")
        listed = await t["bash"].call({"command": f"{through} http://localhost:{http_port}/"})
        assert "hello from the host" in listed.content, listed.content
        refused = await t["bash"].call({"command": f"{through} http://127.0.0.1:{http_port}/"})
        assert refused.is_error and "proxy refused 127.0.0.1" in refused.content, refused.content
        direct = await t["bash"].call({"command": fetch(home, f"http://127.0.0.1:{http_port}/", attempts=1)})
        assert "unreachable" in direct.content, direct.content
        own = await t["bash"].call({"command": fetch(home, f"http://127.0.0.1:{port}/")})
        assert "status 200" in own.content, own.content
    finally:
        await jobs.close()


@bwrap_only
async def test_the_namespace_ends_with_the_conversation(home: Place) -> None:
    jobs = JobTable()
    t = _tools(home, jobs, NetworkPolicy.off())
    port = free_port()
    await t["bash"].call({"command": serve(port), "run_in_background": True})
    await t["bash"].call({"command": fetch(home, f"http://127.0.0.1:{port}/")})
    inode = await namespace_of(t["bash"])
    assert in_namespace(inode), "the background server is not in the namespace the next command joined"
    assert held_by_us(inode)
    await jobs.close()
    assert await until_empty(inode) == []
    assert not held_by_us(inode)


SERVER_SCRIPT = textwrap.dedent("""\
    import asyncio, re, sys
    from agent_ls.agent.builtin_tools import builtin_tools
    from agent_ls.agent.jobs import JobTable
    from agent_ls.agent.workspace import Workspace
    from agent_ls.config.sandbox import SandboxSettings
    from agent_ls.core.sandbox import NetworkPolicy

    async def main():
        jobs = JobTable()
        tools = {t.spec.name: t for t in builtin_tools(Workspace([sys.argv[1]]), jobs=jobs,
                                                       sandbox=SandboxSettings(network=NetworkPolicy(ask=True)))}
        await tools["bash"].call({"command": f"exec {sys.executable} -m http.server {sys.argv[2]} --bind 127.0.0.1",
                                  "run_in_background": True})
        await tools["bash"].call({"command": "sleep 300 & sleep 300", "run_in_background": True})
        r = await tools["bash"].call({"command": "readlink /proc/self/ns/net"})
        print(re.search(r"net:\\[(\\d+)\\]", r.content).group(1), flush=True)
        await asyncio.sleep(600)

    asyncio.run(main())
""")


@bwrap_only
async def test_a_server_killed_with_sigkill_leaves_nothing_in_the_namespace(home: Place) -> None:
    server = subprocess.Popen([sys.executable, "-c", SERVER_SCRIPT, str(home.ws), str(free_port())],
                              stdout=subprocess.PIPE, text=True, env=home.env())
    try:
        assert server.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(server.stdout.readline), 60)
        inode = int(line)
        await asyncio.sleep(0.3)
        assert len(in_namespace(inode)) >= 2, "the background commands are not in the shared namespace"
        os.kill(server.pid, signal.SIGKILL)
        server.wait(10)
        assert await until_empty(inode) == [], "a process outlived the SIGKILLed server in its namespace"
    finally:
        if server.poll() is None:
            server.kill()


@pytest.mark.skipif(landlock.abi_version() < landlock.MIN_ABI, reason="no Landlock ABI 4 in this kernel")
async def test_under_landlock_commands_share_the_hosts_network_and_cannot_connect(
        home: Place, monkeypatch: pytest.MonkeyPatch) -> None:
    """The limit docs/security.md states: no network namespace to share, and TCP only to the proxy."""
    monkeypatch.setenv(FORCE_VARIABLE, "landlock")
    assert detect().mechanism is Mechanism.LANDLOCK
    jobs = JobTable()
    t = _tools(home, jobs, NetworkPolicy.off())
    port = free_port()
    try:
        await t["bash"].call({"command": serve(port), "run_in_background": True})
        assert await namespace_of(t["bash"]) == os.stat("/proc/self/ns/net").st_ino  # the host's own
        for _ in range(100):  # the server listens on the host's loopback
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail("the background server never listened on the host's loopback")
        later = await t["bash"].call({"command": fetch(home, f"http://127.0.0.1:{port}/", attempts=1)})
        assert "unreachable" in later.content and "Permission denied" in later.content, later.content
        assert jobs.network.inode is None  # nothing was made
    finally:
        await jobs.close()


@bwrap_only
async def test_a_switch_between_network_off_and_the_proxy_gives_a_new_namespace(home: Place) -> None:
    """A command started with the network off never shares a namespace with a way out: the
    setting's switch (a session rebuilt with other settings, the same conversation) makes a new one."""
    jobs = JobTable()
    off, ask = _tools(home, jobs, NetworkPolicy.off()), _tools(home, jobs, NetworkPolicy(ask=True))
    probe = f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', 3128), 2); print('open')\""
    try:
        await off["bash"].call({"command": "sleep 60", "run_in_background": True})
        first = await namespace_of(off["bash"])
        routed = await namespace_of(ask["bash"])
        assert routed != first
        assert "open" in (await ask["bash"].call({"command": probe})).content  # the proxy's listener
        again = await namespace_of(off["bash"])
        assert again not in (first, routed)
        assert "open" not in (await off["bash"].call({"command": probe})).content
        assert in_namespace(first), "the command started with the network off left its namespace"
        assert held_by_us(first)  # retired, but held while a command that joined it runs
        await jobs.stop("bg-1")
        assert await until_empty(first) == [] and not held_by_us(first)
    finally:
        await jobs.close()


@bwrap_only
async def test_without_nsenter_each_command_gets_its_own_namespace(home: Place, monkeypatch: pytest.MonkeyPatch,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    from agent_ls.core.sandbox import netns, runner

    monkeypatch.setattr(netns, "nsenter_path", lambda: None)
    runner._warn_unshared.cache_clear()
    jobs = JobTable()
    t = _tools(home, jobs, NetworkPolicy.off())
    try:
        ours = os.stat("/proc/self/ns/net").st_ino
        first, second = await namespace_of(t["bash"]), await namespace_of(t["bash"])
        assert first != second and ours not in (first, second)
        assert "nsenter (util-linux) is not installed" in caplog.text
    finally:
        await jobs.close()


@bwrap_only
@pytest.mark.parametrize("shared", [True, False])
async def test_a_command_has_no_capabilities_to_undo_its_mounts(home: Place, shared: bool) -> None:
    """Joined or not, and also when agent-ls runs as root: no capability left inside, so the
    empty place over ~/.ssh cannot be unmounted to read the key."""
    jobs = JobTable()
    tools = _tools(home, jobs, NetworkPolicy.off())
    if not shared:
        tools = {t.spec.name: t for t in builtin_tools(Workspace([home.ws]), output_cap_chars=20_000,
                                                       sandbox=SandboxSettings(network=NetworkPolicy.off()))}
    try:
        r = await tools["bash"].call({"command": f"grep CapEff /proc/self/status; umount {home.home}/.ssh; "
                                                 f"cat {home.home}/.ssh/id_ed25519; readlink /proc/self/ns/net"})
        assert "CapEff:\t0000000000000000" in r.content, r.content
        assert CANARY not in r.content
        assert (str(jobs.network.inode) in r.content) is shared
    finally:
        await jobs.close()
