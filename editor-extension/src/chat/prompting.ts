/**
 * The chat's turns: a prompt sent to the server (agent/prompt, which answers when its turn
 * ends), the events the running turn streams (agent/event), and Stop (`$/cancelRequest` for our
 * own prompt, agent/cancel for a turn a code action started).
 */
import * as vscode from "vscode";
import type { AppWire } from "../../shared/agentEvents";
import type { ChatAction, ChatState } from "../../shared/state";
import { errorCode, errorText } from "../errors";
import { fact } from "../factLog";
import * as P from "../protocol";
import { TurnTracker } from "./turns";

export interface PromptingHost {
  dispatch(action: ChatAction): void;
  state(): ChatState;
  request<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R>;
  /** A prompt of `sessionId` ended: nobody waits for the answers to its questions any more. */
  turnOver(sessionId: string | null): void;
  /** After a prompt: the session list changed (a new session, a new title, a later update). */
  listSessions(): void;
  /** A tool call's MCP App: registered with the frame server (its HTML replaced by the frame). */
  appFrame?(sessionId: string | null, app: P.McpAppPayload): AppWire;
}

export class Prompting {
  private promptCts: vscode.CancellationTokenSource | null = null;
  /** Running turns: ours (agent/prompt) and those code actions started (Stop needs to know). */
  private readonly turns = new TurnTracker();

  constructor(private readonly host: PromptingHost) {}

  /** Our own prompt is waiting for its answer. */
  get running(): boolean {
    return this.promptCts !== null;
  }

  /** Cancels our own prompt, if one runs (`$/cancelRequest`). */
  cancel(): void {
    this.promptCts?.cancel();
  }

  private dispatch(action: ChatAction): void {
    this.host.dispatch(action);
  }

  /** Runs a prompt: `shown` is the user message the chat shows, `text` what the model gets. */
  async run(shown: string, text: string, attachments: P.Attachment[], labels: string[]): Promise<void> {
    this.dispatch({ type: "userPrompt", text: shown, attachments: labels });
    const cts = new vscode.CancellationTokenSource();
    this.promptCts = cts;
    const params: P.PromptParams = { text, sessionId: this.host.state().sessionId, attachments };
    // A slash command is shown (and, after a resume, shown again) as typed, not as its expansion.
    if (shown !== text) params.displayText = shown;
    this.turns.promptStarted(params.sessionId ?? null);
    try {
      const result = await this.host.request<P.PromptResult>(P.PROMPT, params, cts.token);
      this.dispatch({ type: "promptFinished", result });
      if (result.error) fact(`error ${result.error.message}`);
    } catch (e) {
      const cancelled = cts.token.isCancellationRequested || errorCode(e) === P.REQUEST_CANCELLED;
      if (cancelled) {
        this.dispatch({ type: "promptFailed", message: "Stopped.", cancelled: true });
      } else {
        const message = errorText(e);
        fact(`error ${message}`);
        this.dispatch({ type: "promptFailed", message });
      }
    } finally {
      // The turn is over: nobody waits for its unanswered approvals any more.
      this.host.turnOver(this.host.state().sessionId);
      if (this.promptCts === cts) {
        this.promptCts = null;
        this.turns.promptEnded();
      }
      cts.dispose();
      this.host.listSessions();
    }
  }

  /**
   * Stops the running turn. Our own prompt: the language client sends `$/cancelRequest`. A turn
   * a code action started runs in the background on the server: `agent/cancel {sessionId}`.
   */
  stop(): void {
    const state = this.host.state();
    const action = this.turns.stopAction(state.sessionId, state.busy);
    switch (action.kind) {
      case "cancelRequest":
        this.promptCts?.cancel();
        return;
      case "agentCancel":
        void this.cancelTurn(action.sessionId);
        return;
      case "clearBusy":
        this.dispatch({ type: "busy", busy: false });
        return;
      case "none":
        return;
    }
  }

  private async cancelTurn(sessionId: string): Promise<void> {
    fact(`stop ${sessionId}`);
    try {
      const r = await this.host.request<P.CancelResult>(P.CANCEL, { sessionId } satisfies P.CancelParams);
      if (r.cancelled) {
        this.dispatch({ type: "notice", text: "Stopped." });
      } else {
        // The server runs no turn there (it had ended; its turn_finished got lost): believe it.
        this.turns.ended(sessionId);
        if (this.host.state().busy && !this.promptCts) this.dispatch({ type: "busy", busy: false });
      }
    } catch (e) {
      const old = errorCode(e) === P.METHOD_NOT_FOUND;
      const text = old
        ? "This agent-ls server cannot stop a turn a code action started (no agent/cancel); it ends on its own."
        : `Stop failed: ${errorText(e)}`;
      fact(`error ${text}`);
      this.dispatch({ type: "notice", role: "error", text });
      if (old) this.dispatch({ type: "busy", busy: false });
    }
  }

  /** `agent/event`: one event of a running turn, ours or one a code action started. */
  event(params: P.EventParams): void {
    if (!isEventParams(params)) return;
    fact(`event ${params.event.type}`);
    this.turns.onEvent(params.sessionId, params.event);
    let event = params.event;
    if (event.type === "tool_call_finished" && event.app && this.host.appFrame) {
      // the HTML stays in the extension host: the webview gets the frame's address
      const app = this.host.appFrame(params.sessionId, event.app);
      event = { ...event, app };
      fact(`app ${app.server} ${app.resourceUri} ${app.frameUrl ? "shown" : "not shown"}`);
    }
    this.dispatch({ type: "event", sessionId: params.sessionId, event });
  }

  /** The server went away: no turn runs any more (our own prompt fails on its own). */
  reset(): void {
    this.turns.reset();
    if (this.host.state().busy && !this.promptCts) this.dispatch({ type: "busy", busy: false });
  }
}

/** Whether a notification the server sent carries an event (an object with a type). */
function isEventParams(p: unknown): p is P.EventParams {
  if (!p || typeof p !== "object") return false;
  const event = (p as { event?: unknown }).event;
  return !!event && typeof event === "object" && typeof (event as { type?: unknown }).type === "string";
}
