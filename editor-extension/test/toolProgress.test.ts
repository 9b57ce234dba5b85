/**
 * Issue 44 item 1: a tool call that waits (tool_search waiting for an MCP server that is still
 * starting) shows what it waits for on its card, as a status line, until it ends.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { ev, mount, q } from "./webviewHarness";

beforeEach(() => mount());

describe("tool_call_progress", () => {
  it("shows the wait on the running card and drops it when the call ends", () => {
    ev({ type: "tool_call_started", callId: "c1", name: "tool_search", arguments: { query: "select:mcp__slow__add" }, server: null });
    expect(q("tool-progress")).toBeNull();
    ev({ type: "tool_call_progress", callId: "c1", name: "tool_search", message: "waiting for the MCP server 'slow' to start (at most its connectTimeout)" });
    const progress = q("tool-progress")!;
    expect(progress.textContent).toBe(" · waiting for the MCP server 'slow' to start (at most its connectTimeout)");
    expect(progress.getAttribute("role")).toBe("status");
    expect(q("tool-card")!.querySelector("summary")!.contains(progress)).toBe(true);
    ev({ type: "tool_call_finished", callId: "c1", name: "tool_search", isError: false, content: "Loaded 1 tool(s)", durationMs: 4100 });
    expect(q("tool-progress")).toBeNull();
    expect(q("tool-card")!.getAttribute("data-status")).toBe("done");
  });

  it("keeps one card when the call starts again once its server has started, now naming the server", () => {
    ev({ type: "tool_call_started", callId: "c2", name: "mcp__slow__add", arguments: { a: 2, b: 3 }, server: null });
    ev({ type: "tool_call_progress", callId: "c2", name: "mcp__slow__add", message: "waiting for the MCP server 'slow' to start (at most its connectTimeout)" });
    ev({ type: "tool_call_started", callId: "c2", name: "mcp__slow__add", arguments: { a: 2, b: 3 }, server: "slow", displayName: "add" });
    const cards = document.querySelectorAll('[data-testid="tool-card"]');
    expect(cards.length).toBe(1);
    expect(cards[0].getAttribute("data-server")).toBe("slow");
    expect(cards[0].querySelector("summary")!.textContent).toContain("add · slow");
  });

  it("ignores progress for a call it has no card for", () => {
    ev({ type: "tool_call_progress", callId: "nope", name: "tool_search", message: "waiting" });
    expect(q("tool-card")).toBeNull();
  });
});
