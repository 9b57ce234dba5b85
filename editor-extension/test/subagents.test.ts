/**
 * Issue 42: a subagent's work in the chat. The `agent` call's card becomes the child's card: the
 * agent and its task in the summary, its tool calls nested and updated live (an approval of a
 * child's call is placed before the card), its elapsed time and tokens, its answer as the result;
 * a details element the keyboard opens and closes.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { initialState, reduce, type ChatAction, type ChatState } from "../shared/state";
import type { AgentEvent } from "../src/protocol";
import { act, ev, mount, q, qa } from "./webviewHarness";

beforeEach(() => mount());

const child = (event: AgentEvent, callId = "agent-1"): AgentEvent => ({
  type: "subagent", callId, event,
  ...(callId === "agent-2" ? { agent: "general", description: "list services" } : { agent: "explore", description: "find retry" }),
});

describe("subagent cards", () => {
  afterEach(() => vi.useRealTimers());

  it("counts a running child's elapsed time on between its events, and stops once it ended", () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date(2026, 11, 6, 12, 0, 0));
    ev({ type: "tool_call_started", callId: "agent-1", name: "agent", arguments: { agent: "explore", description: "find retry", prompt: "x" } });
    ev(child({ type: "tool_call_started", callId: "c1", name: "grep", arguments: { pattern: "retry" } }));
    expect(q("subagent-meta")!.textContent).toContain("0 ms");
    vi.advanceTimersByTime(3000);
    expect(q("subagent-meta")!.textContent).toContain("3.0 s");
    ev({ type: "tool_call_finished", callId: "agent-1", name: "agent", isError: false, content: "done", durationMs: 3200 });
    vi.advanceTimersByTime(5000);
    expect(q("subagent-meta")!.textContent).toContain("3.2 s");
  });

  it("nests the child's tool calls live, with its tokens and its answer", () => {
    ev({ type: "tool_call_started", callId: "agent-1", name: "agent", arguments: { agent: "explore", description: "find retry", prompt: "find the retry logic" } });
    const card = () => q("tool-card")!;
    expect(card().getAttribute("data-agent")).toBe("explore");
    expect(card().querySelector("summary")!.textContent).toContain("explore: find retry");
    expect(qa("subagent-call").length).toBe(0);
    ev(child({ type: "tool_call_started", callId: "c1", name: "grep", arguments: { pattern: "retry" } }));
    ev(child({ type: "usage", inputTokens: 120, outputTokens: 30 }));
    let calls = qa("subagent-call");
    expect(calls.length).toBe(1);
    expect(calls[0].getAttribute("data-status")).toBe("running");
    expect(calls[0].textContent).toContain("grep retry");
    expect(q("subagent-meta")!.textContent).toContain("150 tokens");
    ev(child({ type: "tool_call_finished", callId: "c1", name: "grep", isError: false, content: "a.py:3: retry", durationMs: 40 }));
    ev(child({ type: "tool_call_started", callId: "c2", name: "read_file", arguments: { path: "a.py" } }));
    ev(child({ type: "turn_finished", stopReason: "end", usage: { inputTokens: 300, outputTokens: 60 }, steps: 3, text: "in a.py" }));
    calls = qa("subagent-call");
    expect(calls.map((c) => c.getAttribute("data-status"))).toEqual(["done", "running"]);
    expect(q("subagent-meta")!.textContent).toMatch(/^explore · 2 tool calls · .* · 360 tokens$/);
    ev({ type: "tool_call_finished", callId: "agent-1", name: "agent", isError: false, content: "in a.py", durationMs: 2100 });
    expect(q("subagent-meta")!.textContent).toContain("2.1 s");
    expect(q("tool-result")!.textContent).toContain("in a.py");
    expect(card().tagName).toBe("DETAILS"); // collapsible, its summary a keyboard control
  });

  it("keeps two children apart; a child's question names the agent and its task", () => {
    ev({ type: "tool_call_started", callId: "agent-1", name: "agent", arguments: { agent: "explore", description: "find retry", prompt: "x" } });
    ev({ type: "tool_call_started", callId: "agent-2", name: "agent", arguments: { description: "list services", prompt: "y" } });
    ev(child({ type: "tool_call_started", callId: "c1", name: "bash", arguments: { command: "ls" } }, "agent-2"));
    ev(child({ type: "approval_requested", callId: "c1", name: "bash", arguments: { command: "ls" }, reason: "asks" }, "agent-2"));
    const cards = qa("tool-card");
    expect(cards[0].querySelectorAll('[data-testid="subagent-call"]').length).toBe(0);
    expect(cards[1].querySelector('[data-testid="subagent-call"]')!.getAttribute("data-status")).toBe("running");
    expect(cards[1].querySelector('[data-testid="subagent-call"]')!.textContent).toContain("ls");
    act({ type: "approvalRequest", params: { callId: "c1", tool: "bash", arguments: { command: "ls" }, reason: "subagent general (list services): bash needs approval", sessionId: null } });
    expect(q("approval")!.textContent).toContain("subagent general (list services)");
  });

  it("puts the approval of a child's call before its agent card in the transcript", () => {
    const evt = (event: AgentEvent): ChatAction => ({ type: "event", sessionId: "s1", event });
    const actions: ChatAction[] = [
      evt({ type: "tool_call_started", callId: "agent-1", name: "agent", arguments: { agent: "explore", description: "find retry", prompt: "x" } }),
      evt({ type: "tool_call_started", callId: "agent-2", name: "agent", arguments: { description: "list services", prompt: "y" } }),
      evt(child({ type: "tool_call_started", callId: "c1", name: "bash", arguments: { command: "ls" } }, "agent-2")),
      { type: "approvalRequest", params: { callId: "c1", tool: "bash", arguments: { command: "ls" }, reason: "subagent general (list services): asks", sessionId: "s1" } },
    ];
    const s = actions.reduce<ChatState>(reduce, initialState());
    expect(s.items.map((i) => (i.kind === "tool" ? i.callId : i.kind))).toEqual(["agent-1", "approval", "agent-2"]);
  });

  it("ignores a child's event without its agent card", () => {
    ev(child({ type: "tool_call_started", callId: "c1", name: "grep", arguments: {} }, "nope"));
    expect(q("tool-card")).toBeNull();
  });
});

describe("a resumed session's subagent cards", () => {
  it("shows the child's calls from the record kept with the agent call's result", () => {
    act({
      type: "history",
      sessionId: "s1",
      messages: [
        { role: "user", content: "find it" },
        { role: "assistant", content: null, tool_calls: [{ id: "agent-1", function: { name: "agent", arguments: JSON.stringify({ agent: "explore", description: "find retry", prompt: "x" }) } }] },
        {
          role: "tool", tool_call_id: "agent-1", content: "in a.py",
          run: { server: null, displayName: null, durationMs: 1500, isError: false, denied: false, subagent: { agent: "explore", description: "find retry", tokens: 360, stopReason: "end", calls: [{ callId: "c1", tool: "grep", args: { pattern: "retry" }, isError: false, result: "a.py:3" }] } },
        },
      ],
    });
    expect(q("tool-card")!.querySelector("summary")!.textContent).toContain("explore: find retry");
    const calls = qa("subagent-call");
    expect(calls.length).toBe(1);
    expect(calls[0].textContent).toContain("grep retry");
    expect(q("subagent-meta")!.textContent).toBe("explore · 1 tool call · 1.5 s · 360 tokens");
  });
});
