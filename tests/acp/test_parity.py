"""`agent-ls acp` parity with the editor (issue 28): session titles (`session_info_update`,
`session/list` with and without `cwd`), the model choice (session config options), writes that
tell the truth per client and whole-file diffs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import ReadTextFileResponse, WriteTextFileResponse

from tests.acp.conftest import AcpSetup, RecordingClient, start_agent, wait_for
from tests.llm.scripted_server import text, tool_calls


def tool_messages(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "tool"]

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


class SavingClient(RecordingClient):
    """A client like toad: fs/write_text_file writes the file to disk at once, and a file it does
    not have is answered with empty text rather than an error."""

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        p = Path(path)
        return ReadTextFileResponse(content=p.read_text() if p.exists() else "")

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        self.writes.append((path, content))
        Path(path).write_text(content)
        return WriteTextFileResponse()


def call_updates(client: RecordingClient, sid: str, call_id: str) -> list[Any]:
    return [u for u in client.of(sid) if getattr(u, "tool_call_id", None) == call_id]


async def test_writes_to_a_saving_client_whole_file_diffs_and_missing_files(setup: AcpSetup) -> None:
    """A client that saves at once: the model is not told "not saved to disk yet"; edit diffs
    carry the whole file before and after (in the tool call, the permission request and the end);
    a file the client answers with "" but that does not exist is created, not "overwritten"."""
    target = setup.ws / "app.py"
    target.write_text("a = 1\nb = 2\nc = 3\n")
    async with start_agent(setup, SavingClient(), fs=True) as (conn, _proc, client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        setup.llm.script(
            tool_calls([("edit_file", {"path": "app.py", "old_string": "b = 2", "new_string": "b = 20"}, "call_edit")]),
            tool_calls([("write_file", {"path": "new.py", "content": "print(1)\n"}, "call_new")]),
            text("Done."),
        )
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("edit")]), 60)
        assert target.read_text() == "a = 1\nb = 20\nc = 3\n" and (setup.ws / "new.py").read_text() == "print(1)\n"
        results = {m["tool_call_id"]: m["content"] for m in tool_messages(setup.llm.requests[-1].body)}
        assert results["call_edit"].startswith("Edited app.py") and "not saved" not in results["call_edit"]
        assert results["call_new"].startswith("Created new.py") and "not saved" not in results["call_new"]

        edit = call_updates(client, sid, "call_edit")
        asked = client.permission_requests[0]["toolCall"].content[0]
        for diff in (edit[0].content[0], asked, edit[-1].content[0]):
            assert diff.type == "diff" and diff.path == str(target)
            assert (diff.old_text, diff.new_text) == ("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 20\nc = 3\n")
        new = call_updates(client, sid, "call_new")[0].content[0]
        assert (new.old_text, new.new_text) == (None, "print(1)\n")  # a new file, not an emptied one


async def test_client_without_fs_capabilities_uses_the_disk(setup: AcpSetup) -> None:
    """No fs capability: nothing is asked of the client, files are read and written on disk, the
    model is not told about an editor buffer, and the diff is still the whole file."""
    target = setup.ws / "app.py"
    target.write_text("x = 1\n")
    async with start_agent(setup, fs=False) as (conn, _proc, client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        setup.llm.script(
            tool_calls([("edit_file", {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}, "call_edit")]),
            text("Done."),
        )
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("edit")]), 60)
        assert target.read_text() == "x = 2\n" and client.reads == [] and client.writes == []
        result = tool_messages(setup.llm.requests[-1].body)[0]["content"]
        assert result.startswith("Edited app.py") and "not saved" not in result
        diff = call_updates(client, sid, "call_edit")[0].content[0]
        assert (diff.old_text, diff.new_text) == ("x = 1\n", "x = 2\n")


async def test_models_without_model_offers_them_and_the_first_is_the_default(setup: AcpSetup) -> None:
    """Settings with `models` but no `model`: the option is offered, the first entry is the
    default and a prompt is answered by it (it used to fail asking for "model")."""
    del setup.user_settings["model"]
    setup.user_settings["models"] = ["openai/scripted", "openai/other-model"]
    setup.write()
    async with start_agent(setup) as (conn, _proc, _client):
        new = await conn.new_session(cwd=str(setup.ws), mcp_servers=[])
        option = model_option(new.config_options or [])
        assert option.current_value == "openai/scripted"  # type: ignore[attr-defined]
        assert [o.value for o in option.options] == ["openai/scripted", "openai/other-model"]  # type: ignore[attr-defined]
        setup.llm.script(text("from the first model"))
        await asyncio.wait_for(conn.prompt(session_id=new.session_id, prompt=[text_block("which model?")]), 60)
        assert setup.llm.requests[-1].body["model"] == "scripted"


async def test_a_workspace_models_list_waits_for_trust(setup: AcpSetup) -> None:
    """A workspace file's `models` is not offered until the folder is trusted; once it is, the
    client hears the new choices (config_option_update) and may pick one."""
    setup.ws_settings = {"models": ["openai/from-the-folder"]}
    setup.write()
    async with start_agent(setup) as (conn, _proc, client):
        new = await conn.new_session(cwd=str(setup.ws), mcp_servers=[])
        sid = new.session_id
        assert [o.value for o in model_option(new.config_options).options] == ["openai/scripted"]
        with pytest.raises(RequestError) as err:
            await conn.set_config_option(config_id="model", session_id=sid, value="openai/from-the-folder")
        assert err.value.code == -32602

        client.permission_answers = ["allow_once"]  # the trust question at the first prompt
        setup.llm.script(text("trusted"))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hello")]), 60)
        assert "models" in client.permission_requests[0]["toolCall"].content[0].content.text
        [update] = client.of(sid, "config_option_update")
        assert [o.value for o in model_option(update.config_options).options] == [
            "openai/scripted", "openai/from-the-folder"]
        await conn.set_config_option(config_id="model", session_id=sid, value="openai/from-the-folder")
        setup.llm.script(text("from the folder's model"))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("again")]), 60)
        assert setup.llm.requests[-1].body["model"] == "from-the-folder"
