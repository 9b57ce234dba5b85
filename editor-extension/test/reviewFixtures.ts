/** What the review tests share: an agent/reviewEdit request and the file cards of a chat state. */
import type { ChangesItem, ChatState } from "../shared/state";
import type * as P from "../src/protocol";

export function review(changeId: string, extra: Partial<P.ReviewEditParams> = {}): P.ReviewEditParams {
  return {
    changeId,
    uri: `file:///ws/${changeId}.py`,
    path: `${changeId}.py`,
    before: "a = 1\n",
    after: "a = 2\n",
    added: 1,
    removed: 1,
    created: false,
    sessionId: "s1",
    callId: `call-${changeId}`,
    turn: 1,
    ...extra,
  };
}

export const cards = (s: ChatState) => s.items.filter((i): i is ChangesItem => i.kind === "changes");
