/** "Rewind to here" on each user message (issue 40): a real button (Tab reaches it, Enter or
 * Space presses it) named by its visible text; the extension host asks what to take back and
 * shows the plan before anything changes (src/chat/rewind.ts). */
import { el } from "./dom";

export function rewindButton(d: Document): HTMLElement {
  const row = el(d, "div", { class: "message-actions" });
  row.appendChild(
    el(d, "button", {
      "data-testid": "message-rewind",
      class: "icon message-rewind",
      title: "Go back to before this message: choose code, conversation or both, see what changes, then confirm",
      "aria-label": "Rewind to here (to before this message)",
    }, "Rewind to here"),
  );
  return row;
}
