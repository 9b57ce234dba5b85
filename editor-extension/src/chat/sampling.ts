/**
 * MCP sampling consent in the chat: the server's `mcp/sample` request becomes a card (allow once,
 * allow for the session, deny) and the user's click its answer. A withdrawn request ($/cancelRequest)
 * or a server that went away is answered `deny`, and the card says so.
 */
import type { ChatAction } from "../../shared/state";
import { fact } from "../factLog";
import type * as P from "../protocol";

/** The part of vscode.CancellationToken this needs (kept small so tests need no vscode). */
export interface Cancellation {
  onCancellationRequested(listener: () => void): unknown;
}

export class SamplingConsent {
  private readonly pending = new Map<string, (result: P.SampleResult) => void>();
  private counter = 0;

  constructor(
    private readonly dispatch: (action: ChatAction) => void,
    private readonly show: () => void,
  ) {}

  /** `mcp/sample` from the server: resolves when the user answers (or the request is withdrawn). */
  request(params: P.SampleParams, token?: Cancellation): Promise<P.SampleResult> {
    const id = `sampling-${++this.counter}`;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.dispatch({ type: "samplingRequest", id, params });
      this.show();
      token?.onCancellationRequested(() => this.answer(id, "deny", true));
    });
  }

  answer(id: string, answer: P.SamplingAnswer, withdrawn = false): void {
    const resolve = this.pending.get(id);
    if (!resolve) return;
    this.pending.delete(id);
    fact(`sampling ${withdrawn ? "withdrawn" : answer}`);
    this.dispatch(withdrawn ? { type: "samplingAnswered", id, answer, withdrawn } : { type: "samplingAnswered", id, answer });
    resolve({ answer });
  }

  /** The server went away: nobody waits for the answers any more. */
  withdrawAll(): void {
    for (const id of [...this.pending.keys()]) this.answer(id, "deny", true);
  }

  get waiting(): number {
    return this.pending.size;
  }
}
