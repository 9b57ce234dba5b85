/**
 * The model's reasoning in the chat's state (`thinking` agent events): one thinking block per
 * phase, before the reply text or tool call it precedes; the block closes with how long the
 * model thought when the phase ends.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { applyEvent, initialState, reduce, type ChatAction, type ChatItem, type ChatState, type ThinkingItem } from "../shared/state";
import type { AgentEvent } from "../src/protocol";

const ev = (event: AgentEvent, sessionId = "s1"): ChatAction => ({ type: "event", sessionId, event });
const think = (text: string): ChatAction => ev({ type: "thinking", text });
const text = (t: string): ChatAction => ev({ type: "text", text: t });

/** Applies the actions, the clock moving `stepMs` before each one. */
function run(actions: ChatAction[], start: ChatState = initialState(), stepMs = 1000): ChatState {
  let s = start;
  for (const a of actions) {
    vi.advanceTimersByTime(stepMs);
    s = reduce(s, a);
  }
  return s;
}

const kinds = (s: ChatState) => s.items.map((i) => i.kind);
const thinking = (s: ChatState): ThinkingItem[] => s.items.filter((i): i is ThinkingItem => i.kind === "thinking");

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
});
afterEach(() => {
  vi.useRealTimers();
});

describe("thinking events", () => {
  it("append to one block before the reply; the reply text closes it with the time it took", () => {
    let s = run([{ type: "userPrompt", text: "why?" }, ev({ type: "turn_started", turn: 1 }), think("Let me "), think("see"), think(".")]);
    expect(kinds(s)).toEqual(["message", "thinking"]);
    const [block] = thinking(s);
    expect(block.text).toBe("Let me see.");
    expect(block.done).toBe(false);
    expect(block.durationMs).toBeNull();
    expect(block.rev).toBe(2); // one bump per delta: the webview re-renders only this item
    s = run([text("Because.")], s, 2500);
    expect(kinds(s)).toEqual(["message", "thinking", "message"]);
    const [done] = thinking(s);
    expect(done.done).toBe(true);
    // from the first piece to the reply: 2 s of deltas, then 2.5 s to the reply
    expect(done.durationMs).toBe(4500);
    expect(s.items[2].kind === "message" && s.items[2].role === "assistant" && s.items[2].text).toBe("Because.");
    // more reply text goes to the reply, not to a new block or message
    s = run([text(" Really.")], s);
    expect(kinds(s)).toEqual(["message", "thinking", "message"]);
    expect(s.items[2].kind === "message" && s.items[2].text).toBe("Because. Really.");
    expect(thinking(s)[0]).toBe(done); // a closed block is not touched again
  });

  it("a delta changes only its block: the other items keep their identity", () => {
    const s = run([{ type: "userPrompt", text: "q" }, think("a")]);
    const next = reduce(s, think("b"));
    expect(next.items[0]).toBe(s.items[0]);
    expect(next.items[1]).not.toBe(s.items[1]);
    expect(next.items[1].rev).toBe(s.items[1].rev + 1);
  });

  it("gives one block per phase, in order with the tool cards and the reply", () => {
    const s = run([
      ev({ type: "turn_started", turn: 1 }),
      think("I should list the files."),
      ev({ type: "usage", inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }),
      ev({ type: "tool_call_started", callId: "c1", name: "list", arguments: {}, server: "fs" }),
      ev({ type: "tool_call_finished", callId: "c1", name: "list", isError: false, content: "a.txt", durationMs: 3 }),
      think("Now read it."),
      think(" Then answer."),
      text("Here it is."),
      think("Anything else?"),
      text("No."),
      ev({ type: "turn_finished", stopReason: "end", usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }, steps: 2, text: "" }),
    ]);
    expect(kinds(s)).toEqual(["thinking", "tool", "thinking", "message", "thinking", "message"]);
    const blocks = thinking(s);
    expect(blocks.map((b) => b.text)).toEqual(["I should list the files.", "Now read it. Then answer.", "Anything else?"]);
    expect(blocks.every((b) => b.done)).toBe(true);
    // the first phase ended at the usage report (1 s), the second at its reply (2 s after its first piece)
    expect(blocks.map((b) => b.durationMs)).toEqual([1000, 2000, 1000]);
    expect(new Set(s.items.map((i) => i.id)).size).toBe(s.items.length);
    expect(s.items[3].kind === "message" && s.items[3].text).toBe("Here it is.");
    expect(s.items[5].kind === "message" && s.items[5].text).toBe("No.");
  });

  it("closes at the end of the turn, however it ends", () => {
    const open = () => run([{ type: "userPrompt", text: "q" }, ev({ type: "turn_started", turn: 1 }), think("hmm")]);
    const ends: ChatAction[] = [
      ev({ type: "turn_finished", stopReason: "cancelled", usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, steps: 1, text: "" }),
      ev({ type: "error", kind: "llm", message: "rate limited" }),
      { type: "promptFailed", message: "Stopped.", cancelled: true },
      { type: "promptFailed", message: "the server went away" },
      { type: "promptFinished", result: { sessionId: "s1", stopReason: "end", text: "", usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 } } },
      { type: "busy", busy: false },
    ];
    for (const end of ends) {
      const s = run([end], open(), 3000);
      const [block] = thinking(s);
      expect(block.done, JSON.stringify(end)).toBe(true);
      expect(block.durationMs, JSON.stringify(end)).toBe(3000);
    }
    // busy: true (a code action's turn starting) does not end anything
    expect(thinking(reduce(open(), { type: "busy", busy: true }))[0].done).toBe(false);
  });

  it("keeps one block when a question arrives in the middle of the reasoning", () => {
    const s = run([
      think("first"),
      { type: "trustRequest", id: "tr-1", params: { server: "srv", command: "x", args: [], source: "/w/.vscode/mcp.json" } },
      think(" second"),
    ]);
    expect(kinds(s)).toEqual(["thinking", "trust"]);
    expect(thinking(s)[0].text).toBe("first second");
    expect(thinking(s)[0].done).toBe(false);
  });

  it("ignores empty and non-text pieces; an empty text piece does not end the phase", () => {
    let s = run([think(""), ev({ type: "thinking", text: null } as unknown as AgentEvent)]);
    expect(s.items).toEqual([]);
    s = run([think("x"), text("")], s);
    expect(kinds(s)).toEqual(["thinking"]);
    expect(thinking(s)[0].done).toBe(false);
  });

  it("applyEvent takes the arrival time; a block without a start time closes without a duration", () => {
    let s = applyEvent(initialState(), "s1", { type: "thinking", text: "a" }, 10_000);
    s = applyEvent(s, "s1", { type: "text", text: "b" }, 17_400);
    expect(thinking(s)[0].durationMs).toBe(7400);
    const unknown: ChatItem = { kind: "thinking", id: "k-9", rev: 0, text: "old", startedAt: null, done: false, durationMs: null };
    s = applyEvent({ ...initialState(), items: [unknown] }, "s1", { type: "text", text: "c" }, 1);
    expect(thinking(s)[0]).toMatchObject({ done: true, durationMs: null });
  });

  it("is not stored: a resumed session shows its history without thinking blocks, and the next turn works", () => {
    let s = run([{ type: "userPrompt", text: "q" }, think("secret reasoning"), text("answer")]);
    s = reduce(s, {
      type: "history",
      sessionId: "s2",
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: "answer" },
      ],
    });
    expect(kinds(s)).toEqual(["message", "message"]);
    expect(JSON.stringify(s)).not.toContain("secret reasoning");
    s = run([{ type: "userPrompt", text: "more" }, ev({ type: "turn_started", turn: 1 }, "s2"), think("again"), text("ok")], s);
    expect(kinds(s)).toEqual(["message", "message", "message", "thinking", "message"]);
    expect(thinking(s)[0]).toMatchObject({ text: "again", done: true });
    // a new session drops the blocks with the rest of the transcript
    expect(reduce(s, { type: "reset", sessionId: null }).items).toEqual([]);
  });
});
