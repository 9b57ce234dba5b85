/**
 * Where MCP Apps are served from: a small HTTP server on 127.0.0.1 in the extension host that
 * serves each app's HTML as its own document, under an unguessable path, with its own
 * Content-Security-Policy header (the resource's declared domains, else the spec's restrictive
 * default; see shared/appBridge.ts `appCsp`).
 *
 * Why a served document and not `srcdoc`, `blob:` or `data:`: those inherit the chat webview's
 * CSP (`default-src 'none'`, scripts by nonce), so an app could not run, and loosening that CSP
 * for the app would loosen the chat. A document served over HTTP gets only the policy of its own
 * response. The chat puts it in an `<iframe sandbox="allow-scripts">` (no `allow-same-origin`):
 * its origin is opaque whatever its URL, so it cannot read the chat, the workbench or their
 * storage, and the CSP's own `sandbox allow-scripts` keeps it sandboxed even if the URL is opened
 * on its own. The browser reaches the server through `vscode.env.asExternalUri` (code-server and
 * remote windows forward the port). docs/security.md says more.
 */
import * as crypto from "crypto";
import * as http from "http";
import * as vscode from "vscode";
import { appCsp } from "../../shared/appBridge";
import type { McpAppPayload } from "../protocol";

/** One registered app: what the host knows of the frame (the app's own word is never asked). */
export interface AppFrame {
  id: string;
  sessionId: string;
  server: string;
  tool: string;
  resourceUri: string;
  html: string;
  csp: string;
}

/** The longest link an app may ask to open. */
const MAX_LINK = 4096;

/** Why an app's `ui/open-link` is refused before the user is asked (null: it may be asked). Only
 * absolute http and https URLs: no `file:`, `command:`, `vscode:` or `javascript:` links, which
 * would reach the editor or the machine rather than a browser. */
export function linkProblem(url: string): string | null {
  if (url.length > MAX_LINK) return `the link is longer than ${MAX_LINK} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "the link is not an absolute URL";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return `only http and https links are opened, not ${parsed.protocol}`;
  return null;
}

/** An app's `ui/open-link`: opened in the browser (`env.openExternal`) only after the user
 * confirms a modal that names the app's tool and server, the link's host and the full URL.
 * Rejects with why not (refused, declined, the editor could not open it). */
export async function openAppLink(frame: Pick<AppFrame, "server" | "tool">, url: string): Promise<void> {
  const problem = linkProblem(url);
  if (problem) throw new Error(`the link was not opened: ${problem}`);
  const host = new URL(url).host;
  const answer = await vscode.window.showWarningMessage(
    `The app of tool ${frame.tool} (MCP server ${frame.server}) wants to open a link on ${host}.`,
    { modal: true, detail: `Open in your browser?\n\n${url}` },
    "Open Link",
  );
  if (answer !== "Open Link") throw new Error("the user did not open the link");
  if (!(await vscode.env.openExternal(vscode.Uri.parse(url, true)))) throw new Error("the editor could not open the link");
}

/** At most this many apps are kept (the oldest is forgotten: its frame then shows 404). */
const MAX_FRAMES = 64;

export class AppFrames implements vscode.Disposable {
  private server: http.Server | null = null;
  private base: Promise<string> | null = null;
  private baseUrl: string | null = null;
  private readonly frames = new Map<string, AppFrame>();

  /** Starts the server (once): the URL the browser reaches it at, ending in "/". */
  start(): Promise<string> {
    this.base ??= this.listen();
    return this.base;
  }

  /** The server's URL once started (null before). */
  get url(): string | null {
    return this.baseUrl;
  }

  private async listen(): Promise<string> {
    const server = http.createServer((req, res) => this.serve(req, res));
    this.server = server;
    const port = await new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const a = server.address();
        resolve(typeof a === "object" && a ? a.port : 0);
      });
    });
    const local = vscode.Uri.parse(`http://127.0.0.1:${port}/`);
    let external = local.toString();
    try {
      external = (await vscode.env.asExternalUri(local)).toString();
    } catch {
      // no forwarding: the local address
    }
    this.baseUrl = external.endsWith("/") ? external : external + "/";
    return this.baseUrl;
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const [path = ""] = (req.url ?? "").split("?", 1);
    const match = /^\/app\/([A-Za-z0-9_-]{20,64})$/.exec(path);
    const frame = match ? this.frames.get(match[1]) : undefined;
    if ((req.method !== "GET" && req.method !== "HEAD") || !frame) {
      res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
      res.end("not found");
      return;
    }
    res.writeHead(200, {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": frame.csp,
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      "Cache-Control": "no-store",
      "Cross-Origin-Resource-Policy": "cross-origin",
    });
    res.end(req.method === "HEAD" ? undefined : frame.html);
  }

  /** Registers an app of `sessionId` (null without HTML or before the server runs). */
  register(sessionId: string, app: McpAppPayload): { id: string; url: string } | null {
    if (!app.html || this.baseUrl === null) return null;
    const id = crypto.randomBytes(24).toString("base64url");
    this.frames.set(id, { id, sessionId, server: app.server, tool: app.tool, resourceUri: app.resourceUri, html: app.html, csp: appCsp(app.csp) });
    while (this.frames.size > MAX_FRAMES) {
      const oldest = this.frames.keys().next().value;
      if (oldest === undefined) break;
      this.frames.delete(oldest);
    }
    return { id, url: `${this.baseUrl}app/${id}` };
  }

  get(id: string): AppFrame | undefined {
    return this.frames.get(id);
  }

  /** The chat shows another session: the apps of the others are torn down and forgotten. */
  keepOnly(sessionId: string | null): void {
    for (const [id, f] of this.frames) if (f.sessionId !== sessionId) this.frames.delete(id);
  }

  dispose(): void {
    this.frames.clear();
    this.server?.close();
    this.server = null;
  }
}
