/**
 * Server code actions' results in the chat (src/codeActions.ts, pure): what each command's result
 * shows, and which commands continue the chat's session.
 */
import { describe, expect, it } from "vitest";
import { argsWithSession, codeActionOutcome } from "../src/codeActions";
import * as P from "../src/protocol";

const range = { start: { line: 1, character: 0 }, end: { line: 2, character: 3 } };

describe("a code action's outcome", () => {
  it("a tool action applied without streaming gets a card and says whether the editor took the edit", () => {
    const result = { isError: false, content: "ok", denied: false, title: "Format", applied: true };
    expect(codeActionOutcome("Run", P.CMD_RUN_TOOL_ACTION, result, false, null, [])).toEqual({
      actions: [
        { type: "toolResult", title: "Format", server: null, result },
        { type: "notice", text: "Format: applied to the editor" },
      ],
      prompt: null,
    });
    const refused = codeActionOutcome("Run", P.CMD_RUN_TOOL_ACTION, { ...result, applied: false }, true, null, []);
    expect(refused.actions).toEqual([{ type: "notice", role: "error", text: "Format: the editor did not apply the edit" }]);
  });

  it("a started turn shows its user message after the notice, with the selection's chip for Ask", () => {
    const args = [{ uri: "file:///w/main.py", range }];
    const out = codeActionOutcome("Ask agent", P.CMD_ASK, { sessionId: "s1", started: true, text: "Why?" }, false, "m-4", args);
    expect(out).toEqual({
      actions: [{ type: "codeActionPrompt", afterId: "m-4", text: "Why?", attachments: ["main.py:2-3"] }],
      prompt: null,
    });
    expect(codeActionOutcome("P", P.CMD_RUN_MCP_PROMPT, { started: true, text: " " }, false, null, args).actions).toEqual([]);
  });

  it("an older server's prompt messages become a prompt to run; anything else shows nothing", () => {
    const messages = [{ role: "user", text: "one" }, { role: "user", text: "two" }];
    expect(codeActionOutcome("P", P.CMD_RUN_MCP_PROMPT, { messages }, false, null, [])).toEqual({ actions: [], prompt: "one\n\ntwo" });
    expect(codeActionOutcome("P", P.CMD_RUN_MCP_PROMPT, { messages: [{ role: "user", text: "" }] }, false, null, []).prompt).toBeNull();
    expect(codeActionOutcome("P", P.CMD_ASK, null, false, null, [])).toEqual({ actions: [], prompt: null });
    expect(codeActionOutcome("P", "other.command", { isError: false }, false, null, [])).toEqual({ actions: [], prompt: null });
  });
});

describe("the session a code action continues", () => {
  it("Ask and MCP prompts continue the given session unless their arguments name one", () => {
    const args = [{ uri: "file:///w/a.py" }, "rest"];
    expect(argsWithSession(P.CMD_ASK, args, "s1")).toEqual([{ uri: "file:///w/a.py", sessionId: "s1" }, "rest"]);
    expect(argsWithSession(P.CMD_RUN_MCP_PROMPT, args, "s1")[0]).toEqual({ uri: "file:///w/a.py", sessionId: "s1" });
    const named = [{ uri: "file:///w/a.py", sessionId: "s0" }];
    expect(argsWithSession(P.CMD_ASK, named, "s1")).toBe(named);
  });

  it("no session (the chat is busy or has none), another command or no object argument: as they were", () => {
    const args = [{ uri: "file:///w/a.py" }];
    expect(argsWithSession(P.CMD_ASK, args, null)).toBe(args);
    expect(argsWithSession(P.CMD_RUN_TOOL_ACTION, args, "s1")).toBe(args);
    const odd = [["not", "an", "object"]];
    expect(argsWithSession(P.CMD_ASK, odd, "s1")).toBe(odd);
  });
});
