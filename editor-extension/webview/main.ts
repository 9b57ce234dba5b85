/** Webview entry point: wires the ChatApp to the VS Code webview API. */
import type { FromWebview, ToWebview } from "../shared/messages";
import { ChatApp } from "./app";
import { fromHost } from "./appView";
import "./style.css";

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const root = document.getElementById("app") ?? document.body;
const app = new ChatApp(root, {
  post: (m: FromWebview) => vscode.postMessage(m),
  getState: () => vscode.getState(),
  setState: (s) => vscode.setState(s),
});
window.addEventListener("message", (e: MessageEvent) => {
  // An MCP App's frame: to its bridge, never to the chat (appView.ts).
  if (app.apps.route(e)) return;
  if (!fromHost(e, window.origin)) return;
  app.receive(e.data as ToWebview);
});
vscode.postMessage({ type: "ready" } satisfies FromWebview);
