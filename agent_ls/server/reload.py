"""Settings changes while the server runs: reload live, keep the last valid configuration, and
the workspace trust questions that follow.

A settings file saved or changed on disk, a workspace folder added, the editor's trust or a
remembered decision changed: the settings are read again and the host reconfigured (unchanged
servers keep running). A folder whose files ask for something that needs trust is asked about
(``agent/trustWorkspace``, or ``window/showMessageRequest`` for a plain LSP editor:
:func:`agent_ls.server.workspaces.decide`, through the runtime's questions); its answer is remembered and the settings reload with it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from agent_ls.runtime.host import settle_trust
from agent_ls.server.config_files import publish_config_diagnostics

if TYPE_CHECKING:
    from agent_ls.config.trust import WorkspaceTrustInfo
    from agent_ls.server.server import AgentLanguageServer

log = logging.getLogger("agent_ls.server")


async def reload_settings(ls: AgentLanguageServer) -> None:
    """Re-read every scope and reconfigure live (unchanged servers keep running).

    The last valid configuration stays in force: while a file does not parse, everything it
    defined before is kept; an entry that became invalid keeps its last valid version running.
    Diagnostics always show the current problems.
    """
    if ls.runtime.manager is None:
        if not ls.host_lock.locked():
            return  # no host yet and none starting: it reads the files when it starts
        ls.host_wanted.set()  # a decision or a changed file: its start need not wait for the model library
        async with ls.host_lock:  # starting: reload once it is up, so a change made meanwhile counts
            pass
        if ls.runtime.manager is None:
            return
    async with ls.reload_lock:
        if ls.runtime.manager is None:
            return
        new, broken = await ls.runtime.reread()
        for file in broken:
            ls.show(lsp.MessageType.Error, f"agent-ls: {file} is not valid JSON; the last valid configuration "
                                           "stays in force until it is fixed (see the diagnostics)")
        publish_config_diagnostics(ls)
        ls.conversations.settings_changed()  # new sessions and direct calls pick up model and permission changes
        ls.status.notify_soon()  # the workspaces' trust may have changed with no server changing
        log.info("settings reloaded: %d servers, %d problems", len(new.servers), len(new.diagnostics))
        ask_pending_workspaces(ls)


def ask_pending_workspaces(ls: AgentLanguageServer) -> None:
    """Ask about every folder that needs a decision now (one prompt per folder and digest);
    withdraw prompts that no longer match what the folder asks for."""
    settings = ls.runtime.settings
    if settings is None:
        return
    for folder, (digest, task) in list(ls.trust_prompts.workspaces.items()):
        info = settings.workspaces.get(folder)
        if info is None or not info.asks or info.request.digest != digest:
            task.cancel()
            ls.trust_prompts.workspaces.pop(folder, None)
    for folder, info in settings.workspaces.items():
        if not info.asks or folder in ls.trust_prompts.workspaces:
            continue
        log.info("workspace %s asks for trust: %s", folder, info.message)
        task = ls.run_task(_ask_workspace(ls, info), f"trust prompt for {folder}")
        ls.trust_prompts.workspaces[folder] = (info.request.digest, task)


async def _ask_workspace(ls: AgentLanguageServer, info: WorkspaceTrustInfo) -> None:
    folder = info.request.folder
    try:
        decided = await settle_trust(ls.runtime, info)  # asked through LspQuestions, recorded
    except asyncio.CancelledError:
        raise
    except Exception as e:
        log.info("no trust decision for %s from the editor (%s); it stays restricted. Trust it with the "
                 "agent-ls.trustWorkspace command, the agent/setWorkspaceTrust request or "
                 "`agent-ls trust --workspace %s`", folder, e, folder)
        return
    finally:
        current = ls.trust_prompts.workspaces.get(folder)
        if current is not None and current[0] == info.request.digest:
            ls.trust_prompts.workspaces.pop(folder, None)
    if decided:
        await reload_settings(ls)


async def decisions_changed(ls: AgentLanguageServer) -> None:
    """``host-state.json`` changed (another window, or the terminal, decided something): a
    folder whose trust state differs now reloads the settings; servers that waited for a
    decision another process made start (or stay stopped) without a reload."""
    if ls.runtime.settings is None or ls.runtime.manager is None:
        return
    fresh = await asyncio.to_thread(ls.runtime.read_settings)
    before = {f: i.state for f, i in ls.runtime.settings.workspaces.items()}
    if {f: i.state for f, i in fresh.workspaces.items()} != before:
        log.info("workspace trust changed in another process: reloading the settings")
        await reload_settings(ls)
        return
    await ls.runtime.manager.recheck_trust()
