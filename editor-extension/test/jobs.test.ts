/**
 * The Running strip (issue 41): the chat session's background jobs while they run, each with its
 * command, elapsed time, last line and a Stop button that the keyboard reaches; jobs of other
 * sessions and ended ones are not shown; the command is text, never HTML. And the host side:
 * agent/jobsChanged of the shown session reaches the state, agent/jobs is polled while a job runs,
 * Stop is agent/stopJob.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { elapsedText, jobElapsed, jobRows } from "../shared/jobs";
import { parseFromWebview } from "../shared/messages";
import { initialState, reduce, type ChatAction, type ChatState } from "../shared/state";
import { ChatJobs, POLL_MS } from "../src/chat/jobs";
import type { JobPayload } from "../src/protocol";
import { act, host, mount, q, qa, reload } from "./webviewHarness";

const job = (id: string, extra: Partial<JobPayload> = {}): JobPayload => ({
  sessionId: "s1", id, kind: "shell", title: `npm run ${id}`, status: "running", running: true,
  started: Date.now() / 1000 - 65, elapsedMs: 65_000, lastLine: `${id} ready`, exitCode: null, signal: null, message: "",
  ...extra,
});

describe("the Running strip", () => {
  beforeEach(() => mount({ sessionId: "s1" }));

  it("is hidden while nothing runs", () => {
    expect(q("jobs")?.hidden).toBe(true);
    act({ type: "jobs", sessionId: "s1", jobs: [job("bg-1", { running: false, status: "exited", exitCode: 0 })] });
    expect(q("jobs")?.hidden).toBe(true);
  });

  it("shows each running job with its command, elapsed time, last line and Stop", () => {
    act({ type: "jobs", sessionId: "s1", jobs: [job("bg-1"), job("bg-2", { lastLine: "" }), job("bg-3", { running: false, status: "stopped" })] });
    expect(q("jobs")?.hidden).toBe(false);
    expect(q("jobs-summary")?.textContent).toBe("Running · 2");
    const rows = qa("job");
    expect(rows.map((r) => r.dataset.jobId)).toEqual(["bg-1", "bg-2"]);
    expect(rows[0].querySelector('[data-testid="job-title"]')?.textContent).toBe("npm run bg-1");
    expect(rows[0].querySelector('[data-testid="job-elapsed"]')?.textContent).toMatch(/^1m 0[5-9]s$/);
    expect(rows[0].querySelector<HTMLElement>('[data-testid="job-last"]')?.textContent).toBe("bg-1 ready");
    expect(rows[1].querySelector<HTMLElement>('[data-testid="job-last"]')?.hidden).toBe(true);
    const stop = rows[0].querySelector<HTMLButtonElement>('[data-testid="job-stop"]');
    expect(stop?.tagName).toBe("BUTTON"); // a real button: Tab reaches it, Enter and Space press it
    expect(stop?.getAttribute("aria-label")).toBe("Stop bg-1: npm run bg-1");
    expect(q("jobs")?.getAttribute("aria-labelledby")).toBe("jobs-heading");
  });

  it("Stop posts stopJob once and the row goes when the job has ended", () => {
    act({ type: "jobs", sessionId: "s1", jobs: [job("bg-1")] });
    const stop = q("job-stop") as HTMLButtonElement;
    stop.click();
    stop.click();
    expect(host.sent.filter((m) => m.type === "stopJob")).toEqual([{ type: "stopJob", jobId: "bg-1" }]);
    act({ type: "jobs", sessionId: "s1", jobs: [job("bg-1", { running: false, status: "stopped", signal: "SIGTERM" })] });
    expect(qa("job")).toEqual([]);
    expect(q("jobs")?.hidden).toBe(true);
  });

  it("updates rows in place and ignores another session's jobs", () => {
    act({ type: "jobs", sessionId: "s1", jobs: [job("bg-1")] });
    const row = q("job");
    act({ type: "jobs", sessionId: "s1", jobs: [job("bg-1", { lastLine: "compiled" })] });
    expect(q("job")).toBe(row);
    expect(q("job-last")?.textContent).toBe("compiled");
    act({ type: "jobs", sessionId: "other", jobs: [job("bg-1"), job("bg-2")] });
    expect(qa("job").length).toBe(1);
  });

  it("shows a command as text, never as HTML, and survives the view being hidden", () => {
    act({ type: "jobs", sessionId: "s1", jobs: [job("bg-1", { title: "<img src=x onerror=alert(1)>", lastLine: "<b>x</b>" })] });
    expect(q("job-title")?.textContent).toBe("<img src=x onerror=alert(1)>");
    expect(q("jobs")?.querySelector("img, b")).toBeNull();
    reload();
    expect(qa("job").length).toBe(1);
  });
});

describe("the jobs of the state", () => {
  it("are kept per session, cleared by a new session, malformed entries left out", () => {
    let s: ChatState = { ...initialState(), sessionId: "s1" };
    s = reduce(s, { type: "jobs", sessionId: "s1", jobs: [job("bg-1"), { id: 3 } as unknown as JobPayload] });
    expect(s.jobs?.map((j) => j.id)).toEqual(["bg-1"]);
    s = reduce(s, { type: "reset", sessionId: "s2" });
    expect(s.jobs).toEqual([]);
    expect(jobRows("nope")).toEqual([]);
  });

  it("counts on from the start while running", () => {
    const [row] = jobRows([job("bg-1", { started: 1000, elapsedMs: 5000 })]);
    expect(jobElapsed(row, 1_010_000)).toBe(10_000);
    expect(elapsedText(5_000)).toBe("5s");
    expect(elapsedText(3_725_000)).toBe("1h 02m");
  });

  it("stopJob from the webview is checked", () => {
    expect(parseFromWebview({ type: "stopJob", jobId: "bg-1" })).toEqual({ type: "stopJob", jobId: "bg-1" });
    expect(parseFromWebview({ type: "stopJob", jobId: 1 })).toBeNull();
  });
});

describe("the host side", () => {
  let state: ChatState;
  let actions: ChatAction[];
  let requests: [string, unknown][];
  let answer: JobPayload[];
  let jobs: ChatJobs;

  beforeEach(() => {
    vi.useFakeTimers();
    state = { ...initialState(), sessionId: "s1" };
    actions = [];
    requests = [];
    answer = [job("bg-1", { lastLine: "later" })];
    jobs = new ChatJobs({
      dispatch: (a) => {
        actions.push(a);
        state = reduce(state, a);
      },
      state: () => state,
      request: <R,>(method: string, params: unknown) => {
        requests.push([method, params]);
        return Promise.resolve((method === "agent/jobs" ? { jobs: answer } : answer[0]) as R);
      },
      warn: () => undefined,
    });
  });

  afterEach(() => {
    jobs.dispose();
    vi.useRealTimers();
  });

  it("puts the shown session's jobs in the state and polls while one runs", async () => {
    jobs.changed("s1", [job("bg-1")]);
    expect(state.jobs?.[0].lastLine).toBe("bg-1 ready");
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(requests).toEqual([["agent/jobs", { sessionId: "s1" }]]);
    expect(state.jobs?.[0].lastLine).toBe("later");
    answer = [job("bg-1", { running: false, status: "exited", exitCode: 0 })];
    await vi.advanceTimersByTimeAsync(POLL_MS);
    await vi.advanceTimersByTimeAsync(POLL_MS * 3);
    expect(requests.length).toBe(2); // nothing runs: no more polling
  });

  it("keeps another session's jobs until it is shown, and Stop is agent/stopJob", async () => {
    jobs.changed("s2", [job("bg-9")]);
    expect(state.jobs ?? []).toEqual([]);
    state = reduce(state, { type: "reset", sessionId: "s2" });
    jobs.sync();
    expect(state.jobs?.map((j) => j.id)).toEqual(["bg-9"]);
    await jobs.stop("bg-9");
    expect(requests[0]).toEqual(["agent/stopJob", { sessionId: "s2", jobId: "bg-9" }]);
  });
});
