"""Settings files over LSP: live reconfigure (didChangeWatchedFiles, didSave), diagnostics at
the exact range, the last valid configuration kept while a file is broken."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor, pid_alive, wait_for
from tests.servers.launch import knob_stdio_params

pytestmark = pytest.mark.e2e


def changed(ed: Editor, path: Path, kind: lsp.FileChangeType = lsp.FileChangeType.Changed) -> None:
    ed.client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
        changes=[lsp.FileEvent(uri=path.as_uri(), type=kind)]))


def saved(ed: Editor, path: Path) -> None:
    ed.client.text_document_did_save(lsp.DidSaveTextDocumentParams(
        text_document=lsp.TextDocumentIdentifier(uri=path.as_uri())))


def position_of(text: str, needle: str, occurrence: int = 0) -> lsp.Position:
    """The LSP position (UTF-16 units) of the ``occurrence``-th ``needle`` in ``text``."""
    index = -1
    for _ in range(occurrence + 1):
        index = text.index(needle, index + 1)
    before = text[:index]
    line = before.count("\n")
    col_text = before[before.rfind("\n") + 1:]
    return lsp.Position(line, len(col_text.encode("utf-16-le")) // 2)


async def wait_diagnostics(ed: Editor, path: Path, pred, what: str = "diagnostics") -> list[lsp.Diagnostic]:  # type: ignore[no-untyped-def]
    uri = path.as_uri()
    await wait_for(lambda: uri in ed.client.diagnostics and pred(ed.client.diagnostics[uri]), what=what)
    return list(ed.client.diagnostics[uri])


async def test_file_watchers_are_registered(editor: Editor, setup: Setup) -> None:
    await wait_for(lambda: editor.registrations, what="a capability registration")
    reg = editor.registrations[0]
    assert reg.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
    options = reg.register_options  # plain JSON on the client side
    globs = [w["globPattern"] for w in options["watchers"]]
    assert "**/.agent-ls/settings.json" in globs and "**/.mcp.json" in globs and "**/.vscode/mcp.json" in globs
    user = [g for g in globs if not isinstance(g, str)]
    assert user and user[0]["pattern"] == "settings.json" and user[0]["baseUri"] == setup.config.as_uri()


async def test_live_reconfigure_on_watched_file_change(editor: Editor, setup: Setup) -> None:
    knob_pid = (await editor.wait_state("knob", "connected"))["pid"]
    setup.user_settings["mcpServers"]["knob2"] = knob_stdio_params("--name", "knob2")
    setup.write()
    changed(editor, setup.user_file)
    knob2 = await editor.wait_state("knob2", "connected")
    assert (await editor.status())["knob"]["pid"] == knob_pid  # unchanged servers keep running
    # Changing an entry restarts that server only; removing it stops it.
    setup.user_settings["mcpServers"]["knob2"] = knob_stdio_params("--name", "knob2", "--instructions", "hi")
    setup.write()
    changed(editor, setup.user_file)
    await wait_for(lambda: not pid_alive(knob2["pid"]), what="the changed server's old process to end")
    knob2b = await editor.wait_state("knob2", "connected")
    assert knob2b["pid"] != knob2["pid"]
    del setup.user_settings["mcpServers"]["knob2"]
    setup.write()
    changed(editor, setup.user_file)
    await wait_for(lambda: not pid_alive(knob2b["pid"]), what="the removed server's process to end")
    assert "knob2" not in await editor.status()
    assert (await editor.status())["knob"]["pid"] == knob_pid
    # A change to a file that is not a settings file does nothing.
    other = setup.ws / "notes.json"
    other.write_text("{}")
    changed(editor, other)
    assert (await editor.status())["knob"]["pid"] == knob_pid


async def test_live_reconfigure_on_save_changes_permissions_and_servers(setup: Setup) -> None:
    setup.ws_settings = {"permissions": {"deny": ["mcp__knob__echo"]}}
    ed = await open_editor(setup)
    try:
        await ed.wait_state("knob", "connected")
        out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "echo", "arguments": {"text": "x"}})
        assert out["denied"]
        setup.ws_settings = {"mcpServers": {"wsknob": knob_stdio_params("--name", "wsknob")}}
        setup.write()
        saved(ed, setup.ws_file)
        await ed.wait_state("wsknob", "connected")
        assert [t["server"] for t in ed.trust_requests] == ["wsknob"]
        out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "echo", "arguments": {"text": "x"}})
        assert out["content"] == "x" and not out["denied"]
    finally:
        await close_editor(ed)


BROKEN = """{
  // user settings with a missing comma
  "model": "openai/scripted"
  "agent": {"maxRetries": 0}
}
"""


async def test_broken_file_diagnostics_and_last_valid_config(editor: Editor, setup: Setup) -> None:
    knob_pid = (await editor.wait_state("knob", "connected"))["pid"]
    setup.user_file.write_text(BROKEN)
    changed(editor, setup.user_file)
    diags = await wait_diagnostics(editor, setup.user_file, lambda d: len(d) > 0, "a syntax diagnostic")
    assert len(diags) == 1
    d = diags[0]
    assert d.severity == lsp.DiagnosticSeverity.Error and d.source == "agent-ls"
    assert "invalid JSON" in d.message
    assert d.range.start == position_of(BROKEN, '"agent"')
    assert d.range.end == lsp.Position(d.range.start.line, d.range.start.character + 1)
    # The last valid configuration keeps running: knob is still connected, same process, and
    # the model is still configured.
    status = await editor.request(P.MCP_STATUS)
    knob = next(s for s in status["servers"] if s["name"] == "knob")
    assert knob["state"] == "connected" and knob["pid"] == knob_pid
    assert any("invalid JSON" in line for line in status["diagnostics"])
    shown = [m for m in editor.client.messages if m.type == lsp.MessageType.Error]
    assert len(shown) == 1 and str(setup.user_file) in shown[0].message and "last valid" in shown[0].message
    from tests.llm.scripted_server import text

    setup.llm.script(text("still here"))
    assert (await editor.request(P.PROMPT, {"text": "hi"}))["text"] == "still here"
    # Fixed: the diagnostics are cleared and the configuration applies.
    setup.user_settings["mcpServers"]["knob2"] = knob_stdio_params("--name", "knob2")
    setup.write()
    changed(editor, setup.user_file)
    await wait_diagnostics(editor, setup.user_file, lambda d: len(d) == 0, "diagnostics to be cleared")
    await editor.wait_state("knob2", "connected")
    assert (await editor.status())["knob"]["pid"] == knob_pid


async def test_invalid_entry_diagnostic_at_the_value_keeps_last_valid_entry(editor: Editor, setup: Setup) -> None:
    knob_pid = (await editor.wait_state("knob", "connected"))["pid"]
    settings = dict(setup.user_settings)
    settings["mcpServers"] = {"knob": {**setup.user_settings["mcpServers"]["knob"], "args": 42},
                              "bad": {"type": "carrier-pigeon", "command": "x"}}
    body = json.dumps(settings, indent=2, ensure_ascii=False)
    setup.user_file.write_text(body)
    saved(editor, setup.user_file)
    diags = await wait_diagnostics(editor, setup.user_file, lambda d: len(d) >= 2, "entry diagnostics")
    by_msg = {d.message: d for d in diags}
    args = next(d for m, d in by_msg.items() if "args" in m)
    # The value after "args": (a bare "42" may also occur earlier, in the scripted LLM's port).
    key = position_of(body, '"args": 42')
    start = lsp.Position(key.line, key.character + len('"args": '))
    assert args.range == lsp.Range(start, lsp.Position(start.line, start.character + 2))
    bad = next(d for m, d in by_msg.items() if "carrier-pigeon" in m or "type" in m)
    start = position_of(body, '"carrier-pigeon"')
    assert bad.range.start == start
    # knob's entry is invalid now: its last valid version keeps running.
    status = await editor.status()
    assert status["knob"]["state"] == "connected" and status["knob"]["pid"] == knob_pid
    assert status["bad"]["state"] == "failed" and status["bad"]["error"]["phase"] == "config"


async def test_diagnostic_columns_count_utf16_units(editor: Editor, setup: Setup) -> None:
    """A non-BMP character before the error on the same line: the column is in UTF-16 units."""
    await editor.wait_state("knob", "connected")
    body = '{\n  "mcpServers": {"k": {"command": "\U0001F600\U0001F600 smile", "args": 5}}\n}\n'
    setup.user_file.write_text(body, encoding="utf-8")
    changed(editor, setup.user_file)
    diags = await wait_diagnostics(editor, setup.user_file, lambda d: len(d) > 0, "a diagnostic")
    args = next(d for d in diags if "args" in d.message)
    start = position_of(body, "5}")
    assert args.range == lsp.Range(start, lsp.Position(start.line, start.character + 1))
    assert start.character == len('  "mcpServers": {"k": {"command": "') + 4 + len(' smile", "args": ')


async def test_workspace_settings_diagnostics_published_on_open(editor: Editor, setup: Setup) -> None:
    setup.ws_file.write_text('{"mcpServers": {"x": {"command": ["not", "a", "string"]}}}')
    saved(editor, setup.ws_file)
    diags = await wait_diagnostics(editor, setup.ws_file, lambda d: len(d) > 0, "a diagnostic")
    assert "command" in diags[0].message
    editor.client.diagnostics.pop(setup.ws_file.as_uri())
    editor.open_document(setup.ws_file, setup.ws_file.read_text(), "jsonc")
    await wait_diagnostics(editor, setup.ws_file, lambda d: len(d) > 0, "diagnostics again on open")


async def test_a_folder_of_named_pipes_hangs_nothing(setup: Setup) -> None:
    """A repository with FIFOs where the settings and instructions files go: the host starts,
    the files get a diagnostic, a prompt runs (with the next instructions file), and the server
    exits when asked (close_editor fails the test if it does not)."""
    os.mkfifo(setup.ws / ".mcp.json")
    (setup.ws / ".vscode").mkdir()
    os.mkfifo(setup.ws / ".vscode" / "mcp.json")
    os.mkfifo(setup.ws / "AGENTS.md")
    (setup.ws / "CLAUDE.md").write_text("Answer in haiku.")
    ed = await open_editor(setup)
    try:
        await ed.wait_state("knob", "connected")
        diags = await wait_diagnostics(ed, setup.ws / ".mcp.json", lambda d: len(d) > 0, "the FIFO's diagnostic")
        assert "named pipe (FIFO), not a regular file" in diags[0].message
        await wait_diagnostics(ed, setup.ws / ".vscode" / "mcp.json", lambda d: len(d) > 0, "the second FIFO's")
        setup.llm.script(text("ok"))
        assert (await ed.request("agent/prompt", {"text": "hi"}))["text"] == "ok"
        system = setup.llm.requests[-1].body["messages"][0]["content"]
        assert "# Project instructions (CLAUDE.md)\nAnswer in haiku." in json.dumps(system).replace("\\n", "\n")
    finally:
        await close_editor(ed)
