"""The model picker over LSP (issue 27, item 3): ``agent/models`` lists the settings' ``model``
and ``models``; ``agent/setModel`` picks one for a session: its next request to the scripted
LLM carries that model's name, and a new server process on the same store keeps the choice."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text
from tests.lsp.conftest import Setup, close_editor, open_editor

pytestmark = pytest.mark.e2e

DEFAULT, OTHER = "openai/scripted", "openai/scripted-other"


async def test_set_model_applies_to_the_next_request_and_survives_a_restart(setup: Setup) -> None:
    setup.user_settings["models"] = [OTHER, DEFAULT]  # the default is offered first, once
    ed = await open_editor(setup)
    try:
        assert await ed.request(P.MODELS) == {"models": [DEFAULT, OTHER], "current": DEFAULT,
                                              "default": DEFAULT, "sessionId": None}
        setup.llm.script(text("one"), text("two"))
        sid = (await ed.request(P.PROMPT, {"text": "first"}))["sessionId"]
        assert setup.llm.requests[-1].body["model"] == "scripted"
        picked = await ed.request(P.SET_MODEL, {"sessionId": sid, "model": OTHER})
        assert picked == {"models": [DEFAULT, OTHER], "current": OTHER, "default": DEFAULT, "sessionId": sid}
        await ed.request(P.PROMPT, {"text": "second", "sessionId": sid})
        assert setup.llm.requests[-1].body["model"] == "scripted-other"
        assert (await ed.request(P.MODELS, {"sessionId": sid}))["current"] == OTHER
        # A model outside the settings' list: a clear error, the choice is unchanged.
        with pytest.raises(JsonRpcException, match=r"unknown model 'openai/gpt-9'.*openai/scripted, "
                                                   r"openai/scripted-other") as err:
            await ed.request(P.SET_MODEL, {"sessionId": sid, "model": "openai/gpt-9"})
        assert err.value.code == P.INVALID_PARAMS
        with pytest.raises(JsonRpcException, match="no session 'nope'") as err:
            await ed.request(P.SET_MODEL, {"sessionId": "nope", "model": OTHER})
        assert err.value.code == P.REQUEST_FAILED
        assert (await ed.request(P.MODELS, {"sessionId": sid}))["current"] == OTHER
        # A new session chosen before its first message (the chat's picker on an empty chat).
        fresh = (await ed.request(P.SESSIONS_NEW, {}))["sessionId"]
        await ed.request(P.SET_MODEL, {"sessionId": fresh, "model": OTHER})
        setup.llm.script(text("fresh"))
        await ed.request(P.PROMPT, {"text": "hello", "sessionId": fresh})
        assert setup.llm.requests[-1].body["model"] == "scripted-other"
    finally:
        await close_editor(ed)

    ed = await open_editor(setup)  # a new server process on the same session store
    try:
        assert (await ed.request(P.MODELS, {"sessionId": sid}))["current"] == OTHER
        (listed,) = [s for s in (await ed.request(P.SESSIONS_LIST))["sessions"] if s["id"] == sid]
        assert listed["model"] == OTHER
        await ed.request(P.SESSIONS_RESUME, {"sessionId": sid})
        setup.llm.script(text("three"))
        await ed.request(P.PROMPT, {"text": "third", "sessionId": sid})
        assert setup.llm.requests[-1].body["model"] == "scripted-other"
        # Back to the default.
        await ed.request(P.SET_MODEL, {"sessionId": sid, "model": DEFAULT})
        setup.llm.script(text("four"))
        await ed.request(P.PROMPT, {"text": "fourth", "sessionId": sid})
        assert setup.llm.requests[-1].body["model"] == "scripted"
    finally:
        await close_editor(ed)


async def test_a_settings_reload_keeps_the_pick_and_offers_the_new_list(setup: Setup) -> None:
    """A reload rebuilds the sessions (new settings apply): the picked model stays the session's,
    and ``agent/models`` offers the new list at once (the chat asks again on the status change)."""
    setup.user_settings["models"] = [OTHER]
    ed = await open_editor(setup)
    try:
        setup.llm.script(text("one"), text("two"))
        sid = (await ed.request(P.PROMPT, {"text": "first"}))["sessionId"]
        await ed.request(P.SET_MODEL, {"sessionId": sid, "model": OTHER})
        setup.user_settings["models"] = [OTHER, "openai/scripted-third"]
        setup.user_file.write_text(json.dumps(setup.user_settings))
        ed.client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
            changes=[lsp.FileEvent(uri=setup.user_file.as_uri(), type=lsp.FileChangeType.Changed)]))
        offered: list[str] = []

        async def poll() -> None:
            offered[:] = (await ed.request(P.MODELS, {"sessionId": sid}))["models"]

        for _ in range(100):
            await poll()
            if "openai/scripted-third" in offered:
                break
            await asyncio.sleep(0.1)
        assert offered == [DEFAULT, OTHER, "openai/scripted-third"]
        await ed.request(P.PROMPT, {"text": "second", "sessionId": sid})
        assert setup.llm.requests[-1].body["model"] == "scripted-other"
    finally:
        await close_editor(ed)
