import { fileURLToPath } from "url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // The extension host's logic runs against a small stand-in for the editor API.
    alias: { vscode: fileURLToPath(new URL("./test/fakes/vscode.ts", import.meta.url)) },
  },
  test: {
    include: ["test/**/*.test.ts"],
    environment: "jsdom",
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
  },
});
