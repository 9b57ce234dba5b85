"""The model picker over LSP: ``agent/models`` and ``agent/setModel``.

The choices are the settings' ``model`` and ``models`` (:meth:`AgentSettings.model_choices`); a
session's choice is kept in the session store's ``model`` column, so a resumed session (also in
a new server process) keeps it, and applies to its next model request. The same functions serve
ACP's model config option (:mod:`agent_ls.acp.session`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from agent_ls.server.approval import agent_settings_now
from agent_ls.server.host import settings_loaded
from agent_ls.server.protocol.codec import InvalidParams, RequestFailed, dump, parse
from agent_ls.server.protocol.methods import MODELS, SET_MODEL
from agent_ls.server.protocol.sessions import ModelsParams, ModelsResult, SetModelParams
from agent_ls.server.server import AgentLanguageServer, guarded

if TYPE_CHECKING:
    from agent_ls.agent.config import AgentSettings

log = logging.getLogger("agent_ls.server")


def models_result(agent: AgentSettings, chosen: str | None, session_id: str | None) -> ModelsResult:
    return ModelsResult(models=list(agent.model_choices()), current=agent.session_model(chosen),
                        default=agent.model, session_id=session_id)


async def list_models(ls: AgentLanguageServer, p: ModelsParams) -> ModelsResult:
    await settings_loaded(ls)
    agent = agent_settings_now(ls)
    chosen = None
    if p.session_id is not None:
        store = await ls.chats.ensure_store()
        info = await asyncio.to_thread(store.get_session, p.session_id)
        if info is None:
            raise RequestFailed(f"no session {p.session_id!r}")
        chosen = info.model
    return models_result(agent, chosen, p.session_id)


async def set_model(ls: AgentLanguageServer, p: SetModelParams) -> ModelsResult:
    await settings_loaded(ls)
    agent = agent_settings_now(ls)
    try:
        model = agent.check_model_choice(p.model)
    except ValueError as e:
        raise InvalidParams(str(e)) from None
    store = await ls.chats.ensure_store()
    try:
        await asyncio.to_thread(store.set_model, p.session_id, model)
    except KeyError:
        raise RequestFailed(f"no session {p.session_id!r}") from None
    session = ls.chats.sessions.get(p.session_id)
    llm = agent.llm_config(model)
    if session is not None and llm is not None:
        session.llm = llm  # the next model request uses it (also within a running turn)
    log.info("session %s: model %s", p.session_id, model)
    return models_result(agent, model, p.session_id)


def register(server: AgentLanguageServer) -> None:
    @server.feature(MODELS)
    @guarded
    async def models_handler(ls: AgentLanguageServer, raw: Any) -> Any:
        return dump(await list_models(ls, parse(ModelsParams, raw)))

    @server.feature(SET_MODEL)
    @guarded
    async def set_model_handler(ls: AgentLanguageServer, raw: Any) -> Any:
        return dump(await set_model(ls, parse(SetModelParams, raw)))
