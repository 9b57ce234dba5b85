"""A settings section that becomes invalid over LSP: its diagnostics at the exact range, and
its last valid value keeps running (agent_ls/config/reload.py through the settings reload)."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types as lsp

from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text
from tests.lsp.conftest import Editor, Setup
from tests.lsp.test_settings import changed, position_of, wait_diagnostics

pytestmark = pytest.mark.e2e


async def test_invalid_sections_keep_their_last_valid_values_running(editor: Editor, setup: Setup) -> None:
    await editor.wait_state("knob", "connected")
    settings = {**setup.user_settings, "model": 42, "agent": {**setup.user_settings["agent"], "maxStep": 3}}
    body = json.dumps(settings, indent=2)
    setup.user_file.write_text(body)
    changed(editor, setup.user_file)
    diags = await wait_diagnostics(editor, setup.user_file, lambda d: len(d) >= 3, "section diagnostics")
    by_message = {d.message: d for d in diags}
    model = by_message["model: must be a string, not a number"]
    start = position_of(body, "42")
    assert model.severity == lsp.DiagnosticSeverity.Error
    assert model.range == lsp.Range(start, lsp.Position(start.line, start.character + 2))
    typo = by_message["agent.maxStep: unknown key 'maxStep'; did you mean 'maxSteps'?"]
    assert typo.range.start == position_of(body, '"maxStep"')
    kept = [d for d in diags if d.severity == lsp.DiagnosticSeverity.Information]
    assert sorted((d.range.start.line, d.range.start.character) for d in kept) == sorted(
        (p.line, p.character) for p in (position_of(body, '"model"'), position_of(body, '"agent"')))
    assert {d.message for d in kept} == {f"{key}: not valid: the last valid value of this section stays in force "
                                         "until it is fixed" for key in ("model", "agent")}
    # the model of the last valid settings still answers
    setup.llm.script(text("still here"))
    assert (await editor.request(P.PROMPT, {"text": "hi"}))["text"] == "still here"


async def test_a_store_smaller_than_a_page_is_shown_at_its_value(editor: Editor, setup: Setup) -> None:
    """A problem between two values (agent.outputStoreChars < agent.outputPageChars) reaches the
    editor as a warning at the store value, like any other settings problem."""
    settings = {**setup.user_settings, "agent": {**setup.user_settings["agent"], "outputPageChars": 5000,
                                                  "outputStoreChars": 2000}}
    body = json.dumps(settings, indent=2)
    setup.user_file.write_text(body)
    changed(editor, setup.user_file)
    diags = await wait_diagnostics(editor, setup.user_file, lambda d: len(d) > 0, "the store warning")
    [warning] = diags
    assert warning.severity == lsp.DiagnosticSeverity.Warning
    assert warning.message == ("agent.outputStoreChars: must be at least agent.outputPageChars (5000), got 2000; "
                               "5000 is used")
    assert warning.range.start == position_of(body, "2000")
