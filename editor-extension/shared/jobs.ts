/**
 * Background jobs in the chat (issue 41): what the Running strip shows of `agent/jobs` and
 * `agent/jobsChanged` (JobPayload), checked (the server's payload is untrusted input for the
 * webview's DOM), and the words it uses.
 */
import type { JobPayload } from "../src/protocol";

/** One job as the chat keeps it. */
export interface JobRow {
  id: string;
  kind: string;
  title: string;
  status: string;
  running: boolean;
  /** Seconds since the epoch. */
  started: number;
  elapsedMs: number;
  lastLine: string;
  exitCode: number | null;
  signal: string | null;
  message: string;
}

/** The jobs of a payload list, malformed entries left out. */
export function jobRows(raw: unknown): JobRow[] {
  if (!Array.isArray(raw)) return [];
  const out: JobRow[] = [];
  for (const j of raw as Partial<JobPayload>[]) {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- untrusted input
    if (!j || typeof j !== "object" || typeof j.id !== "string" || typeof j.title !== "string") continue;
    out.push({
      id: j.id,
      kind: typeof j.kind === "string" ? j.kind : "shell",
      title: j.title,
      status: typeof j.status === "string" ? j.status : "running",
      running: j.running === true,
      started: typeof j.started === "number" ? j.started : 0,
      elapsedMs: typeof j.elapsedMs === "number" ? j.elapsedMs : 0,
      lastLine: typeof j.lastLine === "string" ? j.lastLine : "",
      exitCode: typeof j.exitCode === "number" ? j.exitCode : null,
      signal: typeof j.signal === "string" ? j.signal : null,
      message: typeof j.message === "string" ? j.message : "",
    });
  }
  return out;
}

/** "4s", "2m 05s", "1h 03m". */
export function elapsedText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** How long a job has run at `now` (ms since the epoch): counted on from its start while it runs. */
export function jobElapsed(job: JobRow, now: number): number {
  return job.running && job.started > 0 ? Math.max(job.elapsedMs, now - job.started * 1000) : job.elapsedMs;
}

/** "Running · 2" (the strip's heading; also what a screen reader hears for it). */
export function runningSummary(jobs: JobRow[]): string {
  return `Running · ${jobs.filter((j) => j.running).length}`;
}
