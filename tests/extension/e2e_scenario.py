"""The scenario of the editor end-to-end test (tests/extension/test_e2e.py): what the user types and
clicks (the texts the driver looks for), and :class:`Model`, the scripted model's answers to it.
"""

from __future__ import annotations

import time
from typing import Any

from tests.llm.scripted_server import Turn, slow_text, text, tool_calls

PROMPT = "Please delete item 42 on the knob server."
INTRO = "I will look up the delete tool first."
APPROVAL_TOOL = "mcp__knob__delete_item"
SERVER = "knob"
TOOL_RESULT = "deleted item 42"
FINAL = "Done: item 42 was deleted on the knob server and nothing else was changed by me today."
WS_SERVER = "wsknob"  # defined in the workspace's .agent-ls/settings.json: must be trusted first
ELICIT_PROMPT = "Ask me for my details through the knob server."
ELICIT_INTRO = "Let me find the form tool."  # the first words of the session's second prompt
ELICIT_TOOL = "mcp__knob__ask"
ELICIT_QUESTION = "Who are you?"
ELICIT_FINAL = "Thanks, I got your details from the form."
ELICIT_THINKING = "The form came back accepted with the name anon, so I thank the user."
STOP_PROMPT = "Tell me a very long story."
NUMBER_FILE = "number.txt"  # issue 30 item 6: a tool action on a selected number
NUMBER_ACTION = "Add 100 (knob)"
NUMBER_BEFORE, NUMBER_AFTER = "21", "121"
TOOL_ACTIONS = [{"title": NUMBER_ACTION, "server": SERVER, "tool": "add",
                 "arguments": {"a": "${selection}", "b": 100}, "apply": "replaceSelection"}]
CODE_FILE = "calc.py"
CODE = "def add(a, b):\n    return a + b\n\n\ndef scale(xs, k):\n    return [x * k for x in xs]\n"
CODE_ACTION = "Explain with agent"
EXPLAIN_QUESTION = "Explain what this code does"  # agent_ls/server/handlers/code_actions.py, mode "explain"
CODE_ACTION_ANSWER = "This code adds two numbers and scales a list by a factor."
INSERT_CODE = "print(add(1, 2))"  # in a code block of the code action's answer, inserted at the cursor
ATTACH_PROMPT = "What does the attached code do?"
ATTACH_MARK = "def scale(xs, k):"  # a line of the attached selection
ATTACH_SEEN = "The attached selection reached me."
ATTACH_MISSING = "No attached selection reached me."
ASK_QUESTION = "Which function here scales a list?"  # typed into the "Ask agent" input box
ASK_ANSWER = "The function scale multiplies every item by k."

# review of the agent's file changes (editor-extension/e2e/review.ts), agentLs.edits.review = beforeApply
REVIEW_FILE = "settings_demo.py"
REVIEW_CODE = "VALUE = 1\nNAME = 'demo'\n"
REVIEW_BEFORE = "VALUE = 1"
REVIEW_AFTER = "VALUE = 2"
REVIEW_NOTE = "# unsaved note from the user"
REVIEW_PROMPT = "Set VALUE to 2 in the demo settings file."
REVIEW_DONE = "VALUE is 2 now."
REJECT_PROMPT = "Now make VALUE three in the demo settings file."
REJECT_REASON = "keep VALUE as it is"
REJECT_SEEN = "Understood: you rejected the change, so VALUE stays as it is."
REJECT_MISSING = "The rejection did not reach me."
OUTPUT_PROMPT = "Print the long log file."
OUTPUT_FILE = "long.log"
OUTPUT_LINES = 4000  # "line 0" ... "line 3999": ~40k characters, more than a page (30k)
OUTPUT_DONE = "That was a long log."
SANDBOX_REFUSED = "/usr/local/lib"  # issue 47: the same bash command tries to write here (read-only in the sandbox)

# rewind (editor-extension/e2e/rewind.ts, issue 40): a turn's shell command rewrites a file open in
# an editor; "Rewind to here" on that prompt puts the file (and its clean buffer) back
REWIND_FILE = "rewind_demo.txt"
REWIND_BEFORE = "the text before the agent's turn"
REWIND_AFTER = "the agent rewrote this"
REWIND_PROMPT = "Rewrite the rewind demo file."
REWIND_DONE = "I rewrote the rewind demo file."
# subagents (editor-extension/e2e/subagent.ts, issue 42): the model hands a task to the `explore`
# agent, which reads a file; the chat shows the child's card with its read nested, then the answer.
SUBAGENT_PROMPT = "Ask a subagent what the rewind demo file says."
SUBAGENT_TASK = "Read rewind_demo.txt and quote its first line."
SUBAGENT_DESCRIPTION = "quote the demo file"
SUBAGENT_CHILD_ANSWER = "The demo file's first line is quoted above."
SUBAGENT_DONE = "The subagent read the rewind demo file."

# the editor's language intelligence (editor-extension/e2e/intelligence.ts): a TypeScript project
INTEL_FILES = {
    "intel/tsconfig.json": '{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2020"}}\n',
    "intel/math.ts": "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
    "intel/main.ts": ('import { add } from "./math";\n\nexport const total: number = add(1, 2);\n'
                      "export const twice: number = add(total, total);\n"),
}
INTEL_FILE = "intel/main.ts"
INTEL_PROMPT = "Who calls add in the intel project, and then make total a string?"
INTEL_SEEN = "The editor told me where add is used, and TypeScript's error 2322 after my edit."
INTEL_MISSING = "missing from the editor's answers:"
INTEL_TRIES = 10
"""How often the model asks again while the TypeScript server is still starting (empty answers)."""
INTEL_EXPECT = {
    "references": ["intel/main.ts:1:10: import { add }", "intel/main.ts:3:30: export const total: number = add(1, 2);",
                   "intel/main.ts:4:30: export const twice", "intel/math.ts:1:17: export function add("],
    "definition": ["intel/math.ts:1:17: export function add(a: number, b: number): number {"],
    "symbols": ["intel/math.ts:1:", "function add", "| export function add(a: number, b: number): number {"],
}
INTEL_CALLS = [("references", {"path": "intel/math.ts", "line": 1, "column": 17}),
               ("definition", {"path": INTEL_FILE, "line": 3, "column": 30}),
               ("symbols", {"query": "add"})]
INTEL_EDIT = ("edit_file", {"path": INTEL_FILE, "old_string": "total: number = add(1, 2)",
                            "new_string": 'total: number = "three"'})

# issue 44 item 1 (editor-extension/e2e/firstPrompt.ts): a server that takes 4 s to start, and a
# prompt sent as the chat opens that needs its tool
LATE_SERVER = "lateknob"
LATE_START_S = 4
LATE_TOOL = "mcp__lateknob__add"
LATE_PROMPT = "Add 2 and 3 with the add tool of the late knob server."
LATE_DONE = "The late server's add tool says"
LATE_MISSING = "tool_search did not find the late server's tool:"

# MCP Apps (editor-extension/e2e/mcpApp.ts, issue 45): a tool with an app (tests/servers/apps_server.py);
# the app renders under its card, gets the result, calls back a tool that asks for approval, sends a
# ui/message; a second call runs the app's attacks
APPS_SERVER = "apps"
APP_TOOL = "mcp__apps__show_board"
APP_PROMPT = "Show me the board for q3."
APP_DONE = "The board for q3 is shown above."
APP_MESSAGE = "The user picked blue on the board."  # the board app's ui/message (its "Send message" button)
APP_MESSAGE_SEEN = "Blue it is: the board's message reached me."
ATTACK_PROMPT = "Show me the board in attack mode."
ATTACK_DONE = "The attack board is shown above."
STILL_PROMPT = "Are you still there after the board?"
STILL_DONE = "Still here after the board."

STEP_TIMEOUT_MS = 45_000
WORKSPACE_ENV = "AGENT_LS_E2E_FROM_WORKSPACE"  # set by the workspace's .vscode/settings.json: must be ignored
RESTART_ENV = "AGENT_LS_E2E_RESTART"  # the driver adds it to the Machine settings (settings-restart)
DRIVER_TIMEOUT_S = 480  # issue 45 added mcp-app and mcp-app-attacks; issue 44 added the layout-narrow step (~1 min: two themes, two widths); issue 42 subagent-card


# ----------------------------------------------------------------------------- the model


def _content_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


class Model:
    """Chooses each scripted answer from the request, so the order of requests does not matter.

    The current request is the last user message that carries one of the scenario's prompts;
    the answer depends on the last tool result after it (none, tool_search, the tool itself).
    """

    def __init__(self) -> None:
        self.unexpected: list[str] = []
        self.answered: list[str] = []
        self.intel_results: dict[str | None, str] = {}
        """What the intelligence tools returned, once right (the report prints it)."""
        self.turns: list[tuple[str, float]] = []
        """The prompt (its marker) and the time (``time.time()``) of each turn's first request:
        issue 30 item 2, Send -> the request reached the model (test_e2e.py prints it)."""

    def route(self, body: dict[str, Any]) -> Turn:
        msgs = body.get("messages") or []
        markers = (EXPLAIN_QUESTION, ASK_QUESTION, ELICIT_PROMPT, STOP_PROMPT, ATTACH_PROMPT, REVIEW_PROMPT, REJECT_PROMPT,
                   OUTPUT_PROMPT, INTEL_PROMPT, LATE_PROMPT, REWIND_PROMPT, SUBAGENT_PROMPT, SUBAGENT_TASK, APP_PROMPT,
                   APP_MESSAGE, ATTACK_PROMPT, STILL_PROMPT, PROMPT)
        idx, asked = -1, ""
        for i in range(len(msgs) - 1, -1, -1):
            if msgs[i].get("role") == "user" and any(k in _content_text(msgs[i]) for k in markers):
                idx, asked = i, _content_text(msgs[i])
                break
        names = {
            c.get("id"): (c.get("function") or {}).get("name")
            for m in msgs
            if m.get("role") == "assistant"
            for c in (m.get("tool_calls") or [])
        }
        tools_after = [names.get(m.get("tool_call_id")) for m in msgs[idx + 1 :] if m.get("role") == "tool"]
        last_tool = tools_after[-1] if tools_after else None
        results_after = [_content_text(m) for m in msgs[idx + 1 :] if m.get("role") == "tool"]
        last_result = results_after[-1] if results_after else ""
        if idx >= 0 and not tools_after and body.get("tools"):  # (a title request has no tools)
            self.turns.append((next(k for k in markers if k in asked), time.time()))
        answer: Turn | None = None
        what = ""
        if idx < 0:
            pass
        elif EXPLAIN_QUESTION in asked and last_tool is None:
            what, answer = "explain", text(f"{CODE_ACTION_ANSWER}\n\n```python\n{INSERT_CODE}\n```\n", chunks=3, delay=0.05)
        elif ASK_QUESTION in asked and last_tool is None:
            seen = ATTACH_MARK in asked  # the selection came with the question
            what, answer = f"ask agent ({'with' if seen else 'WITHOUT'} the selection)", text(
                ASK_ANSWER if seen else ATTACH_MISSING, chunks=2, delay=0.05)
        elif ATTACH_PROMPT in asked and last_tool is None:
            seen = ATTACH_MARK in asked
            what, answer = f"attachment {'seen' if seen else 'missing'}", text(ATTACH_SEEN if seen else ATTACH_MISSING)
        elif ELICIT_PROMPT in asked:
            if last_tool is None:
                what, answer = "elicit: tool_search", tool_calls([("tool_search", {"query": f"select:{ELICIT_TOOL}"})],
                                                                 text=ELICIT_INTRO)
            elif last_tool == "tool_search":
                what, answer = "elicit: call ask", tool_calls([(ELICIT_TOOL, {"question": ELICIT_QUESTION})])
            elif last_tool == ELICIT_TOOL:
                what, answer = "elicit: final", text(ELICIT_FINAL, chunks=3, delay=0.05, reasoning=ELICIT_THINKING)
        elif STOP_PROMPT in asked and last_tool is None:
            what, answer = "stop: slow story", slow_text(120, delay=0.15)
        elif REVIEW_PROMPT in asked:
            if last_tool is None:
                what, answer = "review: edit", tool_calls(
                    [("edit_file", {"path": REVIEW_FILE, "old_string": REVIEW_BEFORE, "new_string": REVIEW_AFTER})])
            elif last_tool == "edit_file":
                what, answer = f"review: done ({last_result[:40]!r})", text(REVIEW_DONE)
        elif REJECT_PROMPT in asked:
            if last_tool is None:
                what, answer = "reject: read", tool_calls([("read_file", {"path": REVIEW_FILE})])
            elif last_tool == "read_file":
                what, answer = "reject: edit", tool_calls(
                    [("edit_file", {"path": REVIEW_FILE, "old_string": REVIEW_BEFORE, "new_string": "VALUE = 3"})])
            elif last_tool == "edit_file":
                seen = "The user rejected this change" in last_result and REJECT_REASON in last_result
                what, answer = f"reject: {'seen' if seen else 'MISSING'}", text(REJECT_SEEN if seen else REJECT_MISSING)
        elif OUTPUT_PROMPT in asked:
            if last_tool is None:
                what, answer = "output: bash", tool_calls([("bash", {
                    "command": f"cat {OUTPUT_FILE}; touch {SANDBOX_REFUSED}/agent-ls-e2e-probe; true"})])
            elif last_tool == "bash":
                what, answer = "output: done", text(OUTPUT_DONE)
        elif INTEL_PROMPT in asked:
            what, answer = self.intelligence(tools_after, results_after)
        elif REWIND_PROMPT in asked:
            if last_tool is None:
                what, answer = "rewind: bash", tool_calls([("bash", {"command": f"printf '{REWIND_AFTER}\\n' > {REWIND_FILE}"})])
            elif last_tool == "bash":
                what, answer = "rewind: done", text(REWIND_DONE)
        elif SUBAGENT_TASK in asked:  # the child's own conversation (its first user message is the task)
            if last_tool is None:
                what, answer = "subagent child: read", tool_calls([("read_file", {"path": REWIND_FILE})])
            elif last_tool == "read_file":
                what, answer = "subagent child: answer", text(SUBAGENT_CHILD_ANSWER)
        elif SUBAGENT_PROMPT in asked:
            if last_tool is None:
                what, answer = "subagent: agent", tool_calls([("agent", {
                    "agent": "explore", "description": SUBAGENT_DESCRIPTION, "prompt": SUBAGENT_TASK})])
            elif last_tool == "agent":
                what, answer = "subagent: done", text(SUBAGENT_DONE)
        elif APP_MESSAGE in asked and last_tool is None:
            what, answer = "app: ui/message seen", text(APP_MESSAGE_SEEN)
        elif ATTACK_PROMPT in asked:
            if last_tool is None:
                what, answer = "app: attack board", tool_calls([(APP_TOOL, {"title": "attack", "attack": True})])
            elif last_tool == APP_TOOL:
                what, answer = "app: attack done", text(ATTACK_DONE)
        elif STILL_PROMPT in asked and last_tool is None:
            what, answer = "app: still here", text(STILL_DONE)
        elif APP_PROMPT in asked:
            if last_tool is None:
                what, answer = "app: show board", tool_calls([(APP_TOOL, {"title": "q3"})])
            elif last_tool == APP_TOOL:
                what, answer = "app: done", text(APP_DONE)
        elif LATE_PROMPT in asked:
            if last_tool is None:
                what, answer = "late: tool_search", tool_calls([("tool_search", {"query": f"select:{LATE_TOOL}"})])
            elif last_tool == "tool_search" and LATE_TOOL in last_result and not last_result.startswith("Error"):
                what, answer = "late: call add", tool_calls([(LATE_TOOL, {"a": 2, "b": 3})])
            elif last_tool == "tool_search":
                what, answer = "late: MISSING", text(f"{LATE_MISSING} {last_result[:300]}")
            elif last_tool == LATE_TOOL:
                what, answer = "late: done", text(f"{LATE_DONE} {last_result.strip()}.")
        elif PROMPT in asked:
            if last_tool is None:
                what, answer = "tool_search", tool_calls([("tool_search", {"query": f"select:{APPROVAL_TOOL}"})], text=INTRO)
            elif last_tool == "tool_search":
                what, answer = "call delete_item", tool_calls([(APPROVAL_TOOL, {"id": "42"})])
            elif last_tool == APPROVAL_TOOL:
                what, answer = "final answer", text(FINAL, chunks=10, delay=0.25)
        if answer is None:
            self.unexpected.append(f"user text {asked[:120]!r}, tools after it {tools_after}")
            return text("(e2e script: unexpected request)")
        self.answered.append(what)
        return answer


    def intelligence(self, tools: list[str | None], results: list[str]) -> tuple[str, Turn]:
        """references / definition / symbols (again while TypeScript starts), then the breaking edit."""
        if not tools:
            return "intel: ask the editor", tool_calls(INTEL_CALLS)
        if tools[-1] == "edit_file":
            got = results[-1]
            if "error ts(2322)" in got and "intel/main.ts:3:14" in got:
                return "intel: 2322 seen", text(INTEL_SEEN)
            return "intel: 2322 MISSING", text(f"{INTEL_MISSING} the edit's result was {got[:400]!r}")
        answers = dict(zip(tools[-3:], results[-3:], strict=False))
        missing = [f"{tool}: {want!r} (got {answers.get(tool, '')[:300]!r})" for tool, wants in INTEL_EXPECT.items()
                   for want in wants if want not in answers.get(tool, "")]
        if not missing:
            self.intel_results = answers
            return "intel: answers right, edit", tool_calls([INTEL_EDIT])
        if len(tools) < 3 * INTEL_TRIES:
            return f"intel: ask again ({len(tools) // 3})", tool_calls(INTEL_CALLS)
        return "intel: answers MISSING", text(f"{INTEL_MISSING} {'; '.join(missing)}")


def driver_scenario() -> dict[str, Any]:
    """The scenario part of the driver's config (editor-extension/e2e/harness.ts reads it; its
    shape is editor-extension/e2e/types.ts `Scenario`)."""
    return {
        "prompt": PROMPT, "introText": INTRO, "approvalTool": APPROVAL_TOOL, "server": SERVER,
        "toolResult": TOOL_RESULT, "finalAnswer": FINAL, "expectTools": ["delete_item", "echo"],
        "codeActionFile": CODE_FILE, "codeActionTitle": CODE_ACTION,
        "numberFile": NUMBER_FILE, "numberAction": NUMBER_ACTION, "numberBefore": NUMBER_BEFORE,
        "numberAfter": NUMBER_AFTER,
        "codeActionAnswer": CODE_ACTION_ANSWER, "workspaceServer": WS_SERVER,
        "elicitPrompt": ELICIT_PROMPT, "elicitIntro": ELICIT_INTRO, "elicitTool": ELICIT_TOOL, "elicitQuestion": ELICIT_QUESTION,
        "elicitFinal": ELICIT_FINAL, "elicitThinking": ELICIT_THINKING, "elicitDefaults": {"name": "anon", "count": "3", "color": "blue"},
        "stopPrompt": STOP_PROMPT, "insertCode": INSERT_CODE, "attachPrompt": ATTACH_PROMPT,
        "attachSeen": ATTACH_SEEN, "slashPrompt": "review",
        "askQuestion": ASK_QUESTION, "askAnswer": ASK_ANSWER, "askChipPrefix": f"{CODE_FILE}:1-",
        "review": {
            "file": REVIEW_FILE, "valueBefore": REVIEW_BEFORE, "valueAccepted": REVIEW_AFTER,
            "userNote": REVIEW_NOTE, "acceptPrompt": REVIEW_PROMPT, "acceptDone": REVIEW_DONE,
            "rejectPrompt": REJECT_PROMPT, "rejectReason": REJECT_REASON, "rejectSeen": REJECT_SEEN,
            "outputPrompt": OUTPUT_PROMPT, "outputDone": OUTPUT_DONE,
            "outputLastLine": f"line {OUTPUT_LINES - 1}",
        },
        "rewind": {"file": REWIND_FILE, "before": REWIND_BEFORE, "after": REWIND_AFTER, "prompt": REWIND_PROMPT,
                   "done": REWIND_DONE},
        "sandboxRefusedFolder": SANDBOX_REFUSED,
        "subagent": {"prompt": SUBAGENT_PROMPT, "agent": "explore", "description": SUBAGENT_DESCRIPTION,
                     "tool": "read_file", "done": SUBAGENT_DONE},
        "intelligence": {"file": INTEL_FILE, "prompt": INTEL_PROMPT, "seen": INTEL_SEEN, "missing": INTEL_MISSING},
        "firstPrompt": {"prompt": LATE_PROMPT, "done": f"{LATE_DONE} 5.", "missing": LATE_MISSING, "tool": LATE_TOOL},
        "mcpApp": {"server": APPS_SERVER, "tool": APP_TOOL, "prompt": APP_PROMPT, "done": APP_DONE, "message": APP_MESSAGE,
                   "messageSeen": APP_MESSAGE_SEEN, "attackPrompt": ATTACK_PROMPT, "attackDone": ATTACK_DONE,
                   "stillPrompt": STILL_PROMPT, "stillDone": STILL_DONE},
    }
