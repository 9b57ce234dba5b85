/**
 * The chat on the extension host side: owns the chat state (the shared reducer), talks to the
 * language server (prompt, sessions, approvals, trust, elicitation) and keeps every open chat
 * webview (the view and the editor panel) in step by broadcasting reducer actions.
 */
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { parseFromWebview, type FromWebview, type ToWebview } from "../../shared/messages";
import { parseSlash } from "../../shared/slash";
import { initialState, reduce, type AttachmentChip, type ChatAction, type ChatState } from "../../shared/state";
import type { AgentClient } from "../client";
import { selectionChips } from "../codeActions";
import { errorCode, errorText } from "../errors";
import { fact } from "../factLog";
import { attachmentLabel } from "../format";
import * as P from "../protocol";
import { CHANGE_SCHEME, EditReviews, reviewCapabilityFeature, reviewMode, reviewsBeforeApplyEverywhere } from "./review";
import { SamplingConsent } from "./sampling";
import { TurnTracker } from "./turns";

export interface ChatSurface {
  post(message: ToWebview): void;
  readonly visible: boolean;
}

interface Pending<T> {
  resolve: (value: T) => void;
  /** For approvals: the session whose turn asks (null for direct calls). */
  sessionId?: string | null;
  /** For workspace trust: the folder it is about. */
  folder?: string;
}

export class ChatController implements vscode.Disposable {
  private state: ChatState = initialState();
  private readonly surfaces = new Set<ChatSurface>();
  private attachments: P.Attachment[] = [];
  private promptCts: vscode.CancellationTokenSource | null = null;
  private readonly approvals = new Map<string, Pending<P.ApproveResult>>();
  private readonly trusts = new Map<string, Pending<P.TrustServerResult>>();
  private readonly workspaceTrusts = new Map<string, Pending<P.TrustWorkspaceResult>>();
  private readonly elicits = new Map<string, Pending<P.ElicitResult>>();
  /** MCP sampling consent cards (mcp/sample). */
  private readonly samplings = new SamplingConsent((a) => this.dispatch(a), () => this.showChat());
  /** Review of the agent's file changes (agent/reviewEdit, the file cards). */
  readonly reviews = new EditReviews({
    dispatch: (a) => this.dispatch(a),
    show: () => this.showChat(),
    state: () => this.state,
    request: (method, params) => this.agent.request(method, params),
    mode: reviewMode,
  });
  private counter = 0;
  /** A prompt to focus once a chat surface (re)loads: revealing the chat may create it. */
  private focusOnReady: string | null = null;
  /** Running turns: ours (agent/prompt) and those code actions started (Stop needs to know). */
  private readonly turns = new TurnTracker();
  private lastEditor: vscode.TextEditor | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly busyEmitter = new vscode.EventEmitter<boolean>();
  readonly onDidChangeBusy = this.busyEmitter.event;
  /** Opens (reveals) a chat surface; set by the views module. */
  reveal: (preserveFocus: boolean) => void = () => undefined;

  constructor(private readonly agent: AgentClient) {
    this.lastEditor = vscode.window.activeTextEditor;
    this.disposables.push(
      this.busyEmitter,
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e) this.lastEditor = e;
      }),
      vscode.workspace.registerTextDocumentContentProvider(CHANGE_SCHEME, this.reviews),
      agent.onDidChangeState(({ state, error }) => {
        this.dispatch({ type: "server", state, error: error ?? null });
        if (state === "running") {
          void this.refreshPrompts();
          void this.listSessions();
        } else if (state !== "starting") {
          this.failPending();
        }
      }),
    );
    agent.addBinder((client) => this.bind(client));
  }

  get snapshot(): ChatState {
    return this.state;
  }

  get busy(): boolean {
    return this.state.busy;
  }

  /** Registers the server -> client requests and notifications on a new client. */
  private bind(client: LanguageClient): vscode.Disposable[] {
    // (test doubles of the client may lack registerFeature)
    (client as Partial<Pick<LanguageClient, "registerFeature">>).registerFeature?.(reviewCapabilityFeature());
    return [
      client.onRequest(P.REVIEW_EDIT, (params: P.ReviewEditParams, token: vscode.CancellationToken) =>
        this.reviews.request(params, token),
      ),
      client.onNotification(P.EVENT, (params: P.EventParams) => this.onEvent(params)),
      client.onRequest(P.APPROVE, (params: P.ApproveParams, token: vscode.CancellationToken) =>
        this.onApprove(params, token),
      ),
      client.onRequest(P.TRUST_SERVER, (params: P.TrustServerParams, token: vscode.CancellationToken) =>
        this.onTrust(params, token),
      ),
      client.onRequest(P.TRUST_WORKSPACE, (params: P.TrustWorkspaceParams, token: vscode.CancellationToken) =>
        this.onTrustWorkspace(params, token),
      ),
      client.onRequest(P.ELICIT, (params: P.ElicitParams, token: vscode.CancellationToken) =>
        this.onElicit(params, token),
      ),
      client.onRequest(P.SAMPLE, (params: P.SampleParams, token: vscode.CancellationToken) =>
        this.samplings.request(params, token),
      ),
    ];
  }

  // surfaces ----------------------------------------------------------------------------------
  attach(surface: ChatSurface): vscode.Disposable {
    this.surfaces.add(surface);
    return new vscode.Disposable(() => this.surfaces.delete(surface));
  }

  private dispatch(action: ChatAction): void {
    const wasBusy = this.state.busy;
    this.state = reduce(this.state, action);
    for (const s of this.surfaces) s.post({ type: "action", action });
    if (wasBusy !== this.state.busy) this.busyEmitter.fire(this.state.busy);
  }

  private anyVisible(): boolean {
    for (const s of this.surfaces) if (s.visible) return true;
    return false;
  }

  private showChat(): void {
    if (!this.anyVisible()) this.reveal(true);
  }

  setInput(text: string): void {
    this.reveal(false);
    for (const s of this.surfaces) s.post({ type: "setInput", text, focus: true });
  }

  async handle(surface: ChatSurface, raw: unknown): Promise<void> {
    const msg = parseFromWebview(raw);
    if (!msg) return;
    try {
      await this.handleMessage(surface, msg);
    } catch (e) {
      const text = errorText(e);
      fact(`error ${text}`);
      this.agent.output.error(`chat: ${text}`);
      this.dispatch({ type: "notice", role: "error", text });
    }
  }

  private async handleMessage(surface: ChatSurface, msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case "ready":
        surface.post({ type: "state", state: this.state });
        if (this.focusOnReady !== null && [...this.workspaceTrusts.keys()].includes(this.focusOnReady)) {
          surface.post({ type: "focusItem", id: this.focusOnReady });
        }
        this.focusOnReady = null;
        return;
      case "send":
        await this.send(msg.text);
        return;
      case "stop":
        this.stop();
        return;
      case "newSession":
        await this.newSession();
        return;
      case "listSessions":
        await this.listSessions();
        return;
      case "resumeSession":
        await this.resume(msg.sessionId);
        return;
      case "approve":
        this.answerApproval(msg.requestId, msg.answer);
        return;
      case "trust":
        this.answerTrust(msg.id, msg.answer === "trust");
        return;
      case "workspaceTrust":
        this.answerWorkspaceTrust(msg.id, msg.answer === "trust");
        return;
      case "trustWorkspaceCommand":
        await vscode.commands.executeCommand("agentLs.trustWorkspace");
        return;
      case "elicit":
        this.answerElicit(msg.id, msg.action, msg.content);
        return;
      case "sample":
        this.samplings.answer(msg.id, msg.answer);
        return;
      case "attach":
        await this.attachContext(msg.kind);
        return;
      case "removeAttachment":
        this.attachments.splice(msg.index, 1);
        this.publishAttachments();
        return;
      case "copy":
        await vscode.env.clipboard.writeText(msg.text);
        void vscode.window.setStatusBarMessage("Copied to the clipboard", 2000);
        return;
      case "insert":
        await this.insertAtCursor(msg.text);
        return;
      case "listPrompts":
        await this.refreshPrompts();
        return;
      case "fileChange":
        await this.reviews.act(msg.changeId, msg.action, msg.all === true, msg.reason);
        return;
      case "openOutput":
        await this.openOutput(msg.sessionId, msg.handle);
        return;
    }
  }

  // prompting ----------------------------------------------------------------------------------
  /** Sends a prompt (or runs a `/server:prompt` slash command) in the current session. */
  async send(text: string): Promise<void> {
    const trimmed = text.trim();
    if (!trimmed) return;
    if (this.state.busy || this.promptCts) {
      this.dispatch({ type: "notice", text: "The agent is still answering: stop it or wait." });
      return;
    }
    let promptText = trimmed;
    const slash = parseSlash(trimmed, this.state.prompts);
    if (slash.kind === "error") {
      this.dispatch({ type: "notice", role: "error", text: slash.message });
      return;
    }
    if (slash.kind === "prompt") {
      const got = await this.agent.request<P.PromptsGetResult>(P.MCP_PROMPTS_GET, {
        server: slash.prompt.server,
        name: slash.prompt.name,
        arguments: slash.arguments,
      } satisfies P.GetPromptParams);
      promptText = got.messages.map((m) => m.text).join("\n\n");
      if (!promptText.trim()) {
        this.dispatch({ type: "notice", role: "error", text: `the prompt ${slash.prompt.name} returned no text` });
        return;
      }
    }
    const attachments = this.attachments.splice(0);
    const labels = this.state.attachments.map((a) => a.label);
    this.publishAttachments();
    await this.runPrompt(trimmed, promptText, attachments, labels);
  }

  private async runPrompt(shown: string, text: string, attachments: P.Attachment[], labels: string[]): Promise<void> {
    this.dispatch({ type: "userPrompt", text: shown, attachments: labels });
    const cts = new vscode.CancellationTokenSource();
    this.promptCts = cts;
    const params: P.PromptParams = { text, sessionId: this.state.sessionId, attachments };
    // A slash command is shown (and, after a resume, shown again) as typed, not as its expansion.
    if (shown !== text) params.displayText = shown;
    this.turns.promptStarted(params.sessionId ?? null);
    try {
      const result = await this.agent.request<P.PromptResult>(P.PROMPT, params, cts.token);
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
      for (const [id, p] of [...this.approvals]) {
        if (p.sessionId && p.sessionId === this.state.sessionId) this.withdrawApproval(id);
      }
      if (this.promptCts === cts) {
        this.promptCts = null;
        this.turns.promptEnded();
      }
      cts.dispose();
      void this.listSessions();
    }
  }

  /**
   * Stops the running turn. Our own prompt: the language client sends `$/cancelRequest`. A turn
   * a code action started runs in the background on the server: `agent/cancel {sessionId}`.
   */
  stop(): void {
    const action = this.turns.stopAction(this.state.sessionId, this.state.busy);
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
      const r = await this.agent.request<P.CancelResult>(P.CANCEL, { sessionId } satisfies P.CancelParams);
      if (r.cancelled) {
        this.dispatch({ type: "notice", text: "Stopped." });
      } else {
        // The server runs no turn there (it had ended; its turn_finished got lost): believe it.
        this.turns.ended(sessionId);
        if (this.state.busy && !this.promptCts) this.dispatch({ type: "busy", busy: false });
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

  private onEvent(params: P.EventParams): void {
    if (!params || typeof params !== "object" || !params.event || typeof params.event.type !== "string") return;
    fact(`event ${params.event.type}`);
    this.turns.onEvent(params.sessionId, params.event);
    this.dispatch({ type: "event", sessionId: params.sessionId, event: params.event });
  }

  /** "Open full output": a tool output longer than a page, from the server, in an untitled editor. */
  async openOutput(sessionId: string, handle: string): Promise<void> {
    const r = await this.agent.request<P.ToolOutputResult>(P.TOOL_OUTPUT, { sessionId, handle } satisfies P.ToolOutputParams);
    let content = r.text;
    if (r.totalChars > r.text.length) {
      content += `\n\n[agent-ls kept the first ${r.text.length} of ${r.totalChars} characters of this output]\n`;
    }
    const doc = await vscode.workspace.openTextDocument({ content, language: "plaintext" });
    await vscode.window.showTextDocument(doc, { preview: true });
    fact(`full-output ${r.handle} ${r.text.length}`);
  }

  // sessions -----------------------------------------------------------------------------------
  async newSession(): Promise<void> {
    if (this.promptCts) this.promptCts.cancel();
    const r = await this.agent.request<P.NewSessionResult>(P.SESSIONS_NEW, {} satisfies P.NewSessionParams);
    this.dispatch({ type: "reset", sessionId: r.sessionId });
    await this.listSessions();
  }

  async listSessions(): Promise<P.SessionInfo[]> {
    if (!this.agent.running) return this.state.sessions;
    try {
      const r = await this.agent.request<P.SessionsListResult>(P.SESSIONS_LIST, {});
      this.dispatch({ type: "sessions", sessions: r.sessions });
      return r.sessions;
    } catch (e) {
      this.agent.output.warn(`listing sessions: ${errorText(e)}`);
      return this.state.sessions;
    }
  }

  async resume(sessionId: string): Promise<void> {
    if (this.promptCts) this.promptCts.cancel();
    const r = await this.agent.request<P.SessionsResumeResult>(P.SESSIONS_RESUME, { sessionId } satisfies P.SessionParams);
    this.dispatch({ type: "history", sessionId: r.sessionId, messages: r.messages, changes: r.changes ?? [] });
  }

  // approvals, trust, elicitation ----------------------------------------------------------------
  /**
   * `agent/approve`: shown in the chat until the user answers, or until the server withdraws
   * the question (`$/cancelRequest` cancels `token`: the turn was stopped), which closes it.
   */
  onApprove(params: P.ApproveParams, token: vscode.CancellationToken): Promise<P.ApproveResult> {
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
      this.showChat();
      token.onCancellationRequested(() => this.withdrawApproval(requestId));
    });
  }

  answerApproval(requestId: string, answer: P.ApprovalAnswer, log = true): void {
    const pending = this.approvals.get(requestId);
    if (!pending) return;
    this.approvals.delete(requestId);
    if (log) fact(`approval ${answer}`);
    this.dispatch({ type: "approvalAnswered", requestId, answer });
    pending.resolve({ answer });
  }

  /** Nobody waits for this answer any more: close the question (the server reads it as a deny). */
  private withdrawApproval(requestId: string): void {
    const pending = this.approvals.get(requestId);
    if (!pending) return;
    this.approvals.delete(requestId);
    fact("approval withdrawn");
    this.dispatch({ type: "approvalAnswered", requestId, answer: "deny", withdrawn: true });
    pending.resolve({ answer: "deny" });
  }

  onTrust(params: P.TrustServerParams, token: vscode.CancellationToken): Promise<P.TrustServerResult> {
    const id = `trust-${++this.counter}`;
    return new Promise((resolve) => {
      this.trusts.set(id, { resolve });
      this.dispatch({ type: "trustRequest", id, params });
      this.showChat();
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

  /**
   * `agent/trustWorkspace`: a card listing everything the folder asks for, until the user
   * answers or the server withdraws it (the settings changed under it).
   */
  onTrustWorkspace(params: P.TrustWorkspaceParams, token: vscode.CancellationToken): Promise<P.TrustWorkspaceResult> {
    const id = `workspace-trust-${++this.counter}`;
    return new Promise((resolve) => {
      this.workspaceTrusts.set(id, { resolve, folder: String(params.folder) });
      this.dispatch({ type: "workspaceTrustRequest", id, params });
      this.showChat();
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

  /**
   * Shows the pending workspace trust card (of `folder`, when given), if there is one (true),
   * and moves the focus to it (a chat that is only now created focuses it once loaded).
   */
  revealWorkspaceTrust(folder?: string): boolean {
    const id = [...this.workspaceTrusts.entries()].filter(([, p]) => folder === undefined || p.folder === folder).map(([k]) => k).pop();
    if (id === undefined) return false;
    // A hidden chat drops messages and loads again when shown: then it asks for the focus on "ready".
    this.focusOnReady = this.anyVisible() ? null : id;
    this.reveal(false);
    for (const s of this.surfaces) s.post({ type: "focusItem", id });
    return true;
  }

  /** The trust state of the workspace folders (the chat's banner while one is restricted). */
  setWorkspaces(workspaces: readonly P.WorkspaceStatusPayload[]): void {
    this.dispatch({ type: "workspaces", workspaces: [...workspaces] });
  }

  onElicit(params: P.ElicitParams, token: vscode.CancellationToken): Promise<P.ElicitResult> {
    const id = `elicit-${++this.counter}`;
    return new Promise((resolve) => {
      this.elicits.set(id, { resolve });
      this.dispatch({ type: "elicitRequest", id, params });
      this.showChat();
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
  private failPending(): void {
    this.samplings.withdrawAll();
    this.reviews.withdrawAll();
    for (const id of [...this.approvals.keys()]) this.withdrawApproval(id);
    for (const id of [...this.trusts.keys()]) this.answerTrust(id, null, true);
    for (const id of [...this.workspaceTrusts.keys()]) this.answerWorkspaceTrust(id, null, true);
    for (const id of [...this.elicits.keys()]) this.answerElicit(id, "cancel", undefined, true);
    this.turns.reset();
    if (this.state.busy && !this.promptCts) this.dispatch({ type: "busy", busy: false });
  }

  // attachments -------------------------------------------------------------------------------------
  private editor(): vscode.TextEditor | undefined {
    const active = vscode.window.activeTextEditor;
    if (active) return active;
    if (this.lastEditor && vscode.window.visibleTextEditors.includes(this.lastEditor)) return this.lastEditor;
    return vscode.window.visibleTextEditors[0] ?? this.lastEditor;
  }

  private publishAttachments(): void {
    const chips: AttachmentChip[] = this.attachments.map((a) => ({ kind: a.kind, label: attachmentLabel(a) }));
    this.dispatch({ type: "attachments", attachments: chips });
  }

  addAttachment(a: P.Attachment): void {
    this.attachments.push(a);
    this.publishAttachments();
  }

  async attachContext(kind: "selection" | "file" | "resource"): Promise<void> {
    if (kind === "selection") {
      const ed = this.editor();
      if (!ed || ed.selection.isEmpty) {
        void vscode.window.showInformationMessage("Select some text in an editor first.");
        return;
      }
      this.addAttachment(selectionAttachment(ed));
    } else if (kind === "file") {
      const ed = this.editor();
      let uri = ed?.document.uri;
      let languageId = ed?.document.languageId;
      let text: string | null = ed ? ed.document.getText() : null;
      if (!uri || uri.scheme !== "file") {
        const picked = await vscode.window.showOpenDialog({ canSelectMany: false, openLabel: "Attach" });
        if (!picked || picked.length === 0) return;
        uri = picked[0];
        const doc = await vscode.workspace.openTextDocument(uri);
        languageId = doc.languageId;
        text = doc.getText();
      }
      this.addAttachment({ kind: "file", uri: uri.toString(), text, languageId: languageId ?? null });
    } else {
      const r = await this.agent.request<P.ResourcesListResult>(P.MCP_RESOURCES_LIST, {} satisfies P.ResourcesListParams);
      const templates = r.templates ?? [];
      if (r.resources.length === 0 && templates.length === 0) {
        void vscode.window.showInformationMessage("No MCP server offers resources.");
        return;
      }
      type Item = vscode.QuickPickItem & { server: string; uri?: string; template?: string };
      const items: Item[] = [
        ...r.resources.map((res) => ({
          label: res.name || res.uri,
          description: res.server,
          detail: res.description || res.uri,
          server: res.server,
          uri: res.uri,
        })),
        ...templates.map((t) => ({
          label: t.name || t.uriTemplate,
          description: `${t.server} · template`,
          detail: t.description || t.uriTemplate,
          server: t.server,
          template: t.uriTemplate,
        })),
      ];
      const pick = await vscode.window.showQuickPick(items, { placeHolder: "Attach an MCP resource" });
      if (!pick) return;
      let uri = pick.uri;
      if (pick.template !== undefined) {
        // A resource template: the user fills in its {variables}.
        uri = await vscode.window.showInputBox({
          title: `Attach ${pick.label}`,
          prompt: `Fill in the template of ${pick.server} (replace each {…} part)`,
          value: pick.template,
          validateInput: (v) => (/\{[^}]*\}/.test(v) ? "Replace every {…} part of the template" : null),
        });
        if (!uri) return;
      }
      if (!uri) return;
      this.addAttachment({ kind: "resource", uri, server: pick.server, text: null });
    }
  }

  private async insertAtCursor(text: string): Promise<void> {
    const ed = this.editor();
    if (!ed) {
      void vscode.window.showInformationMessage("Open a file to insert the code into.");
      return;
    }
    const selections = ed.selections;
    const shown = await vscode.window.showTextDocument(ed.document, { viewColumn: ed.viewColumn, preserveFocus: false });
    const ok = await shown.edit((b) => {
      for (const sel of selections) b.replace(sel, text);
    });
    if (!ok) void vscode.window.showWarningMessage("The editor did not accept the insertion.");
  }

  // prompts (slash commands) -------------------------------------------------------------------------
  async refreshPrompts(): Promise<void> {
    if (!this.agent.running) return;
    try {
      const r = await this.agent.request<P.PromptsListResult>(P.MCP_PROMPTS_LIST, {});
      this.dispatch({ type: "prompts", prompts: r.prompts });
    } catch (e) {
      this.agent.output.warn(`listing MCP prompts: ${errorText(e)}`);
    }
  }

  private promptsTimer: ReturnType<typeof setTimeout> | undefined;

  /** Re-lists MCP prompts shortly after the servers changed (coalesced). */
  refreshPromptsSoon(): void {
    if (this.promptsTimer) clearTimeout(this.promptsTimer);
    this.promptsTimer = setTimeout(() => {
      this.promptsTimer = undefined;
      void this.refreshPrompts();
    }, 300);
  }

  // code actions ------------------------------------------------------------------------------------
  /** Shows what a server code action did (its command's result) in the chat. */
  showCodeActionOutcome(
    title: string,
    command: string,
    result: unknown,
    toolCardsBefore: number,
    noticeId: string | null = null,
    args: readonly unknown[] = [],
  ): void {
    if (!result || typeof result !== "object") return;
    const r = result as Partial<P.ToolResultPayload> & Partial<P.AskResult> & { messages?: P.PromptMessage[] };
    if (command === P.CMD_RUN_TOOL_ACTION && typeof r.isError === "boolean") {
      // Without `apply` the call streamed as events (its card is already there); with `apply`
      // it did not: show its result as a card.
      if (this.toolCards() === toolCardsBefore) {
        this.dispatch({ type: "toolResult", title: r.title || title, server: null, result: r as P.ToolResultPayload });
      }
      if (r.applied === true) this.dispatch({ type: "notice", text: `${r.title || title}: applied to the editor` });
      if (r.applied === false) this.dispatch({ type: "notice", role: "error", text: `${r.title || title}: the editor did not apply the edit` });
    } else if (r.started === true) {
      // agent-ls.ask / agent-ls.runMcpPrompt: the turn streams as agent/event notifications.
      // Its user message goes right after the "Code action" notice, as a resumed session shows it.
      if (typeof r.text === "string" && r.text.trim()) {
        const chips = command === P.CMD_ASK ? selectionChips(args) : [];
        this.dispatch({ type: "codeActionPrompt", afterId: noticeId, text: r.text, attachments: chips });
      }
    } else if (command === P.CMD_RUN_MCP_PROMPT && Array.isArray(r.messages)) {
      // Older servers returned the prompt's messages instead of starting a turn.
      const text = r.messages.map((m) => m.text).join("\n\n");
      if (text.trim()) void this.runPrompt(title, text, [], []);
    }
  }

  /** How many tool cards the chat shows (to tell whether a command's call streamed). */
  toolCards(): number {
    return this.state.items.filter((i) => i.kind === "tool").length;
  }

  /**
   * Arguments for a server command run from a code action: agent-ls.ask continues the chat's
   * current session (so the answer lands in the conversation the user sees) when it is idle.
   */
  withSession(command: string, args: unknown[]): unknown[] {
    if ((command !== P.CMD_ASK && command !== P.CMD_RUN_MCP_PROMPT) || !this.state.sessionId || this.state.busy || this.promptCts) return args;
    const first = args[0];
    if (!first || typeof first !== "object" || Array.isArray(first) || "sessionId" in first) return args;
    return [{ ...(first as Record<string, unknown>), sessionId: this.state.sessionId }, ...args.slice(1)];
  }

  /** Notes a code action in the chat; returns the notice's item id. */
  noteCodeAction(title: string): string | null {
    this.dispatch({ type: "notice", text: `Code action: ${title}` });
    this.showChat();
    return this.state.items[this.state.items.length - 1]?.id ?? null;
  }

  notice(text: string, role: "notice" | "error" = "notice"): void {
    this.dispatch({ type: "notice", text, role });
  }

  dispose(): void {
    if (this.promptsTimer) clearTimeout(this.promptsTimer);
    this.promptCts?.cancel();
    this.failPending();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

export function selectionAttachment(ed: vscode.TextEditor): P.Attachment {
  const sel = ed.selection;
  return {
    kind: "selection",
    uri: ed.document.uri.toString(),
    text: ed.document.getText(sel),
    range: {
      start: { line: sel.start.line, character: sel.start.character },
      end: { line: sel.end.line, character: sel.end.character },
    },
    languageId: ed.document.languageId,
  };
}
