/**
 * Background jobs (issue 41): `agent/jobs`, `agent/stopJob`, `agent/jobsChanged`.
 * Mirrors agent_ls/server/protocol/jobs.py.
 */

/** `agent/jobs`: the jobs of a session (without `sessionId`: of every session). */
export interface JobsParams {
  sessionId?: string | null;
}

/** `agent/stopJob`: the user's Stop. */
export interface StopJobParams {
  sessionId: string;
  /** `bg-3`. */
  jobId: string;
}

/** One background job as the chat's Running strip shows it. */
export interface JobPayload {
  sessionId: string;
  /** Short and stable within the session: `bg-1`, `bg-2`, ... */
  id: string;
  /** `shell` (a background bash command) or `task` (an MCP task). */
  kind: string;
  /** The command line, or the task's tool. */
  title: string;
  /** running, exited, killed, stopped, timed_out, failed; a task's working, input_required, completed, cancelled. */
  status: string;
  running: boolean;
  /** Seconds since the epoch. */
  started: number;
  elapsedMs: number;
  /** The last line it printed that is not blank. */
  lastLine?: string;
  exitCode?: number | null;
  /** The signal that ended it (`SIGTERM`). */
  signal?: string | null;
  message?: string;
}

export interface JobsResult {
  jobs: JobPayload[];
}

/** `agent/jobsChanged`: all of the session's jobs now. */
export interface JobsChangedParams {
  sessionId: string;
  jobs: JobPayload[];
}
