/**
 * Rewind in the chat (issue 40): "Rewind to here" on each user message (a button, keyboard
 * reachable, posting `rewindTo`), the host's flow (code / conversation / both, the plan in a
 * modal before anything changes, agent/rewind, the chat reloaded, Redo offered), the plan's
 * text (files, conflicts, not kept, protected, unsaved buffers) and open buffers after a rewind
 * (a clean one follows the disk, a dirty one is never touched and the user is told).
 */
import { beforeEach, describe, expect, it } from "vitest";
import { checkpointFor, doneText, laterAgentEdits, planShown, promptOrdinal, redoPlanShown } from "../shared/rewind";
import { initialState, type ChatItem, type ChatState } from "../shared/state";
import { buffersText, settleBuffers, type BufferState } from "../src/chat/openBuffers";
import { ChatRewind, REDO_BUTTON, REWIND_BUTTON } from "../src/chat/rewind";
import * as P from "../src/protocol";
import { act, host, mount, q, qa } from "./webviewHarness";
import * as vscode from "./fakes/vscode";

const cp = (promptIndex: number, prompt = `prompt ${promptIndex}`): P.CheckpointPayload => ({
  id: `cp${promptIndex}`, sessionId: "s1", promptIndex, prompt, created: 1_700_000_000, finished: 1_700_000_001,
  changed: ["/w/a.py"], notKept: [],
});

const preview: P.RewindResult = {
  checkpoint: cp(1, "make the change"),
  actions: [
    { path: "/w/a.py", action: "restore", protected: null },
    { path: "/w/new.txt", action: "delete", protected: null },
    { path: "/w/.vscode/tasks.json", action: "recreate", protected: "VS Code runs tasks" },
    { path: "/w/mine.py", action: "conflict", protected: null },
    { path: "/w/big.bin", action: "not-kept", protected: null },
    { path: "/w/only-user.md", action: "keep", protected: null },
  ],
  done: false,
};

const redoPreview: P.RewindResult = {
  checkpoint: cp(1, "make the change"),
  actions: [
    { path: "/w/a.py", action: "restore", protected: null },
    { path: "/w/gone.txt", action: "recreate", protected: null },
    { path: "/w/mine.py", action: "conflict", protected: null },
  ],
  done: false,
  conversation: true,
};

const user = (id: string, text: string): ChatItem => ({ kind: "message", id, rev: 0, role: "user", text });
const said = (id: string, text: string): ChatItem => ({ kind: "message", id, rev: 0, role: "assistant", text });

describe("the plan and the prompt a message is", () => {
  it("counts user messages only", () => {
    const items = [user("m1", "a"), said("m2", "b"), { kind: "message", id: "n", rev: 0, role: "notice", text: "x" } as ChatItem, user("m3", "c")];
    expect(promptOrdinal(items, "m1")).toBe(0);
    expect(promptOrdinal(items, "m3")).toBe(1);
    expect(promptOrdinal(items, "m2")).toBeNull();
  });

  it("finds a message's checkpoint by its index, or by its words when the count is off", () => {
    const cps = [cp(0, "first"), cp(1, "[From the editor: a note.]\n\nmake the change"), cp(2, "third")];
    expect(checkpointFor(cps, 1, "make the change")?.id).toBe("cp1");
    expect(checkpointFor(cps, 2, "make the change")?.id).toBe("cp1"); // a blocked prompt shown in the chat shifted the count
    expect(checkpointFor(cps, 2, "/knob:review")?.id).toBe("cp2"); // an expanded slash command: the index decides
    expect(checkpointFor(cps, 5, "nowhere")).toBeUndefined();
  });

  it("shows each file and what happens to it, what is left alone, protected files and unsaved buffers", () => {
    const shown = planShown(preview, "both", ["/w"], ["/w/a.py"]);
    expect(shown.message).toBe('Rewind to before prompt 2 ("make the change")?');
    const d = shown.detail;
    expect(d).toContain("Files the rewind changes (3):");
    expect(d).toContain("a.py: put back as it was");
    expect(d).toContain("new.txt: deleted (the agent created it)");
    expect(d).toContain(".vscode/tasks.json: created again (the agent deleted it) [protected: VS Code runs tasks]");
    expect(d).toContain("1 of the files to change is a protected file");
    expect(d).toContain("Changed by you since: left alone, not overwritten (1):\n  mine.py");
    expect(d).toContain("Not kept by the checkpoint (too large or unreadable): left alone (1):\n  big.bin");
    expect(d).toContain("your unsaved text stays in the editor (the file on disk is rewound) (1):\n  a.py");
    expect(d).toContain("Conversation: back to before this prompt");
    expect(d).not.toContain("only-user.md");
    expect(shown.conflicts).toEqual(["/w/mine.py"]);
  });

  it("a conversation-only rewind lists no files", () => {
    const d = planShown(preview, "conversation", ["/w"]).detail;
    expect(d).not.toContain("a.py");
    expect(d).toContain("Conversation: back to before this prompt");
    expect(planShown(preview, "code", ["/w"]).detail).toContain("Conversation: stays as it is.");
  });
});

describe("the webview's Rewind to here", () => {
  beforeEach(() => mount());

  it("is a labelled button on user messages only, and posts rewindTo", () => {
    act({ type: "userPrompt", text: "first" });
    act({ type: "promptFinished", result: { sessionId: "s1", text: "ok", stopReason: "end" } as P.PromptResult });
    const buttons = qa("message-rewind");
    expect(buttons).toHaveLength(1);
    const b = buttons[0] as HTMLButtonElement;
    expect(b.tagName).toBe("BUTTON");
    expect(b.textContent).toBe("Rewind to here");
    expect(b.getAttribute("aria-label")).toContain("Rewind to here");
    expect(b.closest('[data-role="user"]')).not.toBeNull();
    b.click();
    const userItem = q("message")!.closest<HTMLElement>("[data-item-id]")!.dataset.itemId;
    expect(host.sent.at(-1)).toEqual({ type: "rewindTo", itemId: userItem });
  });
});

/** The host side against a scripted server and scripted answers of the user. */
function harness(state: ChatState) {
  const sent: { method: string; params: Record<string, unknown> }[] = [];
  const notices: string[] = [];
  const reloads: string[] = [];
  const open: BufferState[] = [];
  const disk = new Map<string, string | null>();
  const reverted: string[] = [];
  const rewind = new ChatRewind({
    revertEdit: async (changeId) => {
      reverted.push(changeId);
      sent.push({ method: "revert", params: { changeId } });
    },
    request: async <R,>(method: string, params: unknown): Promise<R> => {
      sent.push({ method, params: params as Record<string, unknown> });
      if (method === P.CHECKPOINTS) return { checkpoints: [cp(0), cp(1, "make the change")] } as R;
      const p = params as P.RewindParams;
      if (method === P.REWIND && p.preview) return preview as R;
      if (method === P.REWIND) {
        disk.set("/w/a.py", "before\n");
        return { ...preview, done: true, changed: ["/w/a.py", "/w/new.txt"], leftAlone: ["/w/mine.py"], conversation: p.conversation } as R;
      }
      if (method === P.REDO && (params as P.RedoParams).preview) return redoPreview as R;
      return { ...redoPreview, done: true, changed: ["/w/a.py"], conversation: true } as R;
    },
    state: () => state,
    notice: (t) => notices.push(t),
    reload: async (sid) => void reloads.push(sid),
    roots: () => ["/w"],
    buffers: { open: () => open, read: async (p) => disk.get(p) ?? null, waitMs: 50, stepMs: 5 },
  });
  return { rewind, sent, notices, reloads, open, disk, reverted };
}

describe("the host's rewind", () => {
  const state: ChatState = { ...initialState(), sessionId: "s1", items: [user("m1", "first"), said("m2", "ok"), user("m3", "make the change")] };
  let asked: { message: string; detail: string; buttons: string[] } | null;
  let answer: string | undefined;
  let offered: string[];

  beforeEach(() => {
    asked = null;
    answer = REWIND_BUTTON;
    offered = [];
    vscode.window.showQuickPick = async (items: unknown) => (items as { mode?: string }[]).find((i) => i.mode === "both");
    vscode.window.showWarningMessage = async (...args: unknown[]) => {
      const [message, opts, ...buttons] = args as [string, { detail: string; modal: boolean }, ...string[]];
      expect(opts.modal).toBe(true);
      asked = { message, detail: opts.detail, buttons };
      return answer;
    };
    vscode.window.showInformationMessage = async (...args: unknown[]) => {
      offered.push(...(args.slice(1) as string[]));
      return undefined;
    };
  });

  it("Rewind to here: the prompt's checkpoint, the plan asked first, then the rewind, the chat reloaded, Redo offered", async () => {
    const h = harness(state);
    h.open.push({ path: "/w/a.py", dirty: false, text: () => h.disk.get("/w/a.py") ?? "agent's\n" });
    await h.rewind.fromMessage("m3");
    expect(h.sent.map((s) => s.method)).toEqual([P.CHECKPOINTS, P.REWIND, P.REWIND]);
    expect(h.sent[1].params).toEqual({ checkpointId: "cp1", code: true, conversation: true, preview: true });
    expect(h.sent[2].params).toEqual({ checkpointId: "cp1", code: true, conversation: true, overwrite: false });
    expect(asked!.message).toContain("make the change");
    expect(asked!.detail).toContain("a.py: put back as it was");
    expect(asked!.buttons).toEqual([REWIND_BUTTON, "Rewind, also overwrite the 1 file you changed"]);
    expect(h.reloads).toEqual(["s1"]);
    expect(h.notices.join(" ")).toContain('Rewound to before prompt 2 ("make the change"): 2 files restored; the conversation taken back');
    expect(h.notices.join(" ")).toContain("Open editors updated to the rewound content: a.py.");
    expect(offered).toEqual([REDO_BUTTON]);
  });

  it("nothing changes when the user does not confirm; the overwrite button overwrites", async () => {
    const h = harness(state);
    answer = undefined;
    await h.rewind.fromMessage("m1");
    expect(h.sent.map((s) => s.method)).toEqual([P.CHECKPOINTS, P.REWIND]);
    expect(h.sent[1].params.checkpointId).toBe("cp0");
    answer = "Rewind, also overwrite the 1 file you changed";
    await h.rewind.fromMessage("m1");
    expect(h.sent.at(-1)!.params).toMatchObject({ checkpointId: "cp0", overwrite: true });
  });

  it("code only keeps the conversation; a busy chat refuses; Agent: Rewind picks a checkpoint; Redo", async () => {
    const h = harness(state);
    vscode.window.showQuickPick = async (items: unknown) => {
      const list = items as { mode?: string; cp?: P.CheckpointPayload }[];
      return list.find((i) => i.mode === "code") ?? list.find((i) => i.cp?.promptIndex === 0);
    };
    await h.rewind.command();
    expect(h.sent.at(-1)!.params).toEqual({ checkpointId: "cp0", code: true, conversation: false, overwrite: false });
    answer = REDO_BUTTON;
    await h.rewind.redo();
    expect(h.sent.slice(-2)).toEqual([
      { method: P.REDO, params: { sessionId: "s1", preview: true } },
      { method: P.REDO, params: { sessionId: "s1", overwrite: false } },
    ]);
    expect(asked!.message).toBe('Redo the rewind to before prompt 2 ("make the change")?');
    expect(asked!.buttons).toEqual([REDO_BUTTON, "Redo, also overwrite the 1 file changed since"]);
    expect(h.notices.at(-1)).toContain("Redo: 1 file put back; the conversation put back.");

    const busy = harness({ ...state, busy: true });
    await busy.rewind.fromMessage("m3");
    expect(busy.sent).toEqual([]);
    expect(busy.notices[0]).toContain("stop it before rewinding");
  });
});

describe("a redo's plan", () => {
  it("says what it puts back, what is left alone and whether the conversation comes back", () => {
    const shown = redoPlanShown(redoPreview, ["/w"], ["/w/a.py"]);
    expect(shown.message).toBe('Redo the rewind to before prompt 2 ("make the change")?');
    const d = shown.detail;
    expect(d).toContain("Files the redo puts back (2):\n  a.py: back to what the rewind replaced\n  gone.txt: created again (the rewind deleted it)");
    expect(d).toContain("Changed since the rewind: left alone, not overwritten (1):\n  mine.py");
    expect(d).toContain("your unsaved text stays in the editor (the file on disk is put back) (1):\n  a.py");
    expect(d).toContain("Conversation: put back as it was before the rewind.");
    expect(shown.conflicts).toEqual(["/w/mine.py"]);
    const codeOnly = redoPlanShown({ ...redoPreview, actions: [], conversation: false }, ["/w"]);
    expect(codeOnly.detail).toBe("Files: nothing to change.\n\nConversation: stays as it is.");
    expect(codeOnly.empty).toBe(true);
  });

  it("nothing is redone when the user does not confirm; the overwrite button overwrites", async () => {
    const state: ChatState = { ...initialState(), sessionId: "s1" };
    const h = harness(state);
    const modal: { reply?: string } = {};
    vscode.window.showWarningMessage = async () => modal.reply;
    await h.rewind.redo();
    expect(h.sent).toEqual([{ method: P.REDO, params: { sessionId: "s1", preview: true } }]);
    modal.reply = "Redo, also overwrite the 1 file changed since";
    await h.rewind.redo();
    expect(h.sent.at(-1)).toEqual({ method: P.REDO, params: { sessionId: "s1", overwrite: true } });
  });
});

describe("the agent's edits still unsaved in buffers", () => {
  const card = (id: string, rows: [string, P.ChangeStatus][]): ChatItem => ({
    kind: "changes", id, rev: 0, sessionId: "s1", turn: 1,
    files: rows.map(([path, status], i) => ({
      changeId: `${id}-${i}`, callId: null, path, uri: `file:///w/${path}`, added: 1, removed: 1, created: false, status,
      reason: null, reviewable: true,
    })),
  });
  const items = [user("m1", "first"), card("c0", [["early.py", "applied"]]), user("m3", "make the change"),
    card("c1", [["x.py", "applied"], ["y.py", "reverted"], ["z.py", "kept"]]), card("c2", [["x.py", "accepted"]])];

  it("are the applied, accepted and kept rows of the later turns, the latest first", () => {
    expect(laterAgentEdits(items, 1).map((e) => e.changeId)).toEqual(["c2-0", "c1-2", "c1-0"]);
    expect(laterAgentEdits(items, 0).map((e) => e.changeId)).toContain("c0-0");
  });

  it("are listed in the plan and reverted in their dirty buffers before the rewind", async () => {
    let asked = "";
    vscode.window.showQuickPick = async (list: unknown) => (list as { mode?: string }[]).find((i) => i.mode === "both");
    vscode.window.showWarningMessage = async (...args: unknown[]) => {
      asked = (args[1] as { detail: string }).detail;
      return REWIND_BUTTON;
    };
    const h = harness({ ...initialState(), sessionId: "s1", items });
    h.open.push({ path: "/w/x.py", dirty: true, text: () => "agent's unsaved\n" }, { path: "/w/z.py", dirty: false, text: () => "saved\n" });
    await h.rewind.fromMessage("m3");
    expect(asked).toContain("The agent's unsaved edits in open editors (not on disk, so in no checkpoint): reverted in the editor (Undo brings them back) (1):\n  x.py");
    expect(h.reverted).toEqual(["c2-0", "c1-0"]); // z.py's buffer is clean: saved, so the checkpoints have it
    expect(h.sent.map((s) => s.method)).toEqual([P.CHECKPOINTS, P.REWIND, "revert", "revert", P.REWIND]);
    expect(h.notices.join(" ")).toContain("2 unsaved edits of the agent reverted in the editor");
  });
});

describe("open buffers after a rewind", () => {
  it("a clean buffer follows the disk, a dirty one is left alone and reported, a late one is named", async () => {
    let reloaded = "agent's\n";
    const open: BufferState[] = [
      { path: "/w/clean.py", dirty: false, text: () => reloaded },
      { path: "/w/dirty.py", dirty: true, text: () => "the user's unsaved words\n" },
      { path: "/w/late.py", dirty: false, text: () => "agent's\n" },
      { path: "/w/gone.txt", dirty: false, text: () => "made by the agent\n" },
      { path: "/w/other.py", dirty: false, text: () => "not rewound\n" },
    ];
    const disk = new Map([["/w/clean.py", "before\n"], ["/w/dirty.py", "before\n"], ["/w/late.py", "before\n"]]);
    setTimeout(() => (reloaded = "before\n"), 10); // the editor reloads it from the disk
    const after = await settleBuffers(["/w/clean.py", "/w/dirty.py", "/w/late.py", "/w/gone.txt"], {
      open: () => open, read: async (p) => disk.get(p) ?? null, waitMs: 100, stepMs: 5,
    });
    expect(after).toEqual({ reloaded: ["/w/clean.py"], unsaved: ["/w/dirty.py"], removed: ["/w/gone.txt"], stale: ["/w/late.py"] });
    const text = buffersText(after, (p) => p.slice(3)).join(" ");
    expect(text).toContain("Unsaved changes kept in the editor for dirty.py");
    expect(text).toContain('"File: Revert File" shows the rewound content');
  });

  it("the done text says what happened", () => {
    expect(doneText({ ...preview, done: true, changed: ["/w/a.py"], leftAlone: [], conversation: false }, false))
      .toBe('Rewound to before prompt 2 ("make the change"): 1 file restored. "Agent: Redo Rewind" undoes it until your next prompt.');
  });
});
