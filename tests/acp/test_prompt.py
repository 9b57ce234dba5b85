"""`agent-ls acp` end to end in one agent process (the client advertises fs/*): streamed text,
tool calls with permissions, cancellation, MCP servers from the editor, edits through the
editor's fs, bad input."""

from __future__ import annotations

import asyncio
import json

import pytest
from acp import RequestError, text_block
from acp.schema import HttpMcpServer, McpServerStdio

from tests.acp.conftest import Shared, wait_for
from tests.llm.scripted_server import auth_error, hang, slow_text, text, tool_calls
from tests.servers.launch import knob_stdio_params, run_http_knob_server

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def tool_messages(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "tool"]


async def test_initialize_and_streamed_text(shared: Shared) -> None:
    setup, conn, client = shared.fresh()
    caps = client.init.agent_capabilities
    assert client.init.protocol_version == 1
    assert caps.load_session and caps.mcp_capabilities.http and caps.prompt_capabilities.embedded_context
    assert client.init.agent_info.name == "agent-ls"

    session = await conn.new_session(cwd=str(setup.ws), mcp_servers=[])
    setup.llm.script(text("Hello from the agent", chunks=4))
    result = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                prompt=[text_block("say hello")]), 60)
    assert result.stop_reason == "end_turn"
    chunks = client.of(session.session_id, "agent_message_chunk")
    assert len(chunks) >= 4  # streamed, not one block
    assert client.text(session.session_id) == "Hello from the agent"
    body = setup.llm.requests[-1].body
    assert body["messages"][-1] == {"role": "user", "content": "say hello"}

    # a model that thinks aloud: its reasoning streams as agent_thought_chunk, apart from the reply
    setup.llm.script(text("Two.", reasoning="one plus one is two"))
    result = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                prompt=[text_block("1+1?")]), 60)
    assert result.stop_reason == "end_turn"
    thoughts = client.of(session.session_id, "agent_thought_chunk")
    assert "".join(u.content.text for u in thoughts) == "one plus one is two"
    assert client.text(session.session_id).endswith("Two.")
    setup.llm.script(text("ok"))
    await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("and?")]), 60)
    sent = str(setup.llm.requests[-1].body["messages"])
    assert "Two." in sent and "one plus one" not in sent  # the reply is history, the thinking is not


async def test_tool_call_allowed_once_and_rejected(shared: Shared) -> None:
    """A tool that asks: the permission request carries the tool call and the four options;
    allow_once runs it (pending -> in_progress -> completed), reject_once gives the model a
    rejection result and nothing runs."""
    setup, conn, client = shared.fresh()
    target = setup.ws / "rejected.txt"
    session = await conn.new_session(cwd=str(setup.ws), mcp_servers=[])
    sid = session.session_id
    setup.llm.script(
        tool_calls([("bash", {"command": "echo approved-run"}, "call_bash")], text="Running it."),
        text("Ran it."),
        tool_calls([("write_file", {"path": "rejected.txt", "content": "nope\n"}, "call_write")]),
        text("Understood, not writing."),
    )
    client.permission_answers = ["allow_once", "reject_once"]

    result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("run echo")]), 60)
    assert result.stop_reason == "end_turn"
    request = client.permission_requests[0]
    assert request["toolCall"].tool_call_id == "call_bash"
    assert {o.kind for o in request["options"]} == {"allow_once", "allow_always", "reject_once", "reject_always"}
    calls = [u for u in client.of(sid) if getattr(u, "tool_call_id", None) == "call_bash"]
    assert calls[0].session_update == "tool_call" and calls[0].kind == "execute"
    assert calls[0].status == "pending" and calls[0].raw_input == {"command": "echo approved-run"}
    assert [u.status for u in calls[1:]] == ["in_progress", "completed"]
    assert "approved-run" in calls[-1].content[0].content.text
    assert "approved-run" in tool_messages(setup.llm.requests[1].body)[0]["content"]

    result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("write it")]), 60)
    assert result.stop_reason == "end_turn"
    assert client.permission_requests[1]["toolCall"].tool_call_id == "call_write"
    writes = [u for u in client.of(sid) if getattr(u, "tool_call_id", None) == "call_write"]
    assert writes[0].kind == "edit" and writes[0].content[0].type == "diff"
    assert writes[0].locations[0].path == str(target)
    assert writes[-1].status == "failed"
    rejection = tool_messages(setup.llm.requests[3].body)[-1]
    assert rejection["tool_call_id"] == "call_write" and "denied" in rejection["content"]
    assert not target.exists()
    assert client.text(sid).endswith("Understood, not writing.")


async def test_allow_always_and_reject_always_are_remembered(shared: Shared) -> None:
    setup, conn, client = shared.fresh()
    sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
    setup.llm.script(
        tool_calls([("bash", {"command": "echo one"})]), text("one"),
        tool_calls([("bash", {"command": "echo one"})]), text("two"),
    )
    client.permission_answers = ["allow_always"]  # the narrowest scope: exactly this command
    for prompt in ("first", "second"):
        assert (await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block(prompt)]),
                                       60)).stop_reason == "end_turn"
    assert len(client.permission_requests) == 1  # the second call ran without asking
    assert "one" in tool_messages(setup.llm.requests[3].body)[-1]["content"]

    setup.llm.script(
        tool_calls([("write_file", {"path": "x.txt", "content": "1"})]), text("no"),
        tool_calls([("write_file", {"path": "x.txt", "content": "2"})]), text("still no"),
    )
    client.permission_answers = ["reject_always"]
    for prompt in ("third", "fourth"):
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block(prompt)]), 60)
    assert len(client.permission_requests) == 2  # rejected for the session: asked once
    assert "denied" in tool_messages(setup.llm.requests[7].body)[-1]["content"]
    assert not (setup.ws / "x.txt").exists()


@pytest.mark.parametrize("option", ["allow_always", "allow_always:prefix"])
async def test_allow_always_covers_only_what_was_shown(shared: Shared, option: str) -> None:
    """Issue 25 finding 2 over ACP: allow_always on `git status --short` does not let
    `git status; touch PWNED` run; each session option names its scope."""
    setup, conn, client = shared.fresh()
    sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
    setup.llm.script(
        tool_calls([("bash", {"command": "git status --short"})]),
        tool_calls([("bash", {"command": "git status --short"})]),
        tool_calls([("bash", {"command": "git status; touch PWNED"})]),
        text("done"),
    )
    client.permission_answers = [option, "reject_once"]
    result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("status")]), 60)
    assert result.stop_reason == "end_turn"
    assert len(client.permission_requests) == 2
    names = {o.option_id: o.name for o in client.permission_requests[0]["options"]}
    assert names["allow_always"] == "Allow exactly this command for this session"
    assert names["allow_always:prefix"] == "Allow `git status` … for this session"
    shown = client.permission_requests[1]["toolCall"].content[-1].content.text
    assert shown.startswith("Command: git status; touch PWNED\n")
    assert not (setup.ws / "PWNED").exists()


async def test_a_protected_file_offers_no_allow_always(shared: Shared) -> None:
    setup, conn, client = shared.fresh()
    sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
    setup.llm.script(tool_calls([("write_file", {"path": ".vscode/tasks.json", "content": "{}"})]), text("no"))
    client.permission_answers = ["reject_once"]
    await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("write")]), 60)
    (request,) = client.permission_requests
    assert {o.kind for o in request["options"]} == {"allow_once", "reject_once", "reject_always"}
    shown = request["toolCall"].content[-1].content.text
    assert "Protected file: VS Code runs tasks" in shown


async def test_cancel_mid_turn(shared: Shared) -> None:
    """session/cancel while the model streams, and while a permission request is open: the
    prompt ends with stop reason `cancelled`, and the agent keeps serving."""
    setup, conn, client = shared.fresh()
    sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
    setup.llm.script(slow_text(40, delay=0.1), text("after cancel"))
    task = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("go slowly")]))
    await wait_for(lambda: len(client.of(sid, "agent_message_chunk")) >= 2, what="streaming started")
    await conn.cancel(session_id=sid)
    result = await asyncio.wait_for(task, 20)
    assert result.stop_reason == "cancelled"
    assert len(client.of(sid, "agent_message_chunk")) < 40

    result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("again")]), 60)
    assert result.stop_reason == "end_turn" and client.text(sid).endswith("after cancel")

    # cancelled while the user is being asked
    client.hold_permissions = True
    setup.llm.script(tool_calls([("bash", {"command": "echo never"}, "call_held")]), hang())
    task = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("ask me")]))
    await wait_for(lambda: len(client.permission_requests) == 1, what="permission asked")
    await conn.cancel(session_id=sid)
    result = await asyncio.wait_for(task, 20)
    assert result.stop_reason == "cancelled"
    held = [u for u in client.of(sid) if getattr(u, "tool_call_id", None) == "call_held"]
    assert held[-1].status == "failed"


async def test_editor_mcp_servers_join_the_session(shared: Shared) -> None:
    """stdio and HTTP servers given in session/new: their tools run (no trust prompt: the
    editor's servers are the user's), their prompts become slash commands."""
    setup, conn, client = shared.fresh()
    knob = knob_stdio_params()
    async with run_http_knob_server() as url:
        servers = [McpServerStdio(name="edknob", command=knob["command"], args=knob["args"], env=[]),
                   HttpMcpServer(type="http", name="webknob", url=url, headers=[])]
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=servers)).session_id
        setup.llm.script(
            tool_calls([("mcp__edknob__echo", {"text": "from the editor's server"}, "call_echo"),
                        ("mcp__webknob__add", {"a": 2, "b": 3}, "call_add")]),
            text("Echoed."),
        )
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("echo")]), 60)
        assert result.stop_reason == "end_turn"
        results = {m["tool_call_id"]: m["content"] for m in tool_messages(setup.llm.requests[-1].body)}
        assert results == {"call_echo": "from the editor's server", "call_add": "5"}
        echo = [u for u in client.of(sid) if getattr(u, "tool_call_id", None) == "call_echo"]
        # (a call made while its server still starts gets its title and kind once the tool is found)
        titled = [u for u in echo if getattr(u, "title", None)]
        assert titled[-1].title == "echo (edknob)" and titled[-1].kind == "read" and echo[-1].status == "completed"
        assert client.permission_requests == []  # read-only tools, editor servers: nothing asked

        await wait_for(lambda: client.of(sid, "available_commands_update"), what="slash commands")
        names = {c.name for c in client.of(sid, "available_commands_update")[-1].available_commands}
        assert {"edknob.review", "webknob.greet"} <= names

        setup.llm.script(text("Reviewed."))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("/edknob.review x = 1")]), 60)
        sent = setup.llm.requests[-1].body["messages"][-1]["content"]
        assert sent == "Please review this code and point out bugs:\n\nx = 1"

        # MCP sampling: the server's request to use the model is a permission request too
        client.permission_answers = ["allow_once", "allow_once"]  # the tool call, then the sampling
        setup.llm.script(tool_calls([("mcp__edknob__sample", {"prompt": "name a colour"}, "call_sample")]),
                         text("teal"), text("The server said teal."))
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("sample")]), 60)
        assert result.stop_reason == "end_turn"
        consent = client.permission_requests[-1]
        assert consent["toolCall"].title == "Let MCP server 'edknob' use the model?"
        assert "user: name a colour" in consent["toolCall"].content[0].content.text
        assert tool_messages(setup.llm.requests[-1].body)[-1]["content"] == "teal"


async def test_edit_goes_through_editor_fs(shared: Shared) -> None:
    """With fs.readTextFile/writeTextFile the file tools read the editor's buffer (unsaved
    text) and write through fs/write_text_file; the disk is untouched."""
    setup, conn, client = shared.fresh()
    target = setup.ws / "app.py"
    target.write_text("x = 'disk'\n")
    client.buffers[str(target)] = "x = 'unsaved buffer'\n"
    sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
    setup.llm.script(
        tool_calls([("edit_file", {"path": "app.py", "old_string": "unsaved buffer", "new_string": "edited"},
                     "call_edit")]),
        tool_calls([("write_file", {"path": "new.py", "content": "print(1)\n"}, "call_new")]),
        text("Done."),
    )
    result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("edit it")]), 60)
    assert result.stop_reason == "end_turn"
    assert client.writes == [(str(target), "x = 'edited'\n"), (str(setup.ws / "new.py"), "print(1)\n")]
    assert target.read_text() == "x = 'disk'\n" and not (setup.ws / "new.py").exists()
    assert str(target) in client.reads
    edit = [u for u in client.of(sid) if getattr(u, "tool_call_id", None) == "call_edit"]
    diff = edit[0].content[0]  # the whole file before and after (the editor's text)
    assert diff.type == "diff" and diff.path == str(target)
    assert (diff.old_text, diff.new_text) == ("x = 'unsaved buffer'\n", "x = 'edited'\n")
    assert edit[-1].status == "completed" and edit[-1].content[0].new_text == "x = 'edited'\n"
    result = tool_messages(setup.llm.requests[1].body)[0]["content"]
    assert "Edited app.py" in result and "not saved to disk yet" in result  # this client keeps buffers


async def test_bad_input_gets_protocol_errors(shared: Shared) -> None:
    """Malformed JSON-RPC, an unknown method, a prompt for an unknown session: each gets the
    protocol's error and the agent keeps serving."""
    setup, conn, client = shared.fresh()
    stdin = shared.process.stdin
    start = len(client.messages)

    def since() -> list[dict]:
        return client.messages[start:]

    async def raw(line: bytes | dict) -> None:
        stdin.write(line if isinstance(line, bytes) else (json.dumps(line) + "\n").encode())
        await stdin.drain()

    for line in (b"this is not json\n", b"[1, 2, 3]\n", b'{"jsonrpc": "2.0", "id": 77}\n',
                 b'{"jsonrpc": "2.0", "id": 78, "method": 5}\n'):
        await raw(line)
    await wait_for(lambda: len([m for m in since() if "error" in m]) >= 4, what="four error responses")
    codes = [(m["id"], m["error"]["code"]) for m in since() if "error" in m]
    assert codes == [(None, -32700), (None, -32600), (77, -32600), (78, -32600)]

    with pytest.raises(RequestError) as err:
        await conn.ext_method("no/such_method", {})  # sent as "_no/such_method"
    assert err.value.code == -32601
    await raw({"jsonrpc": "2.0", "id": 79, "method": "session/teleport", "params": {}})
    await raw({"jsonrpc": "2.0", "id": 80, "method": "session/new", "params": {"cwd": 42}})
    await wait_for(lambda: {79, 80} <= {m.get("id") for m in since()}, what="answers")
    answers = {m["id"]: m["error"]["code"] for m in since() if m.get("id") in (79, 80)}
    assert answers == {79: -32601, 80: -32602}

    with pytest.raises(RequestError) as err:
        await conn.prompt(session_id="no-such-session", prompt=[text_block("hi")])
    assert err.value.code == -32602 and "unknown session" in json.dumps(err.value.data)
    with pytest.raises(RequestError) as err:
        await conn.new_session(cwd="relative/path", mcp_servers=[])
    assert err.value.code == -32602

    # still serving
    sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
    setup.llm.script(text("fine"))
    result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("ok?")]), 60)
    assert result.stop_reason == "end_turn" and client.text(sid) == "fine"
    assert shared.process.returncode is None


async def test_model_error_is_a_protocol_error(shared: Shared) -> None:
    """A failed turn (the provider refuses the key) answers with an error saying why, after an
    agent message chunk saying the same; the session stays usable."""
    setup, conn, client = shared.fresh()
    sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
    setup.llm.script(auth_error(), text("back again"))
    with pytest.raises(RequestError) as err:
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hi")]), 60)
    assert err.value.code == -32603 and "API key" in str(err.value) and err.value.data == {"kind": "auth"}
    assert "API key" in client.text(sid)
    result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("again")]), 60)
    assert result.stop_reason == "end_turn" and client.text(sid).endswith("back again")


async def test_step_limit_is_max_turn_requests(shared: Shared) -> None:
    setup, conn, client = shared.fresh()
    sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
    setup.llm.script(*(tool_calls([("glob", {"pattern": "*.none"})]) for _ in range(4)))
    result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("loop")]), 60)
    assert result.stop_reason == "max_turn_requests"
    assert len(setup.llm.requests) == 4 and client.permission_requests == []
