/**
 * The Running strip (issue 41): the session's background commands (and MCP tasks) while they run,
 * under the plan, above the transcript: each with its command, how long it has run (counted on
 * every second), its last line, and a Stop button (a real button: Tab reaches it, Enter or Space
 * presses it; its label names the command). Hidden while nothing runs. Theme colours only.
 */
import type { FromWebview } from "../shared/messages";
import { elapsedText, jobElapsed, runningSummary, type JobRow } from "../shared/jobs";
import type { ChatState } from "../shared/state";
import { el } from "./dom";

export class JobsStrip {
  readonly element: HTMLElement;
  private readonly heading: HTMLElement;
  private readonly list: HTMLUListElement;
  private jobs: JobRow[] = [];
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly doc: Document,
    private readonly post: (m: FromWebview) => void,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.element = el(doc, "section", { "data-testid": "jobs", class: "jobs", "aria-labelledby": "jobs-heading" });
    this.heading = el(doc, "h2", { id: "jobs-heading", class: "jobs-heading", "data-testid": "jobs-summary" });
    this.list = el(doc, "ul", { class: "jobs-list", "aria-label": "Background jobs" });
    this.element.append(this.heading, this.list);
    this.element.hidden = true;
    this.list.addEventListener("click", (e) => {
      const button = (e.target as Element | null)?.closest("button");
      if (button instanceof HTMLButtonElement && !button.disabled && button.dataset.jobId) {
        button.disabled = true; // one Stop per press; the change notification removes the row
        this.post({ type: "stopJob", jobId: button.dataset.jobId });
      }
    });
  }

  render(state: ChatState): void {
    this.jobs = (state.jobs ?? []).filter((j) => j.running);
    this.element.hidden = this.jobs.length === 0;
    if (this.jobs.length === 0) {
      this.list.textContent = "";
      this.stopTimer();
      return;
    }
    this.heading.textContent = runningSummary(this.jobs);
    const keep = new Set(this.jobs.map((j) => j.id));
    for (const row of Array.from(this.list.children) as HTMLElement[]) {
      if (!keep.has(row.dataset.jobId ?? "")) row.remove();
    }
    this.jobs.forEach((job, i) => {
      let row = this.rowOf(job.id);
      if (!row) {
        row = el(this.doc, "li", { class: "job", "data-testid": "job" });
        row.dataset.jobId = job.id;
        const top = el(this.doc, "div", { class: "job-top" });
        top.append(
          el(this.doc, "code", { class: "job-title", "data-testid": "job-title" }),
          el(this.doc, "span", { class: "job-elapsed", "data-testid": "job-elapsed" }),
          el(this.doc, "button", { class: "secondary job-stop", "data-testid": "job-stop", type: "button" }, "Stop"),
        );
        row.append(top, el(this.doc, "div", { class: "job-last", "data-testid": "job-last" }));
      }
      if (this.list.children[i] !== row) this.list.insertBefore(row, this.list.children[i] ?? null);
      const title = row.querySelector<HTMLElement>(".job-title");
      const last = row.querySelector<HTMLElement>(".job-last");
      const stop = row.querySelector<HTMLButtonElement>(".job-stop");
      if (title && title.textContent !== job.title) title.textContent = job.title; // text only: never HTML
      if (last) {
        const line = job.kind === "task" && job.message ? job.message : job.lastLine;
        last.textContent = line;
        last.hidden = line === "";
      }
      if (stop) {
        stop.dataset.jobId = job.id;
        stop.setAttribute("aria-label", `Stop ${job.id}: ${job.title}`);
        stop.title = `Stop ${job.title} and everything it started`;
      }
    });
    this.tick();
    if (this.timer === null) this.timer = setInterval(() => this.tick(), 1000);
  }

  /** The elapsed times, counted on from each job's start. */
  private tick(): void {
    if (!this.element.isConnected && this.timer !== null) {
      this.stopTimer();
      return;
    }
    const now = this.now();
    for (const job of this.jobs) {
      const cell = this.rowOf(job.id)?.querySelector<HTMLElement>(".job-elapsed");
      if (cell) cell.textContent = elapsedText(jobElapsed(job, now));
    }
  }

  private rowOf(id: string): HTMLLIElement | null {
    for (const row of Array.from(this.list.children) as HTMLLIElement[]) if (row.dataset.jobId === id) return row;
    return null;
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
