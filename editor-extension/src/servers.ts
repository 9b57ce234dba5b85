/**
 * MCP servers: the status model (mcp/status + mcp/statusChanged), the `agentLs.servers` tree
 * (one item per server, its tools underneath) and the per-server actions.
 */
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import type { AgentClient } from "./client";
import { errorCode, errorText } from "./errors";
import { fact } from "./factLog";
import {
  attentionKeys,
  newAttention,
  serverContextValue,
  serverDescription,
  serverErrorText,
  serverFixes,
  serverNeedsAttention,
  serverOwnMessage,
  serverProblemSentence,
  serversViewMessage,
  serverTooltip,
  type ServerFix,
  workspaceRestricted,
  workspaceRowDescription,
  workspaceRowLabel,
  workspaceStateText,
  wrapWords,
} from "./format";
import * as P from "./protocol";

export class ServersModel implements vscode.Disposable {
  private servers: P.ServerStatus[] = [];
  private diagnostics: string[] = [];
  private folders: P.WorkspaceStatusPayload[] = [];
  /** Whether the running server has sent its status yet (until then the view says it is starting). */
  private received = false;
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly agent: AgentClient) {
    this.disposables.push(
      this.emitter,
      agent.onDidChangeState(({ state }) => {
        if (state === "running") void this.refresh();
        else if (state !== "starting") {
          this.received = false;
          this.update([]);
        }
      }),
    );
    agent.addBinder((client: LanguageClient) => [
      client.onNotification(P.MCP_STATUS_CHANGED, (p: P.StatusChangedParams | null) => {
        if (p && Array.isArray(p.servers)) {
          this.received = true;
          this.update(p.servers, undefined, p.workspaces);
        }
      }),
    ]);
  }

  get list(): readonly P.ServerStatus[] {
    return this.servers;
  }

  get configDiagnostics(): readonly string[] {
    return this.diagnostics;
  }

  /** The trust state of each workspace folder. */
  get workspaces(): readonly P.WorkspaceStatusPayload[] {
    return this.folders;
  }

  get(name: string): P.ServerStatus | undefined {
    return this.servers.find((s) => s.name === name);
  }

  update(servers: P.ServerStatus[], diagnostics?: string[], workspaces?: P.WorkspaceStatusPayload[]): void {
    this.servers = [...servers].sort((a, b) => a.name.localeCompare(b.name));
    if (diagnostics) this.diagnostics = diagnostics;
    if (Array.isArray(workspaces)) this.folders = workspaces;
    fact(`status ${this.servers.length} servers`);
    this.emitter.fire();
  }

  async refresh(): Promise<void> {
    try {
      const r = await this.agent.request<P.StatusResult>(P.MCP_STATUS, {});
      this.received = true;
      this.update(r.servers, r.diagnostics ?? [], r.workspaces ?? []);
    } catch (e) {
      this.agent.output.warn(`mcp/status: ${errorText(e)}`);
    }
  }

  /** Applies a result that carries the new status list ({servers}) or one status entry. */
  applyResult(r: unknown): void {
    if (r && typeof r === "object") {
      const o = r as Partial<P.StatusResult> & Partial<P.ServerStatus>;
      if (Array.isArray(o.servers)) {
        this.update(o.servers, o.diagnostics, o.workspaces);
      } else if (typeof o.name === "string" && typeof o.state === "string") {
        const entry = o as P.ServerStatus;
        this.update([...this.servers.filter((s) => s.name !== entry.name), entry]);
      }
    }
  }

  /** The agent-ls language server's state (`starting`, `running`, `stopped`, `failed`); a running
   * server whose first status has not arrived yet counts as `starting`. */
  get agentState(): string | undefined {
    const state = (this.agent as Partial<AgentClient>).state;
    return state === "running" && !this.received ? "starting" : state;
  }

  get connected(): number {
    return this.servers.filter((s) => s.state === "connected" || s.state === "connected-listing-failed").length;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

export { serverDescription } from "./format";

export type ServerNode =
  /** A workspace folder whose settings are not in effect, above the servers. */
  | { kind: "workspace"; workspace: P.WorkspaceStatusPayload }
  | { kind: "ignored"; folder: string; setting: P.WorkspaceSettingPayload }
  | { kind: "server"; status: P.ServerStatus }
  | { kind: "tool"; server: string; tool: P.StatusTool }
  /**
   * One row of a sentence the user must read, wrapped over rows (issue 44: a tree row does not
   * wrap): why a server is not usable (`what: "reason"`, in one sentence), what it said itself
   * (`"said"`, its last stderr line), what a restricted folder means (`"workspace"`), why a setting
   * of it is ignored (`"ignored"`, under the setting's row). `server` is the server's name or the
   * folder (`<folder>#<key>` for a setting); `index` the row's place in its sentence.
   */
  | { kind: "line"; server: string; what: "reason" | "said" | "workspace" | "ignored"; index: number; text: string; tooltip: string; state: string }
  /** Something that helps fix a failed server (open its log, run the doctor, edit its entry, sign in). */
  | { kind: "fix"; server: string; fix: ServerFix };

/** Icon and colour by state: colours that keep 3:1 (non-text) on the default light, dark and
 * high-contrast themes (`testing.iconPassed` is 1.9:1 on Light Modern, so not that green). */
const STATE_ICONS: Record<string, [string, string | undefined]> = {
  connected: ["pass", "charts.green"],
  "connected-listing-failed": ["warning", "list.warningForeground"],
  starting: ["loading~spin", undefined],
  restarting: ["loading~spin", undefined],
  failed: ["error", "list.errorForeground"],
  disabled: ["circle-slash", "disabledForeground"],
  "awaiting-trust": ["shield", "list.warningForeground"],
  untrusted: ["shield", "disabledForeground"],
  "needs-sign-in": ["key", "list.warningForeground"],
};

export class ServersTree implements vscode.TreeDataProvider<ServerNode> {
  private readonly emitter = new vscode.EventEmitter<ServerNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;

  constructor(private readonly model: ServersModel) {
    model.onDidChange(() => this.emitter.fire(undefined));
  }

  /** The top rows as last given to the editor, by key (TreeView.reveal needs the same objects). */
  private top = new Map<string, ServerNode & { kind: "workspace" | "server" }>();

  getChildren(node?: ServerNode): ServerNode[] {
    if (!node) {
      const rows: (ServerNode & { kind: "workspace" | "server" })[] = [
        ...this.model.workspaces.filter(workspaceRestricted).map((workspace) => ({ kind: "workspace" as const, workspace })),
        ...this.model.list.map((status) => ({ kind: "server" as const, status })),
      ];
      const top = new Map<string, ServerNode & { kind: "workspace" | "server" }>();
      const kept = rows.map((row) => {
        const key = topKey(row);
        const known = this.top.get(key);
        // the same object for the same row, updated in place
        const out = known ? Object.assign(known, row) : row;
        top.set(key, out);
        return out;
      });
      this.top = top;
      return kept;
    }
    if (node.kind === "workspace") {
      const w = node.workspace;
      const text = `${workspaceStateText(w.state)[0].toUpperCase()}${workspaceStateText(w.state).slice(1)}. ${w.message}`;
      const lines = wrapWords(text).map((t, index): ServerNode => ({ kind: "line", server: w.folder, what: "workspace", index, text: t, tooltip: `${w.folder}\n${text}`, state: w.state }));
      return [...lines, ...(w.ignored ?? []).map((setting): ServerNode => ({ kind: "ignored", folder: w.folder, setting }))];
    }
    if (node.kind === "ignored") {
      const why = `${node.setting.why[0].toUpperCase()}${node.setting.why.slice(1)}.`;
      const tooltip = `${node.setting.key} = ${node.setting.value}\n${node.setting.why}\n(${node.setting.source})`;
      return wrapWords(why).map((t, index): ServerNode => ({ kind: "line", server: `${node.folder}#${node.setting.key}`, what: "ignored", index, text: t, tooltip, state: "ignored" }));
    }
    if (node.kind === "server") {
      const s = node.status;
      const tools: ServerNode[] = (s.tools ?? []).map((tool) => ({ kind: "tool", server: s.name, tool }));
      if (!serverNeedsAttention(s)) return tools;
      const raw = serverErrorText(s.error);
      const tail = (s.stderrTail ?? []).slice(-5);
      const tooltip = [raw && `details: ${raw}`, `(state: ${s.state})`, ...(tail.length ? ["stderr (last lines):", ...tail] : [])].filter(Boolean).join("\n");
      const line = (what: "reason" | "said", text: string) =>
        wrapWords(text).map((t, index): ServerNode => ({ kind: "line", server: s.name, what, index, text: t, tooltip, state: s.state }));
      const said = serverOwnMessage(s);
      const fixes = serverFixes(s).map((fix): ServerNode => ({ kind: "fix", server: s.name, fix }));
      return [...line("reason", serverProblemSentence(s.error, s.state)), ...(said ? line("said", `It said: “${said}”`) : []), ...fixes, ...tools];
    }
    return [];
  }

  /** The parent of a row (TreeView.reveal walks up with it). */
  getParent(node: ServerNode): ServerNode | undefined {
    if (node.kind === "workspace" || node.kind === "server") return undefined;
    const key =
      node.kind === "ignored"
        ? `workspace:${node.folder}`
        : node.kind === "line" && (node.what === "workspace" || node.what === "ignored")
          ? `workspace:${node.server.split("#")[0]}`
          : `server:${node.server}`;
    return this.top.get(key);
  }

  /** The top row (a server, a folder) of an attention key (`server:<name>`, `workspace:<folder>`). */
  row(key: string): ServerNode | undefined {
    if (!this.top.has(key)) this.getChildren();
    return this.top.get(key);
  }

  getTreeItem(node: ServerNode): vscode.TreeItem {
    const item = this.treeItem(node);
    // VS Code reads a row's tooltip as its accessible name: name it by what it shows instead
    // (WCAG 2.5.3, label in name); the tooltip's details stay one hover away.
    const label = typeof item.label === "string" ? item.label : (item.label?.label ?? "");
    const description = typeof item.description === "string" ? item.description : "";
    item.accessibilityInformation = { label: description ? `${label} ${description}` : label };
    return item;
  }

  private treeItem(node: ServerNode): vscode.TreeItem {
    if (node.kind === "workspace") {
      const w = node.workspace;
      const item = new vscode.TreeItem(workspaceRowLabel(w), vscode.TreeItemCollapsibleState.Expanded);
      item.id = `workspace:${w.folder}:${w.state}`;
      item.description = workspaceRowDescription(w.state);
      item.tooltip = `${w.folder}\n${w.message}\n(state: ${w.state})`;
      item.contextValue = `workspace.${w.state}`;
      item.iconPath = new vscode.ThemeIcon("shield", new vscode.ThemeColor("list.warningForeground"));
      return item;
    }
    if (node.kind === "ignored") {
      const item = new vscode.TreeItem(node.setting.key, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `ignored:${node.folder}:${node.setting.source}:${node.setting.key}`;
      item.description = "ignored";
      item.tooltip = `${node.setting.key} = ${node.setting.value}\n${node.setting.why}\n(${node.setting.source})`;
      item.contextValue = "workspace-ignored";
      item.iconPath = new vscode.ThemeIcon("circle-slash");
      return item;
    }
    if (node.kind === "server") {
      const s = node.status;
      const hasTools = (s.tools?.length ?? 0) > 0;
      const item = new vscode.TreeItem(
        s.name,
        serverNeedsAttention(s)
          ? vscode.TreeItemCollapsibleState.Expanded
          : hasTools
            ? vscode.TreeItemCollapsibleState.Collapsed
            : vscode.TreeItemCollapsibleState.None,
      );
      // The editor keeps a row's expanded/collapsed state by its id and applies the state given
      // here only to an id it has not seen: a row that comes to need attention gets a new id,
      // so it opens on its reason even if it was shown before (starting, or collapsed).
      item.id = serverNeedsAttention(s) ? `server:${s.name}:attention` : `server:${s.name}`;
      item.description = serverDescription(s);
      item.tooltip = serverTooltip(s);
      item.contextValue = serverContextValue(s);
      const [icon, color] = STATE_ICONS[s.state] ?? ["circle-outline", undefined];
      item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
      return item;
    }
    if (node.kind === "line") {
      // One row of a sentence (the reason in words, what the server said, what a folder's state
      // means); the raw message (exception text, stderr) is in the tooltip and the log.
      const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
      item.id = `${node.what}:${node.server}:${node.index}`;
      item.tooltip = node.tooltip;
      item.contextValue = node.what === "workspace" || node.what === "ignored" ? "workspace-line" : "server-error";
      const waiting = node.state === "awaiting-trust" || node.state === "needs-sign-in" || node.what === "workspace";
      // the sentence's first row carries its icon; the rows after it line up under its text
      const icon = node.index > 0 || node.what === "ignored" ? "blank" : node.what === "said" ? "quote" : waiting ? "info" : "error";
      const plain = node.index > 0 || node.what === "said" || node.what === "ignored";
      item.iconPath = new vscode.ThemeIcon(icon, plain ? undefined : new vscode.ThemeColor(waiting ? "list.warningForeground" : "list.errorForeground"));
      return item;
    }
    if (node.kind === "fix") {
      const item = new vscode.TreeItem(node.fix.title, vscode.TreeItemCollapsibleState.None);
      item.id = `fix:${node.server}:${node.fix.command}`;
      item.tooltip = `${node.fix.title} (${node.server})`;
      item.contextValue = "server-fix";
      item.iconPath = new vscode.ThemeIcon(node.fix.icon);
      item.command = { command: node.fix.command, title: node.fix.title, arguments: [node.server] };
      return item;
    }
    const t = node.tool;
    const item = new vscode.TreeItem(t.original || t.name, vscode.TreeItemCollapsibleState.None);
    item.id = `tool:${node.server}:${t.name}`;
    item.description = t.capability;
    item.tooltip = `${t.name}\n${t.description ?? ""}`.trim();
    item.contextValue = "tool";
    item.iconPath = new vscode.ThemeIcon("tools");
    return item;
  }
}

/** The server a command was invoked on: a tree item, a name, or picked by the user. */
export async function pickServer(model: ServersModel, arg: unknown, placeHolder: string): Promise<string | undefined> {
  if (typeof arg === "string") return arg;
  if (arg && typeof arg === "object") {
    const node = arg as Partial<ServerNode>;
    if (node.kind === "server" && node.status) return node.status.name;
    if ((node.kind === "tool" || (node.kind === "line" && (node.what === "reason" || node.what === "said")) || node.kind === "fix") && node.server) return node.server;
  }
  if (model.list.length === 0) {
    void vscode.window.showInformationMessage("No MCP servers are configured.");
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    model.list.map((s) => ({ label: s.name, description: serverDescription(s) })),
    { placeHolder },
  );
  return pick?.label;
}

/** Runs a server action request; "method not found" becomes a clear message. */
export async function serverAction(
  agent: AgentClient,
  model: ServersModel,
  method: string,
  params: unknown,
  what: string,
): Promise<void> {
  try {
    const r = await vscode.window.withProgress(
      { location: { viewId: "agentLs.servers" }, title: what },
      () => agent.request<unknown>(method, params),
    );
    model.applyResult(r);
  } catch (e) {
    const msg =
      errorCode(e) === P.METHOD_NOT_FOUND
        ? `${what}: this agent-ls server does not support ${method} yet`
        : `${what} failed: ${errorText(e)}`;
    agent.output.warn(msg);
    fact(`error ${msg}`);
    void vscode.window.showWarningMessage(msg);
  }
}

function topKey(row: ServerNode & { kind: "workspace" | "server" }): string {
  return row.kind === "workspace" ? `workspace:${row.workspace.folder}` : `server:${row.status.name}`;
}

/**
 * Issue 44: the servers view starts collapsed (package.json: the chat gets the side bar's height)
 * and opens by itself, on the row, when something newly needs the user: a server that fails, waits
 * for trust or for a sign-in (attentionKeys).
 * It neither takes the focus nor selects the row; the user collapses it again when done.
 */
export function revealWhenNeeded(
  view: Pick<vscode.TreeView<ServerNode>, "reveal">,
  tree: ServersTree,
  model: ServersModel,
  warn: (message: string) => void,
): vscode.Disposable {
  let seen = new Set<string>();
  const check = () => {
    const now = attentionKeys(model.list, model.workspaces);
    const fresh = newAttention(seen, now);
    seen = new Set(now);
    const row = fresh.length ? tree.row(fresh[0]) : undefined;
    if (!row) return;
    fact(`servers-view reveal ${fresh.join(" ")}`);
    view.reveal(row, { select: false, focus: false, expand: true }).then(undefined, (e: unknown) => {
      warn(`revealing the MCP Servers view: ${errorText(e)}`);
    });
  };
  check();
  return model.onDidChange(check);
}

/**
 * Keeps the servers view's message line and its welcome content in step with the states:
 * "Starting the agent-ls server…", "Starting 2 servers… (github, time)"; the context key
 * `agentLs.agentState` picks the welcome text of an empty view (package.json viewsWelcome).
 */
export function bindServersView(view: { message?: string }, model: ServersModel, agent: AgentClient): vscode.Disposable {
  const update = () => {
    view.message = serversViewMessage(model.agentState, model.list);
    void vscode.commands.executeCommand("setContext", "agentLs.agentState", model.agentState ?? "starting");
  };
  update();
  return vscode.Disposable.from(model.onDidChange(update), agent.onDidChangeState(update));
}
