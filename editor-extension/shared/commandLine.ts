/**
 * Text of an MCP server entry as the trust prompts show it (the chat cards and the modal of
 * "Trust Workspace Settings" alike). What the user trusts must read exactly as it will run:
 * argument boundaries stay visible (an argument with a space is quoted, not split in two), and
 * characters that do not show (line breaks, bidi overrides, zero-width characters) are written
 * as escapes instead of moving or hiding the text around them.
 */

/** Control characters, bidi controls and zero-width / invisible formatting characters. */
// eslint-disable-next-line no-control-regex -- control characters are what this finds (to show them escaped)
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]/gu;
const HIDDEN_ONE = new RegExp(HIDDEN.source, "u");

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function escapeChar(c: string): string {
  return NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Whether `s` holds a character that would not show as itself. */
export function hasHidden(s: string): boolean {
  return HIDDEN_ONE.test(s);
}

/** `s` with every character that would not show as itself written as an escape (`\n`, `\u202E`). */
export function visible(s: string): string {
  return s.replace(HIDDEN, escapeChar);
}

/** Characters that never need quoting in a POSIX shell word. */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * One argument as a POSIX shell word: as is when plain, else single-quoted; with hidden
 * characters, ANSI-C quoted (`$'a\u202Eb'`), so the text shown is what a shell would run.
 */
export function shellWord(arg: string): string {
  if (arg === "") return "''";
  if (PLAIN.test(arg)) return arg;
  if (hasHidden(arg)) return `$'${arg.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(HIDDEN, escapeChar)}'`;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The complete command line (never clipped): program and arguments as shell words. */
export function commandLine(command: string, args: readonly string[]): string {
  return [command, ...args].map(shellWord).join(" ");
}

/** `NAME<sep>value` lines (env, headers), one per entry, hidden characters escaped. */
export function pairLines(values: Record<string, string>, sep: string): string[] {
  return Object.keys(values).map((k) => `${visible(k)}${sep}${visible(values[k])}`);
}
