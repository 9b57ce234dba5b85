"""The language server makes its model requests in the user's model host (issue 46), as the
terminal chat and ``agent-ls acp`` do: litellm (~190 MB, seconds of CPU) lives in one warm process
that the editor's windows and the terminals of one user share, not in every language server.

Real servers over stdio, the real host, the scripted LLM on loopback. The hosts of this worker live
in the session's runtime folder (tests/conftest.py ``model_hosts``): every language-server test
of a worker with the same environment shares one, as a user's windows do.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent import model_host
from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor

pytestmark = pytest.mark.e2e


async def model_library(ed: Editor, timeout: float = 120.0) -> dict[str, Any]:
    """``agent/serverInfo`` once the warm-up loaded the model library (in the host or here)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        info = await ed.request(P.SERVER_INFO)
        if info["modelLibrary"] != "none" or loop.time() > end:
            return info
        await asyncio.sleep(0.1)


def host_pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_the_editors_windows_share_one_model_host_and_never_import_litellm(setup: Setup) -> None:
    """Two windows whose editor environments differ only in what VS Code sets per window attach to
    one host at their warm-up, before any prompt; the prompt is made there (litellm never in the
    server's process). A window with another API key gets a host of its own. Closing the window
    that started the host leaves it running for the others (and the terminals)."""
    setup.extra_env.update({"VSCODE_PID": "1001", "VSCODE_IPC_HOOK": "/tmp/vscode-ipc-1.sock",
                            "ELECTRON_RUN_AS_NODE": "1", "TERM_PROGRAM": "vscode"})
    first = await open_editor(setup)
    second: Editor | None = None
    other: Editor | None = None
    try:
        info = await model_library(first)
        assert info["modelLibrary"] == "host", info
        host = info["modelHostPid"]
        assert isinstance(host, int) and host != info["pid"] and host_pid_alive(host)
        assert setup.llm.requests == []  # attached by the warm-up, not by a prompt

        setup.llm.script(text("from the host"))
        assert (await first.request(P.PROMPT, {"text": "hi"}))["text"] == "from the host"
        request = setup.llm.requests[-1]
        assert request.headers.get("user-agent", "").startswith("AsyncOpenAI/Python"), request.headers  # litellm's
        info = await first.request(P.SERVER_INFO)
        assert info["loadedModules"]["litellm"] is False and info["modelHostPid"] == host

        setup.extra_env.update({"VSCODE_PID": "2002", "VSCODE_IPC_HOOK": "/tmp/vscode-ipc-2.sock",
                                "VSCODE_GIT_IPC_HANDLE": "/tmp/vscode-git-2.sock", "TERM_PROGRAM_VERSION": "1.99"})
        second = await open_editor(setup)
        assert (await model_library(second))["modelHostPid"] == host  # the same warm host

        setup.extra_env["OPENAI_API_KEY"] = "another-key"
        other = await open_editor(setup)
        assert (await model_library(other))["modelHostPid"] not in (None, host)
    finally:
        for ed in (other, second, first):
            if ed is not None:
                await close_editor(ed)
    # the host outlives the windows, the one that started it included (it ends when idle)
    assert host in answering_hosts()


def answering_hosts() -> list[int]:
    """The pids of the model hosts that answer on this worker's runtime folder."""
    pids = []
    for sock in Path(os.environ["AGENT_LS_RUNTIME_DIR"]).glob("model-*.sock"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            pids.append(model_host._hello(sock))
    return pids


async def test_a_host_that_cannot_start_leaves_the_model_library_in_the_server(setup: Setup) -> None:
    """No model host can start (here: the runtime folder's path is too long for a Unix socket):
    the server says why in its log and imports litellm itself; prompts work as before."""
    with tempfile.TemporaryDirectory(prefix="als-") as d:
        setup.extra_env["AGENT_LS_RUNTIME_DIR"] = str(Path(d) / ("x" * 110))
        ed = await open_editor(setup)
        try:
            info = await model_library(ed)
            assert info["modelLibrary"] == "process" and info["modelHostPid"] is None, info
            assert info["loadedModules"]["litellm"] is True
            setup.llm.script(text("in the server"))
            assert (await ed.request(P.PROMPT, {"text": "hi"}))["text"] == "in the server"
            logs = [m.message for m in ed.client.log_messages]
            assert any("model host unavailable" in m and "too long for a Unix socket" in m for m in logs), logs
        finally:
            await close_editor(ed)


async def test_model_host_off_keeps_litellm_in_the_server(setup: Setup) -> None:
    """``AGENT_LS_MODEL_HOST=0``: the language server imports litellm itself, as before."""
    setup.extra_env["AGENT_LS_MODEL_HOST"] = "0"
    ed = await open_editor(setup)
    try:
        info = await model_library(ed)
        assert info["modelLibrary"] == "process" and info["modelHostPid"] is None, info
        setup.llm.script(text("in the server"))
        assert (await ed.request(P.PROMPT, {"text": "hi"}))["text"] == "in the server"
        assert not any("model host" in m.message for m in ed.client.log_messages)
    finally:
        await close_editor(ed)
