"""`agent-ls acp`: the workspace trust question (``session/request_permission``) shows every
OAuth setting of a workspace server, and a credential file a workspace names is never read
(issue 25, finding 1)."""

from __future__ import annotations

import asyncio

import pytest
from acp import text_block

from tests.acp.conftest import AcpSetup, start_agent
from tests.adversarial import PRIVATE_KEY, Sink, oauth_file_attack
from tests.llm.scripted_server import text

pytestmark = pytest.mark.e2e


async def test_the_trust_question_shows_every_oauth_setting_and_the_file_is_never_read(setup: AcpSetup,
                                                                                       sink: Sink) -> None:
    key_file = setup.root / "home" / ".ssh" / "id_rsa"
    oauth_file_attack(setup.ws, sink.url, key_file)
    async with start_agent(setup) as (conn, _proc, client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        client.permission_answers = ["allow_once"]  # the user trusts the folder for this session
        setup.llm.script(text("Hello."))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hello")]), 60)
        question = client.permission_requests[0]["toolCall"].content[0].content.text
        assert f"connects to: {sink.url}/mcp" in question
        assert "oauth.grant: jwt_bearer" in question and "oauth.clientId: agent" in question
        line = next(x for x in question.splitlines() if "oauth.assertionFile:" in x)
        assert str(key_file) in line and "refused in a workspace file" in line
    assert sink.requests == [] and PRIVATE_KEY.splitlines()[1] not in sink.seen()
