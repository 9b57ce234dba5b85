/**
 * What the language server asks the user in the chat: tool approvals (agent/approve), MCP server
 * trust (mcp/trustServer), workspace trust (agent/trustWorkspace) and elicitation (mcp/elicit).
 * Each request becomes a card and stays open until the user answers it or the server withdraws
 * it (`$/cancelRequest` cancels its token), which closes the card. (MCP sampling consent is in
 * ./sampling, file change reviews in ./review.)
 */
import type * as vscode from "vscode";
import type { ChatAction } from "../../shared/state";
import { fact } from "../factLog";
import type * as P from "../protocol";
import { reviewsBeforeApplyEverywhere } from "./review";

interface Pending<T> {
  resolve: (value: T) => void;
  /** For approvals: the session whose turn asks (null for direct calls). */
  sessionId?: string | null;
  /** For workspace trust: the folder it is about. */
  folder?: string;
}

export class ChatQuestions {
  private readonly approvals = new Map<string, Pending<P.ApproveResult>>();
  private readonly trusts = new Map<string, Pending<P.TrustServerResult>>();
  private readonly workspaceTrusts = new Map<string, Pending<P.TrustWorkspaceResult>>();
  private readonly elicits = new Map<string, Pending<P.ElicitResult>>();
  private counter = 0;

  constructor(
    private readonly dispatch: (action: ChatAction) => void,
    /** Shows the chat (when no chat surface is visible). */
    private readonly show: () => void,
  ) {}

  // approvals -----------------------------------------------------------------------------------
  /**
   * `agent/approve`: shown in the chat until the user answers, or until the server withdraws
   * the question (`$/cancelRequest` cancels `token`: the turn was stopped), which closes it.
   */
  approve(params: P.ApproveParams, token: vscode.CancellationToken): Promise<P.ApproveResult> {
    // A built-in file edit the user reviews before it applies anyway: the review decides.
    if (params.reviewedEdit === true && reviewsBeforeApplyEverywhere()) {
      fact(`approval allow_once (reviewed before apply) ${params.tool}`);
      return Promise.resolve({ answer: "allow_once" });
    }
    // callIds are unique per turn, not across sessions and direct calls: never let a second
    // question replace a pending one.
    let requestId = params.callId || `approval-${++this.counter}`;
    if (this.approvals.has(requestId)) requestId = `${requestId}#${++this.counter}`;
    return new Promise((resolve) => {
      this.approvals.set(requestId, { resolve, sessionId: params.sessionId ?? null });
      this.dispatch({ type: "approvalRequest", params: { ...params, callId: requestId } });
      this.show();
      token.onCancellationRequested(() => this.withdrawApproval(requestId));
    });
  }

  /** `scope`: with allow_session, the id of the session scope the user chose. */
  answerApproval(requestId: string, answer: P.ApprovalAnswer, log = true, scope?: string): void {
    const pending = this.approvals.get(requestId);
    if (!pending) return;
    this.approvals.delete(requestId);
    if (log) fact(`approval ${answer}${scope ? ` ${scope}` : ""}`);
    const withScope = answer === "allow_session" && scope !== undefined;
    this.dispatch(withScope ? { type: "approvalAnswered", requestId, answer, scope } : { type: "approvalAnswered", requestId, answer });
    pending.resolve(withScope ? { answer, scope } : { answer });
  }

  /** Nobody waits for this answer any more: close the question (the server reads it as a deny). */
  withdrawApproval(requestId: string): void {
    const pending = this.approvals.get(requestId);
    if (!pending) return;
    this.approvals.delete(requestId);
    fact("approval withdrawn");
    this.dispatch({ type: "approvalAnswered", requestId, answer: "deny", withdrawn: true });
    pending.resolve({ answer: "deny" });
  }

  /** A turn of `sessionId` is over: nobody waits for its unanswered approvals any more. */
  withdrawApprovalsOf(sessionId: string | null): void {
    for (const [id, p] of [...this.approvals]) {
      if (p.sessionId && p.sessionId === sessionId) this.withdrawApproval(id);
    }
  }

  // MCP server trust ------------------------------------------------------------------------------
  trust(params: P.TrustServerParams, token: vscode.CancellationToken): Promise<P.TrustServerResult> {
    const id = `trust-${++this.counter}`;
    return new Promise((resolve) => {
      this.trusts.set(id, { resolve });
      this.dispatch({ type: "trustRequest", id, params });
      this.show();
      token.onCancellationRequested(() => this.answerTrust(id, null, true));
    });
  }

  answerTrust(id: string, trusted: boolean | null, withdrawn = false): void {
    const pending = this.trusts.get(id);
    if (!pending) return;
    this.trusts.delete(id);
    fact(`trust ${withdrawn ? "withdrawn" : trusted === null ? "dismissed" : trusted ? "trust" : "deny"}`);
    const answer = trusted === null ? "dismissed" : trusted ? "trust" : "deny";
    this.dispatch(withdrawn ? { type: "trustAnswered", id, answer, withdrawn } : { type: "trustAnswered", id, answer });
    pending.resolve({ trusted });
  }

  // workspace trust -------------------------------------------------------------------------------
  /**
   * `agent/trustWorkspace`: a card listing everything the folder asks for, until the user
   * answers or the server withdraws it (the settings changed under it).
   */
  trustWorkspace(params: P.TrustWorkspaceParams, token: vscode.CancellationToken): Promise<P.TrustWorkspaceResult> {
    const id = `workspace-trust-${++this.counter}`;
    return new Promise((resolve) => {
      const wire: P.Wire<P.TrustWorkspaceParams> = params;
      this.workspaceTrusts.set(id, { resolve, folder: String(wire.folder) });
      this.dispatch({ type: "workspaceTrustRequest", id, params });
      this.show();
      token.onCancellationRequested(() => this.answerWorkspaceTrust(id, null, true));
    });
  }

  answerWorkspaceTrust(id: string, trusted: boolean | null, withdrawn = false): void {
    const pending = this.workspaceTrusts.get(id);
    if (!pending) return;
    this.workspaceTrusts.delete(id);
    const answer = trusted === null ? "dismissed" : trusted ? "trust" : "restricted";
    fact(`workspace-trust ${withdrawn ? "withdrawn" : answer}`);
    this.dispatch(
      withdrawn ? { type: "workspaceTrustAnswered", id, answer, withdrawn } : { type: "workspaceTrustAnswered", id, answer },
    );
    pending.resolve({ trusted });
  }

  /** Whether the workspace trust card `id` still waits for the user. */
  awaitsWorkspaceTrust(id: string): boolean {
    return this.workspaceTrusts.has(id);
  }

  /** The latest workspace trust card still open (of `folder`, when given). */
  openWorkspaceTrust(folder?: string): string | undefined {
    return [...this.workspaceTrusts.entries()].filter(([, p]) => folder === undefined || p.folder === folder).map(([k]) => k).pop();
  }

  // elicitation -----------------------------------------------------------------------------------
  elicit(params: P.ElicitParams, token: vscode.CancellationToken): Promise<P.ElicitResult> {
    const id = `elicit-${++this.counter}`;
    return new Promise((resolve) => {
      this.elicits.set(id, { resolve });
      this.dispatch({ type: "elicitRequest", id, params });
      this.show();
      token.onCancellationRequested(() => this.answerElicit(id, "cancel", undefined, true));
    });
  }

  answerElicit(id: string, action: P.ElicitResult["action"], content?: Record<string, unknown>, withdrawn = false): void {
    const pending = this.elicits.get(id);
    if (!pending) return;
    this.elicits.delete(id);
    fact(`elicit ${withdrawn ? "withdrawn" : action}`);
    const result: P.ElicitResult = action === "accept" ? { action, content: content ?? {} } : { action };
    const answered: ChatAction = { type: "elicitAnswered", id, answer: action, content: result.content ?? null };
    this.dispatch(withdrawn ? { ...answered, withdrawn } : answered);
    pending.resolve(result);
  }

  /** The server went away: answer everything it was waiting for (nobody will read it). */
  withdrawAll(): void {
    for (const id of [...this.approvals.keys()]) this.withdrawApproval(id);
    for (const id of [...this.trusts.keys()]) this.answerTrust(id, null, true);
    for (const id of [...this.workspaceTrusts.keys()]) this.answerWorkspaceTrust(id, null, true);
    for (const id of [...this.elicits.keys()]) this.answerElicit(id, "cancel", undefined, true);
  }
}
