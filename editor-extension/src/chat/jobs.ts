/**
 * The chat's background jobs on the extension host side (issue 41): `agent/jobsChanged` keeps
 * the latest jobs of each session, the chat's session gets its own into the state (the Running
 * strip); while one of them runs, `agent/jobs` is asked every few seconds for the last lines; the
 * strip's Stop is `agent/stopJob`.
 */
import type * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import type { ChatAction, ChatState } from "../../shared/state";
import * as P from "../protocol";

export interface JobsHost {
  dispatch(action: ChatAction): void;
  state(): ChatState;
  request<R>(method: string, params: unknown): Promise<R>;
  warn(text: string): void;
}

/** How often the last lines are asked for while a job runs (ms). */
export const POLL_MS = 2000;

export class ChatJobs {
  private readonly bySession = new Map<string, P.JobPayload[]>();
  private shown: string | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly host: JobsHost) {}

  bind(client: LanguageClient): vscode.Disposable {
    return client.onNotification(P.JOBS_CHANGED, (params: P.JobsChangedParams) => this.changed(params.sessionId, params.jobs));
  }

  /** The jobs of `sessionId` now. */
  changed(sessionId: string, jobs: P.JobPayload[]): void {
    this.bySession.set(sessionId, jobs);
    this.sync(true);
  }

  /** After any change of the chat's state: its session's jobs into it when the session changed. */
  sync(force = false): void {
    const sessionId = this.host.state().sessionId;
    if (sessionId !== this.shown || force) {
      this.shown = sessionId;
      if (sessionId !== null) this.host.dispatch({ type: "jobs", sessionId, jobs: this.bySession.get(sessionId) ?? [] });
    }
    const running = sessionId !== null && (this.bySession.get(sessionId) ?? []).some((j) => j.running);
    if (running && this.timer === null) this.timer = setInterval(() => void this.refresh(), POLL_MS);
    else if (!running && this.timer !== null) this.stopPolling();
  }

  /** Ask the server for the chat's session's jobs (their last lines). */
  async refresh(): Promise<void> {
    const sessionId = this.host.state().sessionId;
    if (sessionId === null) return;
    try {
      const r = await this.host.request<P.JobsResult>(P.JOBS, { sessionId } satisfies P.JobsParams);
      this.changed(sessionId, r.jobs);
    } catch (e) {
      this.stopPolling();
      this.host.warn(`listing background jobs: ${String(e)}`);
    }
  }

  /** The strip's Stop. */
  async stop(jobId: string): Promise<void> {
    const sessionId = this.host.state().sessionId;
    if (sessionId === null) return;
    await this.host.request<P.JobPayload>(P.STOP_JOB, { sessionId, jobId } satisfies P.StopJobParams);
    await this.refresh();
  }

  private stopPolling(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  dispose(): void {
    this.stopPolling();
  }
}
