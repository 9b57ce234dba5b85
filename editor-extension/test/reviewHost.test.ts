/**
 * Review of the agent's file changes (issue 16, item 3) on the extension host: agent/reviewEdit
 * answered by the review mode, the file card's Keep / Revert / Accept / Reject / Review, and a
 * resumed session's changes. `vscode` is test/fakes/vscode.ts.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { initialState, reduce, type ChatAction, type ChatState } from "../shared/state";
import { EditReviews, type ReviewMode } from "../src/chat/review";
import * as P from "../src/protocol";
import * as vscode from "./fakes/vscode";
import { cards, review } from "./reviewFixtures";

class Doc {
  constructor(private text: string) {}
  getText(): string {
    return this.text;
  }
  positionAt(offset: number): vscode.Position {
    const lines = this.text.slice(0, offset).split("\n");
    return new vscode.Position(lines.length - 1, lines[lines.length - 1].length);
  }
}

describe("the host side of the review", () => {
  let state: ChatState;
  let actions: ChatAction[];
  let requests: { method: string; params: unknown }[];
  let mode: ReviewMode;
  let reviews: EditReviews;
  let edits: vscode.WorkspaceEdit[];
  let executed: unknown[][];
  const docs = new Map<string, Doc>();

  beforeEach(() => {
    state = { ...initialState(), sessionId: "s1" };
    actions = [];
    requests = [];
    mode = "beforeApply";
    edits = [];
    executed = [];
    docs.clear();
    reviews = new EditReviews({
      dispatch: (a) => {
        actions.push(a);
        state = reduce(state, a);
      },
      show: () => undefined,
      state: () => state,
      request: async <R>(method: string, params: unknown): Promise<R> => {
        requests.push({ method, params });
        if (method === P.CHANGE_CONTENT) {
          const change: P.FileChangePayload = { changeId: "old", callId: null, path: "/ws/old.py", shown: "old.py", added: 1, removed: 1, created: false, status: "applied", uri: "file:///ws/old.py" };
          return { change, before: "x = 1\n", after: "x = 2\n" } as R;
        }
        return {} as R;
      },
      mode: () => mode,
    });
    vscode.workspace.applyEdit = async (edit: vscode.WorkspaceEdit) => {
      edits.push(edit);
      return true;
    };
    vscode.workspace.openTextDocument = async (uri: unknown) => docs.get(String(uri));
    vscode.commands.executeCommand = async (...args: unknown[]) => {
      executed.push(args);
      return undefined;
    };
  });

  it("answers deferred at once after apply, waits for the user before", async () => {
    mode = "afterApply";
    await expect(reviews.request(review("c1"))).resolves.toEqual({ decision: "deferred" });
    mode = "beforeApply";
    const answer = reviews.request(review("c2"));
    expect(reviews.pending).toBe(1);
    expect(cards(state)[0].files.map((f) => f.status)).toEqual(["proposed", "pending"]);
    await reviews.act("c2", "reject", false, "  not like this ");
    await expect(answer).resolves.toEqual({ decision: "reject", reason: "not like this" });
    expect(cards(state)[0].files[1]).toMatchObject({ status: "rejected", reason: "not like this" });
  });

  it("Accept all answers the waiting change and the rest of its turn", async () => {
    const first = reviews.request(review("c1"));
    await reviews.act("c1", "accept", true);
    await expect(first).resolves.toEqual({ decision: "accept" });
    await expect(reviews.request(review("c2"))).resolves.toEqual({ decision: "accept" });
    expect(reviews.pending).toBe(0);
    // another turn asks again
    void reviews.request(review("c3", { turn: 2 }));
    expect(reviews.pending).toBe(1);
  });

  it("a withdrawn review closes its card", async () => {
    const cts = new vscode.CancellationTokenSource();
    const answer = reviews.request(review("c1"), cts.token);
    cts.cancel();
    await expect(answer).resolves.toMatchObject({ decision: "reject" });
    expect(cards(state)[0].files[0]).toMatchObject({ status: "proposed", withdrawn: true });
  });

  it("Review opens the diff editor with the before text", async () => {
    void reviews.request(review("c1"));
    await reviews.act("c1", "review");
    const [[command, left, right, title]] = executed as [string, vscode.Uri, vscode.Uri, string][];
    expect(command).toBe("vscode.diff");
    expect(left.path).toBe("/c1/before/c1.py");
    expect(right.path).toBe("/c1/after/c1.py");
    expect(title).toContain("c1.py");
    expect(reviews.provideTextDocumentContent(left as never)).toBe("a = 1\n");
    expect(reviews.provideTextDocumentContent(right as never)).toBe("a = 2\n");
  });

  it("Revert puts the text back with an edit and records it; Keep records", async () => {
    mode = "afterApply";
    await reviews.request(review("c1", { before: "a = 1\nb\n", after: "a = 2\nb\n" }));
    state = reduce(state, { type: "changeStatus", changeId: "c1", status: "applied" });
    docs.set("file:///ws/c1.py", new Doc("# typed\na = 2\nb\n"));
    await reviews.act("c1", "revert");
    const [edit] = edits;
    expect(edit.replaced[0].text).toBe("1");
    expect(edit.replaced[0].range.start).toEqual(new vscode.Position(1, 4));
    expect(requests.at(-1)).toEqual({ method: P.CHANGE_OUTCOME, params: { sessionId: "s1", changeId: "c1", outcome: "reverted" } });
    expect(cards(state)[0].files[0].status).toBe("reverted");

    await reviews.request(review("c2"));
    state = reduce(state, { type: "changeStatus", changeId: "c2", status: "applied" });
    await reviews.act("c2", "keep");
    expect(requests.at(-1)).toEqual({ method: P.CHANGE_OUTCOME, params: { sessionId: "s1", changeId: "c2", outcome: "kept" } });
  });

  it("Revert of a created file deletes it; a file changed where the agent edited is left alone", async () => {
    mode = "afterApply";
    await reviews.request(review("n1", { before: "", after: "new\n", created: true }));
    state = reduce(state, { type: "changeStatus", changeId: "n1", status: "applied" });
    docs.set("file:///ws/n1.py", new Doc("new\n"));
    await reviews.act("n1", "revert");
    expect(edits[0].deleted.map(String)).toEqual(["file:///ws/n1.py"]);

    await reviews.request(review("c1"));
    state = reduce(state, { type: "changeStatus", changeId: "c1", status: "applied" });
    docs.set("file:///ws/c1.py", new Doc("a = 3\n"));
    await reviews.act("c1", "revert");
    expect(edits).toHaveLength(1);
    expect(cards(state)[0].files.find((f) => f.changeId === "c1")!.status).toBe("applied");
  });

  it("a resumed card gets its texts from the server", async () => {
    state = reduce(state, {
      type: "history",
      sessionId: "s1",
      messages: [],
      changes: [{ changeId: "old", callId: null, path: "/ws/old.py", shown: "old.py", added: 1, removed: 1, created: false, status: "applied", turn: 1, hasContent: true }],
    });
    docs.set("file:///ws/old.py", new Doc("x = 2\n"));
    await reviews.act("old", "revert");
    expect(requests[0]).toEqual({ method: P.CHANGE_CONTENT, params: { sessionId: "s1", changeId: "old" } });
    expect(edits[0].replaced[0].text).toBe("1");
  });
});
