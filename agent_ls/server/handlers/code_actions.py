"""Code actions: agent actions on a selection or diagnostic, MCP prompts, configured tool actions.

Offered on a non-empty selection or on diagnostics:

- "Ask agent", "Fix with agent", "Explain with agent" (``agent-ls.ask`` with ``mode`` ask /
  fix / explain): a chat turn with the selection (or the diagnostic's lines) attached;
- "MCP prompt: <server>/<prompt>" for prompts with at most one required argument
  (``agent-ls.runMcpPrompt``): the selection fills that argument, the prompt's messages
  start a chat turn;
- user-configured tool actions (``agent-ls.runToolAction``) from the ``toolActions`` setting::

    "toolActions": [
      {"title": "Look up in the team wiki", "server": "wiki", "tool": "search",
       "arguments": {"query": "${selection}", "language": "${languageId}"}},
      {"title": "Format with the formatter service", "server": "fmt", "tool": "format",
       "arguments": {"code": "${selection}", "file": "${file}", "line": "${line}"},
       "apply": "replaceSelection"}
    ]

Template variables: ``${selection}``, ``${file}``, ``${fileUri}``, ``${languageId}``, ``${line}``
(1-based), ``${workspaceFolder}``. A value that is exactly one variable keeps that value's type
(``${line}`` stays a number); ``${selection}`` as a whole value takes the type the tool's input
schema asks for there (``21`` for an integer, ``true`` for a boolean, JSON for an object or
array), and a selection that does not fit stops the action with an error saying so. Tool actions run through the approval gate; the result goes to
the chat as events (``sessionId`` null), or, with ``"apply": "replaceSelection"``, replaces the
selection through ``workspace/applyEdit``.

Every command takes one object argument (the one the code action carries); a bad argument
is an ``InvalidParams`` error.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.uris import to_fs_path
from pygls.workspace import ServerTextPosition, ServerTextRange

from agent_ls.agent.tools.arguments import SelectionDoesNotFit, typed_text
from agent_ls.server.handlers.mcp_methods import prompt_message
from agent_ls.server.protocol.codec import InvalidParams, RequestFailed
from agent_ls.server.protocol.commands import ActionArgs, AskResult, action_args
from agent_ls.server.protocol.mcp import ToolResultPayload
from agent_ls.server.protocol.methods import CMD_ASK, CMD_RUN_MCP_PROMPT, CMD_RUN_TOOL_ACTION
from agent_ls.server.protocol.prompt import Attachment, Range
from agent_ls.server.server import AgentLanguageServer, command

if TYPE_CHECKING:
    from agent_ls.runtime.host import RuntimeHost
    from agent_ls.server.client import EditorClient

log = logging.getLogger("agent_ls.server")

_VAR = re.compile(r"\$\{(selection|file|fileUri|languageId|line|workspaceFolder)\}")
APPLY_MODES = ("replaceSelection",)


def tool_actions(runtime: RuntimeHost) -> list[dict[str, Any]]:
    """The ``toolActions`` setting (checked and typed by the settings layer), as dicts."""
    actions = (runtime.settings.merged_sections().tool_actions if runtime.settings else None) or ()
    return [a.as_dict() for a in actions]


def _uses_selection(value: Any) -> bool:
    if isinstance(value, str):
        return "${selection}" in value
    if isinstance(value, dict):
        return any(_uses_selection(v) for v in value.values())
    if isinstance(value, list):
        return any(_uses_selection(v) for v in value)
    return False


def expand_template(value: Any, ctx: dict[str, Any], schema: Any = None, where: str = "") -> Any:
    """``value`` with the template variables filled in from ``ctx``.

    A string that is exactly ``${selection}`` takes the type ``schema`` (the tool's input
    schema at that place) asks for: ``21`` for an integer, ``true`` for a boolean, JSON for
    an object or array; a selection that does not fit is a :class:`SelectionDoesNotFit`
    naming the argument (``where``).
    """
    if isinstance(value, str):
        whole = _VAR.fullmatch(value)
        if whole and whole.group(1) == "selection" and schema is not None:
            try:
                return typed_text(str(ctx.get("selection", "")), schema)
            except SelectionDoesNotFit as e:
                raise SelectionDoesNotFit(f"argument '{where}' {e}") from None
        if whole:
            return ctx.get(whole.group(1), "")
        return _VAR.sub(lambda m: str(ctx.get(m.group(1), "")), value)
    sub: dict[str, Any] = schema if isinstance(schema, dict) else {}
    if isinstance(value, dict):
        found = sub.get("properties")
        props: dict[str, Any] = found if isinstance(found, dict) else {}
        return {k: expand_template(v, ctx, props.get(k) if schema is not None else None, f"{where}.{k}" if where else k)
                for k, v in value.items()}
    if isinstance(value, list):
        items = sub.get("items")
        return [expand_template(v, ctx, items if schema is not None else None, f"{where}[{i}]")
                for i, v in enumerate(value)]
    return value


def _text_in(lines: Sequence[str], rng: ServerTextRange) -> str:
    """The text of ``rng`` (server units: code points)."""
    if not lines or rng.start == rng.end:
        return ""
    out = []
    last = min(rng.end.line, len(lines) - 1)
    for n in range(rng.start.line, last + 1):
        line = lines[n]
        start = rng.start.character if n == rng.start.line else 0
        end = rng.end.character if n == rng.end.line else len(line)
        out.append(line[start:end])
    return "".join(out)


def _lines_of(lines: Sequence[str], diagnostics: list[lsp.Diagnostic]) -> tuple[str, Any]:
    """The whole lines the diagnostics cover, and their range (server units)."""
    first = min(d.range.start.line for d in diagnostics)
    last = min(max(d.range.end.line for d in diagnostics), len(lines) - 1)
    rng = ServerTextRange(ServerTextPosition(first, 0), ServerTextPosition(last, len(lines[last].rstrip("\r\n"))))
    return "".join(lines[first:last + 1]).rstrip("\n"), rng


def _range_json(r: lsp.Range) -> dict[str, Any]:
    return {"start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character}}


def _lsp_range(r: Range) -> lsp.Range:
    def pos(d: dict[str, int]) -> lsp.Position:
        line, char = d.get("line"), d.get("character")
        if not isinstance(line, int) or not isinstance(char, int) or line < 0 or char < 0:
            raise InvalidParams("invalid params: range positions need non-negative line and character")
        return lsp.Position(line, char)

    return lsp.Range(pos(r.start), pos(r.end))


def code_actions_for(client: EditorClient, runtime: RuntimeHost,
                     params: lsp.CodeActionParams) -> list[Any] | None:
    uri = params.text_document.uri
    rng = params.range
    diagnostics = list(params.context.diagnostics or [])
    doc = client.workspace.get_text_document(uri)
    try:
        lines, language = doc.lines, doc.language_id or ""
    except OSError:  # neither open in the editor nor readable on disk
        lines, language = [], ""
    text = _text_in(lines, doc.range_from_client_units(rng)) if lines else ""
    if not text.strip() and diagnostics and lines:
        text, server_rng = _lines_of(lines, diagnostics)
        rng = doc.range_to_client_units(server_rng)
    if not text.strip() and not diagnostics:
        return None
    base = {"uri": uri, "range": _range_json(rng), "text": text, "languageId": language}
    only = params.context.only
    actions: list[lsp.CodeAction] = []

    def add(title: str, kind: lsp.CodeActionKind, command: str, args: dict[str, Any],
            diags: list[lsp.Diagnostic] | None = None) -> None:
        if only:
            wanted = [str(getattr(k, "value", k)) for k in only]
            if not any(kind.value == w or kind.value.startswith(w + ".") for w in wanted):
                return
        actions.append(lsp.CodeAction(title=title, kind=kind, diagnostics=diags or None,
                                      command=lsp.Command(title=title, command=command, arguments=[args])))

    problems = "; ".join(d.message for d in diagnostics)[:2000]
    if diagnostics:
        add("Fix with agent", lsp.CodeActionKind.QuickFix, CMD_ASK, {**base, "mode": "fix", "diagnostics": problems},
            diagnostics)
        add("Explain with agent", lsp.CodeActionKind.QuickFix, CMD_ASK,
            {**base, "mode": "explain", "diagnostics": problems}, diagnostics)
    if text.strip():
        add("Ask agent", lsp.CodeActionKind.Empty, CMD_ASK, {**base, "mode": "ask"})
        if not diagnostics:
            add("Fix with agent", lsp.CodeActionKind.RefactorRewrite, CMD_ASK, {**base, "mode": "fix"})
            add("Explain with agent", lsp.CodeActionKind.Empty, CMD_ASK, {**base, "mode": "explain"})
        if runtime.manager is not None:
            for srv, prompt in runtime.manager.prompts():
                args = prompt.arguments or []
                required = [a for a in args if a.required]
                if args and len(required) <= 1:
                    arg_name = (required or args)[0].name
                    add(f"MCP prompt: {srv}/{prompt.name}", lsp.CodeActionKind.Empty, CMD_RUN_MCP_PROMPT,
                        {**base, "server": srv, "name": prompt.name, "argument": arg_name})
    for i, action in enumerate(tool_actions(runtime)):
        if _uses_selection(action.get("arguments", {})) and not text.strip():
            continue
        kind = lsp.CodeActionKind.RefactorRewrite if action.get("apply") in APPLY_MODES else lsp.CodeActionKind.Empty
        add(action["title"], kind, CMD_RUN_TOOL_ACTION, {**base, "index": i, "title": action["title"]})
    if not actions:
        return None
    if not _literal_support(client.capabilities):
        return [a.command for a in actions if a.command is not None]  # type: ignore[misc]
    return actions


def _literal_support(capabilities: lsp.ClientCapabilities) -> bool:
    """Whether the client takes CodeAction literals (else it gets bare Commands, per the spec)."""
    td = capabilities.text_document
    return bool(td and td.code_action and td.code_action.code_action_literal_support)


_QUESTIONS = {
    "fix": "Fix this problem: {diagnostics}. Make the change in the file.",
    "explain": "Explain this problem and what causes it: {diagnostics}",
}


def _question(a: ActionArgs) -> str:
    if a.mode == "fix":
        return _QUESTIONS["fix"].format(diagnostics=a.diagnostics) if a.diagnostics else \
            "Find what is wrong with this code and fix it in the file."
    if a.mode == "explain":
        return _QUESTIONS["explain"].format(diagnostics=a.diagnostics) if a.diagnostics else \
            "Explain what this code does and point out anything surprising."
    if a.mode == "ask":
        return a.question or "What should I know about this code?"
    raise InvalidParams(f"invalid params: mode must be ask, fix or explain, not {a.mode!r}")


def _selection(a: ActionArgs) -> Attachment:
    return Attachment(kind="selection", uri=a.uri, text=a.text, range=_range_json(_lsp_range(a.range)),
                      language_id=a.language_id or None)


def register(server: AgentLanguageServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.RefactorRewrite,
                           lsp.CodeActionKind.Empty]))
    async def code_action(ls: AgentLanguageServer, params: lsp.CodeActionParams) -> list[Any] | None:
        if ls.runtime.settings is None:
            # Asked right after start-up (an editor restoring its open files): the settings (tool
            # actions) come first, in milliseconds. The MCP prompts come with the host; while
            # its start waits for the model library (server/host.py model_first) the actions
            # are answered without them rather than starting the host at once: the editor asks
            # again as the cursor moves.
            await ls.lifecycle.settings_loaded()
            if ls.lifecycle.host_starting() is None:
                try:
                    await ls.lifecycle.ensure_manager()
                except RequestFailed:  # shut down meanwhile
                    return None
        return code_actions_for(ls.client, ls.runtime, params)

    @command(server, CMD_ASK, action_args)
    async def ask(ls: AgentLanguageServer, a: ActionArgs) -> AskResult:
        return await ls.turns.start(_question(a), a.session_id, [_selection(a)])

    @command(server, CMD_RUN_MCP_PROMPT, action_args)
    async def run_prompt(ls: AgentLanguageServer, a: ActionArgs) -> AskResult:
        if not (a.server and a.name and a.argument):
            raise InvalidParams("invalid params: server, name and argument are required")
        manager = await ls.lifecycle.ensure_manager()
        if a.server not in manager.server_names():
            raise RequestFailed(f"no MCP server named {a.server!r} is configured")
        result = await manager.get_prompt(a.server, a.name, {a.argument: a.text})
        text = "\n\n".join(prompt_message(m).text for m in result.messages)
        return await ls.turns.start(text, a.session_id, [])

    @command(server, CMD_RUN_TOOL_ACTION, action_args)
    async def run_tool_action(ls: AgentLanguageServer, a: ActionArgs) -> ToolResultPayload:
        actions = tool_actions(ls.runtime)
        action = None
        if a.index is not None and 0 <= a.index < len(actions) and a.title in (None, actions[a.index]["title"]):
            action = actions[a.index]
        elif a.title is not None:
            action = next((x for x in actions if x["title"] == a.title), None)
        if action is None:
            raise RequestFailed(f"no tool action {a.title or a.index!r} in the toolActions setting")
        rng = _lsp_range(a.range)
        folders = ls.folders()
        ctx = {"selection": a.text, "fileUri": a.uri, "file": to_fs_path(a.uri) or a.uri,
               "languageId": a.language_id, "line": rng.start.line + 1,
               "workspaceFolder": str(folders[0]) if folders else ""}
        template = action.get("arguments", {})

        def arguments(schema: dict[str, Any]) -> dict[str, Any]:
            try:
                return expand_template(template, ctx, schema)  # type: ignore[no-any-return]
            except SelectionDoesNotFit as e:
                raise RequestFailed(f"tool action {action['title']!r} was not run: {action['server']}/"
                                    f"{action['tool']} {e}") from None

        apply = action.get("apply") in APPLY_MODES
        result = await ls.direct_tools.call(action["server"], action["tool"], arguments,
                                            sink=None if apply else ls.turns.sink(None),
                                            call_id=f"action-{ls.client.request_id or 'x'}")
        result.title = action["title"]
        if apply and not result.is_error:
            edit = lsp.WorkspaceEdit(changes={a.uri: [lsp.TextEdit(range=rng, new_text=result.content)]})
            applied = await ls.client.apply_edit(lsp.ApplyWorkspaceEditParams(edit=edit, label=action["title"]))
            result.applied = bool(applied.applied)
            if not applied.applied:
                log.warning("the editor did not apply %r: %s", action["title"], applied.failure_reason)
        return result
