"""The sandbox's workspace grants over LSP: ``agent/sandboxGrants`` lists them per workspace
folder, ``agent/setSandboxGrant`` adds or removes one (the chat's "Allow for this workspace" on a
refused write or host, and the command that shows and revokes them). They are kept by
:mod:`agent_ls.config.sandbox` in ``host-state.json``: a workspace file can never add one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from agent_ls.config.sandbox import grants_of, set_workspace_grant
from agent_ls.core.sandbox import detect
from agent_ls.server.protocol.codec import InvalidParams, NoParams
from agent_ls.server.protocol.methods import SANDBOX_GRANTS, SET_SANDBOX_GRANT
from agent_ls.server.protocol.sandbox import SandboxGrantsPayload, SandboxGrantsResult, SetSandboxGrantParams
from agent_ls.server.server import AgentLanguageServer, request

if TYPE_CHECKING:
    from agent_ls.runtime.host import RuntimeHost


def grants_result(folders: list[Path], enabled: bool) -> SandboxGrantsResult:
    out = []
    for folder in folders:
        found = grants_of(folder)
        out.append(SandboxGrantsPayload(str(folder), found["hosts"], found["writes"]))
    avail = detect()
    message = avail.sentence() if enabled else ("the OS sandbox is off (agent.sandbox.enabled is false in your "
                                                "settings): commands run with your full rights after approval")
    return SandboxGrantsResult(out, enabled, avail.mechanism.value, message)


def _enabled(runtime: RuntimeHost) -> bool:
    return runtime.agent_settings().sandbox.enabled


def register(server: AgentLanguageServer) -> None:
    @request(server, SANDBOX_GRANTS, NoParams)
    async def sandbox_grants(ls: AgentLanguageServer, _: NoParams) -> SandboxGrantsResult:
        await ls.lifecycle.settings_loaded()
        return await asyncio.to_thread(grants_result, ls.folders(), _enabled(ls.runtime))

    @request(server, SET_SANDBOX_GRANT, SetSandboxGrantParams)
    async def set_sandbox_grant(ls: AgentLanguageServer, p: SetSandboxGrantParams) -> SandboxGrantsResult:
        folders = ls.folders()
        if p.folder is not None:
            wanted = Path(p.folder).resolve()
            folder = next((f for f in folders if f.resolve() == wanted), None)
            if folder is None:
                raise InvalidParams(f"folder: {p.folder} is not a workspace folder")
        elif folders:
            folder = folders[0]
        else:
            raise InvalidParams("folder: there is no workspace folder to keep the grant for")
        try:
            await asyncio.to_thread(set_workspace_grant, folder, p.kind, p.value, p.granted)
        except ValueError as exc:
            raise InvalidParams(f"{'kind' if 'kind' in str(exc) else 'value'}: {exc}") from None
        return await asyncio.to_thread(grants_result, folders, _enabled(ls.runtime))
