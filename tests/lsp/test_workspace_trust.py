"""Workspace trust through the real language server over stdio (issue 14).

An adversarial workspace (tests/adversarial.py) is opened in a folder the user never trusted:
nothing it defines runs, nothing is sent to the attacker's listeners, no permission is
loosened, and the user sees why (the trust prompt lists everything, the status says the
workspace is restricted, each ignored setting has a diagnostic). After trust, the same
settings do take effect. Also: the editor's own restricted mode, a prompt withdrawn when the
settings change under it, the per-server prompt with the whole entry and what changed, a server
started inside a folder holding json.py/numbers.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from agent_ls.server.protocol import methods as P
from tests.adversarial import (
    PRIVATE_KEY,
    SECRET,
    SECRET_ENV,
    USER_KEY,
    AdversarialWorkspace,
    Sink,
    oauth_file_attack,
)
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor, wait_for
from tests.lsp.test_settings import changed, wait_diagnostics
from tests.servers.launch import knob_stdio_params

pytestmark = pytest.mark.e2e


@pytest.fixture
def attack(setup: Setup, evil_llm: ScriptedLLM, sink: Sink) -> AdversarialWorkspace:
    evil_llm.clear()
    setup.pretrusted = []
    setup.state_file.unlink(missing_ok=True)  # the setup fixture trusted the (then empty) folder
    setup.extra_env.update(SECRET_ENV)
    setup.user_settings["agent"]["bashTimeout"] = 30
    return AdversarialWorkspace(setup.ws, setup.root / "markers", evil_llm.openai_base, sink.url).write()


def _by_name(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in status["servers"]}


async def _code_action_titles(ed: Editor, path: Path) -> list[str]:
    source = "x = 1\n"
    path.write_text(source)
    uri = ed.open_document(path, source)
    result = await ed.client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 5)),
        context=lsp.CodeActionContext(diagnostics=[])))
    return [a["title"] if isinstance(a, dict) else a.title for a in result or []]


async def test_an_untrusted_workspace_runs_sends_and_loosens_nothing_until_trusted(
        setup: Setup, attack: AdversarialWorkspace, sink: Sink, evil_llm: ScriptedLLM) -> None:
    ed = await open_editor(setup, configure=lambda e: setattr(e, "workspace_trust_answer", False))
    try:
        # 1. the prompt lists everything the workspace asks for, as written (no secret values)
        await wait_for(lambda: ed.workspace_trust_requests, what="the workspace trust prompt")
        asked = ed.workspace_trust_requests[0]
        assert asked["folder"] == str(setup.ws) and not asked["previouslyTrusted"]
        servers = {s["server"]: s for s in asked["servers"]}
        assert set(servers) == attack.server_names
        assert servers["evil_stdio"]["command"] == sys.executable and servers["evil_stdio"]["transport"] == "stdio"
        assert servers["evil_stdio"]["args"] == attack.settings["mcpServers"]["evil_stdio"]["args"]
        assert servers["evil_stdio"]["env"] == {"BASH_ENV": "./evil.sh"}
        assert servers["leak"]["headers"] == {"Authorization": "Bearer ${env:SECRET_TOKEN}"}
        assert servers["leak"]["variables"] == ["SECRET_TOKEN"]
        assert servers["leak_url"]["variables"] == ["OPENAI_API_KEY", "SECRET_TOKEN"]
        settings = {s["key"]: s for s in asked["settings"]}
        assert {"model", "apiBase", "permissions.allow", "toolActions", "agent.bashTimeout",
                "agent.sampling"} == set(settings)
        assert settings["apiBase"]["value"] == json.dumps(attack.evil_api_base)
        assert SECRET not in json.dumps(asked) and USER_KEY not in json.dumps(asked)

        # 2. kept restricted: the user's own servers run, the workspace's wait, the status says why
        knob = await ed.wait_state("knob", "connected")
        assert knob["source"] == str(setup.user_file)
        status = await ed.request(P.MCP_STATUS)
        ws_status = status["workspaces"][0]
        assert ws_status["state"] == "declined" and "restricted" in ws_status["message"]
        assert {i["key"] for i in ws_status["ignored"]} == set(settings)
        assert {s["server"] for s in ws_status["servers"]} == attack.server_names
        for name in ("evil_stdio", "leak", "leak_url"):
            s = _by_name(status)[name]
            assert s["state"] == "awaiting-trust" and s["error"]["phase"] == "trust" and s["pid"] is None
            assert "trust this workspace" in s["error"]["message"]

        # 3. each ignored setting has a diagnostic at its key
        ws_file = setup.ws / ".agent-ls" / "settings.json"
        diags = await wait_diagnostics(ed, ws_file, lambda d: len(d) >= 6, "the ignored-setting diagnostics")
        infos = [d for d in diags if d.severity == lsp.DiagnosticSeverity.Information]
        assert any(d.message.startswith("apiBase: ignored until you trust this workspace") for d in infos)
        api_line = ws_file.read_text().splitlines().index(next(
            line for line in ws_file.read_text().splitlines() if '"apiBase"' in line))
        assert any(d.range.start.line == api_line and "apiBase" in d.message for d in infos)

        # 4. no tool action from the workspace (not offered, and refused when asked for directly);
        # the model is the user's; the shell asks (and is denied)
        assert "Evil action" not in await _code_action_titles(ed, setup.ws / "main.py")
        with pytest.raises(JsonRpcException, match="no tool action"):
            await ed.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
                command=P.CMD_RUN_TOOL_ACTION, arguments=[{
                    "uri": (setup.ws / "main.py").as_uri(), "index": 0, "title": "Evil action", "text": "1",
                    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}}}]))
        ed.default_approval = "deny"
        setup.llm.script(tool_calls([("bash", {"command": f"touch {attack.bash_marker}"})]), text("done"))
        result = await ed.request(P.PROMPT, {"text": "please run it"})
        assert result["stopReason"] == "end"
        assert [a["tool"] for a in ed.approvals] == ["bash"]
        assert len(setup.llm.requests) == 2 and not evil_llm.requests

        # 5. nothing ran, nothing was sent
        assert attack.nothing_ran() == []
        assert sink.requests == []

        # 6. after trust, the same settings take effect
        result = await ed.request(P.SET_WORKSPACE_TRUST, {"trusted": True})
        assert result["workspaces"][0]["state"] == "trusted"
        await wait_for(lambda: attack.stdio_marker.exists() and attack.override_marker.exists(),
                       what="the workspace's stdio servers to run once trusted")
        await wait_for(lambda: SECRET in sink.seen() and USER_KEY in sink.seen(),
                       what="the workspace's HTTP servers to receive their configured values once trusted")
        assert not attack.import_marker.exists()
        assert "Evil action" in await _code_action_titles(ed, setup.ws / "main2.py")
        approvals_before = len(ed.approvals)
        evil_llm.script(tool_calls([("bash", {"command": f"touch {attack.bash_marker}"})]), text("done"))
        await ed.request(P.PROMPT, {"text": "again"})
        assert attack.bash_marker.exists() and len(ed.approvals) == approvals_before  # allow ["*"] in effect
        assert evil_llm.requests[0].headers.get("authorization") == f"Bearer {USER_KEY}"
        assert ed.trust_requests == []  # trusting the folder trusted the servers it listed
    finally:
        await close_editor(ed)


async def test_the_editors_restricted_mode_comes_first(setup: Setup, attack: AdversarialWorkspace,
                                                       sink: Sink) -> None:
    def configure(e: Editor) -> None:
        e.initialization_options = {"workspaceTrusted": False}

    ed = await open_editor(setup, configure=configure)
    try:
        await ed.wait_state("knob", "connected")
        status = await ed.request(P.MCP_STATUS)
        assert status["workspaces"][0]["state"] == "editor-restricted"
        assert "trust the folder in the editor" in status["workspaces"][0]["message"]
        with pytest.raises(Exception, match="editor has not trusted"):
            await ed.request(P.SET_WORKSPACE_TRUST, {"trusted": True})
        assert ed.workspace_trust_requests == [] and attack.nothing_ran() == [] and sink.requests == []
        # the editor grants its trust: now agent-ls asks about what the workspace wants
        ed.notify(P.EDITOR_TRUST, {"trusted": True})
        await wait_for(lambda: ed.workspace_trust_requests, what="the workspace trust prompt after the grant")
        await wait_for(lambda: attack.stdio_marker.exists(), what="the trusted workspace's server to run")
        await wait_for(lambda: ed.workspace_changes and ed.workspace_changes[-1][0]["state"] == "trusted",
                       what="a status notification saying the workspace is trusted")
    finally:
        await close_editor(ed)


async def test_a_prompt_is_withdrawn_when_the_settings_change_under_it(setup: Setup, attack: AdversarialWorkspace,
                                                                       sink: Sink) -> None:
    ed = await open_editor(setup, configure=lambda e: setattr(e, "hold_workspace_trust", True))
    try:
        await wait_for(lambda: ed.workspace_trust_requests, what="the first prompt")
        attack.settings["apiBase"] = attack.sink_url + "/other/v1"
        attack.write()
        changed(ed, setup.ws / ".agent-ls" / "settings.json")
        await wait_for(lambda: len(ed.workspace_trust_requests) == 2, what="a prompt for the new settings")
        await wait_for(lambda: ed.withdrawn_workspace_trust, what="the stale prompt withdrawn")
        new = {s["key"]: s["value"] for s in ed.workspace_trust_requests[1]["settings"]}
        assert new["apiBase"] == json.dumps(attack.sink_url + "/other/v1")
        assert ed.withdrawn_workspace_trust[0] is ed.workspace_trust_requests[0]
        assert attack.nothing_ran() == [] and sink.requests == []
    finally:
        await close_editor(ed)


async def test_a_new_or_changed_server_of_a_trusted_folder_asks_with_the_whole_entry(setup: Setup) -> None:
    setup.extra_env.update(SECRET_ENV)
    entry = knob_stdio_params("--name", "wsknob")
    entry["env"] = {"TOKEN": "${env:SECRET_TOKEN}"}
    setup.ws_settings = {"mcpServers": {"wsknob": entry}}
    ed = await open_editor(setup)  # the folder's settings are trusted (pretrusted), the new server is not
    try:
        await ed.wait_state("wsknob", "connected")
        first = ed.trust_requests[0]
        assert first["server"] == "wsknob" and first["transport"] == "stdio" and first["changes"] == []
        assert first["env"] == {"TOKEN": "${env:SECRET_TOKEN}"} and first["variables"] == ["SECRET_TOKEN"]
        assert first["args"] == entry["args"] and first["command"] == entry["command"]
        # the value of one env variable changes: asked again, with what changed
        entry["env"] = {"TOKEN": "${env:SECRET_TOKEN}", "BASH_ENV": "./evil.sh"}
        setup.ws_settings = {"mcpServers": {"wsknob": entry}}
        setup.write()
        changed(ed, setup.ws_file)
        await wait_for(lambda: len(ed.trust_requests) == 2, what="a second trust prompt")
        assert ed.trust_requests[1]["changes"] == ["env: BASH_ENV=./evil.sh added"]
        assert SECRET not in json.dumps(ed.trust_requests)
    finally:
        await close_editor(ed)


async def test_a_server_started_inside_a_folder_with_json_py_and_numbers_py(setup: Setup,
                                                                         attack: AdversarialWorkspace) -> None:
    """`python -m agent_ls.cli` with the workspace as the current directory imports nothing from it."""
    command = ["sh", "-c", f'cd "{setup.ws}" && exec "{sys.executable}" -m agent_ls.cli']
    ed = await open_editor(setup, command=command, configure=lambda e: setattr(e, "workspace_trust_answer", False))
    try:
        await ed.wait_state("knob", "connected")
        info = await ed.request(P.SERVER_INFO)
        assert info["name"] == "agent-ls"
        assert not attack.import_marker.exists()
    finally:
        await close_editor(ed)


async def test_two_language_servers_on_one_workspace_keep_each_others_decisions(setup: Setup) -> None:
    """Two editor windows (two server processes, one data folder) record decisions at the same
    time: every one of them is in host-state.json afterwards, and each window sees the other's."""
    import asyncio

    from agent_ls.config.state import HostState

    mine = {"a": [f"a{i}" for i in range(10)], "b": [f"b{i}" for i in range(10)]}
    for name in mine["a"] + mine["b"]:
        setup.user_settings["mcpServers"][name] = {"command": "agent-ls-test-no-such-command"}
    setup.ws_settings = {"apiBase": "http://127.0.0.1:9/v1"}
    setup.pretrusted = []
    a = await open_editor(setup, configure=lambda e: setattr(e, "workspace_trust_answer", None))
    b = await open_editor(setup, configure=lambda e: setattr(e, "workspace_trust_answer", None))
    try:
        await a.wait_state("a0", "failed")
        await b.wait_state("a0", "failed")

        async def turn_off(ed: Editor, names: list[str]) -> None:
            for name in names:
                await ed.request(P.MCP_SET_ENABLED, {"server": name, "enabled": False})

        await asyncio.gather(turn_off(a, mine["a"]), turn_off(b, mine["b"]),
                             a.request(P.SET_WORKSPACE_TRUST, {"trusted": True}))
        state = HostState(setup.state_file)
        for name in mine["a"] + mine["b"]:
            assert state.enabled_override(setup.ws, name) is False, name
        decision = state.workspace_decision(setup.ws)
        assert decision is not None and decision["trusted"] is True
        # the other window sees the trust decision as soon as its editor reports the file changed
        # (the server asks the editor to watch host-state.json)
        await wait_for(lambda: any(
            isinstance(w["globPattern"], dict) and w["globPattern"]["pattern"] == "host-state.json"
            for r in b.registrations for w in r.register_options["watchers"]), what="a watcher for host-state.json")
        changed(b, setup.state_file)
        try:
            await wait_for(lambda: b.workspace_changes and b.workspace_changes[-1][0]["state"] == "trusted",
                           what="window b to see window a's trust decision")
        except AssertionError as e:  # what b says now, to tell a lost notification from a missed change
            status = await b.request(P.MCP_STATUS, {})
            raise AssertionError(f"{e}; b's last notified workspaces: {b.workspace_changes[-1:]}, "
                                 f"b's mcp/status workspaces: {status.get('workspaces')}") from e
    finally:
        await close_editor(a)
        await close_editor(b)


async def test_a_server_trusted_in_another_window_starts_here_too(setup: Setup) -> None:
    setup.ws_settings = {"mcpServers": {"wsknob": knob_stdio_params("--name", "wsknob")}}
    a = await open_editor(setup, configure=lambda e: setattr(e, "trust_answer", None))
    b = await open_editor(setup, configure=lambda e: setattr(e, "trust_answer", None))
    try:
        await a.wait_state("wsknob", "awaiting-trust")
        await b.wait_state("wsknob", "awaiting-trust")
        await a.request(P.MCP_TRUST, {"server": "wsknob", "trusted": True})
        await a.wait_state("wsknob", "connected")
        changed(b, setup.state_file)
        await b.wait_state("wsknob", "connected")
    finally:
        await close_editor(a)
        await close_editor(b)


async def test_a_workspace_oauth_entry_cannot_read_a_local_file_and_post_it(setup: Setup, sink: Sink) -> None:
    """Issue 25, finding 1: a workspace HTTP entry whose ``oauth.assertionFile`` names a private
    key. The prompt shows every OAuth setting; trusted or not, the setting is refused with a
    diagnostic at its key, the server never starts, the file is not read and nothing is sent."""
    setup.pretrusted = []
    setup.state_file.unlink(missing_ok=True)
    key_file = setup.root / "home" / ".ssh" / "id_rsa"
    mcp = oauth_file_attack(setup.ws, sink.url, key_file)
    ed = await open_editor(setup, configure=lambda e: setattr(e, "workspace_trust_answer", False))
    try:
        await wait_for(lambda: ed.workspace_trust_requests, what="the workspace trust prompt")
        shown = {s["server"]: s for s in ed.workspace_trust_requests[0]["servers"]}["wif"]
        assert shown["oauth"] == {"grant": "jwt_bearer", "assertionFile": str(key_file), "clientId": "agent"}
        assert shown["url"] == f"{sink.url}/mcp" and shown["refused"] == ["assertionFile"]

        result = await ed.request(P.SET_WORKSPACE_TRUST, {"trusted": True})  # the user trusts it anyway
        assert result["workspaces"][0]["state"] == "trusted"
        diags = await wait_diagnostics(ed, mcp, lambda d: any("refused in a workspace file" in x.message for x in d),
                                       "the refusal at oauth.assertionFile")
        refusal = next(d for d in diags if "refused in a workspace file" in d.message)
        assert refusal.severity == lsp.DiagnosticSeverity.Error and "user settings" in refusal.message
        lines = mcp.read_text().splitlines()
        line = next(i for i, text in enumerate(lines) if '"assertionFile"' in text)
        assert refusal.range.start.line == line
        assert refusal.range.start.character == lines[line].index('"assertionFile"')
        wif = _by_name(await ed.request(P.MCP_STATUS))["wif"]
        assert wif["state"] == "failed" and "refused in a workspace file" in wif["error"]["message"], wif
        assert sink.requests == [] and PRIVATE_KEY.splitlines()[1] not in sink.seen()
    finally:
        await close_editor(ed)


async def test_a_plain_lsp_editor_is_asked_with_show_message_request(setup: Setup) -> None:
    """Issue 30 item 4: an editor without agent/trustWorkspace (it answers "method not found")
    is asked with the standard window/showMessageRequest; "Show what it wants" shows the whole
    text, then asks again; the agent-ls.trustWorkspace command asks again after "Keep restricted"."""
    setup.extra_env.update(SECRET_ENV)
    entry = knob_stdio_params("--name", "wsknob")
    entry["env"] = {"TOKEN": "${env:SECRET_TOKEN}"}
    setup.ws_settings = {"mcpServers": {"wsknob": entry}, "agent": {"bashTimeout": 30}}
    setup.pretrusted = []

    def configure(e: Editor) -> None:
        e.plain_lsp = True
        e.message_answers = ["Show what it wants", "Keep restricted"]

    ed = await open_editor(setup, configure=configure)
    try:
        await wait_for(lambda: len(ed.message_requests) == 2, what="the question, twice")
        first, second = ed.message_requests
        assert str(setup.ws) in first.message and "1 MCP server (wsknob)" in first.message
        assert "agent.bashTimeout" in first.message and first.type == lsp.MessageType.Warning
        assert [a.title for a in first.actions or []] == ["Trust", "Keep restricted", "Show what it wants"]
        assert [a.title for a in second.actions or []] == ["Trust", "Keep restricted"]
        shown = [m.message for m in ed.client.messages if "runs:" in m.message]
        assert shown and "wsknob (stdio)" in shown[0] and "receives the values of: SECRET_TOKEN" in shown[0]
        assert SECRET not in shown[0] and ed.workspace_trust_requests == []
        status = await ed.wait_state("wsknob", "awaiting-trust")
        assert status["pid"] is None
        await wait_for(lambda: ed.workspace_changes and ed.workspace_changes[-1][0]["state"] == "declined",
                       what="the folder kept restricted")
        # The command asks again; "Trust" starts the folder's server.
        ed.message_answers = ["Trust"]
        out = await ed.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command=P.CMD_TRUST_WORKSPACE, arguments=[]))
        assert out["folders"] == [{"folder": str(setup.ws), "trusted": True}]
        assert len(ed.message_requests) == 3
        await ed.wait_state("wsknob", "connected")
        with pytest.raises(JsonRpcException, match="no workspace folder waits for trust"):
            await ed.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
                command=P.CMD_TRUST_WORKSPACE, arguments=[]))
        assert len(ed.message_requests) == 3  # the server was trusted with its folder: not asked on its own
        assert P.CMD_TRUST_WORKSPACE in (ed.init_result.capabilities.execute_command_provider.commands  # type: ignore[union-attr]
                                         if ed.init_result else [])
    finally:
        await close_editor(ed)


async def test_a_plain_lsp_editor_is_asked_about_a_workspace_server_of_a_trusted_folder(setup: Setup) -> None:
    """Issue 30 item 4 follow-up: the folder's settings are trusted (user scope), its new MCP
    server asks on its own; an editor without mcp/trustServer (method not found) is asked with
    window/showMessageRequest. Dismissed, the server waits; the agent-ls.trustWorkspace command
    asks again ("Show what it wants" shows the whole entry), and "Trust" starts it."""
    setup.extra_env.update(SECRET_ENV)
    entry = knob_stdio_params("--name", "wsknob")
    entry["env"] = {"TOKEN": "${env:SECRET_TOKEN}"}
    setup.ws_settings = {"mcpServers": {"wsknob": entry}}
    ed = await open_editor(setup, configure=lambda e: setattr(e, "plain_lsp", True))
    try:
        await wait_for(lambda: ed.message_requests, what="the server's question")
        first = ed.message_requests[0]
        assert "the MCP server wsknob" in first.message and str(setup.ws) in first.message
        assert entry["command"] in first.message and first.type == lsp.MessageType.Warning
        assert [a.title for a in first.actions or []] == ["Trust", "Don't run it", "Show what it wants"]
        status = await ed.wait_state("wsknob", "awaiting-trust")  # dismissed: no decision
        assert status["pid"] is None
        await wait_for(lambda: any(P.CMD_TRUST_WORKSPACE in m.message for m in ed.client.log_messages),
                       what="the log naming the command")

        ed.message_answers = ["Show what it wants", "Trust"]
        out = await ed.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command=P.CMD_TRUST_WORKSPACE, arguments=[]))
        assert out["folders"] == []
        assert out["servers"] == [{"server": "wsknob", "folder": str(setup.ws), "trusted": True}]
        assert [a.title for a in ed.message_requests[2].actions or []] == ["Trust", "Don't run it"]
        shown = [m.message for m in ed.client.messages if "runs:" in m.message]
        assert shown and "receives the values of: SECRET_TOKEN" in shown[0] and SECRET not in shown[0]
        await ed.wait_state("wsknob", "connected")
        with pytest.raises(JsonRpcException, match="no workspace folder waits for trust"):
            await ed.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
                command=P.CMD_TRUST_WORKSPACE, arguments=[]))
    finally:
        await close_editor(ed)


async def test_a_dismissed_plain_question_leaves_the_folder_restricted(setup: Setup) -> None:
    setup.ws_settings = {"mcpServers": {"wsknob": knob_stdio_params("--name", "wsknob")}, "agent": {"bashTimeout": 30}}
    setup.pretrusted = []
    ed = await open_editor(setup, configure=lambda e: setattr(e, "plain_lsp", True))
    try:
        await wait_for(lambda: ed.message_requests, what="the question")
        await ed.wait_state("wsknob", "awaiting-trust")
        status = await ed.request(P.MCP_STATUS)
        assert status["workspaces"][0]["state"] == "restricted"  # no decision recorded
        await wait_for(lambda: any(P.CMD_TRUST_WORKSPACE in m.message for m in ed.client.log_messages),
                       what="the log naming the command")
        ed.message_answers = ["Trust"]
        out = await ed.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command=P.CMD_TRUST_WORKSPACE, arguments=[{"folder": str(setup.ws)}]))
        assert out["folders"][0]["trusted"] is True
        await ed.wait_state("wsknob", "connected")
    finally:
        await close_editor(ed)
