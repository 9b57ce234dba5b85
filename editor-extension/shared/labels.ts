/** Labels shared by the extension host and the webview (no Node or vscode imports). */

/** What an attachment chip needs: an attachment sent with a prompt, or one a resumed message lists. */
export interface AttachmentLike {
  kind: string;
  uri?: string | null;
  server?: string | null;
  range?: { start: { line: number; character?: number }; end: { line: number; character?: number } } | null;
}

/** `main.py:2-3` for a selection, the file name for a file, `server: uri` for a resource. */
export function attachmentLabel(a: AttachmentLike): string {
  let base: string = a.kind;
  if (a.uri) {
    const last = a.uri.replace(/^.*[\\/]/, "");
    try {
      base = decodeURIComponent(last);
    } catch {
      base = last;
    }
  }
  if (a.kind === "selection" && a.range) return `${base}:${a.range.start.line + 1}-${a.range.end.line + 1}`;
  if (a.kind === "resource") return `${a.server ?? "mcp"}: ${a.uri ?? ""}`;
  return base;
}
