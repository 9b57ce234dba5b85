/**
 * The chat on the extension host side: owns the chat state (the shared reducer), talks to the
 * language server (prompt, sessions, approvals, trust, elicitation) and keeps every open chat
 * webview (the view and the editor panel) in step by broadcasting reducer actions.
 * Its parts: ./prompting (turns and Stop), ./questions (approvals, trust, elicitation),
 * ./sampling (MCP sampling consent), ./review (file change reviews), ./attachments (the editor's
 * context attached to a prompt), ./slashPrompts (MCP prompts as slash commands), ./jobs (background
 * jobs: the Running strip), ./apps (MCP Apps: their frames and their requests).
 */
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { parseFromWebview, type FromWebview, type ToWebview } from "../../shared/messages";
import { initialState, reduce, type ChatAction, type ChatState } from "../../shared/state";
import type { AgentClient } from "../client";
import { argsWithSession, codeActionOutcome } from "../codeActions";
import { errorText } from "../errors";
import { fact } from "../factLog";
import * as P from "../protocol";
import type { AppFrames } from "./appFrames";
import { appsCapabilityFeature, ChatApps } from "./apps";
import { ChatAttachments } from "./attachments";
import { ChatJobs } from "./jobs";
import { Prompting } from "./prompting";
import { ChatQuestions } from "./questions";
import { CHANGE_SCHEME, EditReviews, reviewCapabilityFeature, reviewMode } from "./review";
import { ChatRewind } from "./rewind";
import { SamplingConsent } from "./sampling";
import { SandboxGrantsUi } from "./sandboxGrants";
import { SlashPrompts } from "./slashPrompts";

export interface ChatSurface {
  post(message: ToWebview): void;
  readonly visible: boolean;
}

export class ChatController implements vscode.Disposable {
  private state: ChatState = initialState();
  private readonly surfaces = new Set<ChatSurface>();
  /** The context attached to the next prompt; code inserted at the cursor. */
  private readonly attachments = new ChatAttachments(
    (a) => this.dispatch(a),
    (method, params) => this.agent.request(method, params),
  );
  /** MCP prompts: the slash commands' list and their expansion. */
  private readonly slashPrompts: SlashPrompts;
  /** Approvals, MCP server trust, workspace trust, elicitation. */
  private readonly questions = new ChatQuestions((a) => this.dispatch(a), () => this.showChat());
  /** The OS sandbox's workspace grants (a tool card's "Allow for this workspace", the command). */
  readonly sandboxGrants = new SandboxGrantsUi({
    dispatch: (a) => this.dispatch(a),
    request: (method, params) => this.agent.request(method, params),
    warn: (m) => this.agent.output.warn(m),
  });
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
  /** Our prompts and the turns code actions started. */
  private readonly prompting: Prompting = new Prompting({
    appFrame: (sessionId, app) => this.apps.wire(sessionId, app),
    dispatch: (a) => this.dispatch(a),
    state: () => this.state,
    request: (method, params, token) => this.agent.request(method, params, token),
    turnOver: (sessionId) => this.questions.withdrawApprovalsOf(sessionId),
    listSessions: () => {
      void this.listSessions();
      void this.refreshModels(); // a first prompt made the session
    },
  });
  /** "Rewind to here", "Agent: Rewind" and "Agent: Redo Rewind" (./rewind, issue 40). */
  readonly rewinds = new ChatRewind({
    request: (method, params) => this.agent.request(method, params),
    state: () => this.state,
    notice: (text, role) => this.notice(text, role),
    reload: async (sessionId) => {
      await this.resume(sessionId);
      await this.listSessions();
    },
    revertEdit: (changeId) => this.reviews.act(changeId, "revert"),
    roots: () => (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
  });
  /** Background jobs: the Running strip (agent/jobs, agent/jobsChanged, agent/stopJob). */
  private readonly jobs = new ChatJobs({
    dispatch: (a) => this.dispatch(a),
    state: () => this.state,
    request: (method, params) => this.agent.request(method, params),
    warn: (text) => this.agent.output.warn(text),
  });
  /** MCP Apps: their frames, their requests, a resumed conversation's apps (./apps). */
  private readonly apps: ChatApps = new ChatApps({
    dispatch: (a) => this.dispatch(a),
    state: () => this.state,
    request: (method, params) => this.agent.request(method, params),
    busy: () => this.state.busy || this.prompting.running,
    prompt: (shown, text) => this.prompting.run(shown, text, [], []),
  });
  private modelsTimer: ReturnType<typeof setTimeout> | undefined;
  /** A prompt to focus once a chat surface (re)loads: revealing the chat may create it. */
  private focusOnReady: string | null = null;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly busyEmitter = new vscode.EventEmitter<boolean>();
  readonly onDidChangeBusy = this.busyEmitter.event;
  /** Opens (reveals) a chat surface; set by the views module. */
  reveal: (preserveFocus: boolean) => void = () => undefined;

  constructor(private readonly agent: AgentClient) {
    this.slashPrompts = new SlashPrompts(agent, (a) => this.dispatch(a));
    this.disposables.push(
      this.apps,
      this.jobs,
      this.busyEmitter,
      this.attachments,
      vscode.workspace.registerTextDocumentContentProvider(CHANGE_SCHEME, this.reviews),
      agent.onDidChangeState(({ state, error }) => {
        this.dispatch({ type: "server", state, error: error ?? null });
        if (state === "running") {
          void this.sandboxGrants.refresh();
          void this.refreshPrompts();
          void this.listSessions();
          void this.refreshModels();
        } else if (state !== "starting") {
          this.failPending();
        }
      }),
    );
    agent.addBinder((client) => this.bind(client));
  }

  /** Where the MCP Apps' documents are served from (./appFrames). */
  get appFrames(): AppFrames {
    return this.apps.frames;
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
    (client as Partial<Pick<LanguageClient, "registerFeature">>).registerFeature?.(appsCapabilityFeature());
    return [
      client.onRequest(P.REVIEW_EDIT, (params: P.ReviewEditParams, token: vscode.CancellationToken) =>
        this.reviews.request(params, token),
      ),
      client.onNotification(P.EVENT, (params: P.EventParams) => this.prompting.event(params)),
      this.jobs.bind(client),
      client.onRequest(P.APPROVE, (params: P.ApproveParams, token: vscode.CancellationToken) =>
        this.questions.approve(params, token),
      ),
      client.onRequest(P.TRUST_SERVER, (params: P.TrustServerParams, token: vscode.CancellationToken) =>
        this.questions.trust(params, token),
      ),
      client.onRequest(P.TRUST_WORKSPACE, (params: P.TrustWorkspaceParams, token: vscode.CancellationToken) =>
        this.questions.trustWorkspace(params, token),
      ),
      client.onRequest(P.ELICIT, (params: P.ElicitParams, token: vscode.CancellationToken) =>
        this.questions.elicit(params, token),
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
    const wasSession = this.state.sessionId;
    this.state = reduce(this.state, action);
    // another conversation shown: the apps of the others are forgotten (their frames torn down)
    if (wasSession !== this.state.sessionId) this.apps.sessionShown(this.state.sessionId);
    for (const s of this.surfaces) s.post({ type: "action", action });
    if (wasBusy !== this.state.busy) this.busyEmitter.fire(this.state.busy);
    if (action.type !== "jobs") this.jobs.sync(); // the session's jobs follow the session shown
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
        if (this.focusOnReady !== null && this.questions.awaitsWorkspaceTrust(this.focusOnReady)) {
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
      case "setModel":
        await this.setModel(msg.model);
        return;
      case "approve":
        this.questions.answerApproval(msg.requestId, msg.answer, true, msg.scope);
        return;
      case "trust":
        this.questions.answerTrust(msg.id, msg.answer === "trust");
        return;
      case "workspaceTrust":
        this.questions.answerWorkspaceTrust(msg.id, msg.answer === "trust");
        return;
      case "trustWorkspaceCommand":
        await vscode.commands.executeCommand("agentLs.trustWorkspace");
        return;
      case "elicit":
        this.questions.answerElicit(msg.id, msg.action, msg.content);
        return;
      case "sample":
        this.samplings.answer(msg.id, msg.answer);
        return;
      case "attach":
        await this.attachments.attachContext(msg.kind);
        return;
      case "removeAttachment":
        this.attachments.remove(msg.index);
        return;
      case "copy":
        await vscode.env.clipboard.writeText(msg.text);
        void vscode.window.setStatusBarMessage("Copied to the clipboard", 2000);
        return;
      case "insert":
        await this.attachments.insertAtCursor(msg.text);
        return;
      case "listPrompts":
        await this.refreshPrompts();
        return;
      case "fileChange":
        await this.reviews.act(msg.changeId, msg.action, msg.all === true, msg.reason);
        return;
      case "stopJob":
        await this.jobs.stop(msg.jobId);
        return;
      case "openOutput":
        await this.openOutput(msg.sessionId, msg.handle);
        return;
      case "rewindTo":
        await this.rewinds.fromMessage(msg.itemId);
        return;
      case "sandboxGrant":
        await this.sandboxGrants.set(msg.kind, msg.value, msg.granted);
        return;
      case "appCall":
      case "appMessage":
      case "appContext":
      case "appOpenLink":
        await this.apps.request(surface, msg);
        return;
    }
  }

  // prompting ----------------------------------------------------------------------------------
  /** Sends a prompt (or runs a `/server:prompt` slash command) in the current session. */
  async send(text: string): Promise<void> {
    const trimmed = text.trim();
    if (!trimmed) return;
    if (this.state.busy || this.prompting.running) {
      this.dispatch({ type: "notice", text: "The agent is still answering: stop it or wait." });
      return;
    }
    const promptText = await this.slashPrompts.expand(trimmed, this.state.prompts);
    if (promptText === null) return;
    const labels = this.state.attachments.map((a) => a.label);
    const attachments = this.attachments.take();
    await this.prompting.run(trimmed, promptText, attachments, labels);
  }

  /**
   * Stops the running turn. Our own prompt: the language client sends `$/cancelRequest`. A turn
   * a code action started runs in the background on the server: `agent/cancel {sessionId}`.
   */
  stop(): void {
    this.prompting.stop();
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
    this.prompting.cancel();
    const r = await this.agent.request<P.NewSessionResult>(P.SESSIONS_NEW, {} satisfies P.NewSessionParams);
    this.dispatch({ type: "reset", sessionId: r.sessionId });
    await this.listSessions();
    await this.refreshModels();
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
    this.prompting.cancel();
    const r = await this.agent.request<P.SessionsResumeResult>(P.SESSIONS_RESUME, { sessionId } satisfies P.SessionParams);
    this.dispatch({ type: "history", sessionId: r.sessionId, messages: r.messages, changes: r.changes ?? [], plan: r.plan ?? [] });
    await Promise.all([this.refreshModels(), this.apps.resume(r.sessionId, r.messages)]);
  }

  /** agent/sessions/rename: the title the server kept shows in the session list. */
  async renameSession(sessionId: string, title: string): Promise<string | null> {
    const r = await this.agent.request<P.RenameResult>(P.SESSIONS_RENAME, { sessionId, title } satisfies P.RenameParams);
    await this.listSessions();
    return r.title;
  }

  /** agent/sessions/delete; the chat showing that session starts a new one. */
  async deleteSession(sessionId: string): Promise<boolean> {
    const r = await this.agent.request<P.DeleteResult>(P.SESSIONS_DELETE, { sessionId } satisfies P.SessionParams);
    if (this.state.sessionId === sessionId) this.dispatch({ type: "reset", sessionId: null });
    await this.listSessions();
    return r.deleted;
  }

  // the model picker ------------------------------------------------------------------------------
  /** The model choices and the current session's model (agent/models), for the chat's header. */
  async refreshModels(): Promise<void> {
    if (!this.agent.running) return;
    const sessionId = this.state.sessionId;
    try {
      const r = await this.agent.request<P.ModelsResult>(P.MODELS, { sessionId } satisfies P.ModelsParams);
      if (this.state.sessionId === sessionId && isModels(r)) this.dispatch({ type: "models", models: r });
    } catch (e) {
      this.agent.output.warn(`listing models: ${errorText(e)}`);
    }
  }

  /** Asks again shortly after the settings may have changed (their reload, a trust decision): coalesced. */
  refreshModelsSoon(): void {
    if (this.modelsTimer) clearTimeout(this.modelsTimer);
    this.modelsTimer = setTimeout(() => {
      this.modelsTimer = undefined;
      void this.refreshModels();
    }, 300);
  }

  /**
   * The picker's choice: agent/setModel for the chat's session (a chat with no session yet gets
   * one first, so the choice holds for its first message). An error shows in the chat and the
   * header shows the model that still applies.
   */
  async setModel(model: string): Promise<void> {
    let sessionId = this.state.sessionId;
    if (sessionId === null) {
      sessionId = (await this.agent.request<P.NewSessionResult>(P.SESSIONS_NEW, {} satisfies P.NewSessionParams)).sessionId;
    }
    try {
      const r = await this.agent.request<P.ModelsResult>(P.SET_MODEL, { sessionId, model } satisfies P.SetModelParams);
      if (isModels(r)) this.dispatch({ type: "models", models: r });
      fact(`model ${model}`);
    } catch (e) {
      await this.refreshModels(); // the select goes back to the model in effect
      throw e;
    }
  }

  // approvals, trust, elicitation (./questions) ------------------------------------------------------
  answerApproval(requestId: string, answer: P.ApprovalAnswer, log = true, scope?: string): void {
    this.questions.answerApproval(requestId, answer, log, scope);
  }

  answerWorkspaceTrust(id: string, trusted: boolean | null, withdrawn = false): void {
    this.questions.answerWorkspaceTrust(id, trusted, withdrawn);
  }

  /**
   * Shows the pending workspace trust card (of `folder`, when given), if there is one (true),
   * and moves the focus to it (a chat that is only now created focuses it once loaded).
   */
  revealWorkspaceTrust(folder?: string): boolean {
    const id = this.questions.openWorkspaceTrust(folder);
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

  /** The server went away: answer everything it was waiting for (nobody will read it). */
  private failPending(): void {
    this.samplings.withdrawAll();
    this.reviews.withdrawAll();
    this.questions.withdrawAll();
    this.prompting.reset();
  }

  // attachments (./attachments) ------------------------------------------------------------------------
  addAttachment(a: P.Attachment): void {
    this.attachments.add(a);
  }

  // prompts (slash commands: ./slashPrompts) --------------------------------------------------------
  async refreshPrompts(): Promise<void> {
    await this.slashPrompts.refresh();
  }

  /** Re-lists MCP prompts shortly after the servers changed (coalesced). */
  refreshPromptsSoon(): void {
    this.slashPrompts.refreshSoon();
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
    const streamed = this.toolCards() !== toolCardsBefore;
    const outcome = codeActionOutcome(title, command, result, streamed, noticeId, args);
    for (const action of outcome.actions) this.dispatch(action);
    if (outcome.prompt !== null) void this.prompting.run(title, outcome.prompt, [], []);
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
    const idle = !this.state.busy && !this.prompting.running;
    return argsWithSession(command, args, idle ? this.state.sessionId : null);
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
    if (this.modelsTimer) clearTimeout(this.modelsTimer);
    this.slashPrompts.dispose();
    this.prompting.cancel();
    this.failPending();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** A server answer that has the shape of a `ModelsResult` (anything else leaves the header as it is). */
function isModels(r: unknown): r is P.ModelsResult {
  const m = r as Partial<P.ModelsResult> | null;
  return !!m && Array.isArray(m.models) && m.models.every((x) => typeof x === "string") &&
    (m.current === null || typeof m.current === "string");
}
