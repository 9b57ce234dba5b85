/**
 * Issue 44 item 2: the transcript's order follows what happened. An approval is asked after its
 * tool call started (the card exists, "waiting for approval"); once answered, its record
 * ("Allow add from healthy? Allow once") reads above the call's result, not after it.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { initialState, reduce, type ChatAction, type ChatState } from "../shared/state";
import { act, app, mount, q } from "./webviewHarness";

const started = (callId: string): ChatAction => ({
  type: "event",
  sessionId: "s1",
  event: { type: "tool_call_started", callId, name: "mcp__healthy__add", arguments: { a: 2, b: 3 }, server: "healthy", displayName: "add" },
});
const asked = (callId: string): ChatAction => ({ type: "approvalRequest", params: { callId, tool: "mcp__healthy__add", arguments: { a: 2, b: 3 }, reason: "add needs approval", server: "healthy", displayName: "add" } });
const approved = (callId: string): ChatAction => ({ type: "approvalAnswered", requestId: callId, answer: "allow_once" });
const finished = (callId: string): ChatAction => ({
  type: "event",
  sessionId: "s1",
  event: { type: "tool_call_finished", callId, name: "mcp__healthy__add", isError: false, content: "5", durationMs: 3 },
});

function run(actions: ChatAction[], from: ChatState = initialState()): ChatState {
  return actions.reduce(reduce, from);
}

describe("the record of an approval comes before its tool's result", () => {
  it("in the chat's state: the approval sits right before its tool card", () => {
    const s = run([{ type: "userPrompt", text: "add 2 and 3" }, started("c1"), asked("c1"), approved("c1"), finished("c1"), { type: "notice", text: "after" }]);
    expect(s.items.map((i) => i.kind)).toEqual(["message", "approval", "tool", "message"]);
    expect(s.items[1]).toMatchObject({ kind: "approval", answer: "allow_once" });
    expect(s.items[2]).toMatchObject({ kind: "tool", callId: "c1", status: "done", result: "5" });
  });

  it("each approval goes before its own call's card (two calls in one turn)", () => {
    const s = run([started("c1"), started("c2"), asked("c2"), asked("c1")]);
    expect(s.items.map((i) => (i.kind === "tool" ? `tool ${i.callId}` : i.kind === "approval" ? `approval ${i.requestId}` : i.kind))).toEqual([
      "approval c1",
      "tool c1",
      "approval c2",
      "tool c2",
    ]);
  });

  it("an approval with no tool card (a direct call) is added at the end", () => {
    const s = run([{ type: "userPrompt", text: "q" }, asked("direct-4")]);
    expect(s.items.map((i) => i.kind)).toEqual(["message", "approval"]);
  });

  describe("in the webview", () => {
    beforeEach(() => mount());

    it("the answered approval reads above the tool card and its result", () => {
      act({ type: "userPrompt", text: "add 2 and 3" });
      act(started("c1"));
      act(asked("c1"));
      // pinned while it waits (not in the transcript)
      expect(q("pending")!.textContent).toContain("Allow add from healthy?");
      act(approved("c1"));
      act(finished("c1"));
      const order = Array.from(app.transcript.children).map((c) => (c as HTMLElement).dataset.testid);
      const approval = order.indexOf("approval");
      const card = order.indexOf("tool-card");
      expect(approval).toBeGreaterThan(-1);
      expect(card).toBe(approval + 1);
      expect(app.transcript.children[approval].textContent).toBe("Allow add from healthy? Allow once");
      expect(app.transcript.children[card].textContent).toContain("5");
    });
  });
});
