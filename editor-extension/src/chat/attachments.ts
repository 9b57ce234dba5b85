/**
 * The chat's link to the editor: the context attached to the next prompt (the selection, a file,
 * an MCP resource; shown as chips above the input) and code inserted at the cursor.
 */
import * as vscode from "vscode";
import type { AttachmentChip, ChatAction } from "../../shared/state";
import { attachmentLabel } from "../format";
import * as P from "../protocol";

export class ChatAttachments implements vscode.Disposable {
  private attachments: P.Attachment[] = [];
  /** The text editor last active (the chat's webview takes the focus from it). */
  private lastEditor: vscode.TextEditor | undefined;
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly dispatch: (action: ChatAction) => void,
    private readonly request: <R>(method: string, params: unknown) => Promise<R>,
  ) {
    this.lastEditor = vscode.window.activeTextEditor;
    this.subscription = vscode.window.onDidChangeActiveTextEditor((e) => {
      if (e) this.lastEditor = e;
    });
  }

  private editor(): vscode.TextEditor | undefined {
    const active = vscode.window.activeTextEditor;
    if (active) return active;
    if (this.lastEditor && vscode.window.visibleTextEditors.includes(this.lastEditor)) return this.lastEditor;
    return vscode.window.visibleTextEditors[0] ?? this.lastEditor;
  }

  private publish(): void {
    const chips: AttachmentChip[] = this.attachments.map((a) => ({ kind: a.kind, label: attachmentLabel(a) }));
    this.dispatch({ type: "attachments", attachments: chips });
  }

  add(a: P.Attachment): void {
    this.attachments.push(a);
    this.publish();
  }

  remove(index: number): void {
    this.attachments.splice(index, 1);
    this.publish();
  }

  /** The attachments for the prompt being sent: the chips are cleared. */
  take(): P.Attachment[] {
    const taken = this.attachments.splice(0);
    this.publish();
    return taken;
  }

  async attachContext(kind: "selection" | "file" | "resource"): Promise<void> {
    if (kind === "selection") {
      const ed = this.editor();
      if (!ed || ed.selection.isEmpty) {
        void vscode.window.showInformationMessage("Select some text in an editor first.");
        return;
      }
      this.add(selectionAttachment(ed));
    } else if (kind === "file") {
      const ed = this.editor();
      let uri = ed?.document.uri;
      let languageId = ed?.document.languageId;
      let text: string | null = ed ? ed.document.getText() : null;
      if (!uri || uri.scheme !== "file") {
        const picked = await vscode.window.showOpenDialog({ canSelectMany: false, openLabel: "Attach" });
        if (!picked || picked.length === 0) return;
        uri = picked[0];
        const doc = await vscode.workspace.openTextDocument(uri);
        languageId = doc.languageId;
        text = doc.getText();
      }
      this.add({ kind: "file", uri: uri.toString(), text, languageId: languageId ?? null });
    } else {
      const r = await this.request<P.ResourcesListResult>(P.MCP_RESOURCES_LIST, {} satisfies P.ResourcesListParams);
      const templates = r.templates ?? [];
      if (r.resources.length === 0 && templates.length === 0) {
        void vscode.window.showInformationMessage("No MCP server offers resources.");
        return;
      }
      type Item = vscode.QuickPickItem & { server: string; uri?: string; template?: string };
      const items: Item[] = [
        ...r.resources.map((res) => ({
          label: res.name || res.uri,
          description: res.server,
          detail: res.description || res.uri,
          server: res.server,
          uri: res.uri,
        })),
        ...templates.map((t) => ({
          label: t.name || t.uriTemplate,
          description: `${t.server} · template`,
          detail: t.description || t.uriTemplate,
          server: t.server,
          template: t.uriTemplate,
        })),
      ];
      const pick = await vscode.window.showQuickPick(items, { placeHolder: "Attach an MCP resource" });
      if (!pick) return;
      let uri = pick.uri;
      if (pick.template !== undefined) {
        // A resource template: the user fills in its {variables}.
        uri = await vscode.window.showInputBox({
          title: `Attach ${pick.label}`,
          prompt: `Fill in the template of ${pick.server} (replace each {…} part)`,
          value: pick.template,
          validateInput: (v) => (/\{[^}]*\}/.test(v) ? "Replace every {…} part of the template" : null),
        });
        if (!uri) return;
      }
      if (!uri) return;
      this.add({ kind: "resource", uri, server: pick.server, text: null });
    }
  }

  async insertAtCursor(text: string): Promise<void> {
    const ed = this.editor();
    if (!ed) {
      void vscode.window.showInformationMessage("Open a file to insert the code into.");
      return;
    }
    const selections = ed.selections;
    const shown = await vscode.window.showTextDocument(ed.document, { viewColumn: ed.viewColumn, preserveFocus: false });
    const ok = await shown.edit((b) => {
      for (const sel of selections) b.replace(sel, text);
    });
    if (!ok) void vscode.window.showWarningMessage("The editor did not accept the insertion.");
  }

  dispose(): void {
    this.subscription.dispose();
  }
}

export function selectionAttachment(ed: vscode.TextEditor): P.Attachment {
  const sel = ed.selection;
  return {
    kind: "selection",
    uri: ed.document.uri.toString(),
    text: ed.document.getText(sel),
    range: {
      start: { line: sel.start.line, character: sel.start.character },
      end: { line: sel.end.line, character: sel.end.character },
    },
    languageId: ed.document.languageId,
  };
}
