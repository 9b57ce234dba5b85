/** Activation: wires the language client, the chat, the servers view, the status bar and commands. */
import * as vscode from "vscode";
import { ChatController } from "./chat/controller";
import { ChatViews } from "./chat/views";
import { AgentClient } from "./client";
import { codeActionMiddleware, registerCommands } from "./commands";
import { fact } from "./factLog";
import { EditorIntelligence } from "./intelligence";
import { bindServersView, revealWhenNeeded, ServersModel, ServersTree } from "./servers";
import { createStatusBar } from "./statusBar";

let agent: AgentClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  agent = new AgentClient(context.globalStorageUri.fsPath, context.extensionPath);
  agent.addMiddleware(codeActionMiddleware());
  const chat = new ChatController(agent);
  const intelligence = new EditorIntelligence();
  agent.addBinder((client) => intelligence.bind(client));
  const views = new ChatViews(context.extensionUri, chat);
  const servers = new ServersModel(agent);
  servers.onDidChange(() => {
    chat.refreshPromptsSoon();
    chat.refreshModelsSoon(); // the settings' models, after a reload or a trust decision
    chat.setWorkspaces(servers.workspaces);
  });
  const serversTree = new ServersTree(servers);
  const tree = vscode.window.createTreeView("agentLs.servers", { treeDataProvider: serversTree, showCollapseAll: true });
  context.subscriptions.push(
    agent,
    chat,
    intelligence,
    views,
    servers,
    tree,
    bindServersView(tree, servers, agent),
    revealWhenNeeded(tree, serversTree, servers, (m) => agent?.output.warn(m)),
    createStatusBar(agent, servers, chat),
    ...registerCommands(agent, chat, views, servers),
  );
  fact("activated");
  agent.output.info(`agent-ls extension ${String((context.extension.packageJSON as { version?: unknown }).version)} activated`);
  await agent.start();
}

export async function deactivate(): Promise<void> {
  await agent?.stop();
  agent = undefined;
}
