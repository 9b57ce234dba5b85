"""The model picker over LSP: ``agent/models`` and ``agent/setModel``, translated to the runtime's
conversations (:meth:`agent_ls.runtime.conversations.Conversations.models` and ``set_model``: the
settings' ``model`` and ``models``, a session's choice kept in its store, the same as ACP's
model config option and the terminal's ``/model``).
"""

from __future__ import annotations

from agent_ls.runtime.conversations import ModelChoice
from agent_ls.server.protocol.methods import MODELS, SET_MODEL
from agent_ls.server.protocol.sessions import ModelsParams, ModelsResult, SetModelParams
from agent_ls.server.server import AgentLanguageServer, request


def models_result(choice: ModelChoice) -> ModelsResult:
    return ModelsResult(models=choice.models, current=choice.current, default=choice.default,
                        session_id=choice.session_id)


def register(server: AgentLanguageServer) -> None:
    @request(server, MODELS, ModelsParams)
    async def models(ls: AgentLanguageServer, p: ModelsParams) -> ModelsResult:
        await ls.lifecycle.settings_loaded()
        return models_result(await ls.conversations.models(p.session_id))

    @request(server, SET_MODEL, SetModelParams)
    async def set_model(ls: AgentLanguageServer, p: SetModelParams) -> ModelsResult:
        await ls.lifecycle.settings_loaded()
        return models_result(await ls.conversations.set_model(p.session_id, p.model))
