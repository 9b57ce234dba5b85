/**
 * The agent's plan in the chat webview (issue 27 item 4): a checklist that updates in place (a
 * step marked completed shows as done without a new message), stays visible while the turn runs,
 * collapses by keyboard, and comes back with a resumed session.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { initialState, reduce } from "../shared/state";
import type { PlanEntryPayload } from "../src/protocol";
import { act, app, ev, mount, q, qa, reload } from "./webviewHarness";

const steps = (...s: [string, PlanEntryPayload["status"]][]): PlanEntryPayload[] => s.map(([content, status]) => ({ content, status, priority: "medium" }));
const plan = (...s: [string, PlanEntryPayload["status"]][]) => ev({ type: "plan", entries: steps(...s) });
const rows = () => qa("plan-step");

beforeEach(() => {
  mount({ sessionId: "s1" });
  act({ type: "userPrompt", text: "Fix the bug" });
  ev({ type: "turn_started", turn: 1 });
});

describe("the plan checklist", () => {
  it("is hidden until the model plans", () => {
    expect(q("plan")?.hidden).toBe(true);
  });

  it("marks a step completed in place, without a new message or tool card", () => {
    ev({ type: "tool_call_started", callId: "c1", name: "update_plan", arguments: {}, server: null, displayName: null });
    plan(["Read the code", "in_progress"], ["Fix the bug", "pending"]);
    ev({ type: "tool_call_finished", callId: "c1", name: "update_plan", isError: false, content: "ok", durationMs: 1 });
    const box = q("plan") as HTMLDetailsElement;
    expect(box.hidden).toBe(false);
    expect(box.open).toBe(true);
    const before = rows();
    expect(before.map((r) => r.dataset.status)).toEqual(["in_progress", "pending"]);
    expect(before[0].getAttribute("aria-current")).toBe("step");
    expect(q("plan-summary")?.textContent).toBe("Plan · 0 of 2 done");
    const transcriptBefore = app.transcript.children.length;
    const itemsBefore = app.state.items.length;

    ev({ type: "tool_call_started", callId: "c2", name: "update_plan", arguments: {}, server: null, displayName: null });
    plan(["Read the code", "completed"], ["Fix the bug", "in_progress"]);
    ev({ type: "tool_call_finished", callId: "c2", name: "update_plan", isError: false, content: "ok", durationMs: 1 });

    const after = rows();
    expect(after[0]).toBe(before[0]); // the same row, now done
    expect(after.map((r) => r.dataset.status)).toEqual(["completed", "in_progress"]);
    expect(after[0].textContent).toContain("Read the code");
    expect(after[0].textContent).toContain("(done)"); // said in words, not only by the mark
    expect(after[0].hasAttribute("aria-current")).toBe(false);
    expect(q("plan-summary")?.textContent).toBe("Plan · 1 of 2 done");
    // no new message, no tool card for the plan tool
    expect(app.transcript.children.length).toBe(transcriptBefore);
    expect(app.state.items.length).toBe(itemsBefore);
    expect(qa("tool-card").length).toBe(0);
    expect(app.state.items.some((it) => it.kind === "tool")).toBe(false);
  });

  it("stays visible while the turn runs and after it, outside the transcript and the questions", () => {
    plan(["One", "in_progress"]);
    ev({ type: "text", text: "Working on it" });
    const box = q("plan")!;
    expect(app.transcript.contains(box)).toBe(false);
    expect(app.pending.contains(box)).toBe(false);
    // above the transcript: in view however long the transcript grows
    expect(box.compareDocumentPosition(app.transcript) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    ev({ type: "turn_finished", stopReason: "end" });
    expect(box.hidden).toBe(false);
  });

  it("collapses from the keyboard and stays collapsed across updates", () => {
    plan(["One", "pending"]);
    const box = q("plan") as HTMLDetailsElement;
    const summary = q("plan-summary")!;
    expect(summary.tagName).toBe("SUMMARY"); // focusable, Enter and Space toggle it (native)
    box.open = false;
    plan(["One", "completed"]);
    expect((q("plan") as HTMLDetailsElement).open).toBe(false);
    expect(rows()[0].dataset.status).toBe("completed");
  });

  it("shows step text as text, never markup", () => {
    plan(["<img src=x onerror=alert(1)>", "pending"]);
    expect(rows()[0].querySelector("img")).toBeNull();
    expect(rows()[0].textContent).toContain("<img src=x onerror=alert(1)>");
  });

  it("keeps a failed plan update as an error card (the model is told why)", () => {
    ev({ type: "tool_call_started", callId: "c1", name: "update_plan", arguments: {}, server: null, displayName: null });
    ev({ type: "tool_call_finished", callId: "c1", name: "update_plan", isError: true, content: "Invalid plan", durationMs: 1 });
    expect(app.state.items.flatMap((it) => (it.kind === "tool" ? [it.status] : []))).toEqual(["error"]);
  });

  it("clears on an empty plan and on a new session", () => {
    plan(["One", "pending"]);
    plan();
    expect(q("plan")?.hidden).toBe(true);
    plan(["One", "pending"]);
    act({ type: "reset", sessionId: null });
    expect(q("plan")?.hidden).toBe(true);
  });

  it("survives the view being hidden and shown", () => {
    plan(["One", "completed"], ["Two", "pending"]);
    reload();
    expect(rows().map((r) => r.dataset.status)).toEqual(["completed", "pending"]);
  });
});

describe("a resumed session", () => {
  it("shows its stored plan and no cards for the plan tool's calls", () => {
    const state = reduce(initialState(), {
      type: "history",
      sessionId: "s2",
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: null, tool_calls: [{ id: "p1", function: { name: "update_plan", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "p1", content: "Plan updated" },
        { role: "assistant", content: "done" },
      ],
      plan: steps(["Read", "completed"], ["Fix", "in_progress"]),
    });
    expect(state.plan).toEqual([{ content: "Read", status: "completed" }, { content: "Fix", status: "in_progress" }]);
    expect(state.items.map((it) => it.kind)).toEqual(["message", "message"]);
    mount(state);
    expect(rows().map((r) => r.dataset.status)).toEqual(["completed", "in_progress"]);
  });

  it("ignores malformed steps", () => {
    const state = reduce(initialState(), { type: "event", sessionId: "s1", event: { type: "plan", entries: [{ content: "", status: "pending" }, { content: "ok", status: "weird" }] as unknown as PlanEntryPayload[] } });
    expect(state.plan).toEqual([{ content: "ok", status: "pending" }]);
  });
});
