/** The contributed commands (ids in CONTRACT.md) and the code-action bridge. */
import * as vscode from "vscode";
import type { Middleware } from "vscode-languageclient/node";
import { selectionAttachment } from "./chat/attachments";
import type { ChatController } from "./chat/controller";
import type { ChatViews } from "./chat/views";
import type { AgentClient } from "./client";
import { needsQuestion, withQuestion } from "./codeActions";
import { errorText } from "./errors";
import { fact } from "./factLog";
import * as P from "./protocol";
import { serverEntryOffset, serverErrorText, workspaceRestricted, workspaceTrustDetail } from "./format";
import { pickServer, serverAction, serverDescription, type ServerNode, type ServersModel } from "./servers";
import { sessionLabel } from "../shared/labels";
import { doctorCommand, readServerSettings, resolveServerCommand, type ResolvedCommand } from "./serverCommand";
import { openSettingsFile, serverEnv, userSettingsPath, workspaceSettingsPath } from "./settingsFiles";

export const RUN_CODE_ACTION = "agentLs.runCodeAction";

/** The view containers the chat can live in (package.json viewsContainers): the Agent side bar
 * and an Agent container in the secondary side bar (issue 44: where VS Code users keep their chat). */
export const PRIMARY_CONTAINER = "workbench.view.extension.agentLs";
export const SECONDARY_CONTAINER = "workbench.view.extension.agentLsSecondary";

/**
 * Moves the chat view to `container` and shows it there (VS Code's `vscode.moveViews`). An editor
 * without that command or container (before the secondary side bar contribution point): the
 * workbench's own "Move View" picker, on the chat.
 */
async function moveChat(container: string): Promise<void> {
  try {
    await vscode.commands.executeCommand("vscode.moveViews", { viewIds: ["agentLs.chat"], destinationId: container });
    fact(`chat-moved ${container}`);
  } catch (e) {
    fact(`chat-move-fallback ${errorText(e)}`);
    await vscode.commands.executeCommand("agentLs.chat.focus");
    await vscode.commands.executeCommand("workbench.action.moveFocusedView");
  }
}

interface CodeActionCall {
  title: string;
  command: string;
  arguments?: unknown[];
}

/**
 * "Ask agent" carries no question: ask the user (an input box). Returns the arguments to run
 * the command with, or null when the user dismissed the box (then nothing runs).
 */
export async function askQuestionIfNeeded(command: string, args: unknown[]): Promise<unknown[] | null> {
  if (!needsQuestion(command, args)) return args;
  const answer = await vscode.window.showInputBox({
    title: "Ask agent",
    prompt: "Your question about the selected code (empty: a general explanation)",
    placeHolder: "What should I know about this code?",
    ignoreFocusOut: true,
  });
  if (answer === undefined) fact("code-action-dismissed");
  else fact(`code-action-question ${answer}`);
  return withQuestion(args, answer);
}

/**
 * Server code actions carry workspace/executeCommand commands. They are rewritten to run
 * through `agentLs.runCodeAction`, which logs the fact, asks for the question of "Ask agent",
 * runs the server command and shows the outcome in the chat. A server command run any other
 * way (the command vscode-languageclient registers for it) still gets the question asked,
 * through the executeCommand middleware.
 */
export function codeActionMiddleware(): Middleware {
  return {
    executeCommand: async (command, args, next) => {
      const final = await askQuestionIfNeeded(command, args);
      if (final === null) return undefined;
      const result: unknown = await next(command, final);
      return result;
    },
    provideCodeActions: async (document, range, context, token, next) => {
      const actions = await next(document, range, context, token);
      if (!actions) return actions;
      return actions.map((a) => {
        if (a instanceof vscode.CodeAction) {
          if (a.command && a.command.command !== RUN_CODE_ACTION) a.command = wrap(a.title, a.command);
          return a;
        }
        return a.command !== RUN_CODE_ACTION ? wrap(a.title, a) : a;
      });
    },
  };
}

function wrap(title: string, cmd: vscode.Command): vscode.Command {
  const call: CodeActionCall = { title, command: cmd.command, arguments: cmd.arguments ?? [] };
  return { title: cmd.title || title, command: RUN_CODE_ACTION, arguments: [call] };
}

export function registerCommands(
  agent: AgentClient,
  chat: ChatController,
  views: ChatViews,
  servers: ServersModel,
): vscode.Disposable[] {
  const log = vscode.window.createOutputChannel("Agent: MCP Servers");
  const reg = (id: string, fn: (...args: unknown[]) => unknown) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        await fn(...args);
      } catch (e) {
        const msg = `${id}: ${errorText(e)}`;
        agent.output.error(msg);
        fact(`error ${msg}`);
        void vscode.window.showErrorMessage(msg);
      }
    });

  const showServerLog = async (arg: unknown) => {
    const name = await pickServer(servers, arg, "Show the log of which MCP server?");
    if (!name) return;
    const s = servers.get(name);
    log.clear();
    if (!s) {
      log.appendLine(`No MCP server named ${name}.`);
    } else {
      log.appendLine(`${s.name}: ${serverDescription(s)}`);
      if (s.transport) log.appendLine(`transport: ${s.transport}${s.scope ? `, ${s.scope} scope` : ""}`);
      if (s.source) log.appendLine(`defined in: ${s.source}`);
      if (s.pid) log.appendLine(`pid: ${s.pid}`);
      if (s.protocolVersion) log.appendLine(`protocol: ${s.protocolVersion}`);
      if (s.restarts) log.appendLine(`restarts: ${s.restarts}`);
      if (s.auth) log.appendLine(`auth: ${s.auth.state}${s.auth.reason ? ` (${s.auth.reason})` : ""}`);
      if (s.error) log.appendLine(`last error: ${serverErrorText(s.error)}`);
      const tail = s.stderrTail ?? [];
      log.appendLine("");
      log.appendLine(tail.length ? `--- stderr (last ${tail.length} lines) ---` : "(no stderr output)");
      for (const line of tail) log.appendLine(line);
    }
    log.show(true);
  };

  return [
    log,
    reg("agentLs.openChat", () => views.openView(false)),
    reg("agentLs.rewind", () => chat.rewinds.command()),
    reg("agentLs.redoRewind", () => chat.rewinds.redo()),
    reg("agentLs.openChatPanel", () => views.openPanel()),
    reg("agentLs.moveChatToSecondarySideBar", () => moveChat(SECONDARY_CONTAINER)),
    reg("agentLs.moveChatToSideBar", () => moveChat(PRIMARY_CONTAINER)),
    reg("agentLs.askSelection", () => {
      const ed = vscode.window.activeTextEditor;
      if (!ed || ed.selection.isEmpty) {
        void vscode.window.showInformationMessage("Select some code first.");
        return;
      }
      chat.addAttachment(selectionAttachment(ed));
      chat.setInput("");
    }),
    reg("agentLs.restartServers", () =>
      serverAction(agent, servers, P.MCP_RESTART, {} satisfies P.ServerParams, "Restarting MCP servers"),
    ),
    reg("agentLs.showStatus", async () => {
      if (agent.state !== "running") {
        agent.showOutput();
        return;
      }
      await servers.refresh();
      const items: (vscode.QuickPickItem & { server?: string })[] = servers.list.map((s) => ({
        label: s.name,
        description: serverDescription(s),
        detail: s.error ? serverErrorText(s.error) : undefined,
        server: s.name,
      }));
      for (const d of servers.configDiagnostics) items.push({ label: "$(warning) settings", detail: d });
      items.push({ label: "$(output) Show the agent-ls log" });
      const pick = await vscode.window.showQuickPick(items, { placeHolder: "MCP servers (pick one for its log)" });
      if (!pick) return;
      if (pick.server) await showServerLog(pick.server);
      else if (pick.label.includes("agent-ls log")) agent.showOutput();
    }),
    reg("agentLs.openUserSettings", () => openSettingsFile(userSettingsPath(serverEnv()))),
    reg("agentLs.openWorkspaceSettings", async () => {
      const folders = vscode.workspace.workspaceFolders ?? [];
      if (folders.length === 0) {
        void vscode.window.showInformationMessage("Open a folder first: workspace settings live in <folder>/.agent-ls/settings.json.");
        return;
      }
      const folder = folders.length === 1 ? folders[0] : await vscode.window.showWorkspaceFolderPick();
      if (folder) await openSettingsFile(workspaceSettingsPath(folder.uri.fsPath));
    }),
    reg("agentLs.newSession", async () => {
      await views.openView(false);
      await chat.newSession();
    }),
    reg("agentLs.resumeSession", async () => {
      const pick = await pickSession(chat, "Resume which session?");
      if (!pick) return;
      await views.openView(false);
      await chat.resume(pick.id);
    }),
    reg("agentLs.renameSession", async () => {
      const pick = await pickSession(chat, "Rename which session?");
      if (!pick) return;
      const title = await vscode.window.showInputBox({
        prompt: "The session's new name (empty: no name)",
        value: pick.title ?? "",
        validateInput: (v) => (v.length > 120 ? "At most 120 characters" : undefined),
      });
      if (title === undefined) return;
      await chat.renameSession(pick.id, title);
    }),
    reg("agentLs.deleteSession", async () => {
      const pick = await pickSession(chat, "Delete which session?");
      if (!pick) return;
      const sure = await vscode.window.showWarningMessage(
        `Delete the session "${pick.label}"? Its conversation and checkpoints cannot be restored.`,
        { modal: true },
        "Delete",
      );
      if (sure !== "Delete") return;
      await chat.deleteSession(pick.id);
    }),
    reg("agentLs.restartServer", async (arg) => {
      const name = await pickServer(servers, arg, "Restart which MCP server?");
      if (name) await serverAction(agent, servers, P.MCP_RESTART, { server: name } satisfies P.ServerParams, `Restarting ${name}`);
    }),
    reg("agentLs.showServerLog", showServerLog),
    reg("agentLs.serverDoctor", async (arg) => {
      const name = await pickServer(servers, arg, "Run the doctor on which MCP server?");
      if (name) runDoctor(name, agent.serverCommand);
    }),
    reg("agentLs.editServerConfig", async (arg) => {
      const name = await pickServer(servers, arg, "Edit the configuration of which MCP server?");
      if (name) await editServerConfig(servers, name);
    }),
    reg("agentLs.enableServer", async (arg) => {
      const name = await pickServer(servers, arg, "Enable which MCP server?");
      if (name) await serverAction(agent, servers, P.MCP_SET_ENABLED, { server: name, enabled: true } satisfies P.SetEnabledParams, `Enabling ${name}`);
    }),
    reg("agentLs.disableServer", async (arg) => {
      const name = await pickServer(servers, arg, "Disable which MCP server?");
      if (name) await serverAction(agent, servers, P.MCP_SET_ENABLED, { server: name, enabled: false } satisfies P.SetEnabledParams, `Disabling ${name}`);
    }),
    reg("agentLs.trustWorkspace", (arg) => trustWorkspace(agent, chat, servers, arg)),
    reg("agentLs.sandboxPermissions", () => chat.sandboxGrants.showAndRevoke()),
    reg("agentLs.restrictWorkspace", () =>
      serverAction(agent, servers, P.SET_WORKSPACE_TRUST, { trusted: false } satisfies P.SetWorkspaceTrustParams, "Restricting the workspace"),
    ),
    reg("agentLs.trustServer", async (arg) => {
      const name = await pickServer(servers, arg, "Trust which MCP server?");
      if (!name) return;
      // A server of a folder that is not trusted is decided with its folder (settings and servers together).
      const folder = heldByRestrictedFolder(servers, name);
      if (folder) return trustWorkspace(agent, chat, servers, { kind: "workspace", workspace: folder } satisfies ServerNode);
      await serverAction(agent, servers, P.MCP_TRUST, { server: name, trusted: true } satisfies P.TrustParams, `Trusting ${name}`);
    }),
    reg("agentLs.signIn", async (arg) => {
      const name = await pickServer(servers, arg, "Sign in to which MCP server?");
      if (name) await serverAction(agent, servers, P.MCP_SIGN_IN, { server: name } satisfies P.SignInParams, `Signing in to ${name}`);
    }),
    reg("agentLs.signOut", async (arg) => {
      const name = await pickServer(servers, arg, "Sign out of which MCP server?");
      if (name) await serverAction(agent, servers, P.MCP_SIGN_OUT, { server: name } satisfies P.SignInParams, `Signing out of ${name}`);
    }),
    reg(RUN_CODE_ACTION, async (arg) => {
      const call = arg as Partial<CodeActionCall> | undefined;
      if (!call || typeof call.command !== "string") return;
      const title = call.title ?? call.command;
      fact(`code-action ${title}`);
      const args = await askQuestionIfNeeded(call.command, call.arguments ?? []);
      if (args === null) return; // "Ask agent" without a question: the user changed their mind
      const noticeId = chat.noteCodeAction(title);
      const cardsBefore = chat.toolCards();
      try {
        const sent = chat.withSession(call.command, args);
        const result = await agent.request<unknown>("workspace/executeCommand", { command: call.command, arguments: sent });
        chat.showCodeActionOutcome(title, call.command, result, cardsBefore, noticeId, sent);
      } catch (e) {
        const msg = `${title} failed: ${errorText(e)}`;
        fact(`error ${msg}`);
        chat.notice(msg, "error");
      }
    }),
  ];
}

/**
 * "Agent: Trust Workspace Settings": VS Code's own trust first (its restricted mode); then the
 * pending trust card if there is one; else a modal that lists everything the restricted folders
 * ask for (from the last status) and, on "Trust", `agent/setWorkspaceTrust` for each.
 * Run from a folder's row in the servers view (`arg`), it is about that folder only.
 */
export async function trustWorkspace(agent: AgentClient, chat: ChatController, servers: ServersModel, arg?: unknown): Promise<void> {
  const folder = workspaceFolderArg(arg);
  const restricted = servers.workspaces.filter((w) => workspaceRestricted(w) && (folder === undefined || w.folder === folder));
  if (restricted.some((w) => w.state === "editor-restricted") || !vscode.workspace.isTrusted) {
    await vscode.commands.executeCommand("workbench.trust.manage");
    return;
  }
  if (chat.revealWorkspaceTrust(folder)) return;
  if (restricted.length === 0) {
    void vscode.window.showInformationMessage("This workspace's agent settings are in effect: nothing waits for your trust.");
    return;
  }
  const pick = await vscode.window.showWarningMessage(
    "Trust this workspace's agent settings? Its MCP servers will start and the settings below take effect.",
    { modal: true, detail: workspaceTrustDetail(restricted) },
    "Trust",
  );
  if (pick !== "Trust") return;
  for (const w of restricted) {
    await serverAction(agent, servers, P.SET_WORKSPACE_TRUST, { trusted: true, folder: w.folder } satisfies P.SetWorkspaceTrustParams, "Trusting the workspace");
  }
  fact("workspace-trust command");
}

/** The folder of a servers-view row the command was run on (its inline action), if any. */
function workspaceFolderArg(arg: unknown): string | undefined {
  if (!arg || typeof arg !== "object") return undefined;
  const node = arg as Partial<ServerNode>;
  return node.kind === "workspace" && node.workspace && typeof node.workspace.folder === "string" ? node.workspace.folder : undefined;
}

/** The folder (not trusted) that holds a listed server back, if any. */
export function heldByRestrictedFolder(servers: ServersModel, name: string): P.WorkspaceStatusPayload | undefined {
  if (servers.get(name)?.scope === "user") return undefined;
  return servers.workspaces.filter(workspaceRestricted).find((w) => (w.servers ?? []).some((e) => e.server === name));
}

/**
 * "Run the doctor on this server": `agent-ls mcp doctor <server>` in a terminal, with the program
 * and environment the language server runs with (resolved argv/cwd/env with secrets hidden,
 * the phase that failed, PATH lookups in the login shell, the stderr tail).
 */
function runDoctor(name: string, started: ResolvedCommand | null): void {
  const config = vscode.workspace.getConfiguration("agentLs.server");
  const settings = readServerSettings((k) => config.get(k));
  const configured = resolveServerCommand(settings, serverEnv().PATH);
  // nothing configured: the server the extension provisioned (the one the client started)
  const resolved = !configured.ok && configured.unconfigured && started ? { ok: true as const, value: started } : configured;
  if (!resolved.ok) {
    void vscode.window.showErrorMessage(`Cannot run the doctor: ${resolved.error}`);
    return;
  }
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const [program, ...args] = doctorCommand(resolved.value, name, folders);
  fact(`doctor ${name}`);
  const terminal = vscode.window.createTerminal({
    name: `agent-ls doctor: ${name}`,
    shellPath: program,
    shellArgs: args,
    cwd: folders[0],
    env: settings.env,
  });
  terminal.show();
}

/** "Edit its configuration": the settings file that defines the server, at its entry. */
async function editServerConfig(servers: ServersModel, name: string): Promise<void> {
  const source = servers.get(name)?.source;
  if (!source || source === "?") {
    void vscode.window.showInformationMessage(`agent-ls does not know which file defines ${name}.`);
    return;
  }
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(source));
  const editor = await vscode.window.showTextDocument(doc);
  const at = serverEntryOffset(doc.getText(), name);
  if (at >= 0) {
    const start = doc.positionAt(at);
    const end = doc.positionAt(at + JSON.stringify(name).length);
    editor.selection = new vscode.Selection(start, end);
    editor.revealRange(new vscode.Range(start, end), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }
}

/** A saved session picked by the user (most recent first); undefined when there is none or the pick was dismissed. */
export async function pickSession(
  chat: Pick<ChatController, "listSessions">,
  placeHolder: string,
): Promise<{ id: string; label: string; title: string | null } | undefined> {
  const sessions = await chat.listSessions();
  if (sessions.length === 0) {
    void vscode.window.showInformationMessage("No saved sessions yet.");
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    [...sessions]
      .sort((a, b) => b.updated - a.updated)
      .map((s) => ({
        label: sessionLabel(s),
        description: `${s.messageCount} messages`,
        detail: new Date(s.updated * 1000).toLocaleString(),
        id: s.id,
        title: s.title ?? null,
      })),
    { placeHolder },
  );
  return pick ? { id: pick.id, label: pick.label, title: pick.title } : undefined;
}
