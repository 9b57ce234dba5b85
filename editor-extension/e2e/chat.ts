// Acting on the chat webview the way a user does, and reading what it shows: its frame, sending
// a prompt, waiting for answers, watching a stream, where the keyboard focus is. The hooks are
// the webview's data-testid attributes (../CONTRACT.md).

import type { Frame, Locator, Page } from 'playwright-core';
import { type PromptTimes, norm, sleep, until } from './harness.ts';

export const tid = (id: string): string => `[data-testid="${id}"]`;

/**
 * The frame of the chat webview: the frame (nested in VS Code's webview iframes) that holds the
 * prompt input. Found by content, not by position, so other webviews do not confuse it.
 */
export async function findChatFrame(page: Page, timeoutMs: number): Promise<Frame> {
  return until(
    `the chat webview (a frame with ${tid('prompt-input')})`,
    async () => {
      for (const f of page.frames()) {
        if (f.isDetached()) continue;
        try {
          if ((await f.locator(tid('prompt-input')).count()) > 0) return f;
        } catch {
          // frame navigated or detached meanwhile
        }
      }
      return undefined;
    },
    timeoutMs,
    200,
  );
}

/** Longest prefix of `full` (normalized) that `text` (normalized) contains. */
export function prefixShown(text: string, full: string): number {
  const t = norm(text);
  const f = norm(full);
  let lo = 0;
  let hi = f.length;
  // prefixes are monotone: if a prefix is contained, every shorter one is too
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (t.includes(f.slice(0, mid))) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Every frame that holds a chat (the side bar view, editor panels). */
export async function chatFrames(page: Page): Promise<Frame[]> {
  const out: Frame[] = [];
  for (const f of page.frames()) {
    if (f.isDetached()) continue;
    try {
      if ((await f.locator(tid('prompt-input')).count()) > 0) out.push(f);
    } catch {
      // detached meanwhile
    }
  }
  return out;
}

/** Type a prompt into the chat and send it; wait until the user message shows. */
export async function sendPrompt(f: Frame, text: string, T: number): Promise<void> {
  const input = f.locator(tid('prompt-input'));
  await until(`${tid('send')} to be enabled`, async () => f.locator(tid('send')).isEnabled(), T);
  await input.click();
  await input.fill(text);
  await f.locator(tid('send')).click();
  await f.locator(`${tid('message')}[data-role="user"]`, { hasText: text }).first().waitFor({ state: 'visible', timeout: T });
}

/** Wait until an answer of the agent contains `expected`. */
export async function waitAssistantText(f: Frame, expected: string, T: number): Promise<void> {
  await until(
    `the answer "${expected}" in the chat`,
    async () => (await f.locator(`${tid('message')}[data-role="assistant"]`).allTextContents()).some((t) => norm(t).includes(norm(expected))),
    T,
  ).catch(async (e: unknown) => {
    throw new Error(`${(e as Error).message}; ${await chatSummary(f)}`);
  });
}

/** Watch the assistant text while the final answer streams: the partial lengths seen, and busy. */
export async function observeStream(chatFrame: () => Promise<Frame>, finalAnswer: string, T: number): Promise<{ partials: number[]; busyDuring: boolean }> {
  const partials: number[] = [];
  let busyDuring = false;
  const full = norm(finalAnswer).length;
  const end = Date.now() + T;
  while (Date.now() < end) {
    try {
      const f = await chatFrame();
      const texts = await f.locator(`${tid('message')}[data-role="assistant"]`).allTextContents();
      const shown = prefixShown(texts.join(' '), finalAnswer);
      if (shown >= full) return { partials, busyDuring };
      if (shown > 0) {
        if ((await f.locator(tid('busy')).count()) > 0) busyDuring = true;
        if (!partials.includes(shown)) partials.push(shown);
      }
    } catch {
      // the frame may be re-created; try again
    }
    await sleep(40);
  }
  throw new Error(`the final answer "${finalAnswer}" did not appear in full within ${T / 1000}s (partials seen: ${partials.join(', ') || 'none'})`);
}

/** A short description of what the chat shows, for failure messages. */
export async function chatSummary(f: Frame): Promise<string> {
  try {
    const items = await f.locator(`${tid('message')}, ${tid('tool-card')}, ${tid('approval')}`).evaluateAll((els) =>
      els.map((e) => {
        const el = e as HTMLElement;
        const id = el.dataset['testid'];
        const attrs = id === 'message' ? `role=${el.dataset['role']}` : id === 'tool-card' ? `tool=${el.dataset['tool']} status=${el.dataset['status']}` : '';
        return `${id}(${attrs}): ${el.textContent.replace(/\s+/g, ' ').trim().slice(0, 80)}`;
      }),
    );
    return `the chat shows [${items.join(' | ') || 'nothing'}]`;
  } catch (e) {
    return `the chat could not be read (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`;
  }
}

/** What the focused element of the chat is: its data-testid / data-answer, or its tag. */
export async function focused(f: Frame): Promise<string> {
  return f.evaluate(() => {
    const a = document.activeElement as HTMLElement | null;
    if (!a || a === document.body) return 'body';
    return a.dataset['answer'] ? `answer:${a.dataset['answer']}` : a.dataset['testid'] ?? a.tagName.toLowerCase();
  });
}

/** Press Tab until the focus is on `want` (at most `max` times); the keys pressed, or an error. */
export async function tabTo(page: Page, f: Frame, want: string, max: number): Promise<number> {
  const seen: string[] = [];
  for (let i = 1; i <= max; i++) {
    await page.keyboard.press('Tab');
    const now = await focused(f);
    seen.push(now);
    if (now === want) return i;
  }
  throw new Error(`Tab never reached ${want} (the focus went: ${seen.join(' -> ')})`);
}

/** The element's box is inside the browser window (the user sees it without scrolling). */
export async function inViewport(page: Page, el: Locator): Promise<string | null> {
  const box = await el.boundingBox();
  const vp = page.viewportSize();
  if (!box || !vp) return 'no bounding box';
  const inside = box.x >= 0 && box.y >= 0 && box.x + box.width <= vp.width + 0.5 && box.y + box.height <= vp.height + 0.5 && box.height > 0;
  return inside ? null : `box ${JSON.stringify(box)} is not inside the ${vp.width}x${vp.height} viewport`;
}

/** Whether each chat (the side bar view, an editor panel) has the keyboard focus: "side bar: true, panel: false". */
export async function chatFocus(page: Page): Promise<string> {
  const out: string[] = [];
  for (const f of await chatFrames(page)) {
    out.push(String(await f.evaluate(() => document.hasFocus()).catch(() => 'detached')));
  }
  return out.join(', ');
}

/** Record the chat frame's focus changes from now on (read them with `focusTrace`): a failure
 * message then says who took the focus and when. */
export async function traceFocus(f: Frame): Promise<void> {
  await f.evaluate(() => {
    const w = window as unknown as { __focusTrace?: string[] };
    const log: string[] = (w.__focusTrace = []);
    const name = (t: EventTarget | null): string => {
      const h = t as HTMLElement | null;
      return !h ? 'null' : h === (window as unknown) ? 'window' : (h.dataset['testid'] ?? h.dataset['answer'] ?? h.tagName.toLowerCase());
    };
    const t0 = performance.now();
    const add = (what: string) => log.push(`${Math.round(performance.now() - t0)}ms ${what} (active: ${name(document.activeElement)}, hasFocus: ${document.hasFocus()})`);
    for (const type of ['focusin', 'focusout']) document.addEventListener(type, (e) => add(`${type} ${name(e.target)}`), true);
    window.addEventListener('blur', () => add('window blur'));
    window.addEventListener('focus', () => add('window focus'));
  });
}

export async function focusTrace(f: Frame): Promise<string> {
  const log = await f.evaluate(() => (window as unknown as { __focusTrace?: string[] }).__focusTrace ?? []).catch(() => []);
  return log.slice(-12).join('; ') || '(no focus change)';
}

/**
 * Time the next prompt sent from this chat (issue 30 item 2): from now on, the chat records (in the
 * webview, so no polling delay counts) when Send is clicked or Enter pressed in the prompt input,
 * and when an assistant message first contains `firstWords`. Read them with `promptTimes(f, key)`.
 */
export async function timePrompt(f: Frame, key: string, firstWords: string): Promise<void> {
  await f.evaluate(({ key, firstWords }) => {
    const w = window as unknown as { __promptTimes?: Record<string, PromptTimes> };
    const times: PromptTimes = {};
    (w.__promptTimes ??= {})[key] = times;
    const norm = (s: string) => s.replace(/\s+/g, ' ');
    const words = norm(firstWords);
    const shown = () =>
      Array.from(document.querySelectorAll('[data-testid="message"][data-role="assistant"]')).some((e) => norm(e.textContent).includes(words));
    const sent = (e: Event) => {
      const t = e.target as HTMLElement | null;
      const send = e.type === 'click' ? t?.closest('[data-testid="send"]') : (e as KeyboardEvent).key === 'Enter' && !(e as KeyboardEvent).shiftKey && t?.closest('[data-testid="prompt-input"]');
      if (send && times.sentAt === undefined) times.sentAt = Date.now();
    };
    document.addEventListener('click', sent, true);
    document.addEventListener('keydown', sent, true);
    const observer = new MutationObserver(() => {
      if (times.sentAt !== undefined && shown()) {
        times.shownAt = Date.now();
        observer.disconnect();
        document.removeEventListener('click', sent, true);
        document.removeEventListener('keydown', sent, true);
      }
    });
    observer.observe(document.body, { childList: true, subtree: true, characterData: true });
  }, { key, firstWords });
}

/** What `timePrompt(f, key, ...)` recorded; waits (up to `T`) until the first words showed. */
export async function promptTimes(f: Frame, key: string, T: number): Promise<PromptTimes> {
  const read = () => f.evaluate((k) => (window as unknown as { __promptTimes?: Record<string, PromptTimes> }).__promptTimes?.[k] ?? {}, key);
  return until(`the first words of the answer to the prompt "${key}"`, async () => {
    const t = await read();
    return t.shownAt !== undefined ? t : undefined;
  }, T, 25).catch(async () => read());
}
