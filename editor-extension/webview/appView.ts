/**
 * MCP Apps in the chat (MCP Apps, SEP-1865): each app item renders as a frame under its tool
 * call's card, `<iframe sandbox="allow-scripts">` (an opaque origin: no access to the chat, the
 * workbench or their storage; no top navigation, no popups, no forms), its document served with
 * its own CSP by the extension host (src/chat/appFrames.ts).
 *
 * Messages: `route` takes every `message` event of the chat's window first and claims those whose
 * source window is an app's frame; they go to that frame's bridge (shared/appBridge.ts) and never
 * to the chat's own message handling. What the bridge asks of the host (tools/call, ui/message,
 * ui/update-model-context, ui/open-link) goes to the extension host naming the frame's id; the host knows the
 * frame's session and server. Teardown: an app item that leaves the chat (another session, a new
 * one) is sent `ui/resource-teardown` and removed once it answers (at most half a second).
 */
import { AppBridge, type AppHost, type JsonObject } from "../shared/appBridge";
import type { AppItem } from "../shared/items";
import type { FromWebview } from "../shared/messages";
import { appPermissionsLine } from "../shared/labels";
import { el } from "./dom";

interface Mounted {
  itemId: string;
  frameId: string;
  frame: HTMLIFrameElement;
  bridge: AppBridge;
}

type Reply = { resolve: (r: JsonObject) => void; reject: (e: Error) => void };

const INITIAL_HEIGHT = 160;

/** Whether a `message` event is the chat's own (from the webview's host frame, which has this
 * document's origin). An app's frame has an opaque origin ("null"), a frame an app opened its
 * own: neither is ever read as a chat message. */
export function fromHost(e: MessageEvent, origin: string): boolean {
  return origin !== "null" && e.origin === origin;
}

export class AppViews {
  private readonly mounted = new Map<string, Mounted>();
  private readonly replies = new Map<string, Reply>();
  private nextRequest = 1;

  constructor(
    private readonly post: (m: FromWebview) => void,
    private readonly theme: () => "light" | "dark" = () =>
      document.body.classList.contains("vscode-light") || document.body.classList.contains("vscode-high-contrast-light") ? "light" : "dark",
  ) {
    // the editor's theme is the body's class (VS Code sets it): running apps are told when it changes
    new MutationObserver(() => {
      const theme = this.theme();
      for (const m of this.mounted.values()) m.bridge.themeChanged(theme);
    }).observe(document.body, { attributes: true, attributeFilter: ["class"] });
  }

  /** The app item's element (the same element again when only its context line changed: the
   * frame is never reloaded by a re-render). */
  render(d: Document, item: AppItem, previous?: HTMLElement): HTMLElement {
    if (previous && item.frameId && previous.dataset.frameId === item.frameId) {
      this.setContext(d, previous, item.context);
      return previous;
    }
    const box = el(d, "div", { "data-testid": "app-card", class: `app-card${item.prefersBorder ? " bordered" : ""}`, "data-server": item.server });
    box.append(el(d, "div", { class: "app-caption" }, `App of ${item.tool} · MCP server ${item.server} (sandboxed; its tool calls ask like the agent's)`));
    if (!item.frameUrl || !item.frameId) {
      box.append(el(d, "div", { "data-testid": "app-notice", class: "app-notice", role: "note" }, item.notice ?? "This app is not shown."));
      return box;
    }
    box.dataset.frameId = item.frameId;
    const refused = appPermissionsLine(item.permissions);
    if (refused) box.append(el(d, "div", { "data-testid": "app-permissions", class: "app-notice", role: "note" }, refused));
    const frame: HTMLIFrameElement = el(d, "iframe", {
      "data-testid": "app-frame",
      class: "app-frame",
      sandbox: "allow-scripts",
      allow: "",
      referrerpolicy: "no-referrer",
      title: `App of ${item.tool} from MCP server ${item.server}`,
    });
    frame.style.height = `${INITIAL_HEIGHT}px`;
    frame.src = item.frameUrl;
    const frameId = item.frameId;
    const host: AppHost = {
      callTool: (name, args) => this.ask({ type: "appCall", frameId, requestId: this.requestId(), tool: name, arguments: args }),
      message: async (text) => {
        await this.ask({ type: "appMessage", frameId, requestId: this.requestId(), text });
      },
      context: async (text) => {
        await this.ask({ type: "appContext", frameId, requestId: this.requestId(), text });
      },
      openLink: async (url) => {
        await this.ask({ type: "appOpenLink", frameId, requestId: this.requestId(), url });
      },
      resize: (height) => {
        frame.style.height = `${height}px`;
      },
    };
    const bridge = new AppBridge((m) => frame.contentWindow?.postMessage(m, "*"), host, {
      toolInput: item.arguments,
      toolResult: item.result,
      toolName: item.tool,
      theme: this.theme(),
    });
    this.mounted.set(item.id, { itemId: item.id, frameId, frame, bridge });
    box.append(frame);
    this.setContext(d, box, item.context);
    return box;
  }

  private setContext(d: Document, box: HTMLElement, context: string | null): void {
    let line = box.querySelector<HTMLElement>(".app-context");
    if (!context) {
      line?.remove();
      return;
    }
    if (!line) {
      line = el(d, "div", { "data-testid": "app-context", class: "app-context", role: "status" });
      box.append(line);
    }
    line.textContent = `Context this app gave the model: ${context}`;
  }

  /** A `message` event of the chat's window: true when it came from an app's frame (it went to
   * that app's bridge, or was dropped); false for any other source. */
  route(e: MessageEvent): boolean {
    if (e.source === null) return false;
    for (const m of this.mounted.values()) {
      if (m.frame.contentWindow !== null && e.source === m.frame.contentWindow) {
        m.bridge.receive(e.data);
        return true;
      }
    }
    return false;
  }

  /** The extension host's answer to an app's request. */
  reply(requestId: string, result?: JsonObject, error?: string): void {
    const r = this.replies.get(requestId);
    if (!r) return;
    this.replies.delete(requestId);
    if (error !== undefined || !result) r.reject(new Error(error ?? "no answer"));
    else r.resolve(result);
  }

  /** An app item left the chat: asks it to wind down, then forgets it (the caller removes the element). */
  async teardown(itemId: string): Promise<void> {
    const m = this.mounted.get(itemId);
    if (!m) return;
    this.mounted.delete(itemId);
    await m.bridge.teardown();
  }

  /** Whether an item has a live frame (for tests and the teardown of removed items). */
  has(itemId: string): boolean {
    return this.mounted.has(itemId);
  }

  /** Messages the flood limits dropped, per item (tests). */
  dropped(itemId: string): number {
    return this.mounted.get(itemId)?.bridge.dropped ?? 0;
  }

  private requestId(): string {
    return `app-${this.nextRequest++}`;
  }

  private ask(m: FromWebview & { requestId: string }): Promise<JsonObject> {
    return new Promise<JsonObject>((resolve, reject) => {
      this.replies.set(m.requestId, { resolve, reject });
      this.post(m);
    });
  }
}
