"""Prompting over LSP: sessions, streamed events, approvals through the editor."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import attrs
from pygls.uris import to_fs_path

from agent_ls.server import protocol as P
from agent_ls.server.features import _result, ensure_manager, ensure_store
from agent_ls.server.server import AgentLanguageServer

log = logging.getLogger("agent_ls.server")


class EditorApprover:
    """Asks the editor (``agent/approve``); a missing or broken answer is a deny."""

    def __init__(self, ls: AgentLanguageServer) -> None:
        self.ls = ls
        self.counter = 0

    async def __call__(self, request: Any) -> Any:
        from agent_ls.agent.permissions import ApprovalAnswer

        self.counter += 1
        spec = request.spec
        params = P.ApproveParams(call_id=f"approval-{self.counter}", tool=spec.name, arguments=request.arguments,
                                 reason=request.reason, server=spec.server, display_name=spec.display_name)
        try:
            raw = await self.ls.protocol.send_request_async(P.APPROVE, P.dump(params))
            answer = P.parse(P.ApproveResult, _result(raw)).answer
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.warning("approval request failed: %s", e)
            return ApprovalAnswer.DENY
        try:
            return ApprovalAnswer(answer)
        except ValueError:
            log.warning("unknown approval answer %r: treated as deny", answer)
            return ApprovalAnswer.DENY


def agent_settings_now(ls: AgentLanguageServer) -> Any:
    from agent_ls.agent.config import agent_settings
    from agent_ls.config.settings import LoadedSettings

    return agent_settings(ls.settings or LoadedSettings())


def make_gate(ls: AgentLanguageServer) -> Any:
    from agent_ls.agent.permissions import PermissionGate, PermissionRules

    agent = agent_settings_now(ls)
    return PermissionGate(PermissionRules(agent.allow, agent.ask, agent.deny), EditorApprover(ls))


async def get_session(ls: AgentLanguageServer, session_id: str | None, model: str | None) -> Any:
    from agent_ls.agent.builtin_tools import builtin_tools
    from agent_ls.agent.registry import ToolRegistry
    from agent_ls.agent.session import Session
    from agent_ls.agent.workspace import Workspace

    if session_id is not None and session_id in ls.sessions and model is None:
        return ls.sessions[session_id]
    manager = await ensure_manager(ls)
    store = await ensure_store(ls)
    agent = agent_settings_now(ls)
    llm = agent.llm_config(model)
    if llm is None:
        raise ValueError("no model is configured: set \"model\" in .agent-ls/settings.json or the user settings, "
                         "or the AGENT_LS_MODEL environment variable (any litellm model string, e.g. "
                         "anthropic/claude-sonnet-4-5 or ollama/qwen3 with \"apiBase\")")
    folders = ls.folders() or [Path.cwd()]
    if session_id is not None and await asyncio.to_thread(store.get_session, session_id) is None:
        raise ValueError(f"no session {session_id!r}")
    registry = ToolRegistry(builtin_tools(Workspace(folders), bash_timeout=agent.bash_timeout), manager,
                            defer=agent.defer_mcp_tools)
    session = Session(llm=llm, registry=registry, gate=make_gate(ls), roots=folders, store=store,
                      session_id=session_id, max_steps=agent.max_steps, extra_instructions=agent.instructions)
    ls.sessions[session.session_id] = session
    return session


async def render_attachments(ls: AgentLanguageServer, attachments: list[P.Attachment]) -> str:
    parts: list[str] = []
    for a in attachments:
        if a.kind == "selection":
            where = to_fs_path(a.uri) if a.uri else "the editor"
            line = ""
            if a.range and isinstance(a.range.get("start"), dict):
                line = f" (lines {a.range['start'].get('line', 0) + 1}-{a.range.get('end', {}).get('line', 0) + 1})"
            parts.append(f"Selection from {where}{line}:\n```{a.language_id or ''}\n{a.text or ''}\n```")
        elif a.kind == "file" and a.uri:
            text = a.text
            if text is None:
                try:
                    text = ls.workspace.get_text_document(a.uri).source
                except Exception:
                    text = ""
            parts.append(f"File {to_fs_path(a.uri)}:\n```{a.language_id or ''}\n{text}\n```")
        elif a.kind == "resource" and a.uri and a.server:
            manager = await ensure_manager(ls)
            result = await manager.read_resource(a.server, a.uri)
            texts = [getattr(c, "text", None) or f"[binary {getattr(c, 'mime_type', '')}]" for c in result.contents]
            parts.append(f"MCP resource {a.uri} (server {a.server}):\n" + "\n".join(texts))
        else:
            raise ValueError(f"unsupported attachment kind {a.kind!r}")
    return "\n\n".join(parts)


async def prompt(ls: AgentLanguageServer, params: P.PromptParams) -> dict[str, Any]:
    from agent_ls.agent.events import to_dict

    session = await get_session(ls, params.session_id, params.model)
    lock = ls.session_locks.setdefault(session.session_id, asyncio.Lock())
    if lock.locked():
        raise ValueError(f"session {session.session_id} is already answering a prompt")
    text = params.text
    if params.attachments:
        context = await render_attachments(ls, params.attachments)
        text = f"{context}\n\n{text}"

    def sink(event: Any) -> None:
        ls.protocol.notify(P.EVENT, {"sessionId": session.session_id, "event": to_dict(event)})

    async with lock:
        result = await session.prompt(text, sink)
    return P.dump(P.PromptResult(
        session_id=session.session_id, stop_reason=result.stop_reason, text=result.text,
        usage=P.snake_to_camel_dict(attrs.asdict(result.usage, filter=lambda a, v: a.name != "type")),
        error={"kind": result.error.kind, "message": result.error.message} if result.error else None,
    ))


async def call_tool_direct(ls: AgentLanguageServer, server: str, tool: str, arguments: dict[str, Any]
                           ) -> dict[str, Any]:
    """A direct MCP tool call from the editor, through the approval gate."""
    manager = await ensure_manager(ls)
    if server not in manager.server_names():
        raise ValueError(f"no MCP server named {server!r}")
    found = manager.find_tool(server, tool)
    if found is None:
        return result_payload(await manager.call_tool(server, tool, arguments))
    gate = make_gate(ls)
    ok, reason = await gate.check(found.spec, arguments)
    if not ok:
        return {"isError": True, "content": reason, "denied": True, "attachments": []}
    return result_payload(await found.call(arguments))


def result_payload(result: Any) -> dict[str, Any]:
    return {
        "isError": result.is_error,
        "content": result.content,
        "structured": result.structured,
        "truncatedChars": result.truncated_chars,
        "attachments": [P.snake_to_camel_dict(attrs.asdict(a)) for a in result.attachments],
        "denied": False,
    }
