/** Resumed sessions (issue 17, item 4): tool cards come back complete; sessions are listed by title. */
import { beforeEach, describe, expect, it } from "vitest";
import type { FromWebview, ToWebview } from "../shared/messages";
import { sessionLabel, toolStatusLabel } from "../shared/labels";
import { historyItems, initialState, type ChatAction, type ToolItem } from "../shared/state";
import type { StoredMessage } from "../src/protocol";
import { ChatApp } from "../webview/app";

const history: StoredMessage[] = [
  { role: "user", content: "echo then delete" },
  {
    role: "assistant",
    content: "Echoing.",
    tool_calls: [
      { id: "c1", function: { name: "mcp__knob__echo", arguments: '{"text":"hi"}' } },
      { id: "c2", function: { name: "mcp__knob__delete_item", arguments: '{"id":"2"}' } },
      { id: "c3", function: { name: "read_file", arguments: '{"path":"a.txt"}' } },
    ],
  },
  { role: "tool", tool_call_id: "c1", content: "hi", run: { server: "knob", displayName: "echo", durationMs: 12.4, isError: false, denied: false } },
  { role: "tool", tool_call_id: "c2", content: "Error: the call was denied", run: { server: "knob", displayName: "delete_item", durationMs: 3.2, isError: true, denied: true } },
  // stored before runs were recorded: no `run`
  { role: "tool", tool_call_id: "c3", content: "text" },
];

describe("resumed tool cards", () => {
  it("carry the server, the display name, the duration and the outcome they had live", () => {
    const [items] = historyItems(history, 1);
    const tools = items.filter((i): i is ToolItem => i.kind === "tool");
    expect(tools.map((t) => [t.callId, t.server, t.displayName, t.durationMs, t.status])).toEqual([
      ["c1", "knob", "echo", 12.4, "done"],
      ["c2", "knob", "delete_item", 3.2, "denied"],
      ["c3", null, null, null, "done"],
    ]);
    expect(tools[0].args).toEqual({ text: "hi" });
    expect(tools[0].result).toBe("hi");
  });

  it("a malformed run is ignored field by field", () => {
    const [items] = historyItems(
      [history[1], { role: "tool", tool_call_id: "c1", content: "x", run: { server: 3, durationMs: "slow", isError: "yes" } as never }],
      1,
    );
    const card = items.find((i): i is ToolItem => i.kind === "tool" && i.callId === "c1")!;
    expect([card.server, card.durationMs, card.status]).toEqual([null, null, "done"]);
  });

  describe("in the webview", () => {
    let root: HTMLElement;
    beforeEach(() => {
      document.body.innerHTML = '<div id="app"></div>';
      root = document.getElementById("app")!;
    });

    it("the resumed card shows the server, the duration and the outcome in words", () => {
      const host = { post: (_m: FromWebview) => undefined, getState: () => undefined, setState: () => undefined };
      const app = new ChatApp(root, host);
      app.receive({ type: "state", state: { ...initialState(), server: "running" } } satisfies ToWebview);
      app.receive({ type: "action", action: { type: "history", sessionId: "s1", messages: history } satisfies ChatAction });
      const cards = Array.from(root.querySelectorAll<HTMLElement>('[data-testid="tool-card"]'));
      expect(cards.map((c) => c.dataset.server)).toEqual(["knob", "knob", ""]);
      const summary = (c: HTMLElement) => c.querySelector("summary")!.textContent.replace(/\s+/g, " ").trim();
      expect(summary(cards[0])).toBe("echo · knob · ✓ Done (12 ms)");
      expect(summary(cards[1])).toBe("delete_item · knob · ⊘ Denied (3 ms)");
      expect(cards[1].dataset.status).toBe("denied");
      expect(summary(cards[2])).toBe("read_file · ✓ Done");
    });
  });
});

describe("labels", () => {
  it("sessions are named by their title, never by their id", () => {
    expect(sessionLabel({ title: "fix the parser" })).toBe("fix the parser");
    expect(sessionLabel({ title: null })).toBe("Untitled session");
    expect(sessionLabel({ title: "  ", created: 1764745200 })).toMatch(/^Untitled session of /);
  });

  it("tool statuses in words with a glyph", () => {
    expect(toolStatusLabel("done")).toEqual({ icon: "✓", text: "Done" });
    expect(toolStatusLabel("error")).toEqual({ icon: "✕", text: "Failed" });
    expect(toolStatusLabel("running", true)).toEqual({ icon: "?", text: "Waiting for approval" });
    expect(toolStatusLabel("running").text).toBe("Running…");
  });
});
