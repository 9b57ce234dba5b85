"""Issue 38 item 6 through the language server as the editor starts it: ``OPENAI_API_KEY`` in
its environment (the user's, or ``agentLs.server.env``), a prompt answered by the scripted LLM
with the key in the Authorization header, while ``/proc/<pid>/environ`` of the server, of the
``bash`` child a tool call starts (the attack: it reads its parent's environ) and of the stdio
MCP server child hold no key."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.adversarial import SECRET, SECRET_ENV, USER_KEY
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Setup, close_editor, open_editor

EDITOR_COMMAND = [sys.executable, "-P", "-m", "agent_ls", "serve"]
"""What the extension runs with ``agentLs.server.pythonPath`` or its provisioned environment
(editor-extension/src/serverCommand.ts)."""

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="Linux /proc")]


def descendants(pid: int) -> list[int]:
    out: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").iterdir():
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            out.extend(children)
            todo.extend(children)
    return out


async def test_the_server_and_its_children_hold_no_key(setup: Setup) -> None:
    setup.extra_env.update(SECRET_ENV)  # what the editor passes (agentLs.server.env over its own environment)
    ed = await open_editor(setup, command=EDITOR_COMMAND)
    try:
        await ed.wait_state("knob", "connected")
        process = ed.client._server  # type: ignore[attr-defined]  # pygls' handle on the server process
        assert process is not None
        server_environ = Path(f"/proc/{process.pid}/environ").read_bytes()
        children = {pid: Path(f"/proc/{pid}/cmdline").read_bytes() for pid in descendants(process.pid)}
        knob = [pid for pid, cmd in children.items() if b"knob_server" in cmd]
        assert knob, children
        child_environs = {pid: Path(f"/proc/{pid}/environ").read_bytes() for pid in knob}

        setup.llm.script(tool_calls([("bash", {"command": "tr '\\0' '\\n' < /proc/$PPID/environ; echo ---; env"})]),
                         text("done"))
        result = await ed.request("agent/prompt", {"text": "look around"})
        assert result["stopReason"] == "end"
    finally:
        await close_editor(ed)

    assert b"AGENT_LS_CONFIG_DIR=" in server_environ  # the real block
    assert USER_KEY.encode() not in server_environ and SECRET.encode() not in server_environ
    for pid, environ in child_environs.items():
        assert b"PATH=" in environ, pid
        assert USER_KEY.encode() not in environ and SECRET.encode() not in environ, pid
    tool_result = json.dumps(setup.llm.requests[1].body["messages"][-1])
    assert "AGENT_LS_CONFIG_DIR=" in tool_result and "---" in tool_result  # bash read its parent's environ
    assert USER_KEY not in tool_result and SECRET not in tool_result
    assert [r.headers.get("authorization") for r in setup.llm.requests] == [f"Bearer {USER_KEY}"] * 2
