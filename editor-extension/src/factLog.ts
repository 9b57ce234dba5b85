/**
 * The fact log for tests: when env AGENT_LS_EXTENSION_LOG names a file, one line per fact is
 * appended (`activated`, `client-running`, `status <n> servers`, `event <type>`,
 * `approval <answer>`, `code-action <title>`, `error <message>`). With env
 * AGENT_LS_EXTENSION_LOG_TIMES=1 each line starts with its ISO time (`2026-12-05T07:40:01.123Z
 * event text`: profiling, scripts/bench_editor_prompt.py --timeline). Never throws.
 */
import * as fs from "fs";

let target: string | null | undefined;

function file(): string | null {
  if (target === undefined) target = process.env.AGENT_LS_EXTENSION_LOG || null;
  return target;
}

/** For tests: log to this file (null: off). */
export function setFactLogFile(path: string | null): void {
  target = path;
}

export function fact(line: string): void {
  const f = file();
  if (!f) return;
  try {
    const at = process.env.AGENT_LS_EXTENSION_LOG_TIMES === "1" ? `${new Date().toISOString()} ` : "";
    fs.appendFileSync(f, at + line.replace(/[\r\n]+/g, " ") + "\n");
  } catch {
    // a broken fact log must never break the extension
  }
}
