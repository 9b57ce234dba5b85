/**
 * Which turns are running, and what Stop should do about them (pure: unit-tested).
 *
 * A turn the chat started itself is an `agent/prompt` request: Stop cancels that request
 * (`$/cancelRequest`). A turn a code action started (agent-ls.ask / agent-ls.runMcpPrompt)
 * runs in the background on the server: no request of ours to cancel, so Stop sends
 * `agent/cancel {sessionId}` for the session it runs in.
 */
import type { AgentEvent } from "../protocol";

export type StopAction =
  | { kind: "cancelRequest" }
  | { kind: "agentCancel"; sessionId: string }
  | { kind: "clearBusy" }
  | { kind: "none" };

export class TurnTracker {
  /** Sessions with a running turn (turn_started seen, turn_finished not yet). */
  private readonly running = new Set<string>();
  /** Our own agent/prompt: undefined when none runs; its session (null until known). */
  private own: { sessionId: string | null } | undefined;

  /** Our agent/prompt request starts (sessionId: null when the server creates the session). */
  promptStarted(sessionId: string | null): void {
    this.own = { sessionId };
  }

  promptEnded(): void {
    this.own = undefined;
  }

  get ownPrompt(): boolean {
    return this.own !== undefined;
  }

  /** The session of our own prompt, when known. */
  get ownSession(): string | null {
    return this.own?.sessionId ?? null;
  }

  onEvent(sessionId: string | null, event: AgentEvent): void {
    if (!sessionId) return;
    if (event.type === "turn_started") {
      this.running.add(sessionId);
      if (this.own && this.own.sessionId === null) this.own.sessionId = sessionId;
    } else if (event.type === "turn_finished") {
      this.running.delete(sessionId);
    }
  }

  /** The server says no turn runs in `sessionId`. */
  ended(sessionId: string): void {
    this.running.delete(sessionId);
  }

  /** Whether a turn not started by our own prompt runs in `sessionId`. */
  background(sessionId: string | null): boolean {
    return !!sessionId && this.running.has(sessionId) && sessionId !== this.ownSession;
  }

  /** The server went away: nothing runs any more. */
  reset(): void {
    this.running.clear();
    this.own = undefined;
  }

  /**
   * What Stop does, for the session the chat shows (`current`) and whether the chat shows
   * the agent as busy.
   */
  stopAction(current: string | null, busy: boolean): StopAction {
    if (this.background(current)) return { kind: "agentCancel", sessionId: current as string };
    if (this.own) return { kind: "cancelRequest" };
    const other = [...this.running].find((s) => s !== this.ownSession);
    if (other) return { kind: "agentCancel", sessionId: other };
    return busy ? { kind: "clearBusy" } : { kind: "none" };
  }
}
