/**
 * The chat's two surfaces: the `agentLs.chat` webview view (activity bar) and an editor
 * panel. Both load the same bundle under a strict Content-Security-Policy with a nonce and
 * talk to the ChatController.
 */
import * as crypto from "crypto";
import * as vscode from "vscode";
import type { ToWebview } from "../../shared/messages";
import type { ChatController, ChatSurface } from "./controller";

export const VIEW_ID = "agentLs.chat";
export const PANEL_TYPE = "agentLs.chatPanel";

export function nonce(): string {
  return crypto.randomBytes(18).toString("base64").replace(/[^A-Za-z0-9]/g, "");
}

/** The webview's HTML: no inline script, every script needs the nonce. `appFrames`: where MCP Apps
 * are served from (./appFrames), the only source a frame may load (null: no app frames). */
export function chatHtml(webview: vscode.Webview, extensionUri: vscode.Uri, appFrames: string | null = null): string {
  const n = nonce();
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "dist", "webview.js"));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "dist", "webview.css"));
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
    `script-src 'nonce-${n}'`,
    `frame-src ${appFrames && /^https?:\/\/[^\s;,'"]+$/.test(appFrames) ? appFrames : "'none'"}`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<title>Agent</title>
</head>
<body>
<div id="app"></div>
<script nonce="${n}" src="${script.toString()}"></script>
</body>
</html>`;
}

function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, "dist"), vscode.Uri.joinPath(extensionUri, "media")],
  };
}

class WebviewSurface implements ChatSurface {
  constructor(
    private readonly webview: vscode.Webview,
    private readonly isVisible: () => boolean,
  ) {}

  post(message: ToWebview): void {
    void this.webview.postMessage(message);
  }

  get visible(): boolean {
    return this.isVisible();
  }
}

export class ChatViews implements vscode.WebviewViewProvider, vscode.WebviewPanelSerializer, vscode.Disposable {
  private view: vscode.WebviewView | null = null;
  private panel: vscode.WebviewPanel | null = null;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly chat: ChatController,
  ) {
    chat.reveal = (preserveFocus) => this.reveal(preserveFocus);
    this.disposables.push(
      vscode.window.registerWebviewViewProvider(VIEW_ID, this),
      vscode.window.registerWebviewPanelSerializer(PANEL_TYPE, this),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = webviewOptions(this.extensionUri);
    this.connect(view.webview, () => view.visible, (d) => view.onDidDispose(d));
    view.onDidDispose(() => {
      if (this.view === view) this.view = null;
    });
  }

  private connect(webview: vscode.Webview, visible: () => boolean, onDispose: (f: () => void) => vscode.Disposable): void {
    const surface = new WebviewSurface(webview, visible);
    const attached = this.chat.attach(surface);
    const sub = webview.onDidReceiveMessage((m: unknown) => this.chat.handle(surface, m));
    onDispose(() => {
      attached.dispose();
      sub.dispose();
    });
    // the app frame server first: its address goes into the chat's CSP (frame-src)
    void this.chat.appFrames.start().then(
      (base) => (webview.html = chatHtml(webview, this.extensionUri, base)),
      () => (webview.html = chatHtml(webview, this.extensionUri)),
    );
  }

  /** Shows the chat view in the side bar. */
  async openView(preserveFocus = false): Promise<void> {
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`, { preserveFocus });
  }

  /** Opens (or reveals) the chat as an editor panel. */
  openPanel(): void {
    if (this.panel) {
      this.panel.reveal(undefined, false);
      return;
    }
    const panel = vscode.window.createWebviewPanel(PANEL_TYPE, "Agent Chat", vscode.ViewColumn.Beside, {
      ...webviewOptions(this.extensionUri),
      retainContextWhenHidden: false,
    });
    this.adoptPanel(panel);
  }

  deserializeWebviewPanel(panel: vscode.WebviewPanel): Promise<void> {
    panel.webview.options = webviewOptions(this.extensionUri);
    this.adoptPanel(panel);
    return Promise.resolve();
  }

  private adoptPanel(panel: vscode.WebviewPanel): void {
    this.panel = panel;
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, "media", "agent.svg");
    this.connect(panel.webview, () => panel.visible, (d) => panel.onDidDispose(d));
    panel.onDidDispose(() => {
      if (this.panel === panel) this.panel = null;
    });
  }

  private reveal(preserveFocus: boolean): void {
    if (this.panel) {
      this.panel.reveal(undefined, preserveFocus);
      return;
    }
    void this.openView(preserveFocus);
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
