/**
 * The questions the agent waits on, as the chat shows them: tool approvals, MCP server trust,
 * workspace trust, MCP sampling consent and elicitation forms. Unanswered, they are pinned above
 * the input (issue 17); answered, they stay in the transcript with the answer in words.
 */
import { commandLine, pairLines, visible } from "../shared/commandLine";
import type {
  ApprovalItem,
  ChatItem,
  ElicitItem,
  SamplingItem,
  TrustEntry,
  TrustItem,
  WorkspaceTrustItem,
} from "../shared/state";
import { el, json } from "./dom";
import { buildFields, schemaFields } from "./schemaForm";

/** A question the agent waits on (approval, trust, elicitation, sampling consent): pinned above
 * the input, outside the scrolling transcript, until it is answered (issue 17). */
export function isPending(item: ChatItem): boolean {
  switch (item.kind) {
    case "approval":
    case "trust":
    case "workspaceTrust":
    case "elicit":
    case "sampling":
      return item.answer === null;
    default:
      return false;
  }
}

const SAMPLING_LABELS: Record<string, string> = {
  allow_once: "Allow once",
  allow_session: "Allow for session",
  deny: "Deny",
};

const APPROVAL_LABELS: Record<string, string> = {
  allow_once: "Allow once",
  allow_session: "Allow for session",
  deny: "Deny",
};

/** A tool call that needs the user's approval: the tool, its server, why, and every argument. */
export function renderApproval(d: Document, item: ApprovalItem): HTMLElement {
  const box = el(d, "div", { "data-testid": "approval", class: "approval" });
  if (item.answer) box.dataset.answered = item.answer;
  const head = el(d, "div", { class: "head" });
  head.append(
    d.createTextNode("Allow "),
    el(d, "b", {}, item.displayName || item.tool),
    d.createTextNode(item.server ? ` from ${item.server}?` : "?"),
  );
  box.append(head);
  if (item.answer === null) {
    if (item.reason) box.append(el(d, "div", { class: "reason" }, item.reason));
    // Every argument in full, wrapped (never clipped); characters that would not show are escapes.
    // (short arguments on one line: a pinned question in a short panel keeps its buttons in view)
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify(undefined) is undefined
  const compact = JSON.stringify(item.args) ?? "";
    const text = compact.length <= 60 ? compact : json(item.args);
    box.append(
      el(d, "div", { class: "label", title: item.tool }, "Arguments:"),
      el(d, "pre", { class: "args", "data-testid": "approval-args" }, text.split("\n").map(visible).join("\n")),
    );
    if (item.sensitive) {
      box.append(el(d, "div", { class: "reason sensitive", "data-testid": "approval-sensitive", role: "note" },
        `Protected file: ${visible(item.sensitive)}`));
    }
    const row = el(d, "div", { class: "buttons" });
    row.append(el(d, "button", { "data-answer": "allow_once" }, APPROVAL_LABELS.allow_once));
    // Deny next to "Allow once": the two short answers share the first line in a narrow side
    // bar, and the session choices (long: they name their scope, "Allow `git status` … for this
    // session") wrap below them instead of pushing Deny to a line of its own. An older server
    // sends no scopes and gets the one "Allow for session" button.
    row.append(el(d, "button", { "data-answer": "deny", class: "secondary" }, APPROVAL_LABELS.deny));
    const scopes = item.scopes ?? [{ id: "", label: APPROVAL_LABELS.allow_session }];
    for (const s of scopes) {
      const attrs: Record<string, string> = { "data-answer": "allow_session", "data-testid": "approval-scope" };
      if (s.id) attrs["data-scope"] = s.id;
      row.append(el(d, "button", attrs, visible(s.label)));
    }
    box.append(row);
  } else if (item.withdrawn) {
    box.dataset.withdrawn = "true";
    head.append(el(d, "span", { class: "answer" }, " Withdrawn (no longer needed)"));
  } else {
    const scoped = item.answer === "allow_session" ? item.scopeLabel : undefined;
    head.append(el(d, "span", { class: "answer" }, ` ${scoped ?? APPROVAL_LABELS[item.answer]}`));
  }
  return box;
}

/** A file of the workspace card, as the card names it: relative to the folder its head names in
 * full (at 300 px a full path takes four lines and pushes the command out of view); a file
 * outside the folder keeps its whole path. */
export function inFolder(file: string, folder: string): string {
  const sep = folder.includes("\\") && !folder.includes("/") ? "\\" : "/";
  const base = folder.endsWith(sep) ? folder : folder + sep;
  return base !== sep && file.startsWith(base) && file.length > base.length ? file.slice(base.length) : file;
}

/** An MCP server entry in full: what runs (wrapped, never clipped), where, with what, and
 * what changed since the user trusted it. */
function renderEntry(d: Document, entry: TrustEntry, folder: string | null): HTMLElement {
  const box = el(d, "div", { class: "entry", "data-testid": "trust-entry", "data-server": entry.server });
  if (folder !== null) {
    const head = el(d, "div", { class: "entry-head" });
    head.append(el(d, "b", {}, visible(entry.server)), d.createTextNode(` (${visible(entry.transport)}) from ${visible(inFolder(entry.source, folder))}`));
    box.append(head);
  }
  // What changed since the user trusted it comes first: it is what this question is about.
  if (entry.changes.length) {
    const list = el(d, "ul", { class: "changes", "data-testid": "trust-changes", "aria-label": "Changed since you trusted it" });
    for (const c of entry.changes) list.append(el(d, "li", {}, visible(c)));
    box.append(el(d, "div", { class: "label" }, "Changed since you trusted it:"), list);
  }
  if (entry.command) {
    box.append(el(d, "div", { class: "label" }, "Runs:"), el(d, "pre", { class: "args", "data-testid": "trust-command" }, commandLine(entry.command, entry.args)));
  }
  if (entry.cwd) box.append(el(d, "div", { class: "reason", "data-testid": "trust-cwd" }, `in ${visible(entry.cwd)}`));
  if (entry.url) {
    box.append(el(d, "div", { class: "label" }, "Connects to:"), el(d, "pre", { class: "args", "data-testid": "trust-url" }, visible(entry.url)));
  }
  const pairs = (title: string, testid: string, values: Record<string, string>, sep: string) => {
    const lines = pairLines(values, sep);
    if (!lines.length) return;
    box.append(el(d, "div", { class: "label" }, title), el(d, "pre", { class: "args", "data-testid": testid }, lines.join("\n")));
  };
  pairs("Environment:", "trust-env", entry.env, "=");
  pairs("Headers:", "trust-headers", entry.headers, ": ");
  // OAuth decides which files are read and where credentials are sent: every setting, in full.
  pairs("OAuth:", "trust-oauth", entry.oauth, ": ");
  if (entry.refused.length) {
    const names = entry.refused.map((k) => `oauth.${visible(k)}`).join(", ");
    box.append(el(d, "div", { class: "reason", "data-testid": "trust-refused" }, `Refused in a workspace file (credentials come only from your user settings): ${names}. This server does not start.`));
  }
  pairs("Other settings:", "trust-options", entry.options, ": ");
  if (entry.variables.length) {
    box.append(el(d, "div", { class: "reason", "data-testid": "trust-variables" }, `Receives the values of: ${entry.variables.map(visible).join(", ")}`));
  }
  return box;
}

/** An MCP server asks to start (or changed since the user trusted it). */
export function renderTrust(d: Document, item: TrustItem): HTMLElement {
  const box = el(d, "div", { "data-testid": "trust-prompt", class: "approval trust", role: "group", "aria-label": `Start the MCP server ${item.server}?` });
  if (item.answer) box.dataset.answered = item.answer;
  const head = el(d, "div", { class: "head" });
  const verb = item.changes.length ? "changed" : "defined";
  head.append(d.createTextNode("Start the MCP server "), el(d, "b", {}, visible(item.server)), d.createTextNode(` (${visible(item.transport)}) ${verb} by ${visible(item.source)}?`));
  box.append(head, renderEntry(d, item, null));
  if (item.answer === null) {
    const row = el(d, "div", { class: "buttons" });
    row.append(
      el(d, "button", { "data-answer": "trust" }, "Trust and start"),
      el(d, "button", { "data-answer": "deny", class: "secondary" }, "Don't start"),
    );
    box.append(row);
  } else {
    if (item.withdrawn) box.dataset.withdrawn = "true";
    const text = item.withdrawn ? "Withdrawn (no longer needed)" : item.answer === "trust" ? "Trusted" : item.answer === "deny" ? "Not trusted" : "No answer";
    box.append(el(d, "div", { class: "answer" }, text));
  }
  return box;
}

/** A workspace folder asks for trust: every server it defines and every setting that needs it. */
export function renderWorkspaceTrust(d: Document, item: WorkspaceTrustItem): HTMLElement {
  const title = "Trust this workspace's agent settings?";
  const box = el(d, "div", { "data-testid": "workspace-trust-prompt", "data-folder": item.folder, class: "approval trust workspace-trust", role: "group", "aria-label": title });
  if (item.answer) box.dataset.answered = item.answer;
  const head = el(d, "div", { class: "head" });
  head.append(el(d, "b", {}, title), d.createTextNode(` ${visible(item.folder)}`));
  box.append(head);
  if (item.answer !== null) {
    if (item.withdrawn) box.dataset.withdrawn = "true";
    const text = item.withdrawn
      ? "Withdrawn (the settings changed, or the question is no longer needed)"
      : item.answer === "trust" ? "Trusted" : item.answer === "restricted" ? "Kept restricted" : "No answer";
    box.append(el(d, "div", { class: "answer" }, text));
    return box;
  }
  box.append(el(d, "div", { class: "reason" }, "Until you trust it, its settings files can only tighten: the MCP servers and settings below are ignored."));
  if (item.previouslyTrusted && item.changes.length) {
    const list = el(d, "ul", { class: "changes", "data-testid": "workspace-changes" });
    for (const c of item.changes) list.append(el(d, "li", {}, visible(c)));
    box.append(el(d, "div", { class: "label" }, "Changed since you trusted it:"), list);
  }
  if (item.servers.length) {
    box.append(el(d, "div", { class: "label" }, `MCP servers it defines (they start when you trust it):`));
    for (const entry of item.servers) box.append(renderEntry(d, entry, item.folder));
  }
  if (item.settings.length) {
    box.append(el(d, "div", { class: "label" }, "Settings that need your trust:"));
    const list = el(d, "ul", { class: "settings", "data-testid": "workspace-settings" });
    for (const s of item.settings) {
      const li = el(d, "li", { "data-key": s.key });
      li.append(el(d, "code", {}, `${visible(s.key)} = ${visible(s.value)}`), el(d, "div", { class: "reason" }, `${s.why} (${visible(inFolder(s.source, item.folder))})`));
      list.append(li);
    }
    box.append(list);
  }
  const row = el(d, "div", { class: "buttons" });
  row.append(
    el(d, "button", { "data-answer": "trust" }, "Trust workspace"),
    el(d, "button", { "data-answer": "restricted", class: "secondary" }, "Keep restricted"),
  );
  box.append(row);
  return box;
}

/** MCP sampling consent: which server, which model, how much, and what it would send. */
export function renderSampling(d: Document, item: SamplingItem): HTMLElement {
  const box = el(d, "div", { "data-testid": "sampling-prompt", "data-server": item.server, class: "approval sampling" });
  const head = el(d, "div", { class: "head" });
  head.append(
    el(d, "b", {}, item.server),
    d.createTextNode(" asks to use the model "),
    el(d, "code", {}, item.model),
    d.createTextNode(` (at most ${item.maxTokens} tokens)`),
  );
  if (item.endpoint) head.append(d.createTextNode(" at "), el(d, "code", { "data-testid": "sampling-endpoint" }, item.endpoint));
  box.append(head);
  if (item.answer !== null) {
    box.dataset.answered = item.answer;
    if (item.withdrawn) box.dataset.withdrawn = "true";
    const text = item.withdrawn ? "Withdrawn (no longer needed)" : SAMPLING_LABELS[item.answer] ?? item.answer;
    box.append(el(d, "div", { class: "answer" }, text));
    return box;
  }
  if (item.systemPrompt) box.append(el(d, "div", { class: "reason", "data-testid": "sampling-system" }, `System prompt: ${item.systemPrompt}`));
  const list = el(d, "div", { class: "sampling-messages", "data-testid": "sampling-messages", tabindex: "0", role: "group", "aria-label": "The messages it would send" });
  if (item.omittedMessages > 0) list.append(el(d, "div", { class: "muted" }, `${item.omittedMessages} earlier messages not shown`));
  for (const m of item.messages) {
    const row = el(d, "div", { class: "sampling-message", "data-role": m.role });
    row.append(el(d, "b", {}, `${m.role}: `), el(d, "pre", { class: "args" }, m.text));
    list.append(row);
  }
  box.append(list);
  const row = el(d, "div", { class: "buttons" });
  for (const a of ["allow_once", "allow_session", "deny"] as const) {
    row.append(el(d, "button", { "data-answer": a, class: a === "deny" ? "secondary" : "" }, SAMPLING_LABELS[a]));
  }
  box.append(row);
  return box;
}

/** An MCP server asks the user through a form (elicitation); `submit` gets the filled form. */
export function renderElicit(d: Document, item: ElicitItem, submit: (item: ElicitItem, form: HTMLFormElement) => void): HTMLElement {
  const box = el(d, "div", { class: "approval elicit" });
  const head = el(d, "div", { class: "head" });
  head.append(el(d, "b", {}, item.server), d.createTextNode(" asks: "), d.createTextNode(item.message));
  box.append(head);
  if (item.answer !== null) {
    box.dataset.answered = item.answer;
    if (item.withdrawn) box.dataset.withdrawn = "true";
    const text = item.withdrawn
      ? "Withdrawn (no longer needed)"
      : item.answer === "accept" ? `Sent: ${json(item.content ?? {})}` : item.answer === "decline" ? "Declined" : "Cancelled";
    box.append(el(d, "div", { class: "answer" }, text));
    return box;
  }
  const form = el(d, "form", { "data-testid": "elicitation-form" });
  const fields = schemaFields(item.schema);
  buildFields(d, form, fields);
  const row = el(d, "div", { class: "buttons" });
  row.append(
    el(d, "button", { "data-testid": "elicit-submit", type: "submit" }, "Submit"),
    el(d, "button", { "data-testid": "elicit-decline", type: "button", class: "secondary" }, "Decline"),
  );
  form.append(row);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    submit(item, form);
  });
  box.append(form);
  return box;
}
