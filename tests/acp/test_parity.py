"""`agent-ls acp` parity with the editor (issue 28): session titles (`session_info_update`,
`session/list` with and without `cwd`) and the model choice (session config options)."""

from __future__ import annotations

import asyncio

import pytest
from acp import RequestError, text_block

from tests.acp.conftest import AcpSetup, start_agent, wait_for
from tests.llm.scripted_server import text

pytestmark = pytest.mark.e2e


def titles(client, sid: str) -> list[str]:
    return [u.title for u in client.of(sid, "session_info_update")]


async def test_titles_are_sent_and_listed_in_every_folder(setup: AcpSetup) -> None:
    """The first message titles the session (sent before the prompt answers), the title model's
    title follows once it is made; session/list gives the titles, of one folder with `cwd` and of
    every folder without it."""
    setup.user_settings["agent"]["titleModel"] = "openai/title-model"
    setup.write()
    other = setup.root / "other"
    other.mkdir()
    async with start_agent(setup) as (conn, _proc, client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        setup.llm.script(text("Looking."), text("Login Bug Hunt"))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("Fix the login bug please")]), 60)
        assert titles(client, sid)[0] == "Fix the login bug please"  # before the prompt's answer
        update = client.of(sid, "session_info_update")[0]
        assert update.updated_at and update.updated_at.endswith("+00:00")
        await wait_for(lambda: titles(client, sid)[-1:] == ["Login Bug Hunt"], what="the title model's title")
        assert setup.llm.requests[-1].body["model"] == "title-model"

        sid2 = (await conn.new_session(cwd=str(other), mcp_servers=[])).session_id
        setup.llm.script(text("Sure."), text("Other Folder Work"))
        await asyncio.wait_for(conn.prompt(session_id=sid2, prompt=[text_block("Work in the other folder")]), 60)
        await wait_for(lambda: titles(client, sid2)[-1:] == ["Other Folder Work"], what="second title")

        here = (await conn.list_sessions(cwd=str(setup.ws))).sessions
        assert [(s.session_id, s.title, s.cwd) for s in here] == [(sid, "Login Bug Hunt", str(setup.ws.resolve()))]
        everywhere = (await conn.list_sessions()).sessions
        assert [(s.session_id, s.title, s.cwd) for s in everywhere] == [
            (sid2, "Other Folder Work", str(other.resolve())), (sid, "Login Bug Hunt", str(setup.ws.resolve()))]

    async with start_agent(setup) as (conn, _proc, client):  # a later process: load sends the title
        await asyncio.wait_for(conn.load_session(cwd=str(setup.ws), session_id=sid, mcp_servers=[]), 30)
        assert titles(client, sid) == ["Login Bug Hunt"]


def model_option(options: list) -> object:
    [option] = [o for o in options if o.id == "model"]
    return option


async def test_model_choice_is_a_config_option_kept_with_the_session(setup: AcpSetup) -> None:
    """`models` beside `model` is a select option (category "model"); set_config_option applies
    to the next request, is kept in the store and restored by session/load in a new process;
    unknown values and options are invalid params."""
    setup.user_settings["models"] = ["openai/other-model", "openai/scripted"]
    setup.write()
    async with start_agent(setup) as (conn, _proc, client):
        new = await conn.new_session(cwd=str(setup.ws), mcp_servers=[])
        sid = new.session_id
        option = model_option(new.config_options)
        assert (option.type, option.category, option.current_value) == ("select", "model", "openai/scripted")
        assert [o.value for o in option.options] == ["openai/scripted", "openai/other-model"]

        answer = await conn.set_config_option(config_id="model", session_id=sid, value="openai/other-model")
        assert model_option(answer.config_options).current_value == "openai/other-model"
        setup.llm.script(text("from the other model"))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("which model?")]), 60)
        assert setup.llm.requests[-1].body["model"] == "other-model"

        with pytest.raises(RequestError) as err:
            await conn.set_config_option(config_id="model", session_id=sid, value="openai/not-offered")
        assert err.value.code == -32602 and "unknown model 'openai/not-offered'" in err.value.data["details"]
        assert "openai/other-model" in str(err.value.data)  # it names the choices
        with pytest.raises(RequestError) as err:
            await conn.set_config_option(config_id="temperature", session_id=sid, value="hot")
        assert err.value.code == -32602 and "unknown config option" in str(err.value.data)
        with pytest.raises(RequestError) as err:
            await conn.set_config_option(config_id="model", session_id="no-such-session", value="openai/scripted")
        assert err.value.code == -32602

        setup.llm.script(text("still the other model"))  # the bad values changed nothing
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("and now?")]), 60)
        assert setup.llm.requests[-1].body["model"] == "other-model"
        fresh = await conn.new_session(cwd=str(setup.ws), mcp_servers=[])  # another session: the default
        assert model_option(fresh.config_options).current_value == "openai/scripted"

    async with start_agent(setup) as (conn, _proc, client):
        loaded = await asyncio.wait_for(conn.load_session(cwd=str(setup.ws), session_id=sid, mcp_servers=[]), 30)
        assert model_option(loaded.config_options).current_value == "openai/other-model"
        setup.llm.script(text("restored"))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("after load")]), 60)
        assert setup.llm.requests[-1].body["model"] == "other-model"
