/**
 * The agent's plan (issue 27 item 4): a checklist under the header, above the transcript, so it
 * stays in sight while the turn runs (the questions pinned above the input keep their place).
 * A `<details>`: the user collapses it by mouse or keyboard and it stays as they left it; each
 * update changes the same rows in place (no new message). Hidden while there is no plan.
 */
import type { ChatState, PlanStep } from "../shared/state";
import { el } from "./dom";

const MARKS: Record<PlanStep["status"], string> = { completed: "✓", in_progress: "▸", pending: "○" };
const STATUS_WORDS: Record<PlanStep["status"], string> = { completed: "done", in_progress: "in progress", pending: "to do" };

/** "Plan · 1 of 3 done" (the summary line; also what a screen reader hears for the box). */
export function planSummary(steps: PlanStep[]): string {
  const done = steps.filter((s) => s.status === "completed").length;
  return `Plan · ${done} of ${steps.length} done`;
}

export class PlanView {
  readonly element: HTMLDetailsElement;
  private readonly summary: HTMLElement;
  private readonly list: HTMLOListElement;
  private readonly status: HTMLElement;
  private lastAnnounced = "";

  constructor(private readonly doc: Document) {
    this.element = el(doc, "details", { "data-testid": "plan", class: "plan", "aria-label": "The agent's plan" });
    this.element.open = true;
    this.summary = el(doc, "summary", { "data-testid": "plan-summary" });
    this.list = el(doc, "ol", { class: "plan-steps", "aria-label": "Plan steps" });
    // progress is announced politely (once per change of the summary), not every row
    this.status = el(doc, "span", { class: "visually-hidden", role: "status", "aria-live": "polite" });
    this.element.append(this.summary, this.list, this.status);
    this.element.hidden = true;
  }

  render(state: ChatState): void {
    const steps = state.plan ?? [];
    this.element.hidden = steps.length === 0;
    if (steps.length === 0) {
      this.lastAnnounced = "";
      return;
    }
    const summary = planSummary(steps);
    this.summary.textContent = summary;
    // the rows are updated in place (a step marked done is the same row, now checked)
    while (this.list.children.length > steps.length) this.list.lastElementChild?.remove();
    steps.forEach((step, i) => {
      let row = this.list.children[i] as HTMLLIElement | undefined;
      if (!row) {
        row = el(this.doc, "li", { "data-testid": "plan-step", class: "plan-step" });
        row.append(el(this.doc, "span", { class: "plan-mark", "aria-hidden": "true" }), el(this.doc, "span", { class: "plan-text" }),
          el(this.doc, "span", { class: "visually-hidden plan-state" }));
        this.list.append(row);
      }
      if (row.dataset.status !== step.status) row.dataset.status = step.status;
      if (step.status === "in_progress") row.setAttribute("aria-current", "step");
      else row.removeAttribute("aria-current");
      const [mark, text, word] = Array.from(row.children) as HTMLElement[];
      mark.textContent = MARKS[step.status];
      if (text.textContent !== step.content) text.textContent = step.content; // text only: never HTML
      word.textContent = ` (${STATUS_WORDS[step.status]})`;
      row.title = `${step.content} (${STATUS_WORDS[step.status]})`;
    });
    if (summary !== this.lastAnnounced) {
      this.status.textContent = summary;
      this.lastAnnounced = summary;
    }
  }
}
