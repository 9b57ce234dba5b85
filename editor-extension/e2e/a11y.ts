// Accessibility checks with axe-core (WCAG 2.0/2.1 A and AA rules: contrast, ARIA, names,
// keyboard), injected into the page it checks: the chat's frame, or the workbench page scoped to
// one element (the MCP Servers view: a workbench tree whose rows our extension fills).

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame, Locator, Page } from 'playwright-core';

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; summary: string }[];
}

const RULES = { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] };

/** Inject axe-core (once per document) into the chat's frame or the workbench page. */
async function inject(nodeModules: string, where: Frame | Page): Promise<void> {
  if (await where.evaluate(() => 'axe' in window)) return;
  await where.evaluate(fs.readFileSync(path.join(nodeModules, 'axe-core', 'axe.min.js'), 'utf8'));
}

/** Runs in the browser: axe on `el` (or the whole document), 50 nodes per violation at most. */
async function axeInBrowser([el, rules]: [Element | null, unknown]): Promise<AxeViolation[]> {
  interface AxeResult {
    violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[]; failureSummary?: string }[] }[];
  }
  const axe = (window as unknown as { axe: { run(ctx: Element | Document, opts: unknown): Promise<AxeResult> } }).axe;
  const res = await axe.run(el ?? document, rules);
  return res.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.slice(0, 50).map((n) => ({ target: n.target.map(String), summary: (n.failureSummary ?? '').replace(/\s+/g, ' ').slice(0, 240) })),
  }));
}

/** axe on the whole chat (its frame). */
export async function axeChat(nodeModules: string, f: Frame): Promise<AxeViolation[]> {
  await inject(nodeModules, f);
  return f.evaluate(axeInBrowser, [null, RULES] as [null, unknown]);
}

/** axe on one element of the workbench page (a view), not on the rest of the workbench. */
export async function axeElement(nodeModules: string, page: Page, root: Locator): Promise<AxeViolation[]> {
  await inject(nodeModules, page);
  const el = await root.elementHandle();
  try {
    return await page.evaluate(axeInBrowser, [el, RULES] as [typeof el, unknown]);
  } finally {
    await el.dispose();
  }
}

export function describeViolations(vs: AxeViolation[]): string {
  return vs.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 5).map((n) => `${n.target.join(' ')}: ${n.summary}`).join('; ')}`).join(' | ');
}

/**
 * The workbench tree draws a row's label and description as adjacent elements with no space
 * between them, and axe reads their text as one word ("knob" + "connected" = "knobconnected"):
 * no accessible name can contain that, so every row with a description fails
 * label-content-name-mismatch. Such a violation is dropped when each row it flags is named
 * exactly "<label> <description>" (what it shows); any other is kept. Returns the violations
 * kept and a note on the rows dropped.
 */
export async function withoutJoinedDescriptions(page: Page, vs: AxeViolation[]): Promise<{ kept: AxeViolation[]; note: string }> {
  const kept: AxeViolation[] = [];
  const dropped: string[] = [];
  for (const v of vs) {
    if (v.id !== 'label-content-name-mismatch') {
      kept.push(v);
      continue;
    }
    const rows = await page.evaluate((targets) => targets.map((t) => {
      const row = document.querySelector(t);
      const label = row?.querySelector('.label-name')?.textContent.trim() ?? '';
      const description = row?.querySelector('.label-description')?.textContent.trim() ?? '';
      return { name: row?.getAttribute('aria-label') ?? null, label, description, text: row?.textContent ?? '' };
    }), v.nodes.map((n) => n.target.join(' ')));
    if (rows.every((r) => r.description !== '' && r.name === `${r.label} ${r.description}` && r.text.includes(`${r.label}${r.description}`))) dropped.push(...rows.map((r) => r.name ?? ''));
    else kept.push(v);
  }
  return { kept, note: dropped.length ? `label-content-name-mismatch on rows named "<label> <description>" (the tree joins their text): ${JSON.stringify(dropped)}` : '' };
}
