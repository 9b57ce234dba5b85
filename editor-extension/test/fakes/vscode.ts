/**
 * A small stand-in for the `vscode` module, so that the extension host's logic (the chat
 * controller, the code-action commands) runs in vitest. vitest.config.ts aliases `vscode`
 * here. Only what those modules touch exists; window functions are plain properties a test
 * may replace (e.g. `window.showInputBox = async () => "why?"`).
 */

type Listener<T> = (e: T) => unknown;

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((i) => i.dispose()));
  }
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  readonly event = (listener: Listener<T>): Disposable => {
    this.listeners.add(listener);
    return new Disposable(() => this.listeners.delete(listener));
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export interface CancellationToken {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: Listener<void>): Disposable;
}

export class CancellationTokenSource {
  private cancelled = false;
  private readonly emitter = new EventEmitter<void>();
  readonly token: CancellationToken;
  constructor() {
    const isCancelled = () => this.cancelled;
    const emitter = this.emitter;
    this.token = {
      get isCancellationRequested(): boolean {
        return isCancelled();
      },
      onCancellationRequested(listener: Listener<void>): Disposable {
        if (isCancelled()) {
          queueMicrotask(() => listener());
          return new Disposable();
        }
        return emitter.event(listener);
      },
    };
  }
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.emitter.fire();
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export class Uri {
  private constructor(readonly scheme: string, readonly fsPath: string) {}
  static file(p: string): Uri {
    return new Uri("file", p);
  }
  static parse(s: string): Uri {
    return s.startsWith("file://") ? new Uri("file", decodeURIComponent(s.slice(7))) : new Uri(s.split(":")[0], s);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, [base.fsPath, ...parts].join("/"));
  }
  toString(): string {
    return this.scheme === "file" ? `file://${this.fsPath}` : this.fsPath;
  }
  /** The path part (`scheme:/a/b` -> `/a/b`). */
  get path(): string {
    return this.scheme === "file" ? this.fsPath : this.fsPath.slice(this.scheme.length + 1).replace(/[?#].*$/, "");
  }
}

export class Position {
  constructor(readonly line: number, readonly character: number) {}
}
export class Range {
  constructor(readonly start: Position, readonly end: Position) {}
}

/** Records what an edit does: replacements and deleted files. */
export class WorkspaceEdit {
  readonly replaced: { uri: Uri; range: Range; text: string }[] = [];
  readonly deleted: Uri[] = [];
  replace(uri: Uri, range: Range, text: string): void {
    this.replaced.push({ uri, range, text });
  }
  deleteFile(uri: Uri, _options?: unknown): void {
    this.deleted.push(uri);
  }
}

export class ThemeIcon {
  constructor(readonly id: string, readonly color?: ThemeColor) {}
}
export class ThemeColor {
  constructor(readonly id: string) {}
}
export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}
export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: string;
  contextValue?: string;
  iconPath?: unknown;
  command?: { command: string; title: string; arguments?: unknown[] };
  constructor(readonly label: string, readonly collapsibleState?: TreeItemCollapsibleState) {}
}
export class CodeAction {
  command?: { title: string; command: string; arguments?: unknown[] };
  constructor(readonly title: string) {}
}

const outputChannel = () => ({
  info: (..._args: unknown[]): void => undefined,
  warn: (..._args: unknown[]): void => undefined,
  error: (..._args: unknown[]): void => undefined,
  appendLine: () => undefined,
  clear: () => undefined,
  show: () => undefined,
  dispose: () => undefined,
});

const activeEditor = new EventEmitter<unknown>();

export const window = {
  activeTextEditor: undefined as unknown,
  visibleTextEditors: [] as unknown[],
  onDidChangeActiveTextEditor: activeEditor.event,
  showInformationMessage: async (..._args: unknown[]): Promise<string | undefined> => undefined,
  showWarningMessage: async (..._args: unknown[]): Promise<string | undefined> => undefined,
  showErrorMessage: async (..._args: unknown[]): Promise<string | undefined> => undefined,
  showQuickPick: async (..._args: unknown[]): Promise<unknown> => undefined,
  showInputBox: async (..._args: unknown[]): Promise<string | undefined> => undefined,
  showOpenDialog: async (..._args: unknown[]): Promise<unknown> => undefined,
  showTextDocument: async (..._args: unknown[]): Promise<unknown> => undefined,
  setStatusBarMessage: (..._args: unknown[]) => new Disposable(),
  createOutputChannel: (..._args: unknown[]) => outputChannel(),
  withProgress: async <R>(_opts: unknown, task: () => Promise<R>): Promise<R> => task(),
};

export const env = {
  clipboard: { text: "", writeText: async (t: string) => void (env.clipboard.text = t) },
  openExternal: async (_uri: Uri): Promise<boolean> => true,
};

/** No other extension is installed (the Python extension's interpreter is not asked). */
export const extensions = {
  getExtension: (_id: string): unknown => undefined,
};

/** Fire to play VS Code granting its workspace trust (`workspace.onDidGrantWorkspaceTrust`). */
export const trustGranted = new EventEmitter<void>();

export const workspace = {
  workspaceFolders: undefined as unknown,
  isTrusted: true,
  onDidGrantWorkspaceTrust: trustGranted.event,
  openTextDocument: async (..._args: unknown[]): Promise<unknown> => undefined,
  applyEdit: async (_edit: WorkspaceEdit): Promise<boolean> => true,
  registerTextDocumentContentProvider: (_scheme: string, _provider: unknown) => new Disposable(),
  getConfiguration: (..._args: unknown[]) => ({ get: (_key: string): unknown => undefined }),
  onDidChangeConfiguration: new EventEmitter<unknown>().event,
};

export const commands = {
  registered: new Map<string, (...args: unknown[]) => unknown>(),
  registerCommand(id: string, fn: (...args: unknown[]) => unknown): Disposable {
    commands.registered.set(id, fn);
    return new Disposable(() => commands.registered.delete(id));
  },
  executeCommand: async (..._args: unknown[]): Promise<unknown> => undefined,
};
