/**
 * One chat webview (ChatApp) mounted in jsdom for a test, the way webview/main.ts mounts it in
 * the editor: `mount()` in a beforeEach, then `q` / `qa` find elements by data-testid, `act` and
 * `ev` deliver the host's reducer actions and agent events, `host.sent` holds what the webview
 * posted. `root`, `host` and `app` are live bindings to the current mount; `reload()` mounts a
 * new webview from what the current one saved (the view hidden and shown again).
 */
import type { FromWebview, ToWebview } from "../shared/messages";
import { initialState, type ChatAction, type ChatState } from "../shared/state";
import type { AgentEvent } from "../src/protocol";
import { ChatApp, type HostApi } from "../webview/app";

/** The webview API of the editor: records posted messages, keeps the saved state (as JSON). */
export class FakeHost implements HostApi {
  sent: FromWebview[] = [];
  saved: unknown = undefined;
  post(m: FromWebview): void {
    this.sent.push(m);
  }
  getState(): unknown {
    return this.saved;
  }
  setState(s: unknown): void {
    this.saved = JSON.parse(JSON.stringify(s));
  }
}

/** A chat state with the agent-ls server running. */
export function running(extra: Partial<ChatState> = {}): ChatState {
  return { ...initialState(), server: "running", ...extra };
}

export let root: HTMLElement;
export let host: FakeHost;
export let app: ChatApp;

function fresh(): HTMLElement {
  document.body.innerHTML = '<div id="app"></div>';
  const r = document.getElementById("app");
  if (!r) throw new Error("no #app");
  return r;
}

/** A new webview whose host sends it `state` (a running server by default). */
export function mount(state: Partial<ChatState> = {}): void {
  root = fresh();
  host = new FakeHost();
  app = new ChatApp(root, host);
  app.receive({ type: "state", state: running(state) });
}

/** A new webview restored from what the current one saved (no state from the host yet). */
export function reload(): void {
  const saved = host.saved;
  root = fresh();
  host = new FakeHost();
  host.saved = saved;
  app = new ChatApp(root, host);
}

export const q = (id: string): HTMLElement | null => root.querySelector<HTMLElement>(`[data-testid="${id}"]`);
export const qa = (id: string): HTMLElement[] => Array.from(root.querySelectorAll<HTMLElement>(`[data-testid="${id}"]`));
export const act = (action: ChatAction): void => {
  app.receive({ type: "action", action } satisfies ToWebview);
};
export const ev = (event: AgentEvent): void => {
  act({ type: "event", sessionId: "s1", event });
};
export const key = (target: Element, k: string, init: KeyboardEventInit = {}): boolean =>
  target.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true, ...init }));
