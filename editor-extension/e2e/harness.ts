// Building blocks of the end-to-end driver: the run config (what test_e2e.py hands over), polling
// waits, the extension's fact log, and named steps with screenshots. What acts on the workbench
// is in workbench.ts, on the chat webview in chat.ts, the accessibility checks in a11y.ts.
// Runs on Node 24 by type stripping: erasable TypeScript only (no enums, no parameter properties).

import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import type { Config, Scenario } from './types.ts';

export type Playwright = typeof import('playwright-core');

export function loadPlaywright(nodeModules: string): Playwright {
  const require = createRequire(path.join(nodeModules, 'noop.js'));
  return require('playwright-core') as Playwright;
}

/** The run config a driver is given as its one argument (a JSON file the Python test writes). */
export function readConfig(driver: string): unknown {
  const configPath = process.argv[2];
  if (!configPath) {
    process.stderr.write(`usage: node ${driver} CONFIG.json\n`);
    process.exit(2);
  }
  return JSON.parse(fs.readFileSync(configPath, 'utf8'));
}

/** Debian's Chromium, headless, in a fresh profile, with the flags this closed network needs
 * (no background connections, no component updates, no sync). */
export async function launchBrowser(
  cfg: Pick<Config, 'nodeModules' | 'browserProfile' | 'chromium'>,
  viewport: { width: number; height: number },
): Promise<BrowserContext> {
  const { chromium } = loadPlaywright(cfg.nodeModules);
  return chromium.launchPersistentContext(cfg.browserProfile, {
    headless: true,
    executablePath: cfg.chromium,
    viewport,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Whitespace-normalized text (markdown rendering reflows whitespace). */
export const norm = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** Poll `probe` until it returns a value other than undefined/false, or throw `what` on timeout. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  intervalMs = 100,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > end) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message.split('\n')[0]})` : '';
      throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what}${why}`);
    }
    await sleep(intervalMs);
  }
}

// --------------------------------------------------------------------------- fact log

/** The extension's fact log: one fact per line (see editor-extension/CONTRACT.md). */
export class FactLog {
  readonly file: string;

  constructor(file: string) {
    this.file = file;
  }

  lines(): string[] {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch {
      return [];
    }
    return text.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
  }

  /** A position to wait for facts written after now. */
  mark(): number {
    return this.lines().length;
  }

  /** The fact text without an optional leading timestamp ("2026-...Z fact" or "[...] fact"). */
  static fact(line: string): string {
    return line.replace(/^\[[^\]]*\]\s*/, '').replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z?\s+/, '');
  }

  find(re: RegExp, after = 0): string | undefined {
    return this.lines().slice(after).map((l) => FactLog.fact(l)).find((f) => re.test(f));
  }

  has(re: RegExp, after = 0): boolean {
    return this.find(re, after) !== undefined;
  }

  async waitFor(re: RegExp, timeoutMs: number, after = 0): Promise<string> {
    return until(`the fact ${re} in the fact log ${this.file}`, () => this.find(re, after), timeoutMs);
  }

  tail(n = 20): string[] {
    return this.lines().slice(-n);
  }

  /** The last facts written after `mark`, for failure messages. */
  since(mark: number): string {
    const lines = this.lines().slice(mark);
    return lines.length ? JSON.stringify(lines.slice(-12)) : '(none)';
  }
}

// ------------------------------------------------------------------------------ steps

export type StepStatus = 'passed' | 'failed' | 'blocked';

export interface StepResult {
  name: string;
  title: string;
  status: StepStatus;
  ms: number;
  error?: string;
  screenshot?: string;
  notes: string[];
}

export interface StepContext {
  /** Record an observation (shown in the report). */
  note(text: string): void;
  timeoutMs: number;
}

/** Runs named steps in order; a step whose prerequisites failed is recorded as blocked. */
export class Steps {
  readonly results: StepResult[] = [];
  readonly page: Page;
  readonly artifacts: string;
  readonly defaultTimeoutMs: number;
  readonly startedAt = Date.now();
  private readonly resultFile: string;

  constructor(page: Page, artifacts: string, defaultTimeoutMs: number) {
    this.page = page;
    this.artifacts = artifacts;
    this.defaultTimeoutMs = defaultTimeoutMs;
    this.resultFile = path.join(artifacts, 'result.json');
    fs.mkdirSync(artifacts, { recursive: true });
  }

  passed(name: string): boolean {
    return this.results.some((r) => r.name === name && r.status === 'passed');
  }

  async run(
    name: string,
    title: string,
    needs: string[],
    fn: (ctx: StepContext) => Promise<void>,
    timeoutMs = this.defaultTimeoutMs,
  ): Promise<boolean> {
    const index = String(this.results.length + 1).padStart(2, '0');
    const result: StepResult = { name, title, status: 'passed', ms: 0, notes: [] };
    this.results.push(result);
    const missing = needs.filter((n) => !this.passed(n));
    if (missing.length > 0) {
      result.status = 'blocked';
      result.error = `not run: it needs ${missing.join(', ')}, which did not pass`;
      log(`[e2e] step ${name}: BLOCKED (${missing.join(', ')})`);
      this.save();
      return false;
    }
    const t0 = Date.now();
    log(`[e2e] step ${name}: ${title}`);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        fn({ note: (t) => result.notes.push(t), timeoutMs }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`step timed out after ${timeoutMs / 1000}s`)), timeoutMs + 2000);
        }),
      ]);
    } catch (e) {
      result.status = 'failed';
      result.error = e instanceof Error ? e.message : String(e);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
    result.ms = Date.now() - t0;
    const shot = path.join(this.artifacts, `${index}-${name}${result.status === 'failed' ? '-FAILED' : ''}.png`);
    try {
      await this.page.screenshot({ path: shot, timeout: 10_000 });
      result.screenshot = shot;
    } catch (e) {
      result.notes.push(`no screenshot: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
    }
    if (result.status === 'failed') {
      // leave no menu or palette open over the next step
      await escape(this.page).catch(() => undefined);
    }
    log(
      `[e2e] step ${name}: ${result.status.toUpperCase()} in ${(result.ms / 1000).toFixed(1)}s` +
        (result.error ? `: ${result.error}` : ''),
    );
    this.save();
    return result.status === 'passed';
  }

  save(extra: Record<string, unknown> = {}): void {
    const data = { totalMs: Date.now() - this.startedAt, steps: this.results, ...extra };
    fs.writeFileSync(this.resultFile, JSON.stringify(data, null, 2));
  }
}

export function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Run a driver's `main` and exit with its code; an error is logged under `what` and exits 2. */
export function runDriver(main: () => Promise<number>, what: string): void {
  main().then(
    (code) => process.exit(code),
    (e: unknown) => {
      log(`${what} error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      process.exit(2);
    },
  );
}

/** Close whatever widget has focus (palette, menus, hovers). */
export async function escape(page: Page, times = 2): Promise<void> {
  for (let i = 0; i < times; i++) {
    await page.keyboard.press('Escape');
  }
}

export const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** When a prompt was sent and when its answer's first words showed (Date.now() in the webview:
 * the machine's clock, comparable with the scripted model's and the server's). */
export interface PromptTimes {
  sentAt?: number;
  shownAt?: number;
}

/** What every group of steps works with. */
export interface Run {
  /** Issue 30 item 2: when the session's first and second prompts were sent and their first words
   * shown, and a prompt of a new session after the server restarted (settings-restart). */
  promptLatency: { first?: PromptTimes; second?: PromptTimes; afterRestart?: PromptTimes };
  cfg: Config;
  sc: Scenario;
  page: Page;
  steps: Steps;
  facts: FactLog;
  /** The default timeout of a wait (the step timeout), in milliseconds. */
  T: number;
  /** The chat frame (the side bar's view), found again when VS Code re-created the webview. */
  chatFrame: () => Promise<Frame>;
}
