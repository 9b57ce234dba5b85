/**
 * The OS sandbox's workspace grants on the extension side (issue 47): "Allow for this workspace"
 * and "Undo" on a tool card's refusal (agent/setSandboxGrant), the grants the cards show
 * (agent/sandboxGrants), and the command "Agent: Sandbox Permissions" that lists every grant and
 * revokes the ones the user picks. A grant is the user's decision, kept by the server outside
 * the workspace (host-state.json): no workspace file can add one.
 */
import * as vscode from "vscode";
import { mergedGrants } from "../../shared/sandbox";
import type { ChatAction } from "../../shared/state";
import { fact } from "../factLog";
import * as P from "../protocol";

export interface SandboxGrantsDeps {
  dispatch(action: ChatAction): void;
  request<R>(method: string, params?: unknown): Promise<R>;
  warn(message: string): void;
}

export class SandboxGrantsUi {
  constructor(private readonly deps: SandboxGrantsDeps) {}

  /** The grants as the server keeps them, for the cards. */
  async refresh(): Promise<P.SandboxGrantsResult | null> {
    try {
      const r = await this.deps.request<P.SandboxGrantsResult>(P.SANDBOX_GRANTS, {});
      this.deps.dispatch({ type: "sandboxGrants", grants: mergedGrants(r) });
      return r;
    } catch (e) {
      this.deps.warn(`listing the sandbox's grants: ${e instanceof Error ? e.message : String(e)}`);
      return null;
    }
  }

  /** Adds (`granted`) or removes one grant; the cards follow. */
  async set(kind: "hosts" | "writes", value: string, granted: boolean, folder?: string): Promise<void> {
    const params: P.SetSandboxGrantParams = { kind, value, granted, ...(folder ? { folder } : {}) };
    const r = await this.deps.request<P.SandboxGrantsResult>(P.SET_SANDBOX_GRANT, params);
    this.deps.dispatch({ type: "sandboxGrants", grants: mergedGrants(r) });
    fact(`sandbox-grant ${kind} ${value} ${granted}`);
    const what = kind === "writes" ? `writing in ${value}` : `connections to ${value}`;
    void vscode.window.showInformationMessage(granted
      ? `Sandboxed commands may now make ${what} in this workspace (undo on the card or with Agent: Sandbox Permissions).`
      : `No longer allowed in this workspace: ${what}.`);
  }

  /** "Agent: Sandbox Permissions": every grant of every folder; the picked ones are revoked. */
  async showAndRevoke(): Promise<void> {
    const r = await this.refresh();
    if (!r) return;
    interface Row extends vscode.QuickPickItem { kind2: "hosts" | "writes"; value: string; folder: string }
    const rows: Row[] = r.folders.flatMap((f) => [
      ...f.writes.map((w): Row => ({ label: `Write: ${w}`, description: f.folder, kind2: "writes", value: w, folder: f.folder })),
      ...f.hosts.map((h): Row => ({ label: `Network: ${h}`, description: f.folder, kind2: "hosts", value: h, folder: f.folder })),
    ]);
    if (!rows.length) {
      void vscode.window.showInformationMessage("The OS sandbox has no workspace permissions beyond your settings.");
      return;
    }
    const picked = await vscode.window.showQuickPick(rows, {
      canPickMany: true,
      title: "Sandbox permissions for this workspace (kept in your agent-ls data)",
      placeHolder: "Pick the ones to revoke",
    });
    for (const p of picked ?? []) await this.set(p.kind2, p.value, false, p.folder);
  }
}
