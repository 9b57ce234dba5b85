/**
 * The host side of one MCP App's JSON-RPC over postMessage (MCP Apps, SEP-1865), without the DOM:
 * the chat's webview gives it the messages of the app's frame (and only those: the caller checks
 * each message's source window) and a way to post to that frame.
 *
 * What the app may ask: `ui/initialize` (answered with the host's capabilities and context; then
 * the tool's input and result are sent), `tools/call` (the host runs it through the session's
 * approvals; the server and the frame's session are the host's record, never the app's word),
 * `ui/message` (a prompt the user sees), `ui/update-model-context` (context the model gets at the
 * next prompt, shown in the card), `ui/notifications/size-changed` (the frame's height, bounded),
 * `ui/open-link` (opened only once the user confirms, http and https only: the extension host asks),
 * `ping`. Anything else is "method not found". A flood is bounded: at most `perSecond` messages a
 * second are read (the rest are dropped and counted), at most `maxPending` tool calls wait at once,
 * and a message larger than `maxBytes` is dropped.
 */

export const APPS_PROTOCOL_VERSION = "2026-01-26";

export type JsonObject = Record<string, unknown>;

export interface AppHost {
  /** A `tools/call`: resolves to the CallToolResult, rejects with a reason (refused, failed). */
  callTool(name: string, args: JsonObject): Promise<JsonObject>;
  /** `ui/message`: its text, sent as a prompt the user sees. */
  message(text: string): Promise<void>;
  /** `ui/update-model-context`: its text (empty: cleared). */
  context(text: string): Promise<void>;
  /** The app's wanted height in CSS pixels (already bounded). */
  resize(height: number): void;
  /** `ui/open-link`: resolves once the user confirmed and the link opened; rejects with why not
   * (not http/https, the user declined). */
  openLink(url: string): Promise<void>;
}

export interface AppData {
  /** The tool call's arguments (`ui/notifications/tool-input`). */
  toolInput: JsonObject;
  /** The CallToolResult (`ui/notifications/tool-result`); null: none to give. */
  toolResult: JsonObject | null;
  toolName: string;
  theme: "light" | "dark";
}

export interface BridgeLimits {
  perSecond: number;
  maxPending: number;
  maxBytes: number;
  minHeight: number;
  maxHeight: number;
}

export const DEFAULT_LIMITS: BridgeLimits = { perSecond: 50, maxPending: 4, maxBytes: 512 * 1024, minHeight: 40, maxHeight: 800 };

const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const REFUSED = -32000;

type Id = string | number;

function isId(v: unknown): v is Id {
  return typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
}

function isObject(v: unknown): v is JsonObject {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

/** The text of MCP content blocks (`[{type: "text", text}]`); other kinds are left out. */
export function textOf(content: unknown, limit = 20_000): string {
  if (!Array.isArray(content)) return "";
  const parts = content
    .filter((c): c is { type: string; text: string } => isObject(c) && c.type === "text" && typeof c.text === "string")
    .map((c) => c.text);
  const text = parts.join("\n");
  return text.length > limit ? text.slice(0, limit) + " […]" : text;
}

export class AppBridge {
  /** Messages dropped by the limits (a flood). */
  dropped = 0;
  initialized = false;
  private windowStart = 0;
  private inWindow = 0;
  private pending = 0;
  private nextId = 1;
  private readonly waiting = new Map<Id, (ok: boolean) => void>();
  private closed = false;

  constructor(
    private readonly post: (message: unknown) => void,
    private readonly host: AppHost,
    private readonly data: AppData,
    private readonly limits: BridgeLimits = DEFAULT_LIMITS,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** One message from the app's frame (the caller has checked its source window). */
  receive(raw: unknown): void {
    if (this.closed || !this.admit(raw)) return;
    if (!isObject(raw) || raw.jsonrpc !== "2.0") return;
    const method = raw.method;
    if (typeof method !== "string") {
      // a response to one of our requests (teardown)
      if (isId(raw.id) && this.waiting.has(raw.id)) {
        const done = this.waiting.get(raw.id);
        this.waiting.delete(raw.id);
        done?.(!("error" in raw));
      }
      return;
    }
    const params = isObject(raw.params) ? raw.params : {};
    if (isId(raw.id)) void this.request(raw.id, method, params);
    else this.notification(method, params);
  }

  /** The editor's theme changed: `ui/notifications/host-context-changed` (once the app is initialized). */
  themeChanged(theme: "light" | "dark"): void {
    if (theme === this.data.theme) return;
    this.data.theme = theme;
    if (this.initialized) this.send("ui/notifications/host-context-changed", { theme });
  }

  /** Asks the app to wind down (`ui/resource-teardown`) and waits for its answer, at most `ms`. */
  async teardown(reason = "the chat closed this app", ms = 500): Promise<void> {
    if (this.closed) return;
    const id = `host-${this.nextId++}`;
    const answered = new Promise<boolean>((resolve) => {
      this.waiting.set(id, resolve);
      setTimeout(() => resolve(false), ms);
    });
    this.post({ jsonrpc: "2.0", id, method: "ui/resource-teardown", params: { reason } });
    await answered;
    this.waiting.delete(id);
    this.closed = true;
  }

  /** The flood limits: false drops the message. */
  private admit(raw: unknown): boolean {
    const t = this.now();
    if (t - this.windowStart >= 1000) {
      this.windowStart = t;
      this.inWindow = 0;
    }
    if (++this.inWindow > this.limits.perSecond) {
      this.dropped++;
      return false;
    }
    let size: number;
    try {
      size = (JSON.stringify(raw) as string | undefined)?.length ?? 0;
    } catch {
      size = Infinity;
    }
    if (size > this.limits.maxBytes) {
      this.dropped++;
      return false;
    }
    return true;
  }

  private notification(method: string, params: JsonObject): void {
    switch (method) {
      case "ui/notifications/initialized":
        if (this.initialized) return;
        this.initialized = true;
        this.send("ui/notifications/tool-input", { arguments: this.data.toolInput });
        if (this.data.toolResult) this.send("ui/notifications/tool-result", this.data.toolResult);
        return;
      case "ui/notifications/size-changed": {
        const h = params.height;
        if (typeof h === "number" && Number.isFinite(h)) {
          this.host.resize(Math.round(Math.min(this.limits.maxHeight, Math.max(this.limits.minHeight, h))));
        }
        return;
      }
      default:
        return; // notifications/message and the like: nothing to do
    }
  }

  private async request(id: Id, method: string, params: JsonObject): Promise<void> {
    try {
      switch (method) {
        case "ui/initialize":
          { this.reply(id, {
            protocolVersion: APPS_PROTOCOL_VERSION,
            hostInfo: { name: "agent-ls", version: "0.1.0" },
            hostCapabilities: { serverTools: {}, openLinks: {}, message: { text: {} }, updateModelContext: { text: {} }, logging: {} },
            hostContext: {
              theme: this.data.theme,
              displayMode: "inline",
              availableDisplayModes: ["inline"],
              platform: "desktop",
              toolInfo: { tool: { name: this.data.toolName } },
            },
          }); return; }
        case "ping":
          { this.reply(id, {}); return; }
        case "tools/call": {
          const name = params.name;
          const args = params.arguments ?? {};
          if (typeof name !== "string" || !isObject(args)) { this.fail(id, INVALID_PARAMS, "tools/call needs a name and object arguments"); return; }
          if (this.pending >= this.limits.maxPending) { this.fail(id, REFUSED, "too many tool calls at once"); return; }
          this.pending++;
          try {
            this.reply(id, await this.host.callTool(name, args)); return;
          } finally {
            this.pending--;
          }
        }
        case "ui/message": {
          const text = textOf(params.content);
          if (!text.trim()) { this.fail(id, INVALID_PARAMS, "ui/message needs text content"); return; }
          await this.host.message(text);
          this.reply(id, {}); return;
        }
        case "ui/open-link": {
          const url = params.url;
          if (typeof url !== "string" || !url) { this.fail(id, INVALID_PARAMS, "ui/open-link needs a url"); return; }
          await this.host.openLink(url);
          this.reply(id, {}); return;
        }
        case "ui/update-model-context": {
          let text = textOf(params.content);
          if (params.structuredContent !== undefined) {
            const structured = (JSON.stringify(params.structuredContent) as string | undefined) ?? "";
            text = [text, structured.length > 4000 ? structured.slice(0, 4000) + " […]" : structured].filter(Boolean).join("\n");
          }
          await this.host.context(text);
          this.reply(id, {}); return;
        }
        default:
          { this.fail(id, METHOD_NOT_FOUND, `${method} is not supported by this host`); return; }
      }
    } catch (e) {
      this.fail(id, REFUSED, e instanceof Error ? e.message : String(e));
    }
  }

  private send(method: string, params: JsonObject): void {
    if (!this.closed) this.post({ jsonrpc: "2.0", method, params });
  }

  private reply(id: Id, result: JsonObject): void {
    if (!this.closed) this.post({ jsonrpc: "2.0", id, result });
  }

  private fail(id: Id, code: number, message: string): void {
    if (!this.closed) this.post({ jsonrpc: "2.0", id, error: { code, message } });
  }
}

const DOMAIN = /^(?:[a-z][a-z0-9+.-]*:\/\/)?[^\s;,'"\\]+$/i;

/** A declared domain list, keeping only plain source expressions (no quotes, spaces, semicolons
 * or commas: a declaration cannot add keywords or directives; a bare `*` is dropped). */
export function domains(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.filter((d): d is string => typeof d === "string" && d !== "*" && d.length <= 256 && DOMAIN.test(d)).slice(0, 64);
}

/**
 * The app document's Content-Security-Policy: the spec's restrictive default (inline script and
 * style, data: images and media, nothing else: no network, no frames), widened only by the
 * resource's declared domains (`resourceDomains` for scripts, styles, images, fonts and media;
 * `connectDomains` for fetch/XHR/WebSocket; `frameDomains`; `baseUriDomains`). `sandbox
 * allow-scripts` is part of it, so the document is sandboxed even if opened on its own.
 */
export function appCsp(csp: Record<string, unknown> | null | undefined): string {
  const c = csp ?? {};
  const res = domains(c.resourceDomains).join(" ");
  const connect = domains(c.connectDomains).join(" ");
  const frames = domains(c.frameDomains).join(" ");
  const base = domains(c.baseUriDomains).join(" ");
  const widen = (head: string, extra: string) => (extra ? `${head} ${extra}` : head);
  return [
    "default-src 'none'",
    widen("script-src 'unsafe-inline'", res),
    widen("style-src 'unsafe-inline'", res),
    widen("img-src data:", res),
    widen("font-src data:", res),
    widen("media-src data:", res),
    `connect-src ${connect || "'none'"}`,
    `frame-src ${frames || "'none'"}`,
    `base-uri ${base || "'none'"}`,
    "form-action 'none'",
    "object-src 'none'",
    "sandbox allow-scripts",
  ].join("; ");
}
