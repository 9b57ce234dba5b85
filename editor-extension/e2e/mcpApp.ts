// MCP Apps in the real editor (issue 45), against tests/servers/apps_server.py:
// - mcp-app: the model calls show_board; its app renders under the tool card in a sandboxed
//   frame, gets the tool's input and result; its "Save choice" calls save_choice (an app-only tool
//   that writes): the chat asks for approval like any call, the app gets the result; its call of a
//   model-only tool is refused without asking; its context shows in the card; its ui/message shows
//   in the chat as the app's and the model answers it. Also the time from the tool result to the
//   app's first paint (a note: the app reports it through its own page).
// - mcp-app-attacks: an app that tries to read the chat's DOM, reach the webview's host API, post a
//   chat command, load a script from an origin it did not declare, navigate the top frame and
//   flood the host: each is blocked, and the chat still answers a prompt.
// - mcp-app-resumed: a new session, then the app session again from the list: its first app is
//   back under its card, read again from the server (agent/appResource), and gets the kept result.
//
// Called from driver.ts; waits on the chat's data-testid hooks (CONTRACT.md) and the app's own ids.

import type { Frame } from 'playwright-core';
import { type Run, norm, until } from './harness.ts';
import { sendPrompt, tid, waitAssistantText } from './chat.ts';

/** The last app frame of the chat, once its document is there. */
async function appFrame(f: Frame, T: number): Promise<Frame> {
  const el = f.locator(tid('app-frame')).last();
  await el.waitFor({ state: 'visible', timeout: T });
  return until(
    'the app frame to load',
    async () => {
      const frame = await (await el.elementHandle()).contentFrame();
      if (!frame) return undefined;
      return (await frame.locator('#title').count()) > 0 ? frame : undefined;
    },
    T,
  );
}

async function textOf(frame: Frame, selector: string): Promise<string> {
  return norm(await frame.locator(selector).innerText());
}

export async function mcpAppSteps(run: Run, needs: string[]): Promise<void> {
  const { steps, facts, T, page } = run;
  const sc = run.sc.mcpApp;

  await steps.run(
    'mcp-app',
    "a tool's MCP App renders under its card, gets the result, calls back a tool that asks for approval; its message shows in the chat",
    needs,
    async (s) => {
      const f = await run.chatFrame();
      await f.locator(tid('new-session')).click();
      const mark = facts.lines().length;
      await sendPrompt(f, sc.prompt, T);
      await waitAssistantText(f, sc.done, T);
      const card = f.locator(tid('app-card')).last();
      await card.waitFor({ state: 'visible', timeout: T });
      const sandbox = await f.locator(tid('app-frame')).last().getAttribute('sandbox');
      if (sandbox !== 'allow-scripts') throw new Error(`the app frame's sandbox is ${JSON.stringify(sandbox)}`);
      const app = await appFrame(f, T);
      await until('the app to show the tool result', async () => ((await textOf(app, '#result')).includes('board for q3') ? true : undefined), T);
      const input = await textOf(app, '#input');
      if (!input.includes('"title":"q3"')) throw new Error(`the app did not get the tool input: ${input}`);
      const host = await app.locator('body').getAttribute('data-host');
      if (host !== 'agent-ls') throw new Error(`ui/initialize was not answered by agent-ls: ${host}`);
      s.note(`app frame ${app.url().replace(/app\/.*/, 'app/…')}; result ${JSON.stringify(await textOf(app, '#result'))}`);
      await facts.waitFor(/^app apps ui:\/\/apps\/board\.html shown\b/, T, mark);

      // the app calls its app-only tool: the chat asks, like for the model's calls
      const approvalsBefore = await f.locator(tid('approval')).count();
      await app.locator('#save').click();
      const approval = f.locator(tid('approval')).last();
      await until('an approval for the app\'s call', async () => ((await f.locator(tid('approval')).count()) > approvalsBefore ? true : undefined), T);
      const asked = norm(await approval.innerText());
      if (!asked.includes('save_choice')) throw new Error(`the approval is not about save_choice: ${asked}`);
      await approval.locator('[data-answer="allow_once"]').click();
      await until('the app to get the call\'s result', async () => ((await textOf(app, '#call')) === 'ok: saved blue' ? true : undefined), T);
      const toolCard = f.locator(`${tid('tool-card')}[data-tool="mcp__apps__save_choice"]`);
      if ((await toolCard.count()) === 0) throw new Error('the app\'s call has no tool card in the chat');

      // a model-only tool: refused, nothing asked
      const before = await f.locator(tid('approval')).count();
      await app.locator('#secret').click();
      await until('the refusal', async () => ((await textOf(app, '#call')).startsWith('refused:') ? true : undefined), T);
      const refusal = await textOf(app, '#call');
      if (!refusal.includes('model only')) throw new Error(`unexpected refusal: ${refusal}`);
      if ((await f.locator(tid('approval')).count()) !== before) throw new Error('a model-only tool was asked about');
      s.note(refusal);

      // ui/update-model-context: shown in the card
      await app.locator('#context').click();
      const context = f.locator(tid('app-card')).first().locator(tid('app-context'));
      await context.waitFor({ state: 'visible', timeout: T });
      s.note(norm(await context.innerText()));

      // ui/message: a user message the chat shows as the app's, and the model answers it
      await app.locator('#say').click();
      await f.locator(`${tid('message')}[data-role="user"]`, { hasText: sc.message }).first().waitFor({ state: 'visible', timeout: T });
      const shown = norm(await f.locator(`${tid('message')}[data-role="user"]`, { hasText: sc.message }).first().innerText());
      if (!shown.includes('From the app of show_board')) throw new Error(`the message does not say it is the app's: ${shown}`);
      await waitAssistantText(f, sc.messageSeen, T);
      if ((await f.locator(tid('app-card')).count()) !== 1) throw new Error('the app\'s own call opened another app');
      // the keyboard focus back in the chat (keys pressed inside an app's frame stay there)
      await f.locator(tid('prompt-input')).click();
    },
  );

  await steps.run(
    'mcp-app-attacks',
    "an app cannot read the chat, reach the webview's host, load an undeclared script, navigate the top frame or flood the host; the chat keeps working",
    ['mcp-app'],
    async (s) => {
      const f = await run.chatFrame();
      const url = page.url();
      await sendPrompt(f, sc.attackPrompt, T);
      await waitAssistantText(f, sc.attackDone, T);
      const app = await appFrame(f, T);
      const want = ['parent-dom', 'vscode-api', 'host-frame', 'chat-command', 'undeclared-script', 'top-navigation', 'flood'];
      await until('every attack to report', async () => ((await app.locator('#attacks li').count()) >= want.length ? true : undefined), T);
      const outcomes: Record<string, string> = {};
      for (const li of await app.locator('#attacks li').all()) {
        const name = (await li.getAttribute('data-attack')) ?? '';
        outcomes[name] = norm(await li.innerText());
      }
      s.note(JSON.stringify(outcomes));
      for (const name of ['parent-dom', 'vscode-api', 'host-frame', 'undeclared-script', 'top-navigation']) {
        if (outcomes[name] !== `${name}: blocked`) throw new Error(`${name} was not blocked: ${outcomes[name] ?? '(no report)'}`);
      }
      if (page.url() !== url || !(await page.locator('.monaco-workbench').isVisible())) throw new Error(`the workbench navigated away: ${page.url()}`);
      // the chat command the app posted is nothing: no "pwned" prompt, no approvals from the flood
      if ((await f.locator(`${tid('message')}[data-role="user"]`, { hasText: 'pwned' }).count()) > 0) throw new Error('the app\'s chat command was sent as a prompt');
      // the flood's 500 tools/call never reached the server (the first step's one call is the only card)
      const calls = await f.locator(`${tid('tool-card')}[data-tool="mcp__apps__save_choice"]`).count();
      s.note(`save_choice cards after the flood: ${calls}`);
      if (calls > 1) throw new Error(`the flood of tools/call reached the server: ${calls} save_choice cards`);
      // the chat still works
      await sendPrompt(f, sc.stillPrompt, T);
      await waitAssistantText(f, sc.stillDone, T);
      await f.locator(tid('prompt-input')).click();
    },
  );

  await steps.run(
    'mcp-app-resumed',
    "a resumed conversation shows its apps again under their cards, read again from the server",
    ['mcp-app'],
    async (s) => {
      const f = await run.chatFrame();
      const current = f.locator(`${tid('session-item')}[aria-current="true"]`).first();
      await until('the app session in the sessions list', async () => ((await current.count()) > 0 ? true : undefined), T);
      const id = await current.getAttribute('data-session-id');
      if (!id) throw new Error('the app session has no id in the list');
      await f.locator(tid('new-session')).click();
      await until('an empty chat after "New session"', async () => ((await f.locator(tid('app-card')).count()) === 0 ? true : undefined), T);
      const mark = facts.lines().length;
      await f.locator(`${tid('session-item')}[data-session-id="${id}"]`).first().click();
      await facts.waitFor(/^app-resumed apps ui:\/\/apps\/board\.html shown\b/, T, mark);
      const el = f.locator(tid('app-frame')).first();
      await el.waitFor({ state: 'visible', timeout: T });
      const sandbox = await el.getAttribute('sandbox');
      if (sandbox !== 'allow-scripts') throw new Error(`the resumed app frame's sandbox is ${JSON.stringify(sandbox)}`);
      const app = await until(
        'the resumed app to load',
        async () => {
          const frame = await (await el.elementHandle()).contentFrame();
          return frame && (await frame.locator('#title').count()) > 0 ? frame : undefined;
        },
        T,
      );
      await until('the resumed app to show the kept result', async () => ((await textOf(app, '#result')).includes('board for q3') ? true : undefined), T);
      s.note(`resumed app cards: ${await f.locator(tid('app-card')).count()}; result ${JSON.stringify(await textOf(app, '#result'))}`);
      await f.locator(tid('prompt-input')).click();
    },
  );
}
