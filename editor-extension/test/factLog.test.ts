import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { fact, setFactLogFile } from "../src/factLog";

describe("the fact log", () => {
  afterEach(() => {
    setFactLogFile(null);
    vi.unstubAllEnvs();
  });

  const logFile = () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ls-facts-")), "facts.log");
    setFactLogFile(file);
    return () => fs.readFileSync(file, "utf8").split("\n").filter((l) => l);
  };

  it("writes one line per fact, newlines flattened", () => {
    const lines = logFile();
    fact("event text");
    fact("error two\nlines");
    expect(lines()).toEqual(["event text", "error two lines"]);
  });

  it("starts each line with its ISO time when AGENT_LS_EXTENSION_LOG_TIMES=1 (profiling)", () => {
    vi.stubEnv("AGENT_LS_EXTENSION_LOG_TIMES", "1");
    const lines = logFile();
    const before = Date.now();
    fact("event turn_started");
    const line = lines().join("\n");
    const m = /^(\d{4}-\d\d-\d\dT[\d:.]+Z) event turn_started$/.exec(line);
    expect(m, line).not.toBeNull();
    const at = Date.parse(m?.[1] ?? "");
    expect(at).toBeGreaterThanOrEqual(before - 1);
    expect(at).toBeLessThanOrEqual(Date.now());
  });
});
