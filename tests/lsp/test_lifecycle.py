"""Lifecycle and protocol hygiene over stdio: initialize without litellm, malformed params get
JSON-RPC errors (never a hang), sessions, logs on window/logMessage and nothing else on
stdout, no child process left after shutdown (or when the editor vanishes)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound

from agent_ls.server.protocol import methods as P
from agent_ls.server.protocol.codec import RawNotification
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import SERVER_COMMAND, Editor, Setup, close_editor, open_editor, pid_alive, wait_for
from tests.servers.launch import knob_stdio_params

pytestmark = pytest.mark.e2e


async def test_initialize_is_light_and_advertises_features(setup: Setup) -> None:
    """initialize does not import litellm (recorded by the server while it answers
    initialize); the model library (the user's model host, issue 46) is loaded in the background
    before the MCP host starts (issue 30 item 2), before any prompt and without waiting for a slow
    server. The result advertises code actions, the commands and workspace folders."""
    setup.user_settings["mcpServers"]["slow"] = knob_stdio_params("--slow-start", "60", "--name", "slow")
    ed = await open_editor(setup)
    try:
        info = await ed.request(P.SERVER_INFO)
        assert info["loadedAtInitialize"]["litellm"] is False
        assert info["name"] == "agent-ls" and info["workspaceFolders"] == [str(setup.ws)]
        for _ in range(600):  # prewarmed without a prompt
            info = await ed.request(P.SERVER_INFO)
            if info["modelLibrary"] != "none" and info["loadedModules"]["mcp"]:
                break
            await asyncio.sleep(0.1)
        assert info["modelLibrary"] == "host" and info["loadedModules"] == {"litellm": False, "mcp": True}
        assert (await ed.status())["slow"]["state"] == "starting"  # the warm-up did not wait for it
        await ed.wait_state("knob", "connected")
        assert setup.llm.requests == []
        assert ed.init_result is not None
        caps = ed.init_result.capabilities
        assert ed.init_result.server_info is not None and ed.init_result.server_info.name == "agent-ls"
        assert caps.code_action_provider
        assert set(P.COMMANDS) <= set(caps.execute_command_provider.commands)  # type: ignore[union-attr]
        folders = caps.workspace.workspace_folders  # type: ignore[union-attr]
        assert folders is not None and folders.supported and folders.change_notifications
    finally:
        await close_editor(ed)


async def test_server_package_entry_point_imports_nothing_heavy_before_initialize(setup: Setup) -> None:
    """``python -m agent_ls.server``: neither litellm nor the MCP SDK before initialize; with
    no model configured litellm is never imported just in case."""
    del setup.user_settings["model"]
    ed = await open_editor(setup, command=[sys.executable, "-m", "agent_ls.server"])
    try:
        info = await ed.request(P.SERVER_INFO)
        assert info["loadedAtInitialize"] == {"litellm": False, "mcp": False}
        await ed.wait_state("knob", "connected")
        await asyncio.sleep(1.0)
        info = await ed.request(P.SERVER_INFO)
        assert info["loadedModules"] == {"litellm": False, "mcp": True}
    finally:
        await close_editor(ed)


RANGE = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}

MALFORMED: list[tuple[str, Any, str]] = [
    (P.PROMPT, [], "params must be an object"),
    (P.PROMPT, {}, "text"),
    (P.PROMPT, {"text": 5}, "text"),
    (P.PROMPT, {"text": "x", "sessionId": 3}, "sessionId"),
    (P.PROMPT, {"text": "x", "attachments": [{"kind": "bogus"}]}, "attachment kind"),
    (P.PROMPT, {"text": "x", "attachments": {"kind": "file"}}, "attachments"),
    (P.CANCEL, {}, "sessionId"),
    (P.CANCEL, {"sessionId": 5}, "sessionId"),
    (P.SESSIONS_LIST, "x", "params must be an object"),
    (P.SESSIONS_NEW, {"title": 5}, "title"),
    (P.SESSIONS_RESUME, {}, "sessionId"),
    (P.SESSIONS_RESUME, {"sessionId": 1}, "sessionId"),
    (P.SESSIONS_DELETE, {"sessionId": None}, "sessionId"),
    (P.SESSIONS_RENAME, {"sessionId": "x", "title": 3}, "title"),
    (P.JOBS, {"sessionId": 5}, "sessionId"),
    (P.STOP_JOB, {"sessionId": "s"}, "jobId"),
    (P.SERVER_INFO, [1], "params must be an object"),
    (P.MCP_STATUS, 7, "params must be an object"),
    (P.MCP_RESTART, {"server": 5}, "server"),
    (P.MCP_SET_ENABLED, {"server": "knob"}, "enabled"),
    (P.MCP_SET_ENABLED, {"server": "knob", "enabled": "yes"}, "enabled"),
    (P.MCP_TRUST, {"server": "knob", "trusted": "no"}, "trusted"),
    (P.MCP_RESOURCES_LIST, {"server": []}, "server"),
    (P.MCP_RESOURCES_READ, {"server": "knob"}, "uri"),
    (P.MCP_PROMPTS_LIST, {"server": 1}, "server"),
    (P.MCP_PROMPTS_GET, {"server": "knob", "name": "greet", "arguments": {"name": 5}}, "arguments"),
    (P.MCP_CALL_TOOL, {"server": "knob", "tool": "echo", "arguments": [1]}, "arguments"),
    (P.MCP_CALL_TOOL, {"tool": "echo"}, "server"),
    (P.MCP_SIGN_IN, {}, "server"),
    (P.MCP_SIGN_OUT, {"server": False}, "server"),
    (P.SET_WORKSPACE_TRUST, {"trusted": "yes"}, "trusted"),
    (P.SET_WORKSPACE_TRUST, {"trusted": True, "folder": 3}, "folder"),
    (P.CHANGE_OUTCOME, {"sessionId": "s", "changeId": "c", "outcome": "undo"}, "outcome"),
    (P.CHANGE_CONTENT, {"sessionId": "s"}, "changeId"),
    (P.TOOL_OUTPUT, {"sessionId": "s", "handle": 3}, "handle"),
    (P.MODELS, {"sessionId": 5}, "sessionId"),
    (P.SET_MODEL, {"sessionId": "s"}, "model"),
    (P.SET_MODEL, {"sessionId": "s", "model": 3}, "model"),
    (P.CHECKPOINTS, {"sessionId": 5}, "sessionId"),
    (P.REWIND, {"code": True}, "checkpointId"),
    (P.REDO, {"sessionId": ["s"]}, "sessionId"),
    (P.SANDBOX_GRANTS, [1], "params must be an object"),
    (P.SET_SANDBOX_GRANT, {"kind": "hosts", "value": "x"}, "granted"),
    (P.SET_SANDBOX_GRANT, {"kind": "bogus", "value": "x", "granted": True}, "kind"),
    (P.SET_SANDBOX_GRANT, {"kind": "writes", "value": "/", "granted": True}, "value"),
    (P.APP_CALL_TOOL, {"sessionId": "s", "server": "knob"}, "tool"),
    (P.APP_CALL_TOOL, {"sessionId": "s", "server": "knob", "tool": "echo", "arguments": [1]}, "arguments"),
    (P.APP_CONTEXT, {"sessionId": "s", "server": "knob", "resourceUri": 3, "text": "x"}, "resourceUri"),
    (P.APP_RESOURCE, {"server": "knob"}, "tool"),
]


async def test_malformed_params_get_errors_never_a_hang(editor: Editor) -> None:
    await editor.wait_state("knob", "connected")
    assert {m for m, _, _ in MALFORMED} == set(P.CLIENT_REQUESTS)  # every custom request is covered
    for method, params, words in MALFORMED:
        with pytest.raises(JsonRpcException) as err:
            await editor.request(method, params, timeout=15)
        assert err.value.code == P.INVALID_PARAMS, (method, params, err.value)
        assert words in err.value.message, (method, params, err.value.message)
    # The commands carried by code actions.
    good = {"uri": "file:///tmp/x.py", "range": RANGE}
    commands: list[tuple[str, list[Any], str]] = [
        (P.CMD_ASK, [], "exactly one object argument"),
        (P.CMD_ASK, ["x"], "exactly one object argument"),
        (P.CMD_ASK, [{"uri": "file:///tmp/x.py"}], "range"),
        (P.CMD_ASK, [{**good, "mode": "sing"}], "mode"),
        (P.CMD_ASK, [{**good, "range": {"start": {"line": -1, "character": 0}, "end": {}}}], "range"),
        (P.CMD_RUN_TOOL_ACTION, [{**good, "index": "first"}], "index"),
        (P.CMD_RUN_MCP_PROMPT, [{**good, "server": "knob"}], "name"),
        (P.CMD_ASK, [good, good], "exactly one object argument"),
        (P.CMD_TRUST_WORKSPACE, [{"folder": 5}], "folder: expected a string"),
        (P.CMD_TRUST_WORKSPACE, [{}], "folder"),
        (P.CMD_TRUST_WORKSPACE, [None], "takes no argument, or one folder"),
    ]
    for command, arguments, words in commands:
        with pytest.raises(JsonRpcException) as err:
            await asyncio.wait_for(editor.client.workspace_execute_command_async(
                lsp.ExecuteCommandParams(command=command, arguments=arguments)), 15)
        assert err.value.code == P.INVALID_PARAMS, (command, arguments, err.value)
        assert words in err.value.message, (command, arguments, err.value.message)
    with pytest.raises(JsonRpcException, match="not defined"):
        await asyncio.wait_for(editor.client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command="agent-ls.nope", arguments=[])), 15)
    # Standard methods whose params do not structure get InvalidParams too (pygls alone
    # would send no response at all).
    for method, params in [(lsp.TEXT_DOCUMENT_CODE_ACTION, {}),
                           (lsp.TEXT_DOCUMENT_CODE_ACTION, {"textDocument": {"uri": 5}, "range": 1}),
                           (lsp.WORKSPACE_EXECUTE_COMMAND, {"arguments": []})]:
        with pytest.raises(JsonRpcException) as err:
            await editor.raw_request(method, params)
        assert err.value.code == P.INVALID_PARAMS, (method, err.value)
    with pytest.raises(JsonRpcMethodNotFound):
        await editor.request("agent/nope", {}, timeout=15)
    # Malformed notifications are logged and dropped; the server carries on.
    proto = editor.client.protocol
    for method, params in [(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, {"event": 5}),
                           (lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, {"changes": "all"}),
                           (lsp.CANCEL_REQUEST, {"id": "never-sent"})]:
        proto._send_data(RawNotification(method=method, jsonrpc="2.0", params=params))
    status = await editor.status()
    assert status["knob"]["state"] == "connected"
    out = await editor.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "echo", "arguments": {"text": "alive"}})
    assert out["content"] == "alive"


async def test_sessions_list_new_resume_delete(setup: Setup) -> None:
    ed = await open_editor(setup)
    try:
        assert (await ed.request(P.SESSIONS_LIST))["sessions"] == []
        sid = (await ed.request(P.SESSIONS_NEW, {"title": "Refactor"}))["sessionId"]
        # an empty session is not listed (issue 17); its first message lists it
        assert (await ed.request(P.SESSIONS_LIST))["sessions"] == []
        setup.llm.script(text("first answer"))
        result = await ed.request(P.PROMPT, {"text": "first question", "sessionId": sid})
        assert result["sessionId"] == sid
        resumed = await ed.request(P.SESSIONS_RESUME, {"sessionId": sid})
        assert [(m["role"], m["content"]) for m in resumed["messages"]] == [
            ("user", "first question"), ("assistant", "first answer")]
        other = (await ed.request(P.PROMPT, {"text": "another"}))["sessionId"]
        assert other != sid
        listed = (await ed.request(P.SESSIONS_LIST))["sessions"]
        assert [s["id"] for s in listed] == [other, sid]  # most recent first
        assert listed[1]["messageCount"] == 2
        assert [s["title"] for s in listed] == ["another", "Refactor"]  # a given title is kept
    finally:
        await close_editor(ed)
    # A new process (same workspace, same data dir) lists and resumes the session.
    ed = await open_editor(setup)
    try:
        listed = (await ed.request(P.SESSIONS_LIST))["sessions"]
        assert {s["id"] for s in listed} == {sid, other}
        setup.llm.script(text("second answer"))
        await ed.request(P.PROMPT, {"text": "second question", "sessionId": sid})
        sent = [(m["role"], m["content"]) for m in setup.llm.requests[-1].body["messages"] if m["role"] != "system"]
        assert sent == [("user", "first question"), ("assistant", "first answer"), ("user", "second question")]
        assert (await ed.request(P.SESSIONS_DELETE, {"sessionId": sid}))["deleted"] is True
        assert [s["id"] for s in (await ed.request(P.SESSIONS_LIST))["sessions"]] == [other]
        # The user names a session: one line, whitespace collapsed; empty clears it.
        renamed = await ed.request(P.SESSIONS_RENAME, {"sessionId": other, "title": "  Retry   logic\nsecond line"})
        assert renamed == {"title": "Retry logic"}
        assert [s["title"] for s in (await ed.request(P.SESSIONS_LIST))["sessions"]] == ["Retry logic"]
        assert (await ed.request(P.SESSIONS_RENAME, {"sessionId": other, "title": " "}))["title"] is None
        with pytest.raises(JsonRpcException, match="no session") as err:
            await ed.request(P.SESSIONS_RENAME, {"sessionId": sid, "title": "gone"})
        assert err.value.code == P.REQUEST_FAILED
        with pytest.raises(JsonRpcException, match="no session") as err:
            await ed.request(P.SESSIONS_RESUME, {"sessionId": sid})
        assert err.value.code == P.REQUEST_FAILED
        with pytest.raises(JsonRpcException, match="no session"):
            await ed.request(P.PROMPT, {"text": "x", "sessionId": sid})
        assert (await ed.request(P.SESSIONS_DELETE, {"sessionId": sid}))["deleted"] is False
    finally:
        await close_editor(ed)


async def test_no_model_configured_is_a_clear_error(setup: Setup) -> None:
    del setup.user_settings["model"]
    ed = await open_editor(setup)
    try:
        with pytest.raises(JsonRpcException, match="no model is configured") as err:
            await ed.request(P.PROMPT, {"text": "hi"})
        assert err.value.code == P.REQUEST_FAILED
    finally:
        await close_editor(ed)


def parse_lsp_stream(data: bytes) -> list[dict[str, Any]]:
    """Strictly split a stdout capture into LSP messages; anything else fails."""
    messages = []
    pos = 0
    while pos < len(data):
        end = data.index(b"\r\n\r\n", pos)
        headers = data[pos:end].decode("ascii").split("\r\n")
        length = None
        for h in headers:
            name, _, value = h.partition(": ")
            assert name in ("Content-Length", "Content-Type"), f"not an LSP header at byte {pos}: {h!r}"
            if name == "Content-Length":
                length = int(value)
        assert length is not None, f"no Content-Length at byte {pos}"
        body = data[end + 4:end + 4 + length]
        assert len(body) == length, "truncated message"
        messages.append(json.loads(body))
        pos = end + 4 + length
    return messages


async def test_debug_log_level_times_the_first_prompt(setup: Setup) -> None:
    """AGENT_LS_LOG_LEVEL=DEBUG (scripts/bench_editor_prompt.py --timeline): the steps of a first
    prompt are logged, each with the server's clock; without it, no debug line reaches the editor."""
    import time

    setup.extra_env["AGENT_LS_LOG_LEVEL"] = "debug"
    setup.llm.script(text("done"))
    t0 = time.time()
    ed = await open_editor(setup)
    try:
        assert (await ed.request(P.PROMPT, {"text": "go"}))["text"] == "done"
        logs = [m.message for m in ed.client.log_messages]
    finally:
        await close_editor(ed)
    steps = ["agent_ls.server: prompt: received", "agent_ls.server: prompt: session", "prompt: litellm ready",
             "agent_ls.agent.llm: calling the model openai/scripted"]
    timed = {step: [m for m in logs if step in m] for step in steps}
    assert all(timed.values()), f"missing debug lines: {[s for s, m in timed.items() if not m]} in {logs}"
    for lines in timed.values():
        at, level = lines[0].split(" ")[:2]
        assert at.startswith("@") and level == "DEBUG" and t0 - 1 < float(at[1:]) < time.time() + 1, lines[0]

    setup.extra_env.pop("AGENT_LS_LOG_LEVEL")
    setup.llm.script(text("done"))
    ed = await open_editor(setup)
    try:
        await ed.request(P.PROMPT, {"text": "go"})
        await ed.wait_state("knob", "connected")  # the host starts after the model library: its log lines come then
        await wait_for(lambda: ed.client.log_messages, what="a log line")
        logs = [m.message for m in ed.client.log_messages]
    finally:
        await close_editor(ed)
    assert logs and not any("DEBUG" in m or m.startswith("@") for m in logs), logs


async def test_stdout_carries_only_lsp_and_logs_go_to_log_message(setup: Setup, tmp_path: Path) -> None:
    """Everything the server writes to stdout is a framed LSP message, while it imports
    litellm, runs a prompt with an MCP tool call, talks to a server that prints garbage on its
    own stdout and one that fails; logs arrive as window/logMessage with levels."""
    capture = tmp_path / "stdout.bin"
    setup.user_settings["mcpServers"]["noisy"] = knob_stdio_params("--name", "noisy", "--garbage-stdout")
    setup.user_settings["mcpServers"]["broken"] = {"command": "/nonexistent/server"}
    tee = ["sh", "-c", '"$0" "$@" | tee "$AGENT_LS_TEST_CAPTURE"', *SERVER_COMMAND]
    setup.extra_env["AGENT_LS_TEST_CAPTURE"] = str(capture)
    ed = await open_editor(setup, command=tee)
    try:
        await ed.wait_state("knob", "connected")
        await ed.wait_state("noisy", "connected")
        await ed.wait_state("broken", "failed")
        setup.llm.script(tool_calls([("mcp__noisy__echo", {"text": "quiet"})]), text("done"))
        result = await ed.request(P.PROMPT, {"text": "go"})
        assert result["text"] == "done"
        await ed.request(P.MCP_RESTART, {"server": "noisy"})
        logs = ed.client.log_messages
        await wait_for(lambda: any(m.type == lsp.MessageType.Warning and "broken" in m.message for m in logs),
                       what="a warning log line")
        assert any(m.type == lsp.MessageType.Info and "MCP server knob: connected" in m.message for m in logs)
    finally:
        await close_editor(ed)
    messages = parse_lsp_stream(capture.read_bytes())
    methods = [m.get("method") for m in messages]
    assert methods.count(P.EVENT) >= 5 and lsp.WINDOW_LOG_MESSAGE in methods
    assert all(m.get("jsonrpc") == "2.0" for m in messages)


async def test_shutdown_leaves_no_child_process(setup: Setup) -> None:
    setup.user_settings["mcpServers"]["knob2"] = knob_stdio_params("--name", "knob2")
    ed = await open_editor(setup)
    pids = [(await ed.wait_state(n, "connected"))["pid"] for n in ("knob", "knob2")]
    assert all(pid_alive(p) for p in pids)
    # A tool call that never returns is running when the editor shuts down.
    _, hanging = ed.start_request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "hang"})
    await wait_for(lambda: ed.approvals, what="the approval of hang")  # unknown capability: asked
    await asyncio.sleep(0.3)
    await asyncio.wait_for(ed.client.shutdown_async(None), 30)
    assert not any(pid_alive(p) for p in pids), "MCP servers outlived shutdown"
    try:  # answered, never left hanging: cancelled, or the closed server's error result
        out = await asyncio.wait_for(hanging, 10)
        assert out["isError"] is True
    except JsonRpcException:
        pass
    ed.client.exit(None)
    server = ed.client._server
    assert server is not None
    assert await asyncio.wait_for(server.wait(), 20) == 0
    await ed.client.stop()


async def test_editor_vanishing_leaves_no_child_process(setup: Setup) -> None:
    """The editor dies without shutdown/exit (its end of stdin closes)."""
    ed = await open_editor(setup)
    pid = (await ed.wait_state("knob", "connected"))["pid"]
    server = ed.client._server
    assert server is not None and server.stdin is not None
    server.stdin.close()
    await asyncio.wait_for(server.wait(), 30)
    await wait_for(lambda: not pid_alive(pid), timeout=10, what="the MCP server to end")
    await ed.client.stop()


async def test_a_prompt_that_waits_for_the_model_library_shows_progress(setup: Setup) -> None:
    """Without the background warm-up (``AGENT_LS_WARMUP=0``) the first prompt loads the model
    library itself (attaches to the model host, started if none runs): the editor is shown
    work-done progress saying so, ended once it is loaded."""
    setup.extra_env["AGENT_LS_WARMUP"] = "0"
    ed = await open_editor(setup)
    try:
        await ed.wait_state("knob", "connected")
        info = await ed.request(P.SERVER_INFO)
        assert info["modelLibrary"] == "none" and info["loadedModules"]["litellm"] is False  # nothing warmed it
        setup.llm.script(text("hello"))
        assert (await ed.request(P.PROMPT, {"text": "hi"}))["text"] == "hello"
        reports = [str(r) for rs in ed.client.progress_reports.values() for r in rs]  # type: ignore[attr-defined]
        loading = [r for r in reports if "Loading the model library" in r]
        assert loading, reports
        assert any("end" in r for r in reports)
    finally:
        await close_editor(ed)


async def test_workspace_folder_change_keeps_its_valid_part(setup: Setup) -> None:
    """Issue 30 item 5: Neovim 0.7.2 adds a folder with ``removed: [{}]``; the folder is added
    and the empty entry logged, where the whole notification used to be dropped."""
    editor = await open_editor(setup)
    try:
        other = setup.root / "other"
        other.mkdir()
        proto = editor.client.protocol
        proto._send_data(RawNotification(method=lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, jsonrpc="2.0", params={
            "event": {"added": [{"uri": other.as_uri(), "name": "other"}], "removed": [{}]}}))

        async def folders() -> list[str]:
            return (await editor.request(P.SERVER_INFO))["workspaceFolders"]  # type: ignore[no-any-return]

        for _ in range(100):
            if str(other) in await folders():
                break
            await asyncio.sleep(0.05)
        assert await folders() == [str(setup.ws), str(other)]
        await wait_for(lambda: any("ignored what is not a workspace folder" in m.message and "removed: {}" in m.message
                                   for m in editor.client.log_messages), what="the ignored entry in the log")
        # Neovim's empty list is an empty Lua table ({}); a folder without a name is named after its path.
        third = setup.root / "third"
        third.mkdir()
        proto._send_data(RawNotification(method=lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, jsonrpc="2.0", params={
            "event": {"added": [{"uri": third.as_uri()}, 7], "removed": {}}}))
        for _ in range(100):
            if str(third) in await folders():
                break
            await asyncio.sleep(0.05)
        assert await folders() == [str(setup.ws), str(other), str(third)]
        proto._send_data(RawNotification(method=lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, jsonrpc="2.0", params={
            "event": {"added": [], "removed": [{"uri": other.as_uri(), "name": "other"}, {"name": "x"}]}}))
        for _ in range(100):
            if str(other) not in await folders():
                break
            await asyncio.sleep(0.05)
        assert await folders() == [str(setup.ws), str(third)]
    finally:
        await close_editor(editor)
