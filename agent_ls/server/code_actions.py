"""Code actions: agent actions on a selection or diagnostic, MCP prompts, configured tool actions.

Tool actions come from settings (``toolActions``), for example::

    "toolActions": [
      {"title": "Look up in the team wiki", "server": "wiki", "tool": "search",
       "arguments": {"query": "${selection}", "language": "${languageId}"}},
      {"title": "Format with the formatter service", "server": "fmt", "tool": "format",
       "arguments": {"code": "${selection}", "file": "${file}", "line": "${line}"}, "apply": "replaceSelection"}
    ]

Template variables: ``${selection}``, ``${file}``, ``${fileUri}``, ``${languageId}``, ``${line}``
(1-based), ``${workspaceFolder}``. A value that is exactly one variable keeps that value's type
(``${line}`` stays a number). Tool actions run through the approval gate.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from lsprotocol import types as lsp
from pygls.uris import to_fs_path

from agent_ls.server import protocol as P
from agent_ls.server.server import AgentLanguageServer

log = logging.getLogger("agent_ls.server")

_VAR = re.compile(r"\$\{(selection|file|fileUri|languageId|line|workspaceFolder)\}")


def tool_actions(ls: AgentLanguageServer) -> list[dict[str, Any]]:
    raw = (ls.settings.other.get("toolActions") if ls.settings else None) or []
    return [a for a in raw if isinstance(a, dict) and isinstance(a.get("title"), str)
            and isinstance(a.get("server"), str) and isinstance(a.get("tool"), str)]


def expand_template(value: Any, ctx: dict[str, Any]) -> Any:
    if isinstance(value, str):
        whole = _VAR.fullmatch(value)
        if whole:
            return ctx.get(whole.group(1), "")
        return _VAR.sub(lambda m: str(ctx.get(m.group(1), "")), value)
    if isinstance(value, dict):
        return {k: expand_template(v, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_template(v, ctx) for v in value]
    return value


def selection_text(ls: AgentLanguageServer, uri: str, rng: lsp.Range) -> tuple[str, str]:
    try:
        doc = ls.workspace.get_text_document(uri)
    except Exception:
        return "", ""
    lines = doc.lines
    if rng.start == rng.end:
        return "", doc.language_id or ""
    out = []
    for n in range(rng.start.line, min(rng.end.line, len(lines) - 1) + 1):
        line = lines[n]
        start = rng.start.character if n == rng.start.line else 0
        end = rng.end.character if n == rng.end.line else len(line)
        out.append(line[start:end])
    return "".join(out), doc.language_id or ""


def register(server: AgentLanguageServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.RefactorRewrite,
                           lsp.CodeActionKind.Empty]))
    def code_action(ls: AgentLanguageServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        uri = params.text_document.uri
        rng = params.range
        text, language = selection_text(ls, uri, rng)
        diagnostics = list(params.context.diagnostics or [])
        if not text and not diagnostics:
            return None
        base = {"uri": uri, "range": _range_json(rng), "text": text, "languageId": language}
        actions: list[lsp.CodeAction] = []
        if diagnostics:
            msg = "; ".join(d.message for d in diagnostics)[:500]
            actions.append(lsp.CodeAction(
                title="Fix with agent", kind=lsp.CodeActionKind.QuickFix, diagnostics=diagnostics,
                command=lsp.Command(title="Fix with agent", command=P.CMD_ASK, arguments=[{**base, "mode": "fix", "diagnostics": msg}])))
        if text:
            actions.append(lsp.CodeAction(title="Ask agent about selection", kind=lsp.CodeActionKind.Empty,
                                          command=lsp.Command(title="Ask agent", command=P.CMD_ASK, arguments=[{**base, "mode": "ask"}])))
            actions.append(lsp.CodeAction(title="Explain with agent", kind=lsp.CodeActionKind.Empty,
                                          command=lsp.Command(title="Explain", command=P.CMD_ASK, arguments=[{**base, "mode": "explain"}])))
            if ls.manager is not None:
                for srv, prompt in ls.manager.prompts():
                    args = prompt.arguments or []
                    required = [a for a in args if a.required]
                    if len(required) <= 1 and args:
                        arg_name = (required or args)[0].name
                        actions.append(lsp.CodeAction(
                            title=f"MCP prompt: {srv}/{prompt.name}", kind=lsp.CodeActionKind.Empty,
                            command=lsp.Command(title=f"{srv}/{prompt.name}", command=P.CMD_RUN_MCP_PROMPT, arguments=[
                                {**base, "server": srv, "name": prompt.name, "argument": arg_name}])))
            for i, action in enumerate(tool_actions(ls)):
                actions.append(lsp.CodeAction(
                    title=action["title"], kind=lsp.CodeActionKind.RefactorRewrite
                    if action.get("apply") == "replaceSelection" else lsp.CodeActionKind.Empty,
                    command=lsp.Command(title=action["title"], command=P.CMD_RUN_TOOL_ACTION, arguments=[{**base, "index": i}])))
        return actions

    @server.command(P.CMD_ASK)
    async def ask(ls: AgentLanguageServer, args: list[Any]) -> dict[str, Any]:
        from agent_ls.server import chat

        a = _arg(args)
        mode = a.get("mode", "ask")
        question = {
            "fix": f"Fix this problem: {a.get('diagnostics', '')}. Make the change in the file.",
            "explain": "Explain what this code does and point out anything surprising.",
        }.get(mode, a.get("question") or "What should I know about this code?")
        params = P.PromptParams(text=question, session_id=a.get("sessionId"), attachments=[P.Attachment(
            kind="selection", uri=a.get("uri"), text=a.get("text"), range=a.get("range"),
            language_id=a.get("languageId"))])
        session = await chat.get_session(ls, params.session_id, None)
        params.session_id = session.session_id
        ls.run_task(chat.prompt(ls, params), f"code action {mode}")
        return {"sessionId": session.session_id, "started": True}

    @server.command(P.CMD_RUN_MCP_PROMPT)
    async def run_prompt(ls: AgentLanguageServer, args: list[Any]) -> dict[str, Any]:
        from agent_ls.server.features import ensure_manager, prompt_message

        a = _arg(args)
        manager = await ensure_manager(ls)
        result = await manager.get_prompt(a["server"], a["name"], {a["argument"]: a.get("text", "")})
        return {"messages": [prompt_message(m) for m in result.messages]}

    @server.command(P.CMD_RUN_TOOL_ACTION)
    async def run_tool_action(ls: AgentLanguageServer, args: list[Any]) -> dict[str, Any]:
        from agent_ls.server import chat

        a = _arg(args)
        actions = tool_actions(ls)
        index = a.get("index")
        if not isinstance(index, int) or not 0 <= index < len(actions):
            raise ValueError("unknown tool action")
        action = actions[index]
        rng = a.get("range") or {}
        folders = ls.folders()
        ctx = {
            "selection": a.get("text", ""), "fileUri": a.get("uri", ""),
            "file": to_fs_path(a.get("uri", "")) or "", "languageId": a.get("languageId", ""),
            "line": int(rng.get("start", {}).get("line", 0)) + 1,
            "workspaceFolder": str(folders[0]) if folders else "",
        }
        arguments = expand_template(action.get("arguments", {}), ctx)
        result = await chat.call_tool_direct(ls, action["server"], action["tool"], arguments)
        result["title"] = action["title"]
        if action.get("apply") == "replaceSelection" and not result["isError"] and rng:
            edit = lsp.WorkspaceEdit(changes={a["uri"]: [lsp.TextEdit(range=_range(rng), new_text=result["content"])]})
            applied = await ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(edit=edit,
                                                                                        label=action["title"]))
            result["applied"] = bool(applied.applied)
        return result


def _arg(args: Any) -> dict[str, Any]:
    if isinstance(args, list) and args and isinstance(args[0], dict):
        return args[0]
    if isinstance(args, dict):
        return args
    a0 = args[0] if isinstance(args, (list, tuple)) and args else None
    if a0 is not None and hasattr(a0, "_asdict"):
        return _namedtuple_to_dict(a0)
    raise ValueError("this command takes one object argument")


def _namedtuple_to_dict(v: Any) -> Any:
    if hasattr(v, "_asdict"):
        return {k: _namedtuple_to_dict(x) for k, x in v._asdict().items()}
    if isinstance(v, list):
        return [_namedtuple_to_dict(x) for x in v]
    return v


def _range_json(r: lsp.Range) -> dict[str, Any]:
    return {"start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character}}


def _range(d: dict[str, Any]) -> lsp.Range:
    return lsp.Range(lsp.Position(d["start"]["line"], d["start"]["character"]),
                     lsp.Position(d["end"]["line"], d["end"]["character"]))
