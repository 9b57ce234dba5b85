import { describe, expect, it } from "vitest";
import { historyItems, initialState, pendingItems, reduce, type ChatAction, type ChatState, type ToolItem } from "../shared/state";
import type { AgentEvent } from "../src/protocol";
import { contextLabel } from "../shared/labels";

function run(actions: ChatAction[], start: ChatState = initialState()): ChatState {
  return actions.reduce(reduce, start);
}

const ev = (event: AgentEvent, sessionId = "s1"): ChatAction => ({ type: "event", sessionId, event });

describe("event reducer", () => {
  it("appends text deltas to one assistant message and bumps its rev", () => {
    const s = run([
      { type: "userPrompt", text: "hi" },
      ev({ type: "turn_started", turn: 1 }),
      ev({ type: "text", text: "Hel" }),
      ev({ type: "text", text: "lo " }),
      ev({ type: "text", text: "world" }),
    ]);
    expect(s.items.map((i) => i.kind)).toEqual(["message", "message"]);
    const reply = s.items[1];
    expect(reply.kind === "message" && reply.role).toBe("assistant");
    expect(reply.kind === "message" && reply.text).toBe("Hello world");
    expect(reply.rev).toBe(2);
    expect(s.busy).toBe(true);
    expect(s.sessionId).toBe("s1");
  });

  it("starts a new assistant message after a tool card", () => {
    const s = run([
      ev({ type: "text", text: "Let me look." }),
      ev({ type: "tool_call_started", callId: "c1", name: "mcp__knob__echo", arguments: { text: "x" }, server: "knob", displayName: "echo" }),
      ev({ type: "tool_call_finished", callId: "c1", name: "mcp__knob__echo", isError: false, content: "x", durationMs: 3 }),
      ev({ type: "text", text: "Done." }),
    ]);
    expect(s.items.map((i) => i.kind)).toEqual(["message", "tool", "message"]);
    expect(s.items[2].kind === "message" && s.items[2].text).toBe("Done.");
  });

  it("moves a tool card running -> done / error / denied", () => {
    const started = (id: string): AgentEvent => ({ type: "tool_call_started", callId: id, name: "t", arguments: {}, server: "srv" });
    let s = run([ev(started("a")), ev(started("b")), ev(started("c"))]);
    const status = (st: ChatState) => st.items.map((i) => (i as ToolItem).status);
    expect(status(s)).toEqual(["running", "running", "running"]);
    s = run(
      [
        ev({ type: "approval_requested", callId: "c", name: "t", arguments: {}, reason: "writes" }),
        ev({ type: "tool_call_finished", callId: "a", name: "t", isError: false, content: "ok", durationMs: 1 }),
        ev({ type: "tool_call_finished", callId: "b", name: "t", isError: true, content: "boom", durationMs: 1 }),
      ],
      s,
    );
    expect(status(s)).toEqual(["done", "error", "running"]);
    expect((s.items[2] as ToolItem).awaitingApproval).toBe(true);
    s = reduce(s, ev({ type: "tool_call_finished", callId: "c", name: "t", isError: true, content: "denied by user", durationMs: 0, denied: true }));
    expect(status(s)).toEqual(["done", "error", "denied"]);
    expect((s.items[2] as ToolItem).awaitingApproval).toBe(false);
    expect((s.items[1] as ToolItem).result).toBe("boom");
  });

  it("keeps unchanged items identical (the webview re-renders only what changed)", () => {
    const s1 = run([{ type: "userPrompt", text: "q" }, ev({ type: "text", text: "a" })]);
    const s2 = reduce(s1, ev({ type: "text", text: "b" }));
    expect(s2.items[0]).toBe(s1.items[0]);
    expect(s2.items[1]).not.toBe(s1.items[1]);
  });

  it("ends the turn on turn_finished and on the prompt's result", () => {
    let s = run([{ type: "userPrompt", text: "q" }, ev({ type: "turn_started", turn: 1 })]);
    expect(s.busy).toBe(true);
    s = reduce(s, ev({ type: "turn_finished", stopReason: "end" }));
    expect(s.busy).toBe(false);
    s = run([{ type: "userPrompt", text: "q" }, { type: "promptFinished", result: { sessionId: "s9", stopReason: "end", text: "", usage: {} } }]);
    expect(s.busy).toBe(false);
    expect(s.sessionId).toBe("s9");
  });

  it("shows an error once even when both the event and the result carry it", () => {
    const s = run([
      { type: "userPrompt", text: "q" },
      ev({ type: "error", kind: "auth", message: "bad key" }),
      { type: "promptFinished", result: { sessionId: "s1", stopReason: "error", text: "", usage: {}, error: { kind: "auth", message: "bad key" } } },
    ]);
    const errors = s.items.filter((i) => i.kind === "message" && i.role === "error");
    expect(errors).toHaveLength(1);
  });

  it("a failed prompt adds an error; a cancelled one a notice", () => {
    const failed = run([{ type: "userPrompt", text: "q" }, { type: "promptFailed", message: "no model is configured" }]);
    expect(failed.items[1]).toMatchObject({ kind: "message", role: "error", text: "no model is configured" });
    expect(failed.busy).toBe(false);
    const stopped = run([{ type: "userPrompt", text: "q" }, { type: "promptFailed", message: "Stopped.", cancelled: true }]);
    expect(stopped.items[1]).toMatchObject({ kind: "message", role: "notice" });
  });

  it("records approval answers once", () => {
    let s = run([
      { type: "approvalRequest", params: { callId: "approval-1", tool: "mcp__x__write", arguments: { a: 1 }, reason: "write", server: "x" } },
    ]);
    expect(pendingItems(s)).toHaveLength(1);
    s = reduce(s, { type: "approvalAnswered", requestId: "approval-1", answer: "allow_session" });
    s = reduce(s, { type: "approvalAnswered", requestId: "approval-1", answer: "deny" });
    expect(s.items[0]).toMatchObject({ kind: "approval", answer: "allow_session" });
    expect(pendingItems(s)).toHaveLength(0);
  });

  it("switches to the session of events from another session (code actions)", () => {
    const s = run([{ type: "reset", sessionId: "mine" }, ev({ type: "text", text: "x" }, "other")]);
    expect(s.sessionId).toBe("other");
  });

  it("events without a session (tool actions) keep the current session", () => {
    const s = run([
      { type: "reset", sessionId: "mine" },
      { type: "event", sessionId: null, event: { type: "tool_call_started", callId: "action-3", name: "mcp__k__echo", arguments: {}, server: "k" } },
      { type: "event", sessionId: null, event: { type: "tool_call_finished", callId: "action-3", name: "mcp__k__echo", isError: false, content: "ok", durationMs: 1 } },
    ]);
    expect(s.sessionId).toBe("mine");
    expect(s.items[0]).toMatchObject({ kind: "tool", status: "done", result: "ok" });
  });

  it("rebuilds a stored session's transcript", () => {
    const [items] = historyItems(
      [
        { role: "system", content: "sys" },
        { role: "user", content: "hello" },
        { role: "assistant", content: "", tool_calls: [{ id: "c1", function: { name: "read", arguments: '{"path":"a.txt"}' } }] },
        { role: "tool", tool_call_id: "c1", content: "file text" },
        { role: "assistant", content: [{ type: "text", text: "It says file text." }] },
      ],
      1,
    );
    expect(items.map((i) => i.kind)).toEqual(["message", "tool", "message"]);
    expect(items[1]).toMatchObject({ tool: "read", args: { path: "a.txt" }, result: "file text", status: "done" });
    expect(items[2]).toMatchObject({ role: "assistant", text: "It says file text." });
  });
});

describe("context meter and compaction (issue 26)", () => {
  it("usage events carry the meter; a compaction says what it cleared, summarized and kept", () => {
    let s: ChatState = reduce(initialState(), { type: "userPrompt", text: "read" });
    const usage = { type: "usage", inputTokens: 10, outputTokens: 2, contextTokens: 12160, contextWindow: 32000 } as AgentEvent;
    s = reduce(s, { type: "event", sessionId: "s1", event: usage });
    expect(s.context).toEqual({ used: 12160, window: 32000 });
    expect(contextLabel(s.context)).toBe("38% of context");
    const compaction = {
      type: "compaction", reason: "auto", cleared: 3, summarized: 0, handles: ["out-1", "out-2", "out-3"],
      tokensBefore: 26000, tokensAfter: 9000, contextWindow: 32000, note: "",
    } as AgentEvent;
    s = reduce(s, { type: "event", sessionId: "s1", event: compaction });
    const notice = s.items.at(-1);
    expect(notice).toMatchObject({ kind: "message", role: "notice" });
    expect(notice && "text" in notice ? notice.text : "").toBe(
      "Compacted the conversation to fit the model's context: cleared 3 old tool results. Kept whole, readable by the agent: out-1, out-2, out-3. Context 81% → 28% of context.",
    );
    s = reduce(s, { type: "reset", sessionId: null });
    expect(s.context).toBeNull();
    expect(contextLabel(null)).toBeNull();
  });

  it("/compact with nothing to do shows the server's sentence", () => {
    let s: ChatState = reduce(initialState(), { type: "userPrompt", text: "/compact" });
    s = reduce(s, { type: "promptFinished", result: { sessionId: "s1", stopReason: "compacted", text: "Nothing to compact yet.", usage: {}, error: null } });
    expect(s.items.at(-1)).toMatchObject({ role: "notice", text: "Nothing to compact yet." });
  });
});
