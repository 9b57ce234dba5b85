/**
 * MCP Apps in the chat on the extension host side: the client's `mcpApps` capability, each app's
 * HTML registered with the frame server (./appFrames; the webview gets the frame's address, never
 * the HTML), an app's requests the webview's bridge passed on (`agent/appCallTool`,
 * `agent/appContext`, `ui/open-link`, `ui/message`) answered with the frame's own session and
 * server, a resumed conversation's apps read again (`agent/appResource`), and the frames of a
 * conversation no longer shown torn down.
 */
import type { StaticFeature } from "vscode-languageclient/node";
import { agentLsCapability } from "../capability";
import type { AppWire } from "../../shared/agentEvents";
import { resumedApps } from "../../shared/history";
import type { FromWebview, ToWebview } from "../../shared/messages";
import type { ChatAction, ChatState } from "../../shared/state";
import { errorText } from "../errors";
import { fact } from "../factLog";
import * as P from "../protocol";
import { AppFrames, openAppLink } from "./appFrames";

/** `capabilities.experimental.agentLs.mcpApps: true`: the chat renders MCP Apps. */
export function appsCapabilityFeature(): StaticFeature {
  return agentLsCapability(P.APPS_CAPABILITY);
}

/** A CallToolResult for an app from the host's answer to agent/appCallTool. */
export function appToolResult(r: P.ToolResultPayload): Record<string, unknown> {
  const out: Record<string, unknown> = { content: [{ type: "text", text: r.content }], isError: r.isError };
  if (r.structured) out.structuredContent = r.structured;
  return out;
}

/** At most this many apps of a resumed conversation are read again (the frame server keeps 64). */
export const MAX_RESUMED_APPS = 16;

/** An app's request from the webview's bridge. */
export type AppRequest = Extract<FromWebview, { type: "appCall" | "appMessage" | "appContext" | "appOpenLink" }>;

/** Where the answer to an app's request goes (the chat surface that passed it on). */
export interface AppReplyTarget {
  post(message: ToWebview): void;
}

/** What the apps need of the chat. */
export interface AppsHost {
  dispatch(action: ChatAction): void;
  state(): ChatState;
  request<R>(method: string, params: unknown): Promise<R>;
  /** Whether a turn runs (an app's ui/message is then refused). */
  busy(): boolean;
  /** Runs a prompt the user sees as `shown` and the model gets as `text`. */
  prompt(shown: string, text: string): Promise<void>;
}

export class ChatApps {
  /** Where the MCP Apps' documents are served from (./appFrames). */
  readonly frames = new AppFrames();

  constructor(private readonly host: AppsHost) {}

  /** After a change of the chat's state: another conversation shown forgets the apps of the
   * others (their frames torn down). */
  sessionShown(sessionId: string | null): void {
    this.frames.keepOnly(sessionId);
  }

  /** An app's request the webview's bridge passed on: answered to that surface (`appReply`). The
   * frame's session and server are the host's record; a frame it does not know is refused. */
  async request(surface: AppReplyTarget, msg: AppRequest): Promise<void> {
    const reply = (result?: Record<string, unknown>, error?: string) =>
      surface.post({ type: "appReply", requestId: msg.requestId, ...(result ? { result } : {}), ...(error !== undefined ? { error } : {}) });
    const frame = this.frames.get(msg.frameId);
    if (!frame || frame.sessionId !== this.host.state().sessionId) {
      reply(undefined, "this app is not part of the conversation shown");
      return;
    }
    try {
      if (msg.type === "appCall") {
        fact(`app-call ${frame.server} ${msg.tool}`);
        const r = await this.host.request<P.ToolResultPayload>(P.APP_CALL_TOOL, {
          sessionId: frame.sessionId, server: frame.server, tool: msg.tool, arguments: msg.arguments,
        } satisfies P.AppCallToolParams);
        reply(appToolResult(r));
      } else if (msg.type === "appOpenLink") {
        await openAppLink(frame, msg.url);
        fact(`app-open-link ${frame.server}`);
        reply({});
      } else if (msg.type === "appContext") {
        await this.host.request(P.APP_CONTEXT, {
          sessionId: frame.sessionId, server: frame.server, resourceUri: frame.resourceUri, text: msg.text,
        } satisfies P.AppContextParams);
        this.host.dispatch({ type: "appContext", frameId: frame.id, text: msg.text });
        fact(`app-context ${frame.server}`);
        reply({});
      } else {
        // ui/message: a prompt the user sees, marked as the app's (never a hidden one)
        if (this.host.busy()) {
          reply(undefined, "the agent is answering; the message was not sent");
          return;
        }
        const shown = `From the app of ${frame.tool} (MCP server ${frame.server}): ${msg.text}`;
        const text = `[A message from the MCP app of tool '${frame.tool}' (server '${frame.server}'), shown to the user as sent by that app]\n${msg.text}`;
        fact(`app-message ${frame.server}`);
        reply({});
        await this.host.prompt(shown, text);
      }
    } catch (e) {
      reply(undefined, errorText(e));
    }
  }

  /** A resumed session's MCP Apps under their cards again: each read from its server now
   * (agent/appResource; the store keeps no HTML), served like a live call's. One that cannot be
   * shown (the server is gone, the read failed) gets its card's line saying why; only the last
   * {@link MAX_RESUMED_APPS} are loaded. */
  async resume(sessionId: string, messages: P.StoredMessage[]): Promise<void> {
    const apps = resumedApps(messages);
    if (apps.length) await this.frames.start().catch(() => undefined);
    await Promise.all(apps.map(async ({ callId, app }, i) => {
      let payload: P.McpAppPayload = { ...app, arguments: app.arguments ?? {}, html: null, csp: null, permissions: null, prefersBorder: null, error: null };
      if (i < apps.length - MAX_RESUMED_APPS) {
        payload.error = `only the last ${MAX_RESUMED_APPS} apps of a conversation are shown again`;
      } else {
        try {
          const r = await this.host.request<P.AppResourcePayload>(P.APP_RESOURCE, { server: app.server, tool: app.tool } satisfies P.AppResourceParams);
          payload = { ...payload, resourceUri: r.resourceUri, html: r.html, csp: r.csp, permissions: r.permissions, prefersBorder: r.prefersBorder };
        } catch (e) {
          payload.error = `it could not be read again from MCP server ${app.server}: ${errorText(e)}`;
        }
      }
      if (this.host.state().sessionId !== sessionId) return; // the chat moved on meanwhile
      const wire = this.wire(sessionId, payload);
      fact(`app-resumed ${app.server} ${wire.resourceUri} ${wire.frameId ? "shown" : "not shown"}`);
      this.host.dispatch({ type: "app", sessionId, callId, app: wire });
    }));
  }

  /** An app as the webview gets it: its HTML registered with the frame server (the webview gets
   * the frame's address, never the HTML). */
  wire(sessionId: string | null, app: P.McpAppPayload): AppWire {
    const frame = this.frames.register(sessionId ?? this.host.state().sessionId ?? "", app);
    const why = app.html && !frame ? "the chat could not start the server that shows apps" : app.error;
    return { ...app, html: null, error: why ?? null, frameId: frame?.id ?? null, frameUrl: frame?.url ?? null };
  }

  dispose(): void {
    this.frames.dispose();
  }
}
