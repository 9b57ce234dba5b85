"""One way to assemble an agent session, for every front end (the language server's chat,
``agent-ls chat``, ``agent-ls acp``).

A session is the model (:class:`~agent_ls.agent.llm.LLMConfig`), the tool registry (the
built-in tools confined to the workspace roots, with the session's store of oversized output,
and the MCP host's tools and skills), the permission gate (the settings' allow/ask/deny rules,
asking the front end's :class:`~agent_ls.runtime.questions.Questions`), the per-workspace session store and the settings' step limit and
extra instructions. The front end supplies what only it can (:class:`FrontEnd`): how to ask the
user, and the editor's files when there is an editor. Events are not part of the session: each
prompt gets its sink (:meth:`Session.prompt`).

This is the runtime layer's job because it joins the two siblings below it: the agent
(:mod:`agent_ls.agent`) and the MCP host (:mod:`agent_ls.mcp`), which never import each other.
The registry sees the manager through its ``MCPToolSource`` protocol and the skills through
:class:`agent_ls.mcp.skills.SkillCatalog`.

The front end keeps what differs between them: where the settings come from, what it says when
no model is configured (so it resolves :meth:`AgentSettings.llm_config` itself), and where it
keeps its sessions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.config import AgentSettings
from agent_ls.agent.hooks import hooks_for
from agent_ls.agent.jobs import JobTable
from agent_ls.agent.llm import LLMConfig
from agent_ls.agent.permissions import PermissionGate, PermissionRules, SandboxState, host_asker
from agent_ls.agent.session import Session
from agent_ls.agent.skills_tool import SkillSource
from agent_ls.agent.store import SessionStore
from agent_ls.agent.tools.registry import ToolRegistry
from agent_ls.agent.workspace import Workspace
from agent_ls.config.sandbox import set_workspace_grant
from agent_ls.core.sandbox.proxy import AskHost
from agent_ls.runtime.front import FrontEnd
from agent_ls.runtime.pending import PendingHost

if TYPE_CHECKING:
    from agent_ls.agent.tool_runner import ToolObserver
    from agent_ls.mcp.manager import MCPManager
    from agent_ls.runtime.questions import Questions

def permission_gate(agent: AgentSettings, questions: Questions | None,
                    roots: Sequence[Path] = ()) -> PermissionGate:
    """The gate of the settings' permission rules, asking ``questions.approve`` (None: calls that
    need asking are refused; ``roots``: where relative paths of protected-file checks start)."""
    return PermissionGate(PermissionRules(agent.allow, agent.ask, agent.deny),
                          questions.approve if questions is not None else None, roots,
                          SandboxState.of(agent.sandbox.enabled, agent.sandbox.auto_allow))


def network_asker(front: FrontEnd, roots: Sequence[Path]) -> AskHost | None:
    """The sandbox's network question through the front end's approvals; "always" is kept as the
    user's grant for the first workspace folder (``host-state.json``, outside the workspace)."""
    if front.questions is None:
        return None
    if not roots:
        return host_asker(front.questions.approve)
    folder = roots[0]

    def remember(host: str) -> None:
        set_workspace_grant(folder, "hosts", host, True)

    return host_asker(front.questions.approve, remember)


def tool_registry(agent: AgentSettings, roots: Sequence[Path], manager: MCPManager | PendingHost | None,
                  front: FrontEnd, jobs: JobTable | None = None) -> ToolRegistry:
    """The built-in tools on ``roots`` (bash timeout and output store from the settings; ``jobs``:
    the conversation's background jobs) and the MCP host's tools and skills, deferred as the
    settings say."""
    workspace = Workspace(list(roots))
    tools = builtin_tools(workspace, bash_timeout=agent.bash_timeout, editor=front.editor,
                          outputs=agent.output_store(), bash_env_passthrough=agent.shell_env_passthrough,
                          intelligence=front.intelligence, sandbox=agent.sandbox,
                          ask_host=network_asker(front, roots),
                          jobs=jobs)
    if front.wrap_tools is not None:
        tools = front.wrap_tools(tools, workspace)
    skills: SkillSource | None = None
    if isinstance(manager, PendingHost):  # the host starts after the model library: its skills join then
        skills = manager
    elif manager is not None:
        from agent_ls.mcp.skills import SkillCatalog  # the MCP SDK: only once there is a host

        skills = SkillCatalog(manager)
    return ToolRegistry(tools, manager, defer=agent.defer_mcp_tools, skills=skills)


async def build_session(
    agent: AgentSettings,
    llm: LLMConfig,
    *,
    roots: Sequence[Path],
    front: FrontEnd,
    manager: MCPManager | PendingHost | None = None,
    store: SessionStore | None = None,
    session_id: str | None = None,
    session_allowed: Iterable[str] = (),
    tool_observers: Sequence[ToolObserver] = (),
    jobs: JobTable | None = None,
) -> Session:
    """A session on ``roots`` with ``llm``: a new one in ``store``, or the stored ``session_id``
    (its history loaded and repaired in a worker thread, never on the event loop).

    ``agent``: the settings (:func:`agent_ls.agent.config.agent_settings`); ``manager``: the MCP
    host (None: built-in tools only; a :class:`PendingHost` while it has not started yet); ``session_allowed``: tools the user already allowed for
    the session (a session rebuilt after the settings changed keeps those answers);
    ``tool_observers``: told around each tool call (:class:`~agent_ls.agent.tool_runner.ToolObserver`);
    ``jobs``: the conversation's background jobs (their ends reach the model's next request).
    """
    registry = tool_registry(agent, roots, manager, front, jobs)
    gate = permission_gate(agent, front.questions, roots)
    gate.session_allowed |= set(session_allowed)
    session = await asyncio.to_thread(
        lambda: Session(llm=llm, registry=registry, gate=gate, roots=list(roots), store=store,
                        session_id=session_id, max_steps=agent.max_steps, extra_instructions=agent.instructions,
                        title_llm=agent.title_llm(), context_window=agent.context_window,
                        compact_at=agent.compact_at, compact_llm=agent.compact_llm(),
                        tool_observers=tool_observers))
    if jobs is not None:
        session.inbox = jobs.take_notices
    session.hooks = hooks_for(agent.hooks, roots, session.session_id, agent.shell_env_passthrough,
                              sandbox=agent.sandbox)
    return session
