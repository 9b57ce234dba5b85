/**
 * Open editors after a rewind (issue 40 item 2). The server rewinds files on disk; the
 * extension, not the server, takes care of the buffers, because only the editor knows which
 * are dirty, and a `workspace/applyEdit` would leave a clean buffer dirty (its text equal to the
 * disk, yet unsaved):
 * - a clean buffer of a rewound file follows the disk: VS Code reloads a clean document whose
 *   file changed on disk; we wait for it (a few seconds at most) and report any that did not;
 * - a dirty buffer is never touched: the user's unsaved text stays in the editor, and the chat
 *   says so (saving it writes it over the rewound file; "File: Revert File" shows the rewound one).
 * The plan shown before a rewind lists the dirty ones already (shared/rewind.ts).
 */
import * as vscode from "vscode";

export interface BufferState {
  path: string;
  dirty: boolean;
  text(): string;
}

export interface BufferDeps {
  /** The open text documents of files. */
  open(): BufferState[];
  /** The file's text on disk, null when it is gone. */
  read(path: string): Promise<string | null>;
  /** How long to wait for clean buffers to follow the disk, and how often to look. */
  waitMs: number;
  stepMs: number;
}

export interface BuffersAfter {
  /** Clean buffers that show the rewound content. */
  reloaded: string[];
  /** Dirty buffers left as they were (the unsaved text stays). */
  unsaved: string[];
  /** Clean buffers of files the rewind removed (their tabs say "deleted"). */
  removed: string[];
  /** Clean buffers that did not follow the disk in time. */
  stale: string[];
}

/** The open files among `paths` with unsaved changes. */
export function dirtyAmong(paths: readonly string[], deps: Pick<BufferDeps, "open">): string[] {
  const wanted = new Set(paths);
  return deps.open().filter((b) => b.dirty && wanted.has(b.path)).map((b) => b.path);
}

/** After a rewind changed `changed` on disk: what became of their open buffers (see the module). */
export async function settleBuffers(changed: readonly string[], deps: BufferDeps): Promise<BuffersAfter> {
  const out: BuffersAfter = { reloaded: [], unsaved: [], removed: [], stale: [] };
  const wanted = new Set(changed);
  const clean: BufferState[] = [];
  for (const b of deps.open()) {
    if (!wanted.has(b.path)) continue;
    if (b.dirty) out.unsaved.push(b.path);
    else clean.push(b);
  }
  const disk = new Map<string, string | null>();
  for (const b of clean) disk.set(b.path, await deps.read(b.path));
  let waiting = clean.filter((b) => disk.get(b.path) !== null);
  out.removed.push(...clean.filter((b) => disk.get(b.path) === null).map((b) => b.path));
  const deadline = Date.now() + deps.waitMs;
  for (;;) {
    // (the document of a path may be replaced by a new object when VS Code reloads it)
    const now = new Map(deps.open().map((b) => [b.path, b]));
    const still: BufferState[] = [];
    for (const b of waiting) {
      const cur = now.get(b.path) ?? b;
      if (cur.dirty) out.unsaved.push(b.path); // the user typed into it meanwhile
      else if (cur.text() === disk.get(b.path)) out.reloaded.push(b.path);
      else still.push(b);
    }
    waiting = still;
    if (!waiting.length || Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, deps.stepMs));
  }
  out.stale.push(...waiting.map((b) => b.path));
  return out;
}

/** The user-facing lines for what became of the open buffers (empty when there is nothing to say). */
export function buffersText(after: BuffersAfter, show: (p: string) => string): string[] {
  const names = (ps: string[]) => ps.map(show).join(", ");
  const lines: string[] = [];
  if (after.reloaded.length) lines.push(`Open editors updated to the rewound content: ${names(after.reloaded)}.`);
  if (after.unsaved.length) {
    lines.push(`Unsaved changes kept in the editor for ${names(after.unsaved)}: the file on disk was rewound, your unsaved text was not touched (Save writes it over the rewound file; "File: Revert File" shows the rewound one).`);
  }
  if (after.removed.length) lines.push(`Removed by the rewind, still open in an editor: ${names(after.removed)}.`);
  if (after.stale.length) lines.push(`The editor has not reloaded ${names(after.stale)} yet: "File: Revert File" shows the rewound content.`);
  return lines;
}

/** The real editor's buffers and disk. */
export function vscodeBuffers(waitMs = 3000): BufferDeps {
  return {
    open: () =>
      vscode.workspace.textDocuments
        .filter((d) => d.uri.scheme === "file" && !d.isClosed)
        .map((d) => ({ path: d.uri.fsPath, dirty: d.isDirty, text: () => d.getText() })),
    read: async (path) => {
      try {
        return new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(path)));
      } catch {
        return null;
      }
    },
    waitMs,
    stepMs: 100,
  };
}
